// Spec: a logical operation on operands plus the memory each level may still
// use. Specs are values: compared with ==, hashed with absl::Hash, printed and
// parsed in one notation (core/spec_text.h). Factories build them in canonical
// form.
//
//   Spec s = Spec::Matmul(256, 256, 256);                 // C = A.B, all f32
//   in GL Spec z = Spec::Zero(4, 16, {DType::kF32, Level::kVRF,
//   Order::kRowMajor, 8}); s.Operand(1)  // TensorSpec of B: 256x256 f32 GL
//   row-major
//
// Operands by kind:  Matmul/MatmulAccum: 0 = A[m,k] (in), 1 = B[k,n] (in),
//                    2 = C[m,n] (out; in-out when accumulating).
//                    Zero: 0 = out[m,n].   Move: 0 = src[m,n] (in), 1 =
//                    dst[m,n] (out).
#ifndef AMARENA_CORE_SPEC_H_
#define AMARENA_CORE_SPEC_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "core/tensor_spec.h"

namespace amarena {

enum class Kind : uint8_t { kMatmul, kMatmulAccum, kZero, kMove };

// What each level may still allocate: vector registers, general-purpose
// registers (for buffer pointers and loop counters), and lines of L1, L2 and
// L3 (on the budget grid below, because cache budgets are discretised so equal
// problems share memo entries). GL is unbounded.
struct Budget {
  int32_t vrf = 0;
  int32_t gpr = 0;
  int64_t l1_lines = 0;
  int64_t l2_lines = 0;
  int64_t l3_lines = 0;

  // The lines of a cache level (IsCache(l); the others read as L3).
  int64_t Lines(Level l) const {
    return l == Level::kL1 ? l1_lines : l == Level::kL2 ? l2_lines : l3_lines;
  }
  int64_t& Lines(Level l) {
    return l == Level::kL1 ? l1_lines : l == Level::kL2 ? l2_lines : l3_lines;
  }
  // Componentwise <=: everything `*this` needs fits in `b`.
  bool FitsIn(const Budget& b) const {
    return vrf <= b.vrf && gpr <= b.gpr && l1_lines <= b.l1_lines &&
           l2_lines <= b.l2_lines && l3_lines <= b.l3_lines;
  }
  // Componentwise max.
  static Budget Max(const Budget& a, const Budget& b) {
    return Budget{std::max(a.vrf, b.vrf), std::max(a.gpr, b.gpr),
                  std::max(a.l1_lines, b.l1_lines),
                  std::max(a.l2_lines, b.l2_lines),
                  std::max(a.l3_lines, b.l3_lines)};
  }

  friend auto operator<=>(const Budget&, const Budget&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const Budget& b) {
    return H::combine(std::move(h), b.vrf, b.gpr, b.l1_lines, b.l2_lines,
                      b.l3_lines);
  }
};

// Largest power of two <= x (0 for x <= 0), and smallest >= x (0 for x <= 0).
int64_t FloorPow2(int64_t x);
int64_t CeilPow2(int64_t x);

// The budget grid: cache budgets (and so the peaks of trees) are numbers of
// lines with at most two significant bits: 0, 1, 2, 3, 4, 6, 8, 12, ...,
// 256, 384, 512, 768. A leftover budget rounds down onto it, a peak up. With
// powers of two, the 506 lines a small C tile left of 512 rounded to 256, so
// a 16 KiB B block beside it left nothing for A; the grid keeps 384.
// Largest grid value <= x, and smallest >= x (0 for x <= 0).
int64_t FloorBudgetLines(int64_t x);
int64_t CeilBudgetLines(int64_t x);

enum class Access : uint8_t { kIn, kOut, kInOut };

struct Spec {
  Kind kind = Kind::kMatmul;
  int64_t b = 1;                // batch: a matmul computes C[q] = A[q].B[q]
  int64_t m = 1, k = 1, n = 1;  // Zero and Move use m x n; k stays 1
  std::array<TensorAux, 3> aux{};
  // Elements from operand i's matrix for batch element q to the one for
  // q + 1 (a matmul with b > 1; every other Spec has kDenseBatch):
  // kDenseBatch, the matrices one after another (DenseBatchStride); 0, one
  // matrix for every batch element (an input only: shared weights); or any
  // other count (Canonical turns the dense one into kDenseBatch).
  static constexpr int64_t kDenseBatch = -1;
  std::array<int64_t, 3> batch_stride{kDenseBatch, kDenseBatch, kDenseBatch};
  bool serial = false;  // true forbids parallel loops below this Spec
  // A matmul's scale: C = alpha * A.B (C += alpha * A.B accumulating). Part
  // of the Spec's identity (kernels specialise on it); 1 for every other kind
  // and by default, which is the plain product. Finite; Canonical turns -0
  // into 0 (the two scale alike up to the sign of a zero result).
  float alpha = 1.0f;
  // The budget left at this point of the tree. A user's Spec has none: the
  // target's whole budget applies (see Target::Bind).
  std::optional<Budget> budget;

  static Spec Matmul(int64_t m, int64_t k, int64_t n, TensorAux a = {},
                     TensorAux b = {}, TensorAux c = {}, bool accum = false);
  static Spec Zero(int64_t m, int64_t n, TensorAux out);
  static Spec Move(int64_t m, int64_t n, TensorAux src, TensorAux dst);

  bool IsMatmul() const {
    return kind == Kind::kMatmul || kind == Kind::kMatmulAccum;
  }
  int NumOperands() const {
    return IsMatmul() ? 3 : kind == Kind::kMove ? 2 : 1;
  }
  // Operand i's shape and aux (i < NumOperands()).
  TensorSpec Operand(int i) const {
    TensorSpec t;
    t.aux = aux[i];
    if (IsMatmul()) {
      t.rows = i == 1 ? k : m;
      t.cols = i == 0 ? k : n;
    } else {
      t.rows = m;
      t.cols = n;
    }
    return t;
  }
  Access OperandAccess(int i) const {
    if (i != OutputIndex()) return Access::kIn;
    return kind == Kind::kMatmulAccum ? Access::kInOut : Access::kOut;
  }
  // Index of the single output operand.
  int OutputIndex() const {
    return IsMatmul() ? 2 : kind == Kind::kMove ? 1 : 0;
  }
  // Operand i's batch stride in elements, kDenseBatch resolved.
  int64_t BatchStride(int i) const;
  // Elements operand i spans over the whole batch, from its first matrix's
  // first element to its last one's last: (b - 1) * BatchStride(i) + the
  // matrix's stored elements.
  int64_t BatchedElements(int i) const;
  // Bytes operand i spans over the whole batch (BatchedElements).
  int64_t BatchedBytes(int i) const;
  // Whether the operands, all of their batches, fit in the L3 part of the
  // budget (false without a budget): then a kernel called again and again
  // finds them in the caches, not in DRAM.
  bool OperandsFitL3() const;
  // Whether every batch element reads one B (its batch stride is 0).
  bool SharedB() const { return IsMatmul() && b > 1 && batch_stride[1] == 0; }

  // Multiply-adds a matmul performs (b*m*k*n); 0 for other kinds.
  int64_t Macs() const { return IsMatmul() ? b * m * k * n : 0; }

  friend bool operator==(const Spec&, const Spec&) = default;
  // Hashes the packed words (PackProblem) and the budget: a fraction of the
  // cost of hashing field by field, and Specs are hashed in every memo and
  // cache lookup.
  template <typename H>
  friend H AbslHashValue(H h, const Spec& s);
};

// Everything but the budget, packed into eight words (dims, batch, leading
// dimensions and batch strides are below 2^31, a vector width or a panel
// width below 2^11; words 3 to 5 hold the leading dimensions and the batch
// strides plus one, word 6 alpha's bits xor 1.0f's in its low half and the
// operands' rows' alignments (Layout::align_code) above, word 7 their way
// offsets (Layout::way_code, 12 bits each), so words 3 to 5 and the low
// half of 6 are zero when all operands are dense and alpha is 1); equal
// exactly when the canonical Specs without their budgets are equal.
inline constexpr size_t kPackedWords = 8;
std::array<uint64_t, kPackedWords> PackProblem(const Spec& s);

template <typename H>
H AbslHashValue(H h, const Spec& s) {
  const std::array<uint64_t, kPackedWords> p = PackProblem(s);
  const Budget b = s.budget.value_or(Budget{-1, -1, 0, 0, 0});
  // The budget folded into one word (cache budgets have at most two
  // significant bits, so shifted copies rarely cancel): four mixing steps
  // instead of seven keep the kernel cache's hit path short.
  const uint64_t budget =
      (static_cast<uint64_t>(static_cast<uint32_t>(b.vrf)) |
       static_cast<uint64_t>(static_cast<uint32_t>(b.gpr)) << 32) ^
      static_cast<uint64_t>(b.l1_lines) * 0x9E3779B97F4A7C15ull ^
      static_cast<uint64_t>(b.l2_lines) << 7 ^
      static_cast<uint64_t>(b.l3_lines) << 23;
  // Dense operands with alpha 1 (nearly every Spec the search meets) add no
  // step; their tiles' facts (alignments, way offsets) are folded into word
  // 1.
  if (p[3] != 0 || p[4] != 0 || p[5] != 0 || (p[6] & 0xFFFFFFFFu) != 0)
    h = H::combine(std::move(h), p[3], p[4], p[5], p[6]);
  const uint64_t tile_facts = p[6] >> 32 | p[7] << 6;
  return H::combine(std::move(h), p[0],
                    p[1] ^ tile_facts * 0x9E3779B97F4A7C15ull,
                    p[2] ^ budget);
}

// Canonical form: a 1x1 operand and every VRF operand is row-major and
// unpacked; only VRF operands carry a vector width; only packed row-major
// operands are interleaved or in sections, and only those spanning two
// panels or more are in sections; a packed operand that is a single run of at
// most one panel (one outer row, not interleaved) is plain; cache budgets are
// on the budget grid; alpha is 1 but for a matmul, and never -0. Equal problems
// hash equal. (An m x 1 tile keeps its layout:
// it says whether the tile is contiguous in memory.) A leading dimension is
// kept only where it is not the dense one (Layout::Canonical) and only in
// memory (not in VRF). A batch stride is kept only in a matmul with b > 1
// and only where it is not the dense one. A cache level's budget is
// zero when no operand is farther out than that level (nothing could use it).
Spec Canonical(Spec s);
// Canonical's budget part alone: for a Spec already canonical but for its
// budget (a move's body given its child budget).
void CanonicalizeBudget(Spec& s);

// `s` with every operand dense (no leading dimension). A tile of a Spec is a
// view of its operands whose pitch the JIT takes from the view it slices,
// like a tile of a dense operand's: the search's tiles and cache views say
// nothing of the pitch, so problems with and without one share their
// sub-problems, but for what the cost model needs of it: each plain
// operand keeps where its rows start in an L1 way (Layout::AsTileOf,
// once: a tile of a tile keeps its matrix's), which decides whether a tall
// view of it is dense (core/layout.h Dense).
// Batch strides given as counts (the dense ones resolved against the
// leading dimensions), so a batched body keeps its parent's strides.
Spec WithoutLds(Spec s);

// Elements between the matrices of a batch whose operand `t` is dense:
// the outer rows times the leading dimension when it has one (the matrices
// are views of equal-pitch blocks, one after another), else its stored
// elements.
int64_t DenseBatchStride(const TensorSpec& t);

}  // namespace amarena

#endif  // AMARENA_CORE_SPEC_H_
