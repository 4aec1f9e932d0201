// Emitters for the k-pair kernels of core/kernels.h (kOuterBf16, kCopyPairs,
// kWidenPairs):
// B interleaved in k-pairs (`pPx2`, core/tensor_spec.h), so that one
// vdpbf16ps multiplies a k-pair of A (broadcast) by a vector of B's k-pairs.
// Applicability, scratch registers and cost live in core/kernels_pairs.cc; these
// only assert. The vdpbf16ps kernels need AVX-512 BF16, kWidenPairs runs on
// both ISAs; register numbers may be 16-31 with AVX-512, so every
// instruction here is EVEX-encodable there.
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
  AMARENA_JIT_CHECK(s.alpha == 1.0f);  // the plain product only
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

// C[m, n] (registers) += A[m, 0..k-1] (f32) * B[0..k-1, n] (bf16 k-pairs),
// k = 1 or 2, with f32 FMAs on any target. Each vector of B's pairs (vw
// dwords: row 2r of a column in the low word, row 2r + 1 in the high word)
// is loaded once and split: row 2r is the dword shifted left 16, row 2r + 1
// the dword with its low word cleared (an AND with a constant from memory;
// k = 2 only). A partial last vector is loaded under a mask (AVX-512 k1;
// AVX2 vmaskmovps, the mask in a scratch register), so padding is never
// read. Two forms, whichever takes fewer registers (WidenPairsScratch): B
// held (every vector of B widened first, then per row of A one vbroadcastss
// per k and one FMA per vector of C's row), or A held (its m * k elements
// broadcast first, then each vector of B widened in turn and FMAed into
// every row of C).
void EmitWidenPairs(Emitter& e, const Spec& s, std::span<const View> v) {
  const View &a = v[0], &b = v[1], &c = v[2];
  AMARENA_JIT_CHECK(s.k <= 2 && c.vw >= 8 && s.alpha == 1.0f);
  AMARENA_JIT_CHECK(b.pair_offset == 2 && b.col_stride == 4);
  const int vw = c.vw;
  const int64_t nv = (s.n + vw - 1) / vw;
  const bool avx512 = e.target().isa == Isa::kAvx512;
  const bool hold_a = s.m * s.k + s.k < s.k * nv + 1;
  const int tail = static_cast<int>(s.n % vw);
  int mask = -1;
  if (!avx512 && tail != 0) {
    mask = e.AllocVreg();
    e.LoadYmmMask(mask, tail);
  }
  std::vector<int> allocated;
  auto alloc = [&] {
    allocated.push_back(e.AllocVreg());
    return allocated.back();
  };
  auto vec = [&](int r) { return Emitter::VecW(r, vw); };
  // Loads vector j of B's pairs into lo and splits it: lo = row 2r, hi =
  // row 2r + 1 (when k = 2).
  auto load_split = [&](int64_t j, int lo, int hi) {
    const int valid = static_cast<int>(std::min<int64_t>(vw, s.n - j * vw));
    if (valid == vw) {
      e.vmovups(vec(lo), b.At(0, j * vw));
    } else if (avx512) {
      e.vmovups(vec(lo) | e.SetK1(valid) | e.T_z, b.At(0, j * vw));
    } else {
      e.vmaskmovps(vec(lo), Xbyak::Ymm(mask), b.At(0, j * vw));
    }
    if (s.k == 2) {
      if (avx512) {
        e.vpandd(vec(hi), vec(lo), e.HighWords());
      } else {
        e.vpand(vec(hi), vec(lo), e.HighWords());
      }
    }
    e.vpslld(vec(lo), vec(lo), 16);
  };
  auto fma = [&](int64_t i, int64_t j, int a_reg, int b_reg) {
    e.vfmadd231ps(vec(c.Reg(i, j * vw)), vec(a_reg), vec(b_reg));
  };
  if (hold_a) {
    std::vector<int> bcast;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t kk = 0; kk < s.k; ++kk) {
        bcast.push_back(alloc());
        e.vbroadcastss(vec(bcast.back()), a.At(i, kk));
      }
    const int lo = alloc(), hi = s.k == 2 ? alloc() : -1;
    for (int64_t j = 0; j < nv; ++j) {
      load_split(j, lo, hi);
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t kk = 0; kk < s.k; ++kk)
          fma(i, j, bcast[static_cast<size_t>(i * s.k + kk)],
              kk == 0 ? lo : hi);
    }
  } else {
    std::vector<int> rows[2];
    for (int64_t j = 0; j < nv; ++j) {
      rows[0].push_back(alloc());
      rows[1].push_back(s.k == 2 ? alloc() : -1);
      load_split(j, rows[0].back(), rows[1].back());
    }
    const int t = alloc();
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t kk = 0; kk < s.k; ++kk) {
        e.vbroadcastss(vec(t), a.At(i, kk));
        for (int64_t j = 0; j < nv; ++j)
          fma(i, j, t, rows[kk][static_cast<size_t>(j)]);
      }
  }
  for (auto it = allocated.rbegin(); it != allocated.rend(); ++it)
    e.FreeVreg(*it);
  if (mask >= 0) e.FreeVreg(mask);
}

}  // namespace amarena::jit
