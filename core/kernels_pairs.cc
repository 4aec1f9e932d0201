// The k-pair kernels' catalogue rows: kOuterBf16 (vdpbf16ps outer
// products), kCopyPairs (interleaving a bf16 B into k-pairs) and kWidenPairs
// (f32 A times a k-pair bf16 B). The table itself is in core/kernels.cc.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/kernel_rules.h"

namespace amarena::kernels_internal {

// --- kOuterBf16 -------------------------------------------------------------
// Registers: C's m * ceil(n/vw) accumulators are the operand; scratch =
// ceil(n/vw) vectors of B's pairs + 1 broadcast: m = 4, n = 96 takes 24 + 6 +
// 1 = 31 of 32 zmm. A vector of vw columns of B is vw pairs, 4 * vw
// contiguous bytes while no vector straddles a panel (pack % vw == 0).
// k = 1 (the last row of an odd k) reads B's first row of a pair and A's
// single element; both are shifted into the high word of each dword, so
// whatever the pair partner holds is multiplied by zero.
bool OuterBf16Applies(const Spec& s, const Target& t) {
  if (!t.bf16_dot || s.kind != Kind::kMatmulAccum || s.k > 2 || !F32Output(s) ||
      Scaled(s))
    return false;
  const TensorSpec a = s.Operand(0), b = s.Operand(1), c = s.Operand(2);
  const int vw = c.aux.vector_width;
  if (!RegisterTileOk(c, t) || vw < 8) return false;
  const bool a_pairs =
      s.k == 1 || (a.layout().row_major() && !a.layout().packed());
  return Bf16(a.aux) && a.aux.level == Level::kL1 && a_pairs && Bf16(b.aux) &&
         b.aux.level == Level::kL1 && b.layout().paired() &&
         b.layout().WholeVectors(vw);
}
int OuterBf16Scratch(const Spec& s, const Target&) {
  return static_cast<int>(VectorsPerRow(s)) + 1;
}
// Most: ceil(n/vw) + 1 with vw at least 8.
int OuterBf16MostScratch(const Spec& s, const Target& t) {
  if (!PairsMayRun(s, t) || Scaled(s)) return 0;
  return static_cast<int>(std::min<int64_t>((s.n + 7) / 8, 1 << 20)) + 1;
}
// A vdpbf16ps covers one row's vector of at most the target's lanes and two
// k (a k-pair).
std::optional<PeakRate> OuterBf16Rate(const Spec& s, const Target& t) {
  if (!PairsMayRun(s, t) || Scaled(s) || !BPairsMayExist(s))
    return std::nullopt;
  return PeakRate{.lanes = t.f32_lanes,
                  .k_per_op = 2,
                  .k_per_call = 2,
                  .op_price = t.FmaPrice(),
                  .loads_rows_and_vectors = true};
}
// m * ceil(n/vw) vdpbf16ps on the FMA pipes (priced as FMAs; k = 1 adds a
// shift per B vector and per broadcast) against ceil(n/vw) + m loads and a
// prefetch per 64 bytes of B's row of pairs (kPairPrefetchRows, from
// kPairPrefetchMinRows rows on), and no
// faster than one vdpbf16ps latency (6 cycles on Zen 4/5, AMD's guide; not
// measured here) per call: successive calls along k update the same
// accumulators.
int64_t OuterBf16Cost(const Spec& s, const Target& t) {
  const int64_t nv = VectorsPerRow(s);
  const int64_t ops = s.m * nv + (s.k == 1 ? s.m + nv : 0);
  const int64_t prefetches =
      s.m >= kPairPrefetchMinRows ? (4 * s.n + 63) / 64 : 0;
  const int64_t loads = nv + s.m + prefetches;
  return std::max({ops * t.FmaPrice(), loads * t.LoadPrice(), int64_t{6 * 6}});
}

// --- kCopyPairs -------------------------------------------------------------
// One vector of pairs per two rows and f32_lanes columns: two widening loads,
// a shift, an or and a store, priced as two load/store slots and two widens
// (four FP-pipe uops, where a widen is two);
// plus a load slot per 64 bytes of each row for the prefetch of a plain B
// (kPrefetchRows), charged whatever the pitch, as in BroadcastFmaCost.
// Scratch: the two rows' vectors.
int64_t CopyPairsVectors(const Spec& s, const Target& t) {
  return (s.m + 1) / 2 * ((s.n + t.f32_lanes - 1) / t.f32_lanes);
}
bool CopyPairsApplies(const Spec& s, const Target& t) {
  if (!t.bf16_dot || s.kind != Kind::kMove) return false;
  const TensorSpec src = s.Operand(0), dst = s.Operand(1);
  return Bf16(src.aux) && Bf16(dst.aux) && src.aux.level == Level::kL1 &&
         dst.aux.level == Level::kL1 && src.layout().row_major() &&
         !src.layout().packed() && dst.layout().paired() &&
         dst.layout().WholeVectors(t.f32_lanes) &&
         CopyPairsVectors(s, t) <= kMaxUnrolledStores;
}
int TwoScratch(const Spec&, const Target&) { return 2; }
int CopyPairsMostScratch(const Spec& s, const Target& t) {
  return t.bf16_dot && MayHold(s, Kind::kMove) ? 2 : 0;
}
int64_t CopyPairsCost(const Spec& s, const Target& t) {
  return CopyPairsVectors(s, t) *
             (2 * std::max(t.LoadPrice(), t.StorePrice()) + 2 * WidenCost(t)) +
         s.m * ((2 * s.n + 63) / 64) * t.LoadPrice();
}

// --- kWidenPairs ------------------------------------------------------------
// Registers: C's m * ceil(n/vw) accumulators are the operand; scratch is
// the smaller of two forms (+ 1 AVX2 mask when the last vector is partial):
// B held, k rows of ceil(n/vw) widened vectors + 1 broadcast (m = 4, n = 16,
// k = 2 with v8: 8 + 4 + 1 = 13 of 16 ymm); or A held, m * k broadcasts + k
// widened rows of one vector at a time (m = 1, n = 64, k = 2 with v8: 8 + 2 +
// 2 = 12: a whole panel of 64 with AVX2, where tiles never cut a panel). B's
// vectors are whole in memory (pack % vw == 0), as for kOuterBf16; a k = 1
// leaf is the even row of its pair (slices along paired rows start on even
// rows), the low word of each dword.
// (Unscaled only: alpha never changes down a tree, so a scaled matmul holds
// no leaf it applies to.)
bool F32TimesBf16(const Spec& s) {
  return s.IsMatmul() && !Bf16(s.aux[0]) && Bf16(s.aux[1]) && !Scaled(s);
}
bool WidenPairsApplies(const Spec& s, const Target& t) {
  if (s.kind != Kind::kMatmulAccum || s.k > 2 || !F32Output(s) ||
      !F32TimesBf16(s))
    return false;
  const TensorSpec a = s.Operand(0), b = s.Operand(1), c = s.Operand(2);
  const int vw = c.aux.vector_width;
  return RegisterTileOk(c, t) && vw >= 8 && a.aux.level == Level::kL1 &&
         b.aux.level == Level::kL1 && b.layout().paired() &&
         b.layout().WholeVectors(vw);
}
bool WidenPairsHoldsA(const Spec& s) {
  return s.m * s.k + s.k < s.k * VectorsPerRow(s) + 1;
}
int WidenPairsScratch(const Spec& s, const Target& t) {
  const int64_t held =
      WidenPairsHoldsA(s) ? s.m * s.k + s.k : s.k * VectorsPerRow(s) + 1;
  return static_cast<int>(held) + MaskScratch(s.Operand(2), t);
}
// Most: B held, 2 * ceil(n/8) + 1 + a mask, with n at most the matmul's own
// (at least the A-held form whenever that is chosen).
int WidenPairsMostScratch(const Spec& s, const Target&) {
  if (!F32TimesBf16(s)) return 0;
  return static_cast<int>(std::min<int64_t>(2 * ((s.n + 7) / 8), 1 << 20)) + 2;
}
// One f32 FMA covers one row's vector and one k, as broadcast_fma.
std::optional<PeakRate> WidenPairsRate(const Spec& s, const Target& t) {
  if (!F32TimesBf16(s) || !BPairsMayExist(s)) return std::nullopt;
  return PeakRate{
      .lanes = t.f32_lanes, .k_per_call = 2, .op_price = t.FmaPrice()};
}
// m * k * ceil(n/vw) FMAs, and the split of each B vector: a shift per k
// (k = 2: a shift and an AND), each priced as an FMA slot, which it takes on
// Intel (shifts and ANDs issue to the FMA ports); against ceil(n/vw) + m * k
// loads. (broadcast_fma's widen, a zero-extension and a shift, is one slot:
// Intel runs the zero-extension on a port beside the FMAs.) Priced a slot
// per two split uops, paired B at M = 64 on AVX2 ran 0.91x the cast-packed
// f32 tree that this price keeps.
int64_t WidenPairsCost(const Spec& s, const Target& t) {
  const int64_t nv = VectorsPerRow(s);
  const int64_t fmas = s.m * s.k * nv, split_uops = s.k * nv;
  const int64_t loads = nv + s.m * s.k;
  return std::max((fmas + split_uops) * t.FmaPrice(), loads * t.LoadPrice());
}

}  // namespace amarena::kernels_internal
