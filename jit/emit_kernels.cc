// One emitter per row of the kernel catalogue (core/kernels.h), listed in
// kEmitters in the catalogue's order: a row without its emitter does not
// compile. Applicability, scratch registers and cost live in the row; each
// emitter relies on them (and only asserts: the search has already checked)
// and takes scratch registers only through AllocVreg, so
// tests/jit/kernels_test.cc can hold it to the row's scratch_vregs.
#include <iterator>

#include "jit/emit_access.h"
#include "jit/emit_check.h"
#include "jit/emitter.h"

namespace amarena::jit {
namespace {

using Xbyak::Xmm;

// Prefetches what the broadcast kernel will read of B later (core/kernels.h,
// kPrefetchRows, kPrefetchPanelBytes): one prefetcht0 per 64 bytes of the
// `n` elements (`es` bytes each) it reads now. A B streaming from memory,
// where the host's table says prefetching a stream pays for B's dtype under
// this ISA (Target::StreamPrefetch; with kStreamPrefetchL2, prefetcht1 of
// the row ahead one line further along); an f32 B in column panels, as far
// ahead as the table says (CostParams::panel_prefetch_bytes; 0: not).
void PrefetchB(Emitter& e, const View& b, int64_t n, int vw, int es) {
  if (vw == 1) return;
  const CostParams& cost = e.target().cost;
  const int64_t stream = e.target().StreamPrefetch(es);
  int64_t rows_ahead = 0, step = 64, lead = 0;
  bool to_l2 = false;
  if (stream != 0 && b.panel_axis == Axis::kNone &&
      b.row_stride >= kPrefetchMinPitch) {
    rows_ahead = kPrefetchRows;
    if (stream == kStreamPrefetchL2) {
      to_l2 = true;
      lead = kLineBytes;
    }
  } else if (stream != 0 && es == 2 &&
             b.panel_run >= kPrefetchMinPanel) {
    rows_ahead = (kPrefetchPanelBytes + b.row_stride - 1) / b.row_stride;
    // Across panels each is its own run.
    if (b.panel_axis == Axis::kCols) step = std::min<int64_t>(64, es * b.panel);
  } else if (es == 4 && b.panel_run > 0 && b.row_stride > 0 &&
             cost.panel_prefetch_bytes > 0) {
    // A packed B (a tile within one panel keeps panel_run, its strides
    // plain).
    rows_ahead = std::max<int64_t>(1, cost.panel_prefetch_bytes / b.row_stride);
    if (b.panel_axis == Axis::kCols) step = std::min<int64_t>(64, es * b.panel);
  }
  if (rows_ahead == 0) return;
  for (int64_t byte = lead; byte < lead + es * n; byte += step) {
    const int64_t off = b.Offset(rows_ahead, byte / es);
    if (off != static_cast<int32_t>(off)) continue;
    if (to_l2) {
      e.prefetcht1(e.ptr[b.base + static_cast<int32_t>(off)]);
    } else {
      e.prefetcht0(e.ptr[b.base + static_cast<int32_t>(off)]);
    }
  }
}

// In the tile that fills a buffer on first use (View::tee, B read from
// where it is), prefetches into L2 the next tile's piece of this row of B:
// the lines after the `bytes` read now, which the next tile along n reads
// (core/kernels.h, kFillPrefetchMinPitch). A pitch the hardware's stride
// prefetcher follows needs none.
void PrefetchNextTile(Emitter& e, const View& b, int64_t bytes) {
  if (!b.tee || b.row_stride <= kFillPrefetchMinPitch) return;
  // The first byte past each line the next piece reaches beyond this one's
  // last (whatever the row's alignment): one prefetch per line.
  for (int64_t byte = 0; byte < bytes; byte += kLineBytes) {
    const int64_t off = b.Offset(0, 0) + bytes + byte + kLineBytes - 1;
    if (off != static_cast<int32_t>(off)) continue;
    e.prefetcht1(e.ptr[b.base + static_cast<int32_t>(off)]);
  }
}

// C[m, n] (registers) += alpha * A[m, 1] * B[1, n]. Registers: m*ceil(n/vw)
// accumulators (the C operand) + ceil(n/vw) for B's row + 1 broadcast (+ 1
// AVX2 mask for a partial last vector), as BroadcastFmaScratch says. alpha
// != 1 scales B's vectors as they are loaded, or each broadcast of A when
// those are fewer (core/kernels.cc, Scaled).
void BroadcastFma(Emitter& e, const Spec& s, std::span<const View> v) {
  const View &a = v[0], &b = v[1], &c = v[2];
  const int vw = c.vw;
  const int64_t nv = (s.n + vw - 1) / vw;
  const bool scale_b = s.alpha != 1.0f && nv <= s.m;
  const bool scale_a = s.alpha != 1.0f && !scale_b;
  const bool a_bf16 = s.aux[0].dtype == DType::kBF16;
  const bool b_bf16 = s.aux[1].dtype == DType::kBF16;
  const int mask = b_bf16 ? -1 : MaybeMaskReg(e, s.n, vw);
  PrefetchB(e, b, s.n, vw, b_bf16 ? 2 : 4);
  PrefetchNextTile(e, b, (b_bf16 ? 2 : 4) * s.n);
  std::vector<int> bregs;
  for (int64_t j = 0; j < nv; ++j) {
    int r = e.AllocVreg();
    bregs.push_back(r);
    int valid = static_cast<int>(std::min<int64_t>(vw, s.n - j * vw));
    // The lanes are consecutive elements in memory, or just one (B one
    // column wide, whatever its pitch: a 1x1 tile is canonically row-major).
    if (b_bf16) {
      AMARENA_JIT_CHECK(vw == 1 || valid == 1 || b.col_stride == 2 ||
                        b.panel_axis == Axis::kCols);
      LoadWidened(
          e, r, [&](int q) { return b.At(0, j * vw + q); }, vw, valid);
    } else if (vw == 1) {
      e.vmovss(Xmm(r), b.At(0, j));
    } else {
      AMARENA_JIT_CHECK(b.col_stride == 4 || b.panel_axis == Axis::kCols ||
                        valid == 1);
      VectorAccess(e, /*load=*/true, r, b.At(0, j * vw), vw, valid, mask);
      // Filling a buffer on first use: each vector as loaded, a partial
      // one under the same mask.
      if (b.tee)
        VectorAccess(e, /*load=*/false, r, b.tee->At(0, j * vw), vw, valid,
                     mask);
    }
    if (scale_b) Scale(e, s, r, vw);
  }
  int t = e.AllocVreg();
  for (int64_t i = 0; i < s.m; ++i) {
    if (a_bf16) {
      BroadcastWidened(e, t, a.At(i, 0), vw);
    } else if (vw == 1) {
      e.vmovss(Xmm(t), a.At(i, 0));
    } else {
      e.vbroadcastss(Emitter::VecW(t, vw), a.At(i, 0));
    }
    if (scale_a) Scale(e, s, t, vw);
    for (int64_t j = 0; j < nv; ++j) {
      if (vw == 1) {
        e.vfmadd231ss(Xmm(c.Reg(i, j)), Xmm(t), Xmm(bregs[j]));
      } else {
        e.vfmadd231ps(Emitter::VecW(c.Reg(i, j * vw), vw), Emitter::VecW(t, vw),
                      Emitter::VecW(bregs[j], vw));
      }
    }
  }
  e.FreeVreg(t);
  for (auto it = bregs.rbegin(); it != bregs.rend(); ++it) e.FreeVreg(*it);
  if (mask >= 0) e.FreeVreg(mask);
}

// c += alpha * a * b with every operand in memory; two scratch xmm.
void ScalarFma(Emitter& e, const Spec& s, std::span<const View> v) {
  int acc = e.AllocVreg(), x = e.AllocVreg();
  e.vmovss(Xmm(acc), v[2].At(0, 0));
  e.vmovss(Xmm(x), v[0].At(0, 0));
  if (s.alpha != 1.0f) Scale(e, s, x, 1);
  e.vfmadd231ss(Xmm(acc), Xmm(x), v[1].At(0, 0));
  e.vmovss(v[2].At(0, 0), Xmm(acc));
  e.FreeVreg(x);
  e.FreeVreg(acc);
}

void VectorZero(Emitter& e, const Spec&, std::span<const View> v) {
  for (int r : v[0].regs) e.Zero(r);
}

// Stores along the contiguous dimension: whole vectors, then scalars. One
// scratch.
void MemZero(Emitter& e, const Spec& s, std::span<const View> v) {
  const View& o = v[0];
  const TensorSpec t = s.Operand(0);
  const bool row_major = t.layout().row_major();
  const int lanes = e.target().f32_lanes;
  int z = e.AllocVreg();
  e.Zero(z);
  for (int64_t outer = 0; outer < t.OuterExtent(); ++outer) {
    int64_t inner = 0;
    auto at = [&](int64_t p) {
      return row_major ? o.At(outer, p) : o.At(p, outer);
    };
    if ((row_major ? o.col_stride : o.row_stride) == 4)
      for (; inner + lanes <= t.InnerExtent(); inner += lanes)
        e.vmovups(at(inner), e.Vec(z));
    for (; inner < t.InnerExtent(); ++inner) e.vmovss(at(inner), Xmm(z));
  }
  e.FreeVreg(z);
}

// Between a memory tile and a register tile, one access per register; a
// partial last vector per row goes under a mask (AVX2: one scratch register).
void VectorMove(Emitter& e, const View& mem, const View& reg, bool load) {
  const int mask = MaybeMaskReg(e, reg.cols, reg.vw);
  for (int64_t i = 0; i < reg.rows; ++i) {
    for (int64_t j = 0; j < reg.cols; j += reg.vw) {
      int r = reg.Reg(i, j);
      if (reg.vw == 1) {
        load ? e.vmovss(Xmm(r), mem.At(i, j)) : e.vmovss(mem.At(i, j), Xmm(r));
      } else {
        int valid = static_cast<int>(std::min<int64_t>(reg.vw, reg.cols - j));
        // The lanes are consecutive elements in memory, or just one (a
        // column-major tile one column wide: one element per register).
        AMARENA_JIT_CHECK(mem.col_stride == 4 ||
                          mem.panel_axis == Axis::kCols || valid == 1);
        VectorAccess(e, load, r, mem.At(i, j), reg.vw, valid, mask);
      }
    }
  }
  if (mask >= 0) e.FreeVreg(mask);
}

// The f32 lanes of register x rounded to bf16, to nearest even as
// core/reference.cc rounds (x + 0x7fff + the bit above the cut, then the top
// half), each left in the low word of its dword. `t` is a scratch register;
// `lanes` 4 (xmm), 8 or 16. The constant 0x7fff is all ones shifted right by
// 17 (vpternlogd with zmm: vpcmpeqd there writes an opmask).
void RoundToBf16(Emitter& e, int x, int t, int lanes) {
  const Xbyak::Xmm v = Emitter::VecW(x, lanes), u = Emitter::VecW(t, lanes);
  e.vpsrld(u, v, 16);
  e.vpslld(u, u, 31);
  e.vpsrld(u, u, 31);
  e.vpaddd(v, v, u);
  if (e.target().isa == Isa::kAvx512) {
    e.vpternlogd(u, u, u, 0xff);
  } else {
    e.vpcmpeqd(u, u, u);
  }
  e.vpsrld(u, u, 17);
  e.vpaddd(v, v, u);
  e.vpsrld(v, v, 16);
}

// dst = src between two memory tiles, as CopyOps in core/kernels.cc counts:
// whole vectors along the shared contiguous dimension, then single elements.
// bf16 -> bf16 moves vectors of half the bytes; bf16 -> f32 widens each
// vector (or element) on the way; f32 -> bf16 rounds each (RoundToBf16, a
// second scratch register) and packs the words: vpmovdw with AVX-512; with
// AVX2 vpackusdw (within each 128-bit lane; every dword is below 2^16, so
// nothing saturates) and vpermq to gather the two lanes' low quadwords.
void Copy(Emitter& e, const Spec& s, std::span<const View> v) {
  const View &src = v[0], &dst = v[1];
  const TensorSpec st = s.Operand(0), dt = s.Operand(1);
  const int lanes = e.target().f32_lanes;
  const bool same = st.layout().SameWalk(dt.layout());
  const bool vec = same && st.layout().WholeVectors(lanes) &&
                   dt.layout().WholeVectors(lanes);
  const bool row_major = !same || st.layout().row_major();
  const int64_t inner = row_major ? s.n : s.m, outer = row_major ? s.m : s.n;
  const bool from_bf16 = st.aux.dtype == DType::kBF16;
  const bool to_bf16 = dt.aux.dtype == DType::kBF16;
  const bool narrow = to_bf16 && !from_bf16;
  int x = e.AllocVreg();
  const int t = narrow ? e.AllocVreg() : -1;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t p = 0;
    auto at = [&](const View& w, int64_t q) {
      return row_major ? w.At(o, q) : w.At(q, o);
    };
    if (vec) {
      for (; p + lanes <= inner; p += lanes) {
        if (narrow) {
          e.vmovups(e.Vec(x), at(src, p));
          RoundToBf16(e, x, t, lanes);
          if (lanes == 16) {
            e.vpmovdw(at(dst, p), Xbyak::Zmm(x));
          } else {
            const Xbyak::Ymm y(x);
            e.vpackusdw(y, y, y);
            e.vpermq(y, y, 0x08);
            e.vmovdqu(at(dst, p), Xmm(x));
          }
        } else if (to_bf16) {  // lanes bf16: half a vector of bytes
          const Xbyak::Xmm h = Emitter::VecW(x, lanes / 2);
          e.vmovups(h, at(src, p));
          e.vmovups(at(dst, p), h);
        } else if (from_bf16) {
          LoadWidened(
              e, x, [&](int q) { return at(src, p + q); }, lanes, lanes);
          e.vmovups(at(dst, p), e.Vec(x));
        } else {
          e.vmovups(e.Vec(x), at(src, p));
          e.vmovups(at(dst, p), e.Vec(x));
        }
      }
    }
    for (; p < inner; ++p) {
      if (narrow) {
        e.vmovss(Xmm(x), at(src, p));
        RoundToBf16(e, x, t, 4);
        e.vpextrw(at(dst, p), Xmm(x), 0);
      } else if (to_bf16) {
        e.vpbroadcastw(Xmm(x), at(src, p));
        e.vpextrw(at(dst, p), Xmm(x), 0);
      } else if (from_bf16) {
        LoadWidened(
            e, x, [&](int) { return at(src, p); }, 1, 1);
        e.vmovss(at(dst, p), Xmm(x));
      } else {
        e.vmovss(Xmm(x), at(src, p));
        e.vmovss(at(dst, p), Xmm(x));
      }
    }
  }
  if (t >= 0) e.FreeVreg(t);
  e.FreeVreg(x);
}

void VectorLoad(Emitter& e, const Spec&, std::span<const View> v) {
  VectorMove(e, v[0], v[1], /*load=*/true);
}
void VectorStore(Emitter& e, const Spec&, std::span<const View> v) {
  VectorMove(e, v[1], v[0], /*load=*/false);
}

using KernelEmitter = void (*)(Emitter&, const Spec&, std::span<const View>);
struct EmitterRow {
  KernelId id;
  KernelEmitter emit;
};

// One per catalogue row, in KernelId's order.
constexpr EmitterRow kEmitters[] = {
    {KernelId::kBroadcastFma, BroadcastFma},
    {KernelId::kScalarFma, ScalarFma},
    {KernelId::kVectorZero, VectorZero},
    {KernelId::kMemZero, MemZero},
    {KernelId::kVectorLoad, VectorLoad},
    {KernelId::kVectorStore, VectorStore},
    {KernelId::kCopy, Copy},
    {KernelId::kDot, EmitDot},
    {KernelId::kDotBf16, EmitDotBf16},
    {KernelId::kOuterBf16, EmitOuterBf16},
    {KernelId::kCopyPairs, EmitCopyPairs},
    {KernelId::kWidenPairs, EmitWidenPairs},
};
static_assert(std::size(kEmitters) == kNumKernels,
              "every catalogue row has an emitter");
constexpr bool EmittersInIdOrder() {
  for (int i = 0; i < kNumKernels; ++i)
    if (kEmitters[i].id != static_cast<KernelId>(i)) return false;
  return true;
}
static_assert(EmittersInIdOrder(), "kEmitters follows KernelId's order");

}  // namespace

void EmitKernel(Emitter& e, const Spec& spec, KernelId id,
                std::span<const View> views) {
  const int i = static_cast<int>(id);
  AMARENA_JIT_CHECK(i >= 0 && i < kNumKernels);
  // Only the broadcast kernel fills a buffer on first use (View::tee).
  for (const View& v : views)
    AMARENA_JIT_CHECK(!v.tee || id == KernelId::kBroadcastFma);
  kEmitters[i].emit(e, spec, views);
}

}  // namespace amarena::jit
