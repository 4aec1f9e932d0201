// Target: what the CPU offers the search and the JIT — ISA, register files,
// cache sizes and the cost model's prices. Built from detected features
// (runtime/host.h); plain numbers here, so core/ and search/ never touch CPUID.
//
//   Target t = Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
//   Spec root = t.Bind(*ParseSpec("matmul 64x64x64 f32"));  // whole budget
#ifndef AMARENA_CORE_TARGET_H_
#define AMARENA_CORE_TARGET_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "core/spec.h"

namespace amarena {

enum class Isa : uint8_t { kAvx2, kAvx512 };
absl::string_view Name(Isa isa);

// CostParams::stream_prefetch's value for prefetcht1 (into L2) one line
// further along the row than the line read now.
inline constexpr int64_t kStreamPrefetchL2 = 2;
// A refining stream_prefetch field's value for "as the field it refines"
// (CostParams::stream_prefetch_zmm and the bf16 ones).
inline constexpr int64_t kStreamPrefetchInherit = 3;

struct CostParams;
// CostParams::stream_prefetch and the fields refining it, resolved for a B
// of `elem_bytes` bytes an element under `isa`'s kernels: 0, 1 or
// kStreamPrefetchL2.
int64_t StreamPrefetchFor(const CostParams& c, Isa isa, int elem_bytes);

// Prices of the affine cost model, in units of 1/6 of a core cycle so that
// every throughput below is an integer. The core prices follow the Zen 4/5
// optimisation guides; the line prices were measured on the host with
// the methods of `amarena calibrate` (docs/calibration.md):
//   two FMA pipes         -> one vector FMA every 0.5 cycle      = 3 units
//   two ymm loads per cycle (measured)                           = 3 units
//   two stores per cycle  -> one store every 0.5 cycle           = 3 units
//   loop back-edge, counter in a register (add, dec/jnz fused)   = 2 units
//   loop back-edge, counter in a stack slot (dec qword [rsp])    = 6 units
//   a 64-byte line brought into a faster level, by where it comes from and
//   whether the tile is read as long runs (dense: packed panels, single
//   rows) or one short run per row (strided: a column panel of a plain
//   matrix, which defeats the stream prefetchers and aliases in the sets).
// These defaults are the shipped table for that host (core/cost_tables.cc);
// other CPUs get their own table (runtime/prices.h, docs/calibration.md).
// Target::Fingerprint holds a hash of the prices, so results found under one
// table are never used under another; bump kCostModelVersion when a formula
// changes, or the default of a price the hash leaves out at its default.
struct CostParams {
  int64_t fma = 3;
  int64_t load = 3;
  int64_t store = 3;
  int64_t loop_iteration = 2;
  int64_t loop_iteration_stack = 6;
  // Handing a parallel loop to the thread pool and waiting for it: about
  // 2 us (5 us for very small bodies), an estimate from pthreadpool's
  // dispatch on this VM, not yet calibrated.
  int64_t parallel_setup = 48000;
  // Indexed by the source Level (kGL, kL3, kL2; L1 and VRF unused). Medians
  // of four measurements on the 2-core Zen 5 host (dense:
  // sequential reads; strided: 64-byte pieces down a 4 KiB-pitch column
  // panel, whose lines share one L1 set).
  std::array<int64_t, kNumLevels> line_dense = {42, 15, 6, 0, 0};
  std::array<int64_t, kNumLevels> line_strided = {94, 67, 55, 0, 0};
  // From DRAM, a packed B stepped along k by pieces of each panel shorter
  // than this many bytes, over more than dram_streams panels, loses the
  // prefetchers' streams (core/cost_model.cc, SideBySideRuns). `amarena
  // calibrate` sets it where runs of R bytes at a 32 KiB pitch reach about
  // half the sequential rate (or 90 % of their plateau, if lower).
  int64_t dram_run_bytes = 1024;
  // A loop along k over a packed B in DRAM whose rows span more than this
  // many panels, stepping each by a short run, reads the panels side by side,
  // each its own stream (and its own prefetches, core/kernels.h): their lines
  // are priced strided (core/cost_model.cc, SideBySideRuns). Measured on
  // 1x2048x16384 bf16 b=p32, prefetching 4 KiB ahead, one row of the tile
  // per step: 1 panel 37, 2 panels 36, 4 panels 31, 8 panels 24 GB/s.
  int64_t dram_streams = 2;
  // From DRAM, panels read side by side (core/cost_model.cc): each is a
  // stream, and two streams a panel apart are served slower than one, two
  // far apart faster (panels in sections, core/tensor_spec.h). A line of a
  // panel read beside another adjacent one costs line_gl_adjacent_panels
  // (one more such panel: that much more again, up to the strided price); a
  // line of a view of panels sections apart costs line_gl_far_panels.
  // Measured on 1x2048x16384 bf16 with AVX2, each kernel call by call against
  // the others (README, "bf16"): p32 (two panels 128 KiB apart) 1.05x the
  // time of p64 (one panel), p32s2 (two panels 32 MiB apart) 0.96x; priced
  // in proportion to the dense line.
  int64_t line_gl_adjacent_panels = 44;
  int64_t line_gl_far_panels = 40;
  // From DRAM, a plain matrix cut into column strips taller than a few rows
  // (Layout::kDenseRows) is read as runs: each row's piece of the strip, the
  // next one a pitch away (core/cost_model.cc, CutRows). The price of a line
  // read as part of runs of kDramRunBytes[i] bytes, from `amarena
  // calibrate`'s runs at a 32 KiB pitch (each as the sequential price times
  // the sequential rate over the run's rate); runs of a whole 32 KiB row or
  // more are the dense price, and lengths between two measured ones are
  // interpolated in log2 (RunLine). On the Zen 5 host the runs from 64 B to
  // 4 KiB streamed at 15, 23, 41, 45, 51, 53 and 52 % of the sequential
  // rate; 8 and 16 KiB were not measured there and are interpolated between
  // 4 KiB and the whole row.
  static constexpr int kDramRunSteps = 9;
  static constexpr std::array<int64_t, kDramRunSteps> kDramRunBytes = {
      64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  static constexpr int64_t kDramRowBytes = 32768;
  std::array<int64_t, kDramRunSteps> line_gl_run = {280, 183, 102, 93, 82,
                                                    79,  79,  62,  50};
  // From DRAM, a plain matrix of a few rows (2 to Layout::kDenseRows) cut
  // into column strips is read as a band: each strip's piece of every row in
  // turn, the same few streams going on strip after strip (core/
  // cost_model.cc, CutRows). Long pieces stream slower than short ones: on
  // the Zen 4 guest, 8 rows at a 32 KiB pitch in pieces of 1 KiB took
  // 1.1-1.25x the time of pieces of 256 B, 2 KiB 1.35-1.5x, 4 KiB and more
  // about 1.6x, and 1x2048x16384 f32 with 64-column strips of 8 rows ran
  // 1.2-1.3x as fast as with 256-column ones, which the model had priced
  // alike. The price of a line of a band read in pieces of kDramBandBytes[i]
  // bytes, from `amarena calibrate` (calibrate_loops.h, BlockPass): the
  // dense price times the band's time over the time in pieces of the first
  // length (which itself streams at 0.9-1.25x the sequential rate there,
  // from one calibration to the next). 0: the dense price (where it was not
  // measured, and for pieces no slower than the first). Pieces shorter than
  // the first length cost as the first, longer than the last as the last;
  // lengths between are interpolated in log2 (BandLine).
  static constexpr int kDramBandSteps = 7;
  static constexpr std::array<int64_t, kDramBandSteps> kDramBandBytes = {
      256, 512, 1024, 2048, 4096, 8192, 16384};
  std::array<int64_t, kDramBandSteps> line_gl_band = {0, 0, 0, 0, 0, 0, 0};
  // The per cent of the per-core L3 share the search may fill with packing
  // buffers (Target::l3_lines). The rest is for what streams through L3
  // beside them: the matrices read from DRAM and C's lines written back
  // (AMD's L3 takes every line L2 evicts), and, on a shared host, the
  // neighbours. 75 on the Zen 4 host, where all of it lost to three
  // quarters (Target::Avx2). On the Zen 3 guest (2 vCPUs, 16 MiB of L3
  // reported per core) three quarters let the search keep 1299x1556x1670's
  // whole packed B (10.4 MiB) in L3 and re-read it for every strip of A;
  // with a quarter it blocks k instead, one thread, `amarena run
  // --schedule`, medians of 4 interleaved runs, GFLOP/s: 41.8 -> 57.5,
  // 128x768x3072 43.5 -> 56.2, 2048^3 49.9 -> 60.4, 1003x880x1648 45.8 ->
  // 54.8, 1223x1352x1068 51.6 -> 68.8; 2020x1001x2000 63.0 -> 55.9 and
  // 58.9 -> 51.8 the one loss outside the noise (docs/benchmarks.md).
  int64_t l3_share_pct = 75;
  // The FMA, load and store prices of a 512-bit (zmm) instruction, where
  // they differ from the ymm prices above; 0: the same. Zen 5 and Intel's
  // AVX-512 cores run zmm at the ymm rate (two FMAs and two loads a cycle);
  // Zen 4 splits each zmm op into two 256-bit halves: 1 FMA, 1 load and one
  // store every 2 cycles (`amarena calibrate` on the Zen 4 guest: 1.00 zmm
  // FMA, 0.83-0.90 zmm loads a cycle). An AVX-512 target prices its vector
  // instructions with these (Target::FmaPrice); AVX2 the ymm ones.
  int64_t fma_zmm = 0;
  int64_t load_zmm = 0;
  int64_t store_zmm = 0;
  // The price of a ymm load or broadcast the broadcast kernel issues among
  // its FMAs, where it is more than `load` (0: the same): measured by
  // `amarena calibrate` as the price with which the kernel's
  // max(FMAs, loads) gives the time of a k step of a 3x32 ymm tile run as
  // two 3x16 kernels (10 loads, 12 FMAs) walking A and B as a k loop does.
  // On the Intel guest ymm loads alone ran 3.0 a cycle (price 2) and such a
  // step took 6.5 cycles against the FMAs' 6.0 (price 4); 3x32 tiles then
  // lose to 6x16 ones (8 loads), which the model had priced alike at price
  // 3: picks that changed ran 0.87-0.98x the time (docs/calibration.md).
  // ymm only: an AVX-512 target keeps its zmm load price (Target::
  // BroadcastLoadPrice).
  int64_t load_beside_fma = 0;
  // 1: B vectors that straddle two lines (rows whose pitch is not a multiple
  // of 32 bytes, Layout::UnalignedRows) take their extra load slot beside the
  // broadcast kernel's FMAs, on its load side of max(FMAs, loads), hidden
  // where the FMAs bound it; 0: each adds half a load slot to the kernel's
  // time (core/kernels.cc, SplitVectorCost), as on the Intel guest, where
  // 64^3 with B's rows 4 bytes off a line ran 5-7 % slower than dense.
  // Found by timing trees, so `amarena calibrate` takes the nearest table's
  // (it prints the 3x32 ymm k step of load_beside_fma with its B panel 4
  // bytes off a line, for information: 1.01-1.07x the aligned time on the
  // Zen 4 guest, a step whose loads already match its FMAs). On the Zen 4
  // guest B read in place at a 71-float pitch (12x32 zmm tiles) ran within
  // 1 % of dense while the additive price had the search pack it, 3 %
  // slower: 1 there.
  int64_t split_beside_fma = 0;
  // 1: the broadcast kernel prefetches a B it streams from memory ahead of
  // its reads (core/kernels.h, kPrefetchRows) with prefetcht0 at the columns
  // it reads now; kStreamPrefetchL2: with prefetcht1 a line further along;
  // 0: it leaves that to the hardware prefetchers. A property of the host:
  // `amarena calibrate` times the f32 vector-matrix pick with each choice
  // and keeps one that beats the standing table's in every round and by 5 %
  // in the median (runtime/calibrate_trees.h). Measured first on the Zen 5
  // host, where prefetcht0 took 1x2048x16384 bf16 with AVX2 from 13.6 to
  // 25.6 GFLOP/s; kStreamPrefetchL2 on the Zen 4 guest, where prefetcht0 made
  // 1x2048x16384 bf16 and `f32*bf16->f32 b=any` 1.3-1.6x slower and
  // prefetcht1 a line along made the f32 picks 4-10 % faster. On the Zen 5
  // guest prefetcht1 a line along over prefetcht0, the picks, one thread,
  // medians of seven alternated runs: AVX2 f32 1x2048x16384 1.18x,
  // 1x4096x4096 1.08x, 1x4096x11008 1.00x, `f32*bf16->f32 b=any` 1.08x;
  // AVX-512 0.98-1.01x; the other suite shapes within 2 %.
  int64_t stream_prefetch = kStreamPrefetchL2;
  // The same choice where it differs by the kernel (kStreamPrefetchInherit:
  // as the field refined; Target::StreamPrefetch reads them): an f32 B under
  // zmm kernels (refines stream_prefetch), a bf16 B, plain or in panels,
  // under ymm kernels (refines stream_prefetch) and under zmm kernels
  // (refines stream_prefetch_bf16). On a later Zen 4 guest, one thread, the
  // picks, medians of five to seven alternated runs, one calibrated table
  // but for stream_prefetch, GFLOP/s without prefetches over prefetcht1 a
  // line along: f32 with AVX2 1x2048x16384 1.15-1.18x (an hour later
  // 1.01x), 1x4096x11008 1.12-1.23x, 1x4096x4096 0.99-1.05x, 16x4096x4096
  // 1.01x; with AVX-512 0.95-0.96x, 1.02x, 0.82-0.90x and 1.01x; bf16
  // unsettled (b=row with AVX2 0.78x, with AVX-512 1.26x; b=any 0.91-1.42x,
  // runs 15-34 GFLOP/s apart). So the choice moves with the host's state,
  // and calibrate times it where it runs.
  int64_t stream_prefetch_zmm = kStreamPrefetchInherit;
  int64_t stream_prefetch_bf16 = kStreamPrefetchInherit;
  int64_t stream_prefetch_bf16_zmm = kStreamPrefetchInherit;
  // Bytes ahead (0: none) at which the broadcast kernel prefetches an f32 B
  // in column panels (a buffer the search packed, read a row a k step) into
  // L1: one prefetcht0 per 64 bytes of the row it reads now, this far down
  // the panel (core/kernels.h). A property of the host found by timing whole
  // trees (`amarena calibrate` keeps the nearest shipped table's); 0 where it
  // was not measured. On the Intel guest, one thread, the picks ran up to
  // 1.14x as fast with 1024 bytes, none slower (docs/calibration.md).
  int64_t panel_prefetch_bytes = 0;
  // The per cent of L2's streaming rate (its line prices) a view from L2 into
  // L1 gets while the zmm kernels below it run (OverlapsWork): on an AVX-512
  // target it costs the larger of its body and its lines' price times 100 /
  // this (Target::OverlappedL2). The L1 fills then compete with the
  // kernels' own loads and broadcasts. On the Zen 4 guest (zmm ops in two
  // 256-bit halves), one thread, paired runs: bf16 64x2048x16384 b=p64x2s2
  // with 3x128 register tiles (four B lines from L2 every 12 vdpbf16ps: 72 %
  // of the streaming rate) ran 1.12x slower than with 6x64 tiles (36 %),
  // which the model priced alike; 65 puts that difference in the model.
  // The Zen 5 guest (full-width zmm) reads the same: with 100 it picked the
  // 3x128 tiles and ran them 0.92x (M = 16) and 0.97x (M = 64) the 6x64
  // tiles 65 picks; of the nine f32 suite shapes whose AVX-512 pick 65
  // changes, none moved by more than 1.4 % (medians of five alternated runs
  // each). With AVX2 the same setting moved only remainder tiles (1024^3,
  // 128x768x3072), and runs of those trees could not tell them apart
  // (0.7-1.4x from round to round), so ymm kernels keep the whole rate.
  int64_t l2_overlap_pct_zmm = 65;
  // The price of a line that rows of A and C on one L1 set, with B's lines
  // in L1, crowd beyond the ways under zmm kernels (core/cost_model.cc,
  // SharedSets); 0 where it was not measured: no such price. Found by timing
  // trees on the Zen 4 guest, one thread, in one process on the same
  // buffers: 64^3 with all pitches 4096 ran 8-, 6-, 4- and 2-row tiles at
  // 1.14, 1.10, 1.05-1.07 and 1.03-1.05x the dense pick's time, about an L2
  // line (13) per line beyond the ways. With ymm kernels the same price
  // moved picks both ways (AVX2 1024^3 0.97-0.98x the time, 2048^3 1.07x,
  // 16x1024x4096 1.17x), so ymm kernels pay none.
  int64_t line_shared_set_zmm = 0;
  // The per cent of the per-core L2 the search may fill (Target::l2_lines,
  // rounded down onto the budget grid): the rest is for the lines streaming
  // through (A's rows, B's rows on their way to a pack, C's blocks going back
  // and forth) and for conflict misses. 75 where it was not measured: with
  // all of it the search filled L2 with A, C and a packed B together, and on
  // the Zen 4 host those trees ran slower (docs/search.md). On the Intel
  // guest (2 MiB L2) three quarters let it pack 1.5 MiB of B there
  // (128x768x3072: 512 columns) beside the rows of A it streams; half (its
  // table says 50) ran AVX2 16x4096x4096 1.11x, 128x768x3072 1.07x and
  // 2048^3 1.03x faster, one thread, paired picks (docs/calibration.md).
  int64_t l2_share_pct = 75;

  int64_t Line(Level from, bool dense) const {
    return (dense ? line_dense : line_strided)[static_cast<int>(from)];
  }
  // The price of a line from DRAM read as runs of `bytes` (>= 1): the
  // shortest run's price below 64 B, the dense price from kDramRowBytes on.
  int64_t RunLine(int64_t bytes) const;
  // The price of a line from DRAM read as part of a band in pieces of
  // `bytes` (>= 1): line_gl_band, at least the dense price.
  int64_t BandLine(int64_t bytes) const;
};
inline constexpr int kCostModelVersion = 22;
// Versions what the generator makes of a tree (the search space, the JIT):
// part of every cache key and of the on-disk database's identity.
inline constexpr int kGeneratorVersion = 20;

struct CacheSizes {
  int64_t l1d = 32 << 10;
  int64_t l2 = 512 << 10;
  int64_t l3 = 8 << 20;
};

struct Target {
  Isa isa = Isa::kAvx2;
  // Vector registers the kernels may use: 16 ymm with AVX2 (one physical file
  // shared by scalar floats and vectors).
  int vector_registers = 16;
  // General-purpose registers left for buffer pointers and loop counters once
  // the operand bases and the scratch pointer are held: 14 usable (all but
  // rsp and rdi's first use) - 3 operands - 1 scratch = 10.
  int gprs = 10;
  // f32 lanes of the widest vector the emitter uses.
  int f32_lanes = 8;
  // Threads a parallel loop may use (1: the search offers none).
  int workers = 1;
  // AVX-512 BF16 (vdpbf16ps): the dot kernel multiplies bf16 k-pairs in one
  // instruction. Only with AVX-512 (the runtime sets it from CPUID).
  bool bf16_dot = false;
  // Cache budgets in lines: L1 rounded down to a power of two (48 KiB -> 512
  // lines); L2 and L3 the prices' share of them rounded down onto the budget
  // grid (core/spec.h; CostParams::l2_share_pct, l3_share_pct; 1 MiB at 75 %
  // -> 12288 lines).
  int64_t l1_lines = 512;
  int64_t l2_lines = 8192;
  int64_t l3_lines = 131072;
  // The per-core L2 and L3 shares l2_lines and l3_lines are parts of
  // (CostParams::l2_share_pct, l3_share_pct).
  int64_t l2_bytes = 512 << 10;
  int64_t l3_bytes = 8 << 20;
  // Whether the root's operands stream from DRAM (ForRoot): their lines then
  // pay the DRAM-only effects (CostParams::line_gl_band). False for a root
  // whose operands fit in its L3 budget (Spec::OperandsFitL3): called again
  // and again, it finds them in the caches, where bands read at one rate
  // whatever their pieces (on the Zen 4 guest 8 rows of an 8 MiB matrix,
  // pieces of 64 B to 4 KiB: 73-78 GB/s). GL lines keep their prices either
  // way. Part of the fingerprint, so stored results of the two never mix.
  bool dram_operands = true;
  CostParams cost;
  // The price of one vector FMA, load or store of this ISA's width: an
  // AVX-512 target's are the table's zmm prices where it has them
  // (CostParams::fma_zmm).
  int64_t FmaPrice() const { return Zmm(cost.fma_zmm, cost.fma); }
  int64_t LoadPrice() const { return Zmm(cost.load_zmm, cost.load); }
  // A load or broadcast issued among the broadcast kernel's FMAs
  // (CostParams::load_beside_fma, measured with ymm).
  int64_t BroadcastLoadPrice() const {
    return isa == Isa::kAvx2 ? std::max(LoadPrice(), cost.load_beside_fma)
                             : LoadPrice();
  }
  int64_t StorePrice() const { return Zmm(cost.store_zmm, cost.store); }
  // The broadcast kernel's prefetching of a streamed B of `elem_bytes`
  // bytes an element (StreamPrefetchFor).
  int64_t StreamPrefetch(int elem_bytes) const {
    return StreamPrefetchFor(cost, isa, elem_bytes);
  }
  // What a view from L2 into L1 whose lines cost `traffic` at L2's prices
  // costs beside the body it overlaps (CostParams::l2_overlap_pct_zmm).
  int64_t OverlappedL2(int64_t traffic) const {
    return isa == Isa::kAvx512 ? traffic * 100 / cost.l2_overlap_pct_zmm
                               : traffic;
  }

  // Sets the prices, and with them the L3 budget.
  void SetPrices(const CostParams& c);

  static Target Avx2(const CacheSizes& caches);
  // 32 zmm of 16 f32 lanes; the same prices (Zen 5 runs two 512-bit FMAs and
  // two 512-bit loads per cycle, as with ymm).
  static Target Avx512(const CacheSizes& caches);

  // Lines of a cache level (IsCache(l)).
  int64_t Capacity(Level l) const {
    return l == Level::kL1 ? l1_lines : l == Level::kL2 ? l2_lines : l3_lines;
  }
  // Whether a tile of `lines` may be placed in cache level `l`: always in L1;
  // in L2 when it is more than half of L1 (it could not share L1 with the
  // other operands' tiles: an A of 512 lines beside B's 256 in L1); in L3
  // only when it would not fit L2 whole. This is a rule of the search space,
  // which keeps the outer levels for the blocking they exist for. (With L2
  // for anything that does not fit L1 whole, A's 512 lines of a 128x64x128
  // matmul went into L1 or nowhere, and the search paid for every re-read
  // of A from GL.)
  bool WorthPlacing(Level l, int64_t lines) const {
    if (l == Level::kL1) return true;
    if (l == Level::kL2) return 2 * lines > Capacity(Level::kL1);
    return lines > Capacity(Level::kL2);
  }

  Budget MaxBudget() const {
    return Budget{vector_registers, gprs, l1_lines, l2_lines, l3_lines};
  }
  // The root Spec of a search: the user's Spec with its own budget if it names
  // one, else the target's whole budget.
  Spec Bind(Spec s) const;
  // The target a bound root is searched, stored and priced under: this one
  // with dram_operands set for it. Every sub-Spec of that search is priced
  // as part of that root.
  Target ForRoot(const Spec& bound) const;
  // Short text identifying everything that changes search results or code,
  // the prices included (as a hash: core/price_table.h).
  std::string Fingerprint() const;

 private:
  int64_t Zmm(int64_t zmm, int64_t ymm) const {
    return isa == Isa::kAvx512 && zmm > 0 ? zmm : ymm;
  }
};

}  // namespace amarena

#endif  // AMARENA_CORE_TARGET_H_
