// Emitters for the dot-product kernels of core/kernels.h (kDot, kDotBf16):
// C's one element += alpha * A's row . B's column, both contiguous along k.
// Applicability, scratch registers and cost live in core/kernels.cc; these
// only assert.
#include <algorithm>
#include <vector>

#include "jit/emit_access.h"
#include "jit/emit_check.h"
#include "jit/emitter.h"

namespace amarena::jit {
namespace {

// c (one f32 in memory) += alpha * the sum of every lane of the
// accumulators, which hold f32 at the target's width; `x` is a scratch
// register. The result is left in acc[0]'s low lane.
void AddHorizontalSum(Emitter& e, const Spec& s, const std::vector<int>& acc,
                      int x, const Xbyak::Address& c) {
  const bool avx512 = e.target().isa == Isa::kAvx512;
  for (size_t i = 1; i < acc.size(); ++i)
    e.vaddps(e.Vec(acc[0]), e.Vec(acc[0]), e.Vec(acc[i]));
  const int r = acc[0];
  if (e.target().f32_lanes == 16) {
    e.vextractf32x8(Xbyak::Ymm(x), Xbyak::Zmm(r), 1);
    e.vaddps(Xbyak::Ymm(r), Xbyak::Ymm(r), Xbyak::Ymm(x));
  }
  if (avx512) {
    e.vextractf32x4(Xbyak::Xmm(x), Xbyak::Ymm(r), 1);
  } else {
    e.vextractf128(Xbyak::Xmm(x), Xbyak::Ymm(r), 1);
  }
  using Xbyak::Xmm;
  e.vaddps(Xmm(r), Xmm(r), Xmm(x));
  e.vmovhlps(Xmm(x), Xmm(x), Xmm(r));
  e.vaddps(Xmm(r), Xmm(r), Xmm(x));
  e.vmovshdup(Xmm(x), Xmm(r));
  e.vaddss(Xmm(r), Xmm(r), Xmm(x));
  if (s.alpha != 1.0f) Scale(e, s, r, 1);
  e.vaddss(Xmm(r), Xmm(r), c);
  e.vmovss(c, Xmm(r));
}

// The dot kernels prefetch a bf16 B read down its columns, when its columns
// are at least kPrefetchMinPitch bytes apart (a column-major matrix with K of
// 2048 and more: each column a page or more of one long stream, which the
// hardware prefetchers find again page by page), kPrefetchColumnBytes ahead
// of the line read at element `i` of the column.
void PrefetchColumnStream(Emitter& e, const View& b, int64_t i) {
  if (b.panel_axis != Axis::kNone || b.row_stride != 2 ||
      b.col_stride < kPrefetchMinPitch || (2 * i) % 64 != 0)
    return;
  const int64_t off = b.Offset(i, 0) + kPrefetchColumnBytes;
  if (off == static_cast<int32_t>(off))
    e.prefetcht0(e.ptr[b.base + static_cast<int32_t>(off)]);
}

// The dot kernels' accumulators: one per vector of k, at most 4 (enough to
// cover the FMA latency), allocated and zeroed.
std::vector<int> ZeroedAccumulators(Emitter& e, int64_t vectors) {
  std::vector<int> acc;
  for (int64_t i = 0; i < std::min<int64_t>(vectors, kMaxDotAccumulators);
       ++i) {
    acc.push_back(e.AllocVreg());
    e.Zero(acc.back());
  }
  return acc;
}

}  // namespace

// c += a . b along k, both contiguous: vector FMAs into up to 4
// accumulators (the last vector masked), their sum, then a horizontal sum.
// A bf16 operand is widened into its register first (f32*bf16: A loaded,
// B widened). EVEX-encodable forms only, since AVX-512 may hand out
// registers 16-31. Registers as DotScratch says.
void EmitDot(Emitter& e, const Spec& s, std::span<const View> v) {
  const View &a = v[0], &b = v[1], &c = v[2];
  const int lanes = e.target().f32_lanes;
  const int64_t nv = (s.k + lanes - 1) / lanes;
  const std::vector<int> acc = ZeroedAccumulators(e, nv);
  const int64_t nacc = static_cast<int64_t>(acc.size());
  const int x = e.AllocVreg();
  const bool a_bf16 = s.aux[0].dtype == DType::kBF16;
  const bool b_bf16 = s.aux[1].dtype == DType::kBF16;
  const int partial = static_cast<int>(s.k % lanes);
  const int y = partial || b_bf16 ? e.AllocVreg() : -1;
  const int mask = a_bf16 && b_bf16 ? -1 : MaybeMaskReg(e, s.k, lanes);
  for (int64_t q = 0; q < nv; ++q) {
    const int valid =
        static_cast<int>(std::min<int64_t>(lanes, s.k - q * lanes));
    const Xbyak::Xmm acc_q = e.Vec(acc[static_cast<size_t>(q % nacc)]);
    if (b_bf16) PrefetchColumnStream(e, b, q * lanes);
    if (a_bf16) {
      LoadWidened(
          e, x, [&](int i) { return a.At(0, q * lanes + i); }, lanes, valid);
    } else {
      VectorAccess(e, /*load=*/true, x, a.At(0, q * lanes), lanes, valid, mask);
    }
    if (b_bf16) {
      LoadWidened(
          e, y, [&](int i) { return b.At(q * lanes + i, 0); }, lanes, valid);
      e.vfmadd231ps(acc_q, e.Vec(x), e.Vec(y));
      continue;
    }
    if (valid == lanes) {
      e.vfmadd231ps(acc_q, e.Vec(x), b.At(q * lanes, 0));
    } else {
      VectorAccess(e, /*load=*/true, y, b.At(q * lanes, 0), lanes, valid, mask);
      e.vfmadd231ps(acc_q, e.Vec(x), e.Vec(y));
    }
  }
  AddHorizontalSum(e, s, acc, x, c.At(0, 0));
  if (mask >= 0) e.FreeVreg(mask);
  if (y >= 0) e.FreeVreg(y);
  e.FreeVreg(x);
  for (auto it = acc.rbegin(); it != acc.rend(); ++it) e.FreeVreg(*it);
}

// c += a . b along k for bf16 a and b with AVX-512 BF16: each vdpbf16ps
// takes 32 bf16 of A's row and of B's column (16 k-pairs, adjacent in both)
// and adds each pair's two products into one f32 lane of an accumulator; a
// partial last vector is loaded under a 32-lane word mask (zeros elsewhere).
// Then the accumulators' sum and a horizontal sum, as in Dot.
void EmitDotBf16(Emitter& e, const Spec& s, std::span<const View> v) {
  const View &a = v[0], &b = v[1], &c = v[2];
  AMARENA_JIT_CHECK(e.target().bf16_dot);
  const int lanes = 2 * e.target().f32_lanes;  // bf16 per zmm
  const int64_t nv = (s.k + lanes - 1) / lanes;
  const std::vector<int> acc = ZeroedAccumulators(e, nv);
  const int64_t nacc = static_cast<int64_t>(acc.size());
  const int x = e.AllocVreg();
  const int partial = static_cast<int>(s.k % lanes);
  const int y = partial ? e.AllocVreg() : -1;
  using Xbyak::Zmm;
  for (int64_t q = 0; q < nv; ++q) {
    const int valid =
        static_cast<int>(std::min<int64_t>(lanes, s.k - q * lanes));
    const Zmm acc_q(acc[static_cast<size_t>(q % nacc)]);
    PrefetchColumnStream(e, b, q * lanes);
    if (valid == lanes) {
      e.vmovdqu16(Zmm(x), a.At(0, q * lanes));
      e.vdpbf16ps(acc_q, Zmm(x), b.At(q * lanes, 0));
    } else {
      const Xbyak::Opmask& k = e.SetK1Words(valid);
      e.vmovdqu16(Zmm(x) | k | e.T_z, a.At(0, q * lanes));
      e.vmovdqu16(Zmm(y) | k | e.T_z, b.At(q * lanes, 0));
      e.vdpbf16ps(acc_q, Zmm(x), Zmm(y));
    }
  }
  AddHorizontalSum(e, s, acc, x, c.At(0, 0));
  if (y >= 0) e.FreeVreg(y);
  e.FreeVreg(x);
  for (auto it = acc.rbegin(); it != acc.rend(); ++it) e.FreeVreg(*it);
}

}  // namespace amarena::jit
