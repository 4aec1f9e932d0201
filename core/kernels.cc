#include "core/kernels.h"

#include <algorithm>
#include <iterator>

#include "core/kernel_rules.h"

namespace amarena {
namespace kernels_internal {

bool AllF32(const Spec& s) {
  for (int i = 0; i < s.NumOperands(); ++i)
    if (s.aux[i].dtype != DType::kF32) return false;
  return true;
}

// Matmul kernels accumulate in f32; each input may be f32 or bf16 (widened
// as it is loaded).
bool F32Output(const Spec& s) { return s.aux[2].dtype == DType::kF32; }
bool Bf16(const TensorAux& a) { return a.dtype == DType::kBF16; }

// alpha (Spec::alpha) is applied inside the matmul kernels, each call
// scaling its own products before they reach C: a k-split's slices are
// separate calls, so every product is scaled exactly once, and the
// accumulators never hold a scaled partial sum that a later call could scale
// again. The broadcast kernel scales whichever is fewer, its B vectors or its
// A broadcasts; the dot kernels scale the one horizontal sum; the k-pair
// kernels do not take alpha (they are for the plain product). Each scaling is
// one multiply, priced as an FMA.
bool Scaled(const Spec& s) { return s.alpha != 1.0f; }

// Widening a bf16 vector takes two FP-pipe uops (a zero-extending shuffle,
// fused with its load, and a shift) where Zen 5 has four FP pipes of which two
// run FMAs: priced as one FMA slot. An estimate from the pipe counts, not
// measured.
int64_t WidenCost(const Target& t) { return t.FmaPrice(); }

// Vectors of `lanes` read or written along the rows of a memory tile whose
// rows are unaligned (Layout::UnalignedRows) straddle two lines: a 64-byte
// one nearly always, a 32-byte one half the time. Each is priced half of
// `slot` (a load's or a store's), added to the kernel's throughput bound:
// on the Intel guest a 64³ product whose B rows start 4 bytes apart within
// a line ran 5-7 % slower than dense (about a third of a zmm load slot per
// vector), 2.5-6 % with AVX2 (half a ymm slot per vector), and as fast
// with B packed. An estimate from those runs, not calibrated. Half a slot
// is rounded up per vector, so a tile's accesses cost no less for being
// split into smaller kernels. Vectors of two lanes or more count, masked
// tails too (SplitVectors); a lone element never straddles (nor does a 1x1
// tile, whose layout says nothing of its matrix), so a row cut into a tile
// and a one-element remainder pays as the whole row does.
int64_t SplitPrice(int64_t slot) { return (slot + 1) / 2; }
int64_t SplitVectorCost(const TensorSpec& mem, int64_t vectors, int lanes,
                        int64_t slot) {
  if (lanes == 1 ||
      !mem.layout().UnalignedRows(mem.rows, mem.cols, SizeOf(mem.aux.dtype)))
    return 0;
  return vectors * SplitPrice(slot);
}

// A memory tile whose columns can be read vw at a time by one vector access:
// row-major, not interleaved in k-pairs, and no vector straddles two panels.
// A last partial vector per row is read or written under a mask (full-width
// vectors only).
bool ColumnsVectorisable(const TensorSpec& mem, int vw, const Target& t) {
  if (vw == 1) return true;
  const Layout& l = mem.layout();
  return (mem.cols % vw == 0 || vw == t.f32_lanes) && !l.paired() &&
         l.row_major() && l.WholeVectors(vw);
}

// Register tiles are whole vectors of 1, 8 or the target's lanes; at the
// target's full width the last vector of a row may be partial (masked tail).
bool RegisterTileOk(const TensorSpec& r, const Target& t) {
  int vw = r.aux.vector_width;
  return r.aux.level == Level::kVRF &&
         (vw == 1 || vw == t.f32_lanes || (vw == 8 && t.f32_lanes > 8)) &&
         (r.cols % vw == 0 || vw == t.f32_lanes);
}

// The vectors along a row of `cols` in vectors of `vw` lanes that hold two
// lanes or more (SplitVectorCost), and a register tile's.
int64_t SplitVectors(int64_t cols, int vw) {
  return cols / vw + (cols % vw >= 2 ? 1 : 0);
}
int64_t SplitVectors(const TensorSpec& r) {
  return r.rows * SplitVectors(r.cols, r.aux.vector_width);
}

// Whether a register tile's rows end in a partial vector.
bool Masked(const TensorSpec& r) {
  return r.aux.vector_width > 1 && r.cols % r.aux.vector_width != 0;
}

// AVX2 masks live in a vector register (vmaskmovps); AVX-512 uses k1.
int MaskScratch(const TensorSpec& r, const Target& t) {
  return Masked(r) && t.isa == Isa::kAvx2 ? 1 : 0;
}

// Which kernels' leaves a tree for `s` can hold, by their kind: its own (a
// matmul's as kMatmulAccum); for a matmul also moves (a register tile's loads
// and stores, packing copies) and zeros (to-accum); for a zero also moves (its
// register tile's stores).
bool MayHold(const Spec& s, Kind leaf) {
  if (s.IsMatmul()) return true;
  return leaf == s.kind || (s.kind == Kind::kZero && leaf == Kind::kMove);
}

// Both inputs bf16 on a target with vdpbf16ps: the k-pair kernels may run
// (a bf16 B may be cast to f32 below, never the other way).
bool PairsMayRun(const Spec& s, const Target& t) {
  return t.bf16_dot && s.IsMatmul() && Bf16(s.aux[0]) && Bf16(s.aux[1]);
}

// Whether B's rows may be read as vectors anywhere below a matmul: B is
// row-major, or it is outside L1, where a pack may copy it into row panels.
// Views keep a layout and only B is ever packed (from GL, L3 or L2), so a
// column-major B in L1 stays column-major in every tree below.
bool BRowsMayBeVectors(const Spec& s) {
  return s.aux[1].layout.row_major() || Faster(Level::kL1, s.aux[1].level);
}

// Whether B may be in k-pairs anywhere below: it is, or a pack may pair it
// (outside L1).
bool BPairsMayExist(const Spec& s) {
  return s.aux[1].layout.paired() || Faster(Level::kL1, s.aux[1].level);
}

// A masked AVX2 store (vmaskmovps m256) is microcoded on AMD cores: priced as
// six stores (an estimate, not measured); masked loads and AVX-512 masked
// accesses cost what plain ones do.
int64_t MaskedStoreCost(const Target& t) {
  return t.isa == Isa::kAvx2 ? 6 * t.StorePrice() : t.StorePrice();
}

// --- kBroadcastFma
// Registers: C's m * ceil(n/vw) accumulators are the operand; scratch =
// ceil(n/vw) B vectors + 1 broadcast (+ 1 mask with AVX2 when the last vector
// is partial). With v8 and m=6, n=16: 12 accumulators + 2 + 1 = 15 of 16 ymm.
int64_t VectorsPerRow(const Spec& s) {
  int vw = s.aux[s.OutputIndex()].vector_width;
  return (s.n + vw - 1) / vw;
}
bool BroadcastFmaApplies(const Spec& s, const Target& t) {
  if (s.kind != Kind::kMatmulAccum || s.k != 1 || !F32Output(s)) return false;
  TensorSpec a = s.Operand(0), b = s.Operand(1), c = s.Operand(2);
  if (!RegisterTileOk(c, t)) return false;
  return a.aux.level == Level::kL1 && b.aux.level == Level::kL1 &&
         ColumnsVectorisable(b, c.aux.vector_width, t);
}
// bf16 operands: every B vector and every broadcast of A is widened; with
// AVX2 a partial last B vector is gathered word by word (one load each). A
// bf16 B may be prefetched (kPrefetchRows, kPrefetchPanelBytes): a load slot
// per 64 bytes, charged whether or not its pitch or panel length makes the
// emitter issue them. An f32 B's prefetches (a plain B whose rows are pages
// apart, which only the vector-matrix trees read, and panels where the
// host's table gives panel_prefetch_bytes) are not charged: a slot per
// vector would raise every f32 tree's price, and the panels' prefetches
// hide L2's latency, which the model does not charge either.
int64_t BroadcastFmaCost(const Spec& s, const Target& t) {
  int64_t nv = VectorsPerRow(s);
  int64_t fmas = s.m * nv, loads = nv + s.m;
  int64_t widen = (Bf16(s.aux[1]) ? nv : 0) + (Bf16(s.aux[0]) ? s.m : 0);
  if (Bf16(s.aux[1])) loads += (2 * s.n + 63) / 64;
  const TensorSpec c = s.Operand(2);
  if (Bf16(s.aux[1]) && Masked(c) && t.isa == Isa::kAvx2)
    loads += c.cols % c.aux.vector_width;
  const int64_t scale = Scaled(s) ? std::min(s.m, nv) : 0;
  const int64_t split =
      SplitVectorCost(s.Operand(1), SplitVectors(s.n, c.aux.vector_width),
                      c.aux.vector_width, t.LoadPrice());
  // Beside the FMAs (CostParams::split_beside_fma) or on top of them.
  const int64_t beside = t.cost.split_beside_fma ? split : 0;
  return std::max((fmas + scale) * t.FmaPrice() + widen * WidenCost(t),
                  loads * t.BroadcastLoadPrice() + beside) +
         (split - beside);
}
// Scratch: B's vectors and the broadcast; a bf16 B's AVX2 tail is gathered
// into its own register, so no mask register.
int BroadcastFmaScratchOf(const Spec& s, const Target& t) {
  const TensorSpec c = s.Operand(2);
  const int mask = Bf16(s.aux[1]) ? 0 : MaskScratch(c, t);
  return static_cast<int>(VectorsPerRow(s)) + 1 + mask;
}

// Most: ceil(n/vw) <= n B vectors (one lane per register at worst), the
// broadcast and a mask, with n at most the matmul's own.
int BroadcastFmaMostScratch(const Spec& s, const Target&) {
  return s.IsMatmul() ? static_cast<int>(std::min<int64_t>(s.n, 1 << 20)) + 2
                      : 0;
}
// m * ceil(n/vw) FMAs with vw at most the target's lanes, one k each,
// against ceil(n/vw) + m loads.
// A B that is not row-major and can no longer be packed (it is in L1) is
// read one element per register: vector width 1.
std::optional<PeakRate> BroadcastFmaRate(const Spec& s, const Target& t) {
  if (!s.IsMatmul()) return std::nullopt;
  return PeakRate{.lanes = BRowsMayBeVectors(s) ? t.f32_lanes : 1,
                  .op_price = t.FmaPrice(),
                  .loads_rows_and_vectors = true,
                  .load_price = t.BroadcastLoadPrice()};
}

// --- kScalarFma
// ------------------------------------------------------------------ Scratch: c
// and a in two xmm. The load-FMA-store chain through memory is latency bound
// (store forwarding ~5 cycles), hence the high price.
bool ScalarFmaApplies(const Spec& s, const Target&) {
  if (s.kind != Kind::kMatmulAccum || s.m != 1 || s.k != 1 || s.n != 1 ||
      !AllF32(s))
    return false;
  for (int i = 0; i < 3; ++i)
    if (s.aux[i].level != Level::kL1) return false;
  return true;
}
int ScalarFmaScratch(const Spec&, const Target&) { return 2; }
int ScalarFmaMostScratch(const Spec& s, const Target&) {
  return s.IsMatmul() ? 2 : 0;
}
// One multiply-add per call, priced as ten FMAs: more than the two loads
// LeastLoads counts for it, at up to five FMAs each.
std::optional<PeakRate> ScalarFmaRate(const Spec& s, const Target& t) {
  if (!s.IsMatmul()) return std::nullopt;
  return PeakRate{
      .op_price = t.FmaPrice(),
      .loads_rows_and_vectors = true,
      .load_price = std::min(t.BroadcastLoadPrice(), 5 * t.FmaPrice())};
}
int64_t ScalarFmaCost(const Spec& s, const Target& t) {
  return 5 * t.FmaPrice() * 2 + (Scaled(s) ? t.FmaPrice() : 0);
}

// --- kVectorZero
// -----------------------------------------------------------------
bool VectorZeroApplies(const Spec& s, const Target& t) {
  return s.kind == Kind::kZero && AllF32(s) && RegisterTileOk(s.Operand(0), t);
}
int NoScratch(const Spec&, const Target&) { return 0; }
int64_t VectorZeroCost(const Spec& s, const Target&) {
  return s.Operand(0).Registers();
}

// --- kMemZero
// -------------------------------------------------------------------- Full
// vectors along the contiguous dimension, then scalar stores for the rest.
int64_t MemZeroStores(const TensorSpec& t, int lanes) {
  int64_t inner = t.InnerExtent();
  return t.OuterExtent() * (inner / lanes + inner % lanes);
}
bool MemZeroApplies(const Spec& s, const Target& t) {
  if (s.kind != Kind::kZero || !AllF32(s)) return false;
  TensorSpec o = s.Operand(0);
  return o.aux.level == Level::kL1 && !o.layout().packed() &&
         MemZeroStores(o, t.f32_lanes) <= kMaxUnrolledStores;
}
int MemZeroScratch(const Spec&, const Target&) { return 1; }
int MemZeroMostScratch(const Spec& s, const Target&) {
  return MayHold(s, Kind::kZero) ? 1 : 0;
}
std::optional<PeakRate> NoRate(const Spec&, const Target&) {
  return std::nullopt;
}
int64_t MemZeroCost(const Spec& s, const Target& t) {
  const TensorSpec o = s.Operand(0);
  const int64_t vectors = o.OuterExtent() * (o.InnerExtent() / t.f32_lanes);
  return MemZeroStores(o, t.f32_lanes) * t.StorePrice() +
         SplitVectorCost(o, vectors, t.f32_lanes, t.StorePrice());
}

// --- kVectorLoad / kVectorStore
// --------------------------------------------------
bool MoveApplies(const Spec& s, const Target& t, Level from, Level to) {
  if (s.kind != Kind::kMove || !AllF32(s)) return false;
  TensorSpec src = s.Operand(0), dst = s.Operand(1);
  if (src.aux.level != from || dst.aux.level != to) return false;
  const TensorSpec& reg = to == Level::kVRF ? dst : src;
  const TensorSpec& mem = to == Level::kVRF ? src : dst;
  return RegisterTileOk(reg, t) &&
         ColumnsVectorisable(mem, reg.aux.vector_width, t);
}
// At most the AVX2 mask.
int VectorMoveMostScratch(const Spec& s, const Target& t) {
  return MayHold(s, Kind::kMove) && t.isa == Isa::kAvx2 ? 1 : 0;
}
int VectorLoadScratch(const Spec& s, const Target& t) {
  return MaskScratch(s.Operand(1), t);
}
int VectorStoreScratch(const Spec& s, const Target& t) {
  return MaskScratch(s.Operand(0), t);
}
bool VectorLoadApplies(const Spec& s, const Target& t) {
  return MoveApplies(s, t, Level::kL1, Level::kVRF);
}
bool VectorStoreApplies(const Spec& s, const Target& t) {
  return MoveApplies(s, t, Level::kVRF, Level::kL1);
}
int64_t VectorLoadCost(const Spec& s, const Target& t) {
  const TensorSpec r = s.Operand(1);
  return r.Registers() * t.LoadPrice() +
         SplitVectorCost(s.Operand(0), SplitVectors(r), r.aux.vector_width,
                         t.LoadPrice());
}
int64_t VectorStoreCost(const Spec& s, const Target& t) {
  TensorSpec r = s.Operand(0);
  const int64_t split = SplitVectorCost(s.Operand(1), SplitVectors(r),
                                        r.aux.vector_width, t.StorePrice());
  if (!Masked(r)) return r.Registers() * t.StorePrice() + split;
  return r.rows * ((r.Registers() / r.rows - 1) * t.StorePrice() +
                   MaskedStoreCost(t)) +
         split;
}

// --- kCopy ------------------------------------------------------------------
// Move between two L1 tiles (the inner step of a packing copy). Whole vectors
// where both tiles are contiguous along the same dimension and no vector
// straddles a panel, single elements otherwise; one scratch register.
// The whole vectors it copies, and all its operations (vectors and single
// elements).
int64_t CopyVectors(const Spec& s, int lanes) {
  TensorSpec src = s.Operand(0), dst = s.Operand(1);
  if (!src.layout().SameWalk(dst.layout()) ||
      !src.layout().WholeVectors(lanes) || !dst.layout().WholeVectors(lanes))
    return 0;
  return src.OuterExtent() * (src.InnerExtent() / lanes);
}
int64_t CopyOps(const Spec& s, int lanes) {
  return s.m * s.n - CopyVectors(s, lanes) * (lanes - 1);
}
// f32 -> f32, bf16 -> bf16, the cast bf16 -> f32, and f32 -> bf16 (a bf16
// C's f32 buffer written back, rounded to nearest even).
bool CopyDtypesOk(const Spec& s) {
  return s.aux[0].dtype == s.aux[1].dtype || Bf16(s.aux[0]) || Bf16(s.aux[1]);
}
bool Narrows(const Spec& s) {
  return s.kind == Kind::kMove && !Bf16(s.aux[0]) && Bf16(s.aux[1]);
}
// Never into the k-pair layout: kCopyPairs writes it whole (pair partners
// and all), which elementwise copies would not.
bool CopyApplies(const Spec& s, const Target& t) {
  if (s.kind != Kind::kMove || !CopyDtypesOk(s) || s.aux[1].layout.paired())
    return false;
  return s.aux[0].level == Level::kL1 && s.aux[1].level == Level::kL1 &&
         CopyOps(s, t.f32_lanes) <= kMaxUnrolledStores;
}
// One register for the value; rounding to bf16 takes a second (the rounding
// bias).
int CopyScratch(const Spec& s, const Target&) { return Narrows(s) ? 2 : 1; }
// A tree narrows only for a bf16 matmul output (its f32 buffer written back)
// or when it is such a move itself.
int CopyMostScratch(const Spec& s, const Target&) {
  if (!MayHold(s, Kind::kMove)) return 0;
  return Narrows(s) || (s.IsMatmul() && Bf16(s.aux[2])) ? 2 : 1;
}
// Narrowing: eight integer uops per vector (the rounding bias, the shift and
// the pack), priced as three widens.
// Vector copies of unaligned rows split as vector loads and stores do.
int64_t CopyCost(const Spec& s, const Target& t) {
  const bool cast = s.aux[0].dtype != s.aux[1].dtype;
  const int lanes = t.f32_lanes;
  const int64_t vectors = CopyVectors(s, lanes);
  return CopyOps(s, lanes) *
             (std::max(t.LoadPrice(), t.StorePrice()) +
              (Narrows(s) ? 3 * WidenCost(t) : cast ? WidenCost(t) : 0)) +
         SplitVectorCost(s.Operand(0), vectors, lanes, t.LoadPrice()) +
         SplitVectorCost(s.Operand(1), vectors, lanes, t.StorePrice());
}

}  // namespace kernels_internal

namespace {

using namespace kernels_internal;

// One row per KernelId, in its order.
constexpr KernelInfo kInfos[] = {
    {KernelId::kBroadcastFma, "broadcast_fma", Kind::kMatmulAccum,
     BroadcastFmaApplies, BroadcastFmaScratchOf, 2, BroadcastFmaMostScratch,
     BroadcastFmaCost, BroadcastFmaRate},
    {KernelId::kScalarFma, "scalar_fma", Kind::kMatmulAccum, ScalarFmaApplies,
     ScalarFmaScratch, 2, ScalarFmaMostScratch, ScalarFmaCost, ScalarFmaRate},
    {KernelId::kVectorZero, "vector_zero", Kind::kZero, VectorZeroApplies,
     NoScratch, 0, NoScratch, VectorZeroCost, NoRate},
    {KernelId::kMemZero, "mem_zero", Kind::kZero, MemZeroApplies,
     MemZeroScratch, 1, MemZeroMostScratch, MemZeroCost, NoRate},
    {KernelId::kVectorLoad, "vector_load", Kind::kMove, VectorLoadApplies,
     VectorLoadScratch, 0, VectorMoveMostScratch, VectorLoadCost, NoRate},
    {KernelId::kVectorStore, "vector_store", Kind::kMove, VectorStoreApplies,
     VectorStoreScratch, 0, VectorMoveMostScratch, VectorStoreCost, NoRate},
    {KernelId::kCopy, "copy", Kind::kMove, CopyApplies, CopyScratch, 1,
     CopyMostScratch, CopyCost, NoRate},
    {KernelId::kDot, "dot", Kind::kMatmulAccum, DotApplies, DotScratch, 2,
     DotMostScratch, DotCost, DotRate},
    {KernelId::kDotBf16, "dot_bf16", Kind::kMatmulAccum, DotBf16Applies,
     DotBf16Scratch, 2, DotBf16MostScratch, DotBf16Cost, DotBf16Rate},
    {KernelId::kOuterBf16, "outer_bf16", Kind::kMatmulAccum, OuterBf16Applies,
     OuterBf16Scratch, 2, OuterBf16MostScratch, OuterBf16Cost, OuterBf16Rate},
    {KernelId::kCopyPairs, "copy_pairs", Kind::kMove, CopyPairsApplies,
     TwoScratch, 2, CopyPairsMostScratch, CopyPairsCost, NoRate},
    {KernelId::kWidenPairs, "widen_pairs", Kind::kMatmulAccum,
     WidenPairsApplies, WidenPairsScratch, 2, WidenPairsMostScratch,
     WidenPairsCost, WidenPairsRate},
};
static_assert(std::size(kInfos) == kNumKernels, "one row per KernelId");
constexpr bool RowsInIdOrder() {
  for (int i = 0; i < kNumKernels; ++i)
    if (kInfos[i].id != static_cast<KernelId>(i)) return false;
  return true;
}
static_assert(RowsInIdOrder(), "kInfos rows follow KernelId's order");

}  // namespace

const KernelInfo& Info(KernelId id) { return kInfos[static_cast<int>(id)]; }

// Unaligned: each vector of two lanes or more also pays SplitVectorCost's
// half slot (a store per element never does).
int64_t LeastRowStoreCost(int64_t cols, const Target& t, bool unaligned) {
  const int64_t whole = cols / t.f32_lanes, rest = cols % t.f32_lanes;
  const int64_t split = unaligned ? SplitPrice(t.StorePrice()) : 0;
  return whole * (t.StorePrice() + split) +
         (rest ? std::min(rest * t.StorePrice(),
                          MaskedStoreCost(t) + (rest >= 2 ? split : 0))
               : 0);
}

// Masked loads cost what plain ones do (VectorLoadCost); unaligned, the
// vectors of two lanes or more pay half a load slot more (a load per
// element does not, and costs more).
int64_t LeastRowLoadCost(int64_t cols, const Target& t, bool unaligned) {
  const int64_t split = unaligned ? SplitPrice(t.LoadPrice()) : 0;
  return (cols + t.f32_lanes - 1) / t.f32_lanes * t.LoadPrice() +
         SplitVectors(cols, t.f32_lanes) * split;
}

int64_t LeastRepackCost(const Spec& s, const Target& t) {
  if (!s.IsMatmul() || s.aux[1].layout.row_major() ||
      !Faster(Level::kL1, s.aux[1].level))
    return 0;
  return std::max(t.LoadPrice(), t.StorePrice());
}

namespace {
int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

int64_t LeastOps(const PeakRate& r, const Spec& s) {
  if (r.dot) return s.b * s.m * s.n * CeilDiv(s.k, r.lanes);
  return s.b * s.m * CeilDiv(s.k, r.k_per_op) * CeilDiv(s.n, r.lanes);
}

int64_t LeastCost(const PeakRate& r, const Spec& s) {
  const int64_t calls = r.dot ? s.b * s.m * s.n : 0;
  return LeastOps(r, s) * r.op_price + calls * r.per_call;
}

int64_t LeastLoads(const PeakRate& r, const Spec& s) {
  return s.b * CeilDiv(s.k, r.k_per_op) * (s.m + CeilDiv(s.n, r.lanes));
}

}  // namespace amarena
