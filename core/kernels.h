// The microkernel catalogue: one row per kernel holding every fact the search
// and the cost model use about it (KernelInfo): which Specs it applies to, the
// scratch vector registers it takes (for one Spec, the fewest, and the most
// under any Spec), its cost, and its peak rate (its share of the lower bound).
// The search and the cost model fold over AllKernels() and name no kernel;
// jit/emit_kernels.cc holds one emitter per row, in a table checked against
// this one when it compiles.
//
//   for (KernelId id : AllKernels())
//     if (Info(id).applies(spec, target)) ...
//
// Adding a kernel:
//   1. a KernelId (kNumKernels counts up to the last) and its row in kInfos
//      (core/kernels.cc), with its register arithmetic written next to it;
//   2. its emitter in jit/ and its entry in kEmitters (jit/emit_kernels.cc),
//      allocating scratch with Emitter::AllocVreg only;
//   3. no test of its own: tests/jit/kernels_test.cc holds every row to its
//      emitter (scratch registers) and to the lower bound on random Specs it
//      applies to, and tests/jit/kernel_edges_test.cc runs every row on the
//      edge shapes of one list (extend that list if the kernel reads a
//      layout or dtype it lacks).
//   Bump kGeneratorVersion and kCostModelVersion, as for any change to what
//   the search offers or prices.
#ifndef AMARENA_CORE_KERNELS_H_
#define AMARENA_CORE_KERNELS_H_

#include <array>
#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "core/spec.h"
#include "core/target.h"

namespace amarena {

enum class KernelId : uint8_t {
  // MatmulAccum m x 1 x n with C in vector registers (v8 or v1), A and B in L1:
  // load B's row into n/vw registers, broadcast each A[i] and FMA into C's row
  // i. A and B may each be f32 or bf16 (C f32): a bf16 operand is widened in
  // the register as it is loaded (zero-extend each 16-bit word to 32 bits,
  // shift left 16), which needs no lane crossing.
  kBroadcastFma,
  // MatmulAccum 1x1x1 entirely in L1: load c, FMA a*b, store c.
  kScalarFma,
  // Zero of a VRF tile: vxorps per register.
  kVectorZero,
  // Zero of an L1 tile with at most kMaxUnrolledStores stores.
  kMemZero,
  // Move L1 -> VRF: one load per register.
  kVectorLoad,
  // Move VRF -> L1: one store per register.
  kVectorStore,
  // Move L1 -> L1 (packing copies): vector or scalar load+store pairs;
  // bf16 -> bf16, f32 -> f32, or bf16 -> f32 (the cast: widened on the way).
  kCopy,
  // MatmulAccum 1 x k x 1 in L1 with A's row and B's column contiguous along
  // k: vector FMAs along k into up to 4 accumulators, then a horizontal sum
  // added to c (masked tail). A and B may each be f32 or bf16: a bf16 one is
  // widened as it is loaded.
  kDot,
  // The same dot product of bf16 A and B with AVX-512 BF16: vdpbf16ps takes
  // 32 bf16 of each (16 k-pairs, which a contiguous row and column already
  // are) and adds both products of a pair into one f32 lane.
  kDotBf16,
  // MatmulAccum m x 2 x n with C in vector registers (full-width or ymm), A
  // bf16 row-major in L1 and B bf16 in L1 interleaved in k-pairs (`pPx2`,
  // core/tensor_spec.h), AVX-512 BF16 only: per row of A one dword broadcast
  // of its k-pair, then vdpbf16ps with each of B's vectors of pairs, which
  // adds both products of a pair into C's f32 lane (the outer-product form
  // of vdpbf16ps). Also m x 1 x n, the last row of an odd k, whose pair
  // partner is ignored.
  kOuterBf16,
  // Move L1 -> L1 of bf16 from a plain row-major tile into the k-pair layout:
  // two rows widened to dwords and merged into one vector of pairs (an odd
  // last row pairs with zero). AVX-512 BF16 targets only (the layout is for
  // kOuterBf16).
  kCopyPairs,
  // MatmulAccum m x 2 x n (or m x 1 x n, the last row of an odd k) with C in
  // vector registers (at least 8 lanes), A f32 in L1 (any layout) and B bf16
  // in L1 interleaved in k-pairs (`pPx2`), on any target: each vector of B's
  // pairs is loaded once and split into its two rows as f32 (the low words
  // shifted up 16; the high words shifted down and back), then per row of A
  // one broadcast per k and an f32 FMA per vector of C's row. The way an f32
  // A reads k-pair weights, which vdpbf16ps cannot do without rounding A.
  kWidenPairs,
};
// kInfos and kEmitters have one row per id, in this order (static_asserts).
inline constexpr int kNumKernels = static_cast<int>(KernelId::kWidenPairs) + 1;
// The broadcast kernel prefetches the B rows it will read next, one
// prefetcht0 per 64 bytes of the row it reads now. When B streams from
// memory, on hosts whose prices keep stream prefetches
// (CostParams::stream_prefetch: the Zen 4 guest runs these kernels
// 1.3-1.6x faster without prefetcht0, and 4-10 % faster with prefetcht1 one
// line further along each row, kStreamPrefetchL2: prefetching the lines at
// the columns read now there was no faster than none, f32 1x2048x16384 in
// a hand loop 1.09-1.27x the time of a line along):
// - a plain B (f32 or bf16) whose rows are at least kPrefetchMinPitch bytes
//   apart (each row its own DRAM stream, which the hardware prefetchers pick
//   up late: the vector-matrix schedules walk short pieces of many rows),
//   kPrefetchRows rows ahead. Eight rows is one k-block of those schedules;
//   measured on 1x2048x16384 with AVX2: 13.6 GFLOP/s without, 25.6 with 8
//   rows, 23.7 with 16, 16.0 with 32 (bf16, Zen 5); f32 on the Intel Xeon
//   guest, AVX-512: 7.6 without, 9.5 with 8, 6.8 with 16, 5.6 with 32.
// - a packed bf16 B whose panels are at least kPrefetchMinPanel bytes long (a
//   pre-packed matrix read panel after panel, not a buffer the search packed
//   into a cache), kPrefetchPanelBytes ahead within the panel. A sequential
//   stream reaches DRAM's rate only with more misses in flight than the
//   hardware prefetchers keep; measured on 1x2048x16384 bf16 b=p32..p256,
//   one or two panels at a time, 4 KiB ahead: 91-100 % of a plain
//   sequential read, 1 KiB: 78-85 %, none: 75-90 % (noisy).
// And, whatever stream_prefetch says, an f32 B in column panels (a buffer
// the search packed, or a pre-packed B) CostParams::panel_prefetch_bytes
// ahead down the panel, where the host's table gives a distance
// (docs/calibration.md).
// The dot kernels prefetch a bf16 B read down its columns likewise,
// kPrefetchColumnBytes ahead, when the columns are at least
// kPrefetchMinPitch bytes apart (jit/emit_dot_kernels.cc,
// PrefetchColumnStream): one column after another is a single stream.
// bf16_benchmark, 1x2048x16384 b=col, one thread, us per call AVX2 / AVX-512
// (two runs each, shared machine): none 2360 / 2605; 4 KiB ahead 2205-2234 /
// 2273-2320; 8 KiB 2007-2008 / 2309-2393; 16 KiB 2004-2067 / 2254-2372.
// The tile that fills a packed B on first use (docs/design.md) reads B from
// where it is, a piece of each row in turn: where rows are more than
// kFillPrefetchMinPitch bytes apart it prefetches (prefetcht1) the next
// tile's piece of the row it reads, the lines just past its own. At 2 KiB
// and below the hardware's stride prefetcher follows the rows. Measured on
// the Intel Xeon guest (family 6 model 167), one thread, the search's picks,
// medians of 5 alternated runs, GFLOP/s with it over the code before, AVX2 /
// AVX-512: 17x1793x796 1.18 / 1.16 and 50x793x1483 1.09 / 1.11 (filled
// now that a row may end in a partial vector; filled without the prefetch
// 0.92 and 0.92 / 0.94, slower than the copy ahead), 128x768x768 1.00 / 1.09,
// 168x1206x898 1.00 / 1.06; 1024^3, 2048^3, 128x768x3072 within the noise.
// At 2 KiB, 49x2048x512: 0.96 / 0.97 with it.
inline constexpr int64_t kFillPrefetchMinPitch = 2048;
inline constexpr int kPrefetchRows = 8;
inline constexpr int64_t kPrefetchColumnBytes = 8192;
inline constexpr int64_t kPrefetchMinPitch = 4096;
inline constexpr int64_t kPrefetchMinPanel = 64 << 10;
inline constexpr int64_t kPrefetchPanelBytes = 4096;
// The vdpbf16ps outer-product kernel prefetches B (k-pairs) this many pair
// rows ahead, one prefetcht0 per 64 bytes of its row of pairs, wherever B
// lies: the hardware prefetchers fall behind when a B tile is read several
// times (once per tile of A's rows) before the next. bench/bf16_benchmark,
// B pre-packed (b=p32x2, 4 KiB of a panel ahead at 32), 1 thread, us per
// call for M = 4 / 16 / 64: none 3187 / 8596 / 17230; 16 pair rows 2244 /
// 4585 / 12793; 32 rows 2104 / 3432 / 11382; 64 rows 2203 / 3419 / 11030;
// 128 rows 2264 / 4569 / 12236 (one run each, a shared machine).
// Only kernels of at least kPairPrefetchMinRows rows of A prefetch: with
// fewer, each 64 bytes of B feed too few instructions to keep the window
// from running ahead by itself, and the prefetches only add traffic.
// xab-style paired runs against oneDNN pre-packed (calls alternated, 800
// rounds), AVX-512 b=p64x2, us per call, none / 32 rows: M = 1 1727 / 1775,
// 1689 / 1801; M = 2 1682 / 1948; M = 4 2280 / 1969.
inline constexpr int kPairPrefetchRows = 32;
inline constexpr int kPairPrefetchMinRows = 4;
// An accumulating register tile over a k loop of at least kLateOutputMinK
// steps, whose C was viewed into L1 from L3 or memory, does not load C before
// the loop: it starts from zero, prefetches C's lines (prefetcht0, one per 64
// bytes of each row and the row's last element) and adds C to the sum once
// the loop is done (jit/emitter.cc, AddsOutputLate). The loop hides the
// latency of C, a miss whenever the tile was last touched a k block ago. The
// model charges the tile as before (a load and a store per vector, the
// view's lines). Intel Xeon guest, one thread, paired runs of the same tree
// with and without (`amarena run`, 5 rounds, medians): AVX2 2048^3, the
// search's pick 0.97-0.99x the time; a Goto-ordered hand tree (split k 256,
// B packed in L3, tile m 256, A in L2, 16-column panels of B in L1, 6x16
// tiles) 0.74x, which then runs 0.975x the pick's time without the rule;
// AVX-512 2048^3 0.97-1.03x in three runs, the other suite shapes within 2 %
// (docs/benchmarks.md). From L2 (16x4096x4096, 32-step k blocks) it ran
// 1.03-1.04x slower: the load it replaces hits L2, the prefetches only add
// uops, and the add waits at the end. A one-row tile's C is one run of
// lines, which its loads request together and the stream prefetchers follow.
inline constexpr int64_t kLateOutputMinK = 64;
// Longest dot product one kernel unrolls, in vectors.
inline constexpr int64_t kMaxDotVectors = 32;
// Unrolled store sequences longer than this are left to loops.
inline constexpr int64_t kMaxUnrolledStores = 64;

// Most accumulators a dot kernel keeps: enough to cover the FMA latency.
inline constexpr int kMaxDotAccumulators = 4;

// The most work a matmul kernel does per instruction, and the least it pays
// for one: its share of the lower bound (LowerBound, core/cost_model.h). The
// broadcast form covers at most `lanes` consecutive outputs of one row times
// `k_per_op` consecutive k; the dot form (`dot`) at most `lanes` consecutive
// k of one output. The kernel costs at least LeastCost(rate) wherever it
// applies.
struct PeakRate {
  bool dot = false;
  int64_t lanes = 1;
  int64_t k_per_op = 1;
  // The most k one call of the kernel covers (the broadcast form: 1, or a
  // k-pair's 2). LowerBound charges the steps between calls along k.
  int64_t k_per_call = 1;
  // The least each of those instructions costs (at least the FMA price).
  int64_t op_price = 0;
  // Broadcast form: the kernel's cost is also at least LeastLoads(rate) load
  // prices at every Spec it applies to (a broadcast per row and a load per
  // vector of B, for each k_per_op of k). A kernel that reads one B vector
  // for more k than k_per_op says (widen_pairs' k-pair rows) does not claim
  // it.
  bool loads_rows_and_vectors = false;
  // The price each of those loads costs at least (0: the target's
  // LoadPrice): the broadcast kernel's ymm loads beside its FMAs cost
  // BroadcastLoadPrice.
  int64_t load_price = 0;
  // Dot form: what every call costs beyond its ops, for its one output (the
  // horizontal sum); the call's load and store of that output are not
  // counted here (LowerBound counts C's separately).
  int64_t per_call = 0;
};

// The fewest instructions at rate `r` that cover the multiply-adds of `s`:
// a kernel's cost is at least this times the FMA price for every Spec it
// applies to, and the count is subadditive over tiles and k-splits of `s`
// (ceilings of sums are at most sums of ceilings), so calls covering `s`
// execute at least this many in all.
int64_t LeastOps(const PeakRate& r, const Spec& s);
// LeastOps at op_price, plus per_call for each output of the dot form (a dot
// kernel computes one output, so a tree of them makes at least one call per
// output): at most the cost of any kernel with rate `r` applied to `s`, and,
// like LeastOps, subadditive over tiles and k-splits.
int64_t LeastCost(const PeakRate& r, const Spec& s);
// ceil(k / k_per_op) * (m + ceil(n / lanes)) per batch element: the loads a
// tree of broadcast-form kernels that all claim loads_rows_and_vectors issues
// at least (each row of A is broadcast for every op's k in every tile along
// n, each vector of B loaded once per op's k); subadditive like LeastOps.
int64_t LeastLoads(const PeakRate& r, const Spec& s);

struct KernelInfo {
  KernelId id;
  absl::string_view name;
  // The kind of Spec it implements: kMatmulAccum, kZero or kMove.
  Kind kind;
  bool (*applies)(const Spec& s, const Target& t);
  // Vector registers it takes besides its operands for `s`, one it applies
  // to: select checks them against the VRF budget, and its emitter holds at
  // most this many at once.
  int (*scratch_vregs)(const Spec& s, const Target& t);
  // The fewest scratch_vregs over every Spec it applies to. A Spec of its
  // kind whose VRF budget is below this for every kernel of that kind has no
  // tree (ObviouslyInfeasible, search/search.h).
  int least_scratch_vregs;
  // At least scratch_vregs(leaf) for every Spec `leaf` it applies to that a
  // tree for `s` can hold (sub-Specs only shrink extents); 0 when no such
  // leaf can occur. The budget clamp (UsableBudget, search/search.h) adds the
  // largest over the catalogue to the output tile's registers.
  int (*most_scratch_vregs)(const Spec& s, const Target& t);
  int64_t (*cost)(const Spec& s, const Target& t);
  // Matmul kernels: the peak rate, when a tree for `s` may hold a leaf this
  // kernel applies to (a necessary condition, checked on any ancestor:
  // layouts and dtypes only change as the pack rewrite allows); nullopt when
  // it cannot, and always for the other kernels. Its cost at any Spec it
  // applies to is at least LeastCost(rate).
  std::optional<PeakRate> (*peak_rate)(const Spec& s, const Target& t);
};

const KernelInfo& Info(KernelId id);

// The least the catalogue's kernels pay to write one row of `cols` f32
// outputs of a matmul from registers to memory (`load`: to read it first, as
// an accumulating one does): a store (load) per full vector of the target's
// lanes, and for the rest a masked store (load) or a store per element,
// whichever is cheaper; a dot product or scalar FMA pays a store (load) per
// element. `unaligned`: the row is one of a matrix whose rows start off
// 32-byte boundaries (Layout::UnalignedRows), and each vector of two lanes
// or more pays to straddle lines too. Subadditive in `cols`, so a row cut
// into tiles pays at least this (LowerBound, core/cost_model.h).
int64_t LeastRowStoreCost(int64_t cols, const Target& t, bool unaligned);
int64_t LeastRowLoadCost(int64_t cols, const Target& t, bool unaligned);

// The least a tree for the matmul `s` pays per element of B to read B's rows
// as vectors: 0 for a row-major B (plain or in panels); for a B in another
// order outside L1, its pack's copy, which walks the two layouts
// differently and so moves one element at a time (kCopy: the larger of a
// load and a store; k-pairs are only made from row-major sources); 0 for one
// in L1, which cannot be packed (the broadcast form then reads it one lane
// wide: peak_rate). Without a pack a column-major B is read an element per
// op.
int64_t LeastRepackCost(const Spec& s, const Target& t);

// Every kernel, in KernelId order (the search folds over this on every Spec
// it solves: inline, no copy).
inline const std::array<KernelId, kNumKernels>& AllKernels() {
  static constexpr std::array<KernelId, kNumKernels> kAll = [] {
    std::array<KernelId, kNumKernels> all{};
    for (int i = 0; i < kNumKernels; ++i) all[i] = static_cast<KernelId>(i);
    return all;
  }();
  return kAll;
}

}  // namespace amarena

#endif  // AMARENA_CORE_KERNELS_H_
