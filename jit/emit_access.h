// Register accesses the kernel emitters share (emit_kernels.cc,
// emit_dot_kernels.cc): whole or masked vector loads and stores, the AVX2
// mask register, bf16 widened to f32 as it is loaded or broadcast, and the
// scaling by alpha. Internal to jit/.
#ifndef AMARENA_JIT_EMIT_ACCESS_H_
#define AMARENA_JIT_EMIT_ACCESS_H_

#include <cstdint>

#include "jit/emitter.h"

namespace amarena::jit {

// Loads or stores register r from/to `at`, `valid` of its `vw` lanes: a plain
// access for a whole vector, else under a mask (AVX2: vmaskmovps with the mask
// in `mask_reg`; AVX-512: k1). Masked loads zero the other lanes.
inline void VectorAccess(Emitter& e, bool load, int r, const Xbyak::Address& at,
                  int vw, int valid, int mask_reg) {
  const Xbyak::Xmm v = Emitter::VecW(r, vw);
  if (valid == vw) {
    load ? e.vmovups(v, at) : e.vmovups(at, v);
    return;
  }
  if (e.target().isa == Isa::kAvx512) {
    const Xbyak::Opmask& k = e.SetK1(valid);
    if (load) {
      e.vmovups(v | k | e.T_z, at);
    } else {
      e.vmovups(at | k, v);
    }
    return;
  }
  load ? e.vmaskmovps(v, Xbyak::Ymm(mask_reg), at)
       : e.vmaskmovps(at, Xbyak::Ymm(mask_reg), v);
}

// The register for an AVX2 mask when row ends in a partial vector, or -1.
inline int MaybeMaskReg(Emitter& e, int64_t cols, int vw) {
  if (vw == 1 || cols % vw == 0 || e.target().isa != Isa::kAvx2) return -1;
  int r = e.AllocVreg();
  e.LoadYmmMask(r, static_cast<int>(cols % vw));
  return r;
}

// bf16 -> f32 in a register: a bf16 is the top half of the f32 with the same
// value, so each 16-bit word is zero-extended to 32 bits and shifted left 16
// (within each lane: no lane crossing). Loads `valid` of `vw` bf16 elements,
// the j-th from `at(j)`, into register r as f32 lanes; the others read 0.
// Whole vectors: vpmovzxwd from memory; AVX-512 tails under k1 (masked-off
// words are not read); AVX2 tails word by word (vpinsrw), since AVX2 has no
// 16-bit masked load.
template <typename At>
void LoadWidened(Emitter& e, int r, At at, int vw, int valid) {
  const Xbyak::Xmm v = Emitter::VecW(r, vw);
  if (vw == 1) {
    // (w | w << 16) << 16 == w << 16 in lane 0.
    e.vpbroadcastw(Xbyak::Xmm(r), at(0));
  } else if (valid == vw) {
    e.vpmovzxwd(v, at(0));
  } else if (e.target().isa == Isa::kAvx512) {
    e.vpmovzxwd(v | e.SetK1(valid) | e.T_z, at(0));
  } else {
    e.vpxor(Xbyak::Xmm(r), Xbyak::Xmm(r), Xbyak::Xmm(r));
    for (int q = 0; q < valid; ++q)
      e.vpinsrw(Xbyak::Xmm(r), Xbyak::Xmm(r), at(q), static_cast<uint8_t>(q));
    e.vpmovzxwd(v, Xbyak::Xmm(r));
  }
  e.vpslld(v, v, 16);
}

// Broadcasts one bf16 element to every f32 lane of register r.
inline void BroadcastWidened(Emitter& e, int r, const Xbyak::Address& at, int vw) {
  const Xbyak::Xmm v = Emitter::VecW(r, vw);
  e.vpbroadcastw(v, at);
  e.vpslld(v, v, 16);
}

// Register r (vw lanes) times alpha, in place.
inline void Scale(Emitter& e, const Spec& s, int r, int vw) {
  if (vw == 1) {
    e.vmulss(Xbyak::Xmm(r), Xbyak::Xmm(r), e.AlphaVector(s.alpha));
  } else {
    const Xbyak::Xmm x = Emitter::VecW(r, vw);
    e.vmulps(x, x, e.AlphaVector(s.alpha));
  }
}

}  // namespace amarena::jit

#endif  // AMARENA_JIT_EMIT_ACCESS_H_
