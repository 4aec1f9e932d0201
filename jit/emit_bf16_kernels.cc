// Emitters for the k-pair kernels of core/kernels.h (kOuterBf16, kCopyPairs):
// B interleaved in k-pairs (`pPx2`, core/tensor_spec.h), so that one
// vdpbf16ps multiplies a k-pair of A (broadcast) by a vector of B's k-pairs.
// Applicability, scratch registers and cost live in core/kernels.cc; these
// only assert. AVX-512 BF16 targets only; register numbers may be 16-31, so
// every instruction here is EVEX-encodable.
#include <algorithm>
#include <vector>

#include "jit/emit_check.h"
#include "jit/emitter.h"

namespace amarena::jit {

// C[m, n] (registers) += A[m, 0..1] * B[0..1, n]. Per row i of A, its k-pair
// (two adjacent bf16, one dword) is broadcast to every lane, then one
// vdpbf16ps per vector of C's row adds a0 * b0 + a1 * b1 into each f32 lane.
// B's vectors are loaded once (a partial last one under k1, so padding is
// never read). k = 1: A's element and B's first row of each pair are shifted
// into the high word of their dwords, zeros below, so a pair is (0, a) and
// (0, b) and the product a * b whatever B's pair partner holds.
// Registers: m * ceil(n/vw) accumulators (C) + ceil(n/vw) B + 1 broadcast,
// as OuterBf16Scratch says. Prefetches B's lines a fixed distance ahead
// along k (kPairPrefetchRows) when it has at least kPairPrefetchMinRows rows.
void EmitOuterBf16(Emitter& e, const Spec& s, std::span<const View> v) {
  const View &a = v[0], &b = v[1], &c = v[2];
  AMARENA_JIT_CHECK(e.target().bf16_dot && s.k <= 2 && c.vw >= 8);
  AMARENA_JIT_CHECK(b.pair_offset == 2 && b.col_stride == 4);
  const int vw = c.vw;
  const int64_t nv = (s.n + vw - 1) / vw;
  // B's pairs kPairPrefetchRows pair rows ahead, a line each 64 bytes
  // (core/kernels.h).
  for (int64_t byte = 0; s.m >= kPairPrefetchMinRows && byte < 4 * s.n;
       byte += 64) {
    const int64_t off = b.Offset(2 * kPairPrefetchRows, byte / 4);
    if (off == static_cast<int32_t>(off))
      e.prefetcht0(e.ptr[b.base + static_cast<int32_t>(off)]);
  }
  std::vector<int> bregs;
  for (int64_t j = 0; j < nv; ++j) {
    const int r = e.AllocVreg();
    bregs.push_back(r);
    const Xbyak::Xmm x = Emitter::VecW(r, vw);
    const int valid = static_cast<int>(std::min<int64_t>(vw, s.n - j * vw));
    if (valid == vw) {
      e.vmovdqu32(x, b.At(0, j * vw));
    } else {
      e.vmovdqu32(x | e.SetK1(valid) | e.T_z, b.At(0, j * vw));
    }
    if (s.k == 1) e.vpslld(x, x, 16);
  }
  const int t = e.AllocVreg();
  const Xbyak::Xmm bcast = Emitter::VecW(t, vw);
  for (int64_t i = 0; i < s.m; ++i) {
    if (s.k == 2) {
      AMARENA_JIT_CHECK(a.col_stride == 2);
      e.vpbroadcastd(bcast, a.At(i, 0));
    } else {
      e.vpbroadcastw(bcast, a.At(i, 0));
      e.vpslld(bcast, bcast, 16);
    }
    for (int64_t j = 0; j < nv; ++j)
      e.vdpbf16ps(Emitter::VecW(c.Reg(i, j * vw), vw),
                  Emitter::VecW(bregs[static_cast<size_t>(j)], vw), bcast);
  }
  e.FreeVreg(t);
  for (auto it = bregs.rbegin(); it != bregs.rend(); ++it) e.FreeVreg(*it);
}

// dst (k-pairs) = src (plain row-major bf16). Per two rows and f32_lanes
// columns: each row's words zero-extended to dwords (vpmovzxwd), the second
// shifted into the high words and or-ed in, one store of lanes pairs. An odd
// last row stays alone with zeros as partners. A partial last vector is read
// and written under k1. Two scratch registers.
void EmitCopyPairs(Emitter& e, const Spec& s, std::span<const View> v) {
  const View &src = v[0], &dst = v[1];
  AMARENA_JIT_CHECK(e.target().bf16_dot && dst.pair_offset == 2);
  const int lanes = e.target().f32_lanes;
  // A plain B whose rows are separate DRAM streams: each row's lines
  // kPrefetchRows rows ahead, as the broadcast kernel does (core/kernels.h).
  if (src.panel_axis == Axis::kNone && src.row_stride >= kPrefetchMinPitch) {
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t byte = 0; byte < 2 * s.n; byte += 64) {
        const int64_t off = src.Offset(i + kPrefetchRows, byte / 2);
        if (off == static_cast<int32_t>(off))
          e.prefetcht0(e.ptr[src.base + static_cast<int32_t>(off)]);
      }
  }
  const int x = e.AllocVreg(), y = e.AllocVreg();
  const Xbyak::Xmm vx = e.Vec(x), vy = e.Vec(y);
  for (int64_t i = 0; i < s.m; i += 2) {
    for (int64_t j = 0; j < s.n; j += lanes) {
      const int valid = static_cast<int>(std::min<int64_t>(lanes, s.n - j));
      auto load = [&](const Xbyak::Xmm& r, int64_t row) {
        if (valid == lanes) {
          e.vpmovzxwd(r, src.At(row, j));
        } else {
          e.vpmovzxwd(r | e.SetK1(valid) | e.T_z, src.At(row, j));
        }
      };
      load(vx, i);
      if (i + 1 < s.m) {
        load(vy, i + 1);
        e.vpslld(vy, vy, 16);
        e.vpord(vx, vx, vy);
      }
      if (valid == lanes) {
        e.vmovdqu32(dst.At(i, j), vx);
      } else {
        e.vmovdqu32(dst.At(i, j) | e.SetK1(valid), vx);
      }
    }
  }
  e.FreeVreg(y);
  e.FreeVreg(x);
}

}  // namespace amarena::jit
