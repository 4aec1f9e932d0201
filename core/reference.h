// The scalar reference: what a Spec means, computed slowly and in double
// precision. Every JIT kernel is checked against it (tests, `amarena run`,
// benchmarks).
//
//   Operands ops = AllocateOperands(spec);  FillRandom(spec, ops, /*seed=*/1);
//   kernel(ops.ptrs());                      // the code under test
//   Verdict v = CheckAgainstReference(spec, ops);   // v.ok, v.max_rel_err
//
// Operands are the user-level kind: dense matrices in memory with the layouts
// the Spec names (row-major: element (i,j) at i*cols + j; column-major: at
// j*rows + i; packed in panels of P, core/tensor_spec.h: row-major at
// (j/P)*rows*P + i*P + j%P, the last panel padded to P; interleaved in
// k-pairs, `pPx2`, at (j/P)*R*P + (i/2)*2P + (j%P)*2 + i%2, R = rows rounded
// up to even; in sections, `pPsS`, panel q is stored as panel
// TensorSpec::PanelSlot(q)).
#ifndef AMARENA_CORE_REFERENCE_H_
#define AMARENA_CORE_REFERENCE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "core/spec.h"

namespace amarena {

// Element offset of (i, j) in a dense matrix of this shape and layout.
inline int64_t Offset(const TensorSpec& t, int64_t i, int64_t j) {
  const int64_t p = t.aux.pack;
  if (p == 0)
    return t.aux.layout == Layout::kRowMajor ? i * t.cols + j : j * t.rows + i;
  if (const int64_t g = t.aux.interleave) {  // row-major, rows in groups of g
    const int64_t stored_rows = (t.rows + g - 1) / g * g;
    return t.PanelSlot(j / p) * stored_rows * p + (i / g) * g * p +
           (j % p) * g + i % g;
  }
  if (t.aux.layout == Layout::kRowMajor)
    return t.PanelSlot(j / p) * t.rows * p + i * p + j % p;
  return (i / p) * t.cols * p + j * p + i % p;
}

// Elements a matrix of this shape and layout occupies, panel padding (and
// an interleaved layout's rows padded to whole groups) included.
inline int64_t StoredElements(const TensorSpec& t) {
  const int64_t p = t.aux.pack;
  if (p == 0) return t.Elements();
  const int64_t g = t.aux.interleave ? t.aux.interleave : 1;
  return t.PanelSlots() * p * ((t.OuterExtent() + g - 1) / g * g);
}

// Copies a matrix between two layouts of the same shape and dtype (e.g.
// row-major B into the panels a Spec with `b=p64` or `b=p32x2` reads:
// pre-packed weights). Padding in `dst` (whole panels, an odd last row's
// partner) is set to zero.
void Relayout(const TensorSpec& from, const void* src, const TensorSpec& to,
              void* dst);

// Owned, 64-byte aligned buffers for every operand of a Spec.
class Operands {
 public:
  explicit Operands(const Spec& s);
  void* const* ptrs() const { return ptrs_.data(); }
  void* ptr(int i) const { return ptrs_[i]; }
  // Copy of operand i's bytes (e.g. the output before the kernel runs).
  std::vector<uint8_t> Snapshot(int i) const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::vector<std::unique_ptr<void, Free>> bufs_;
  std::vector<void*> ptrs_;
  std::vector<size_t> bytes_;
};

// Inputs uniform in [-1, 1); the output is filled too (accumulating Specs read
// it).
void FillRandom(const Spec& s, Operands& ops, uint64_t seed);

float ReadElement(const void* base, DType t, int64_t offset);

// Comparison of a computed output with the reference. The error of element
// (i,j) is |got - exact| / (sum_k |a_ik * b_kj| + |c0_ij| + tiny): rounding
// error relative to the magnitudes that were summed, so it does not blow up on
// cancellation. A correct f32 kernel stays below about k * 2^-24; `ok` allows
// (k + 4) * 2^-23.
struct Verdict {
  bool ok = false;
  double max_rel_err = 0;
  double tolerance = 0;
};

// `output_before` is the output operand's bytes before the kernel ran
// (accumulating Specs add to it); `ops` holds the inputs and the computed
// output.
Verdict CheckAgainstReference(const Spec& s, const Operands& ops,
                              const std::vector<uint8_t>& output_before);

// Runs the reference in place (the output operand is overwritten), for tests
// that want reference outputs directly.
absl::Status RunReference(const Spec& s, void* const* operands);

}  // namespace amarena

#endif  // AMARENA_CORE_REFERENCE_H_
