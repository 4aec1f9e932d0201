// Packing a matrix into a Layout fast: pre-packed weights (a matmul's B in the
// panels its kernel reads), from a source that is either the matrix itself
// (K x N, row-major) or its transpose (N x K, row-major, as checkpoints store
// weights), each with a leading dimension of its own.
//
//   PackMatrix({.rows = K, .cols = N, .es = 2, .src = w, .source =
//               PackSource::kTransposed, .src_ld = K},
//              Layout::Panels(Order::kRowMajor, 32).Paired(), packed);
//
// The result is what Relayout (core/layout.h) makes from the same elements,
// padding zeroed, but the work is done in tiles of 64 x 64 elements (a
// transpose moves 8 x 8 or 8 x 16 blocks in AVX2 registers; a copy moves
// rows), so a 64 MiB bf16 matrix takes tens of milliseconds rather than a
// second. Tiles are independent: with a ParallelFor they are spread over
// threads. AVX2 is used when the CPU has it (checked at run time); every
// other CPU gets the same tiles copied element by element.
#ifndef AMARENA_RUNTIME_PACK_H_
#define AMARENA_RUNTIME_PACK_H_

#include <cstddef>
#include <cstdint>

#include "absl/functional/function_ref.h"
#include "core/layout.h"

namespace amarena {

// How the source holds element (i, j) of the rows x cols matrix.
enum class PackSource : uint8_t {
  kSame,        // at src[i * src_ld + j]: the matrix, row-major (B as K x N)
  kTransposed,  // at src[j * src_ld + i]: its transpose, row-major (N x K)
};

struct PackInput {
  int64_t rows = 0, cols = 0;
  int64_t es = 4;  // element bytes: 2 or 4
  const void* src = nullptr;
  PackSource source = PackSource::kSame;
  // Elements between the starts of consecutive source rows: at least cols
  // (kSame) or rows (kTransposed).
  int64_t src_ld = 0;
};

// Runs task(i) for every i in [0, n), perhaps on several threads at once, and
// returns when all have run.
using ParallelFor =
    absl::FunctionRef<void(size_t n, absl::FunctionRef<void(size_t)> task)>;

// Writes the matrix into `dst` (to.StoredElements(rows, cols) * es bytes) in
// layout `to`, padding zeroed. The caller has checked the arguments (the
// Kernel's PackB does); `dst` must not overlap the source. `parallel`:
// nullptr runs on the calling thread. `vectorized` false forces the portable
// path (tests compare the two).
void PackMatrix(const PackInput& in, const Layout& to, void* dst,
                const ParallelFor* parallel = nullptr, bool vectorized = true);

}  // namespace amarena

#endif  // AMARENA_RUNTIME_PACK_H_
