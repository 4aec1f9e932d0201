// The dot-product kernels' catalogue rows: kDot (f32, or bf16 widened) and
// kDotBf16 (vdpbf16ps), one output each from a row of A and a column of B.
// The table itself is in core/kernels.cc.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/kernel_rules.h"

namespace amarena::kernels_internal {

// --- kDot -------------------------------------------------------------------
// Registers: min(v, 4) accumulators + 1 for A's vector (+ 1 for B's and, with
// AVX2, 1 mask when the last vector is partial). Cost: loads (two per vector),
// FMAs, or the latency of the longest accumulator chain (4 cycles an FMA),
// whichever is highest, plus the horizontal sum and c's update.
// One vector of k per FMA: the target's f32 lanes; vdpbf16ps takes twice
// that (k-pairs).
int64_t DotLanes(KernelId id, const Target& t) {
  return id == KernelId::kDotBf16 ? 2 * t.f32_lanes : t.f32_lanes;
}
int64_t DotVectors(KernelId id, const Spec& s, const Target& t) {
  return (s.k + DotLanes(id, t) - 1) / DotLanes(id, t);
}
int DotAccumulators(KernelId id, const Spec& s, const Target& t) {
  return static_cast<int>(
      std::min<int64_t>(DotVectors(id, s, t), kMaxDotAccumulators));
}
bool DotShapeOk(KernelId id, const Spec& s, const Target& t) {
  if (s.kind != Kind::kMatmulAccum || s.m != 1 || s.n != 1 || s.k < 2 ||
      !F32Output(s))
    return false;
  for (int i = 0; i < 3; ++i)
    if (s.aux[i].level != Level::kL1) return false;
  const TensorAux &a = s.aux[0], &b = s.aux[1];
  return a.layout.row_major() && a.layout.WholeVectors(DotLanes(id, t)) &&
         !b.layout.row_major() && b.layout.WholeVectors(DotLanes(id, t)) &&
         DotVectors(id, s, t) <= kMaxDotVectors;
}
bool DotApplies(const Spec& s, const Target& t) {
  return DotShapeOk(KernelId::kDot, s, t);
}
// A's vector, B's when it is bf16 (widened) or partial (an f32 B's whole
// vectors are FMA memory operands), and with AVX2 a mask for an f32
// operand's partial last vector (a bf16 one is gathered word by word).
// Each input may be f32 or bf16 on its own (f32*bf16: activations times
// weights).
int DotScratch(const Spec& s, const Target& t) {
  const int acc = DotAccumulators(KernelId::kDot, s, t);
  const bool partial = s.k % t.f32_lanes != 0;
  const bool any_f32 = !Bf16(s.aux[0]) || !Bf16(s.aux[1]);
  return acc + 1 + (Bf16(s.aux[1]) || partial ? 1 : 0) +
         (partial && any_f32 && t.isa == Isa::kAvx2 ? 1 : 0);
}
// The horizontal sum and c's update every call pays, FMA prices beside its
// load and store of c.
inline constexpr int64_t kDotSumFmas = 6;
// FMA and vdpbf16ps latencies on Zen 4/5 (AMD's guide; not measured here).
inline constexpr int64_t kFmaLatencyCycles = 4;
inline constexpr int64_t kDpbf16LatencyCycles = 6;
// Loads (two per vector), FMAs (and widening), or the latency of the longest
// accumulator chain, whichever is highest, plus the horizontal sum and c's
// update.
int64_t DotCostOf(KernelId id, const Spec& s, const Target& t,
                  int64_t latency_cycles, int64_t widen) {
  const int64_t v = DotVectors(id, s, t), acc = DotAccumulators(id, s, t);
  const int64_t chain = (v + acc - 1) / acc * latency_cycles * 6;
  // A bf16 B may be prefetched down its columns (a load slot per 64 bytes,
  // charged whether or not its pitch makes the emitter issue them).
  const int64_t loads = 2 * v + (Bf16(s.aux[1]) ? (2 * s.k + 63) / 64 : 0);
  return std::max({v * t.FmaPrice() + widen, loads * t.LoadPrice(), chain}) +
         (kDotSumFmas + (Scaled(s) ? 1 : 0)) * t.FmaPrice() + t.LoadPrice() +
         t.StorePrice();
}
// Dot products need A's rows and B's columns contiguous along k. No rewrite
// makes an operand column-major or changes A's layout (packing makes B row
// panels), so where A is not row-major or B not column-major none can run
// below.
bool DotMayRun(const Spec& s) {
  return s.IsMatmul() && s.aux[0].layout.row_major() &&
         !s.aux[1].layout.row_major();
}
// Most: 4 accumulators + A's vector + B's (+ an AVX2 mask): 7 with AVX2, 6
// with AVX-512; bf16 (widened) 4 + 2.
int DotMostScratch(const Spec& s, const Target& t) {
  return DotMayRun(s) ? kMaxDotAccumulators + 2 + (t.isa == Isa::kAvx2 ? 1 : 0)
                      : 0;
}
// Each vector of k costs at least an FMA, two loads (A's and B's), and its
// share of the accumulator chains: at most kMaxDotAccumulators of them, each
// op one latency behind the last on its chain (DotCostOf).
int64_t DotOpPrice(const Target& t, int64_t latency_cycles) {
  return std::max(
      {t.FmaPrice(), 2 * t.LoadPrice(), latency_cycles * 6 / kMaxDotAccumulators});
}
// ceil(k/lanes) FMAs per output (bf16 widened to f32 lanes first).
std::optional<PeakRate> DotRate(const Spec& s, const Target& t) {
  if (!DotMayRun(s)) return std::nullopt;
  return PeakRate{.dot = true,
                  .lanes = t.f32_lanes,
                  .op_price = DotOpPrice(t, kFmaLatencyCycles),
                  .per_call = kDotSumFmas * t.FmaPrice()};
}
int64_t DotCost(const Spec& s, const Target& t) {
  const int64_t v = DotVectors(KernelId::kDot, s, t);
  const int64_t widened = (Bf16(s.aux[0]) ? 1 : 0) + (Bf16(s.aux[1]) ? 1 : 0);
  return DotCostOf(KernelId::kDot, s, t, kFmaLatencyCycles,
                   widened * v * WidenCost(t));
}

// --- kDotBf16 ---------------------------------------------------------------
// Registers: min(v, 4) accumulators + A's vector (+ B's for a partial last
// vector, loaded under a 32-bit word mask). vdpbf16ps runs on the FMA pipes
// with a 6-cycle latency on Zen 4/5 (AMD's guide; not measured here).
bool DotBf16Applies(const Spec& s, const Target& t) {
  return t.bf16_dot && Bf16(s.aux[0]) && Bf16(s.aux[1]) &&
         DotShapeOk(KernelId::kDotBf16, s, t);
}
int DotBf16Scratch(const Spec& s, const Target& t) {
  const bool partial = s.k % DotLanes(KernelId::kDotBf16, t) != 0;
  return DotAccumulators(KernelId::kDotBf16, s, t) + 1 + (partial ? 1 : 0);
}
// Most: 4 accumulators + A's vector + B's partial one.
int DotBf16MostScratch(const Spec& s, const Target& t) {
  return DotMayRun(s) && PairsMayRun(s, t) ? kMaxDotAccumulators + 2 : 0;
}
// ceil(k / (2 lanes)) vdpbf16ps per output: 2 * f32_lanes bf16 of k each.
std::optional<PeakRate> DotBf16Rate(const Spec& s, const Target& t) {
  if (!DotMayRun(s) || !PairsMayRun(s, t)) return std::nullopt;
  return PeakRate{.dot = true,
                  .lanes = 2 * t.f32_lanes,
                  .op_price = DotOpPrice(t, kDpbf16LatencyCycles),
                  .per_call = kDotSumFmas * t.FmaPrice()};
}
int64_t DotBf16Cost(const Spec& s, const Target& t) {
  return DotCostOf(KernelId::kDotBf16, s, t, kDpbf16LatencyCycles, 0);
}

}  // namespace amarena::kernels_internal
