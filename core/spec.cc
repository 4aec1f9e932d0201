#include "core/spec.h"

#include <algorithm>
#include <bit>

#include "core/status_macros.h"

namespace amarena {

int64_t FloorPow2(int64_t x) {
  if (x <= 0) return 0;
  return int64_t{1} << (63 - std::countl_zero(static_cast<uint64_t>(x)));
}

int64_t CeilPow2(int64_t x) {
  if (x <= 0) return 0;
  int64_t f = FloorPow2(x);
  return f == x ? f : 2 * f;
}

int64_t FloorBudgetLines(int64_t x) {
  const int64_t top = FloorPow2(x);
  if (top <= 1) return top;
  return x - top >= top / 2 ? top + top / 2 : top;
}

int64_t CeilBudgetLines(int64_t x) {
  const int64_t top = FloorPow2(x);
  if (x == top) return top;  // 0 for x <= 0 too
  return x <= top + top / 2 ? top + top / 2 : 2 * top;
}

Spec Spec::Matmul(int64_t m, int64_t k, int64_t n, TensorAux a, TensorAux b,
                  TensorAux c, bool accum) {
  Spec s;
  s.kind = accum ? Kind::kMatmulAccum : Kind::kMatmul;
  s.m = m;
  s.k = k;
  s.n = n;
  s.aux = {a, b, c};
  return Canonical(s);
}

Spec Spec::Zero(int64_t m, int64_t n, TensorAux out) {
  Spec s;
  s.kind = Kind::kZero;
  s.m = m;
  s.n = n;
  s.aux = {out, TensorAux{}, TensorAux{}};
  return Canonical(s);
}

Spec Spec::Move(int64_t m, int64_t n, TensorAux src, TensorAux dst) {
  Spec s;
  s.kind = Kind::kMove;
  s.m = m;
  s.n = n;
  s.aux = {src, dst, TensorAux{}};
  return Canonical(s);
}

namespace {

// A canonical operand has a vector width only in VRF and a panel width only
// elsewhere (Canonical), so the level says which of the two the 11-bit field
// holds; interleave is 0 or 2, one bit; sections four bits.
uint64_t PackAux(const TensorAux& a) {
  const Layout& l = a.layout;
  const uint64_t width = a.level == Level::kVRF
                             ? a.vector_width
                             : static_cast<uint64_t>(l.panel_width());
  return static_cast<uint64_t>(a.dtype) | static_cast<uint64_t>(a.level) << 1 |
         static_cast<uint64_t>(l.order()) << 4 | width << 5 |
         static_cast<uint64_t>(l.paired()) << 16 |
         static_cast<uint64_t>(l.section_count() & 15) << 17;
}

}  // namespace

int64_t DenseBatchStride(const TensorSpec& t) {
  if (const int64_t ld = t.layout().ld()) return t.OuterExtent() * ld;
  return t.StoredElements();
}

int64_t Spec::BatchStride(int i) const {
  const int64_t st = batch_stride[static_cast<size_t>(i)];
  return st == kDenseBatch ? DenseBatchStride(Operand(i)) : st;
}

int64_t Spec::BatchedElements(int i) const {
  return (b - 1) * BatchStride(i) + Operand(i).StoredElements();
}

int64_t Spec::BatchedBytes(int i) const {
  return BatchedElements(i) * SizeOf(aux[i].dtype);
}

bool Spec::OperandsFitL3() const {
  int64_t bytes = 0;
  for (int i = 0; i < NumOperands(); ++i) bytes += BatchedBytes(i);
  return budget.has_value() && bytes <= budget->l3_lines * kLineBytes;
}

std::array<uint64_t, kPackedWords> PackProblem(const Spec& s) {
  auto ld = [&](int i) { return static_cast<uint64_t>(s.aux[i].layout.ld()); };
  // kDenseBatch (-1) packs as 0.
  auto bs = [&](int i) {
    return static_cast<uint64_t>(s.batch_stride[static_cast<size_t>(i)] + 1);
  };
  // Zero for alpha = 1, so the plain product packs (and hashes) as it always
  // has.
  const uint64_t alpha =
      std::bit_cast<uint32_t>(s.alpha) ^ std::bit_cast<uint32_t>(1.0f);
  // The rows' alignments (2 bits each) above alpha's 32; the way offsets
  // (12 bits each) in a word of their own.
  uint64_t aligns = 0, ways = 0;
  for (int i = 0; i < 3; ++i) {
    aligns |= static_cast<uint64_t>(s.aux[i].layout.align_code())
              << (32 + 2 * i);
    ways |= static_cast<uint64_t>(s.aux[i].layout.way_code()) << (12 * i);
  }
  return {static_cast<uint64_t>(s.m) | static_cast<uint64_t>(s.k) << 31 |
              static_cast<uint64_t>(s.kind) << 62,
          static_cast<uint64_t>(s.n) | static_cast<uint64_t>(s.b) << 31 |
              static_cast<uint64_t>(s.serial) << 62,
          PackAux(s.aux[0]) | PackAux(s.aux[1]) << 21 | PackAux(s.aux[2]) << 42,
          ld(0) | ld(1) << 32,
          ld(2) | bs(0) << 32,
          bs(1) | bs(2) << 32,
          alpha | aligns,
          ways};
}

Spec Canonical(Spec s) {
  const bool matmul = s.IsMatmul();
  if (!matmul) s.k = 1;
  if (!matmul) s.alpha = 1.0f;
  if (s.alpha == 0.0f) s.alpha = 0.0f;  // -0 compares equal: one bit pattern
  for (int i = 0; i < 3; ++i) {
    TensorAux& a = s.aux[i];
    if (i >= s.NumOperands()) {
      a = TensorAux{};
    } else if (a.level == Level::kVRF) {
      a.layout = Layout();
    } else {
      // Operand(i)'s extents, without copying its aux.
      const int64_t rows = matmul && i == 1 ? s.k : s.m;
      const int64_t cols = matmul && i == 0 ? s.k : s.n;
      a.layout.Canonicalize(rows, cols, SizeOf(a.dtype),
                            /*one_set=*/matmul && i != 1);
      a.vector_width = 0;
    }
  }
  for (int i = 0; i < 3; ++i) {
    int64_t& st = s.batch_stride[static_cast<size_t>(i)];
    if (!s.IsMatmul() || s.b == 1 || i >= s.NumOperands() ||
        st == DenseBatchStride(s.Operand(i)))
      st = Spec::kDenseBatch;
  }
  CanonicalizeBudget(s);
  return s;
}

void CanonicalizeBudget(Spec& s) {
  if (!s.budget) return;
  // A cache level's budget can only be spent by moving an operand that is
  // farther out into it; when none is, every budget there is the same
  // problem.
  Level slowest = Level::kVRF;
  for (int i = 0; i < s.NumOperands(); ++i)
    if (Faster(slowest, s.aux[i].level)) slowest = s.aux[i].level;
  for (Level l : kCacheLevels) {
    int64_t& lines = s.budget->Lines(l);
    lines = Faster(l, slowest) ? FloorBudgetLines(lines) : 0;
  }
}

Spec WithoutLds(Spec s) {
  if (s.IsMatmul() && s.b > 1)
    for (int i = 0; i < 3; ++i)
      s.batch_stride[static_cast<size_t>(i)] = s.BatchStride(i);
  for (int i = 0; i < s.NumOperands(); ++i) {
    TensorAux& a = s.aux[i];
    if (a.level == Level::kVRF) continue;
    const TensorSpec t = s.Operand(i);
    a.layout = a.layout.AsTileOf(t.rows, t.cols, SizeOf(a.dtype));
  }
  return s;
}

}  // namespace amarena
