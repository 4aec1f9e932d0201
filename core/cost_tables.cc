// The price tables shipped with amarena: one per CPU the project has run on,
// each measured there with `amarena calibrate`'s methods (the first with its
// clock taken from the FMA rate). The first table is
// the defaults, CostParams{} (core/target.h), and the fallback for a CPU of a
// vendor no table is from. runtime/prices.h picks one for the host
// (NearestShipped, below).
#include <array>
#include <cstdlib>
#include <limits>

#include "core/price_table.h"

namespace amarena {

namespace {

// A table measured on a 2-CPU AMD EPYC KVM guest (brand string "AMD EPYC",
// 32 MiB of L3 in all).
PriceTable AmdEpycGuest(const char* label, int family, int model,
                        int64_t l1d_bytes, int64_t l2_bytes,
                        const CostParams& cost) {
  return {.label = label,
          .cpu = {.vendor = "AuthenticAMD",
                  .family = family,
                  .model = model,
                  .name = "AMD EPYC",
                  .l1d_bytes = l1d_bytes,
                  .l2_bytes = l2_bytes,
                  .l3_bytes = 32 << 20},
          .cost = cost};
}

// A table measured on a 2-CPU Intel Xeon KVM guest of family 6 (brand string
// "Intel(R) Xeon(R) Processor", 48 KiB L1d, 2 MiB L2, a core's share of L3
// capped at 64 MiB: jit/cpu_features.cc PerCoreShare).
PriceTable XeonGuest(const char* label, int model, const CostParams& cost) {
  return {.label = label,
          .cpu = {.vendor = "GenuineIntel",
                  .family = 6,
                  .model = model,
                  .name = "Intel(R) Xeon(R) Processor",
                  .l1d_bytes = 48 << 10,
                  .l2_bytes = 2 << 20,
                  .l3_bytes = 64 << 20},
          .cost = cost};
}

// The project's development host: a 2-CPU AMD EPYC Zen 5 KVM guest with
// AVX-512 and BF16 (README, "Benchmarks"). Its model number was not recorded
// with the measurements; 2 is EPYC 9005 ("Turin").
PriceTable Zen5() {
  return AmdEpycGuest("zen5-epyc-vm", 26, 2, 48 << 10, 1 << 20, CostParams{});
}

// A 2-CPU AMD EPYC KVM guest of family 25 model 17 (Zen 4, "Genoa") that
// exposes AVX2+FMA only: 2.8 GHz by dependent adds, 2 ymm FMAs a cycle
// (4 cycles of latency), 32 KiB L1d, 1 MiB L2, 32 MiB L3. Each price is the
// median of five runs of `amarena calibrate` while other processes shared
// the machine's two cores (run to run, DRAM prices moved by up to 15 %);
// FMA, load and store prices are whole pipes (2 FMAs, 2 loads, 1 store of a
// ymm a cycle). Its L2 delivers about half a line a cycle, half of Zen 5's.
PriceTable Zen4() {
  CostParams c;
  c.fma = 3;
  c.load = 3;
  c.store = 6;
  c.line_dense = {64, 17, 13, 0, 0};
  c.line_strided = {90, 69, 67, 0, 0};
  c.dram_run_bytes = 256;
  // Runs at a 32 KiB pitch, each as the median over five runs of its ratio
  // to the same run's sequential line, times the dense line above: 64 and
  // 128 B runs streamed at 18 and 25 % of the sequential rate, 256 B to
  // 8 KiB at 40-45 %, 16 KiB at 55 %.
  c.line_gl_run = {365, 256, 154, 154, 154, 154, 153, 145, 112};
  c.line_gl_adjacent_panels = 67;  // 44/42 and 40/42 of dense GL, as Zen 5
  c.line_gl_far_panels = 61;
  // A guest of the same identity that exposes AVX-512 (3.65 GHz): zmm FMAs
  // at 1.00-1.02 a cycle, zmm loads 0.83-0.90 and stores 0.44-0.51 (four
  // calibrations), against 2.0 ymm FMAs, 1.7-1.9 loads and 0.9-1.0 stores:
  // Zen 4 runs each zmm op as two ymm halves.
  c.fma_zmm = 6;
  c.load_zmm = 6;
  c.store_zmm = 12;
  // The broadcast kernel's prefetcht0 of a streamed B slowed this guest
  // (CostParams::stream_prefetch): 1x2048x16384 bf16, one thread, paired
  // runs with and without, 1.30-1.60x faster without on AVX-512 and AVX2.
  // prefetcht1 a line further along made the same picks faster: in one
  // process, each tree with 0, 1 and 2, 21-25 rounds, time against 0: f32
  // 1x2048x16384 0.91-0.97 (1 made it 1.35), AVX2 0.92, 1x4096x11008
  // 0.90-0.96, bf16 0.94, `f32*bf16->f32 b=any` 0.94.
  c.stream_prefetch = kStreamPrefetchL2;
  // L1 fills from L2 beside zmm kernels get about two thirds of L2's
  // streaming rate (CostParams::l2_overlap_pct_zmm says how it was measured).
  c.l2_overlap_pct_zmm = 65;
  // Lines crowded onto the sets that A's and C's rows share, priced as an L2
  // line (CostParams::line_shared_set_zmm says how it was found).
  c.line_shared_set_zmm = 13;
  // B vectors straddling lines are loads beside the FMAs
  // (CostParams::split_beside_fma says how it was found).
  c.split_beside_fma = 1;
  // Bands of 8 rows in pieces of 512 B to 16 KiB took 1.05, 1.16, 1.41,
  // 1.53, 1.69 and 1.68x the time of pieces of 256 B (medians over seven
  // calibrations, each piece 0.99-1.14, 1.09-1.25, 1.36-1.50, 1.47-1.64,
  // 1.64-1.98 and 1.41-1.78x), times the dense line above.
  c.line_gl_band = {0, 67, 74, 90, 98, 108, 108};
  return AmdEpycGuest("zen4-epyc-vm", 25, 17, 32 << 10, 1 << 20, c);
}


// A 2-CPU AMD EPYC KVM guest of family 25 model 1 (Zen 3, "Milan"), AVX2+FMA
// only: 3.0 GHz, 2 ymm FMAs a cycle (4 cycles of latency), 32 KiB L1d,
// 512 KiB L2, 32 MiB L3 (16 MiB a core). Each price is the median of five
// runs of `amarena calibrate` on a shared machine. Loads measured 1.4-2.0
// and stores 0.74-1.0 ymm a cycle (2 and 1 pipes); DRAM streams at about
// 11 GB/s, and runs of 64 B to 2 KiB at a 32 KiB pitch at 23-60 % of that,
// 16 KiB at 80-94 %. The run length below which a DRAM read counts as a
// short run came out at 192-256 B in three runs and about 2.6 KiB in two:
// the median is kept.
PriceTable Zen3() {
  CostParams c;
  c.fma = 3;
  c.load = 3;
  c.store = 6;
  c.line_dense = {102, 19, 14, 0, 0};
  c.line_strided = {272, 68, 65, 0, 0};
  c.dram_run_bytes = 256;
  c.line_gl_run = {424, 298, 252, 252, 252, 252, 185, 140, 119};
  c.line_gl_adjacent_panels = 107;
  c.line_gl_far_panels = 97;
  c.l3_share_pct = 25;  // CostParams::l3_share_pct says why
  // prefetcht0, the default when this table was measured; not timed here.
  c.stream_prefetch = 1;
  return AmdEpycGuest("zen3-epyc-vm", 25, 1, 32 << 10, 512 << 10, c);
}

// A 2-CPU Intel Xeon KVM guest reporting family 6 model 167 (the brand
// string is "Intel(R) Xeon(R) Processor"; it has AVX-512 BF16, FP16 and
// AMX), 48 KiB L1d, 2 MiB L2 and 480 MiB of L3 in all (XeonGuest: a core's
// share is capped at 64 MiB). 4.05-4.16 GHz by dependent adds; 2 ymm and
// 1.85 zmm FMAs a cycle (4 cycles of latency), 3 ymm or 2 zmm loads and
// 2 ymm or 1 zmm store a cycle. Its L3 is slow for a core of this clock: a
// line in 9 cycles, against 2.5 on the Zen 4 guest. DRAM
// streams at about 13.5 GB/s from one core, runs of 64 and 128 B at a
// 32 KiB pitch at 28 and 44 % of that, 256 B at 55 %, 512 B to 1 KiB at
// 67-70 %, 16 KiB at 95 %. The broadcast kernel's prefetches of a streamed B
// read 1.04-1.09x as fast, under the 1.1 the switch asks. Each price is the
// median of five runs of `amarena calibrate`, pinned, nothing else of ours
// running (bench/results/GenuineIntel-family6-model167/calibration_spread.md).
PriceTable XeonAmx() {
  CostParams c;
  c.fma = 3;
  c.load = 2;
  c.store = 3;
  c.line_dense = {123, 54, 9, 0, 0};
  c.line_strided = {321, 128, 18, 0, 0};
  c.dram_run_bytes = 256;
  c.line_gl_run = {440, 277, 218, 182, 182, 157, 138, 133, 127};
  c.line_gl_adjacent_panels = 129;  // 44/42 and 40/42 of dense GL, as Zen 5
  c.line_gl_far_panels = 117;
  // zmm FMAs at the ymm rate (1.85 a cycle rounds to the same 2 pipes);
  // zmm loads and stores at 2 and 1 a cycle against 3 and 2 for ymm.
  c.load_zmm = 3;
  c.store_zmm = 6;
  // ymm loads and broadcasts among FMAs at 1.5 a cycle (a 3x32 tile as two
  // 3x16 kernels in a k loop: 6.5-6.6 cycles per 10 loads and 12 FMAs).
  c.load_beside_fma = 4;
  // Found by timing whole trees, one thread, paired picks against the
  // picks without (docs/calibration.md): the broadcast kernel's stream
  // prefetches (f32 1x2048x16384 1.24x AVX-512, 1.40x AVX2; calibrate's
  // emulation reads 1.045x, under its margin), half of L2 for the search
  // (CostParams::l2_share_pct), and L1's fills from L2 beside zmm kernels
  // at two thirds of L2's streaming rate (l2_overlap_pct_zmm, as on Zen 4):
  // without it, half of L2 made 128x768x3072 keep C in 3x128 register tiles
  // streaming B's rows from L2 (0.87x); with it, 1.24x that.
  c.stream_prefetch = 1;
  c.l2_share_pct = 50;
  c.l2_overlap_pct_zmm = 65;
  // The broadcast kernel's prefetches of a packed B, 1024 bytes down its
  // panel: AVX2 1024^3 1.13x, 1299x1556x1670 1.12x, 128x768x3072 1.14x,
  // 2048^3 1.02x; AVX-512 1024^3 1.04x, 2048^3 level (docs/calibration.md).
  c.panel_prefetch_bytes = 1024;
  return XeonGuest("xeon-amx-vm", 167, c);
}

// A 2-CPU Intel Xeon KVM guest reporting family 6 model 207 (Emerald Rapids;
// the brand string is "Intel(R) Xeon(R) Processor"; AVX-512 BF16 and FP16,
// no AMX exposed), 48 KiB L1d, 2 MiB L2 and 260 MiB of L3 in all, shared
// with other tenants, whose work also runs on the cores' other hardware
// threads. 2.7-3.0 GHz by dependent adds; 2 ymm and 1.8-1.9 zmm FMAs a cycle
// (4 cycles of latency), 3 ymm or 2 zmm loads and 2 ymm or 1 zmm store a
// cycle on a quiet stretch (a neighbour on the other thread brings loads
// down to 2.2-2.5, stores to 1.5-1.9: calibrate rounds those up to the same
// pipes). A line from L3 in 7-8 cycles; DRAM streams at about 10-12 GB/s
// from one core, runs of 64 and 128 B at a 32 KiB pitch at 29 and 51 % of
// that, 256 B at 60 %, 512 B to 2 KiB at 70-80 %, 16 KiB at 97 %. Each
// price is the median of five runs of `amarena calibrate` (8.3-8.6 s each),
// pinned, nothing else of ours running, with a neighbour busy on the
// core's other thread
// (bench/results/GenuineIntel-family6-model207/calibration_spread.md). The
// prices found by timing trees are xeon-amx-vm's (l2_share_pct,
// l2_overlap_pct_zmm, panel_prefetch_bytes: as calibrate takes them from
// the nearest table; not timed here), but stream_prefetch (below).
PriceTable XeonEmr() {
  CostParams c;
  c.fma = 3;
  c.load = 2;
  c.store = 3;
  c.line_dense = {100, 49, 11, 0, 0};
  c.line_strided = {160, 81, 21, 0, 0};
  c.dram_run_bytes = 128;
  c.line_gl_run = {326, 192, 164, 145, 140, 140, 127, 117, 103};
  c.line_gl_band = {0, 0, 0, 0, 0, 106, 102};
  c.line_gl_adjacent_panels = 105;  // 44/42 and 40/42 of dense GL, as Zen 5
  c.line_gl_far_panels = 95;
  c.load_zmm = 3;
  c.store_zmm = 6;
  c.load_beside_fma = 4;
  // The broadcast kernel's stream prefetches into L2 (prefetcht1), found
  // by timing the picks, one thread, five alternated rounds of `amarena
  // bench`: f32 1x4096x11008 1.26x (AVX-512) and 1.10x (AVX2) the GFLOP/s
  // of prefetcht0 (xeon-amx-vm's choice), 1x2048x16384 1.16x and 1.20x;
  // calibrate's emulation read prefetcht1 0.99-1.05x, prefetcht0
  // 0.85-0.93x the rate without (five calibrations).
  c.stream_prefetch = kStreamPrefetchL2;
  // A fifth of a core's L3 share for packing buffers, by timing trees: with
  // three quarters (and with a quarter, which still holds 16 MiB) the AVX-512
  // 2048^3 pick packed the whole of B into L3 and ran at 0.84x the pick with
  // a fifth, which packs B in 256-column slabs, and at 0.83-0.92x
  // xeon-amx-vm's pick, which packs slabs into L2 (medians of 7 alternated
  // rounds of `amarena run`, one thread, two runs; AVX2 level within the
  // noise). Of 35 f32 shapes (the bench.sh suite and random ones, 4096^3),
  // both ISAs, one and two threads, only 2048^3 and 4096^3 (not timed) with
  // one thread changed pick. The L3 is shared with other tenants here, as on
  // the Zen 3 guest (zen3-epyc-vm: a quarter).
  c.l3_share_pct = 20;
  c.l2_share_pct = 50;
  c.l2_overlap_pct_zmm = 65;
  c.panel_prefetch_bytes = 1024;
  return XeonGuest("xeon-emr-vm", 207, c);
}

}  // namespace

absl::Span<const PriceTable> ShippedPriceTables() {
  static const auto* const kTables =
      new std::array<PriceTable, 5>{Zen5(), Zen4(), Zen3(), XeonAmx(),
                                    XeonEmr()};
  return *kTables;
}

const PriceTable* FindShipped(absl::string_view label) {
  for (const PriceTable& t : ShippedPriceTables())
    if (t.label == label) return &t;
  return nullptr;
}

ShippedMatch NearestShipped(const CpuIdentity& cpu,
                            absl::Span<const PriceTable> tables) {
  const PriceTable* best = nullptr;
  int64_t best_distance = std::numeric_limits<int64_t>::max();
  for (const PriceTable& t : tables) {
    if (t.cpu.vendor != cpu.vendor) continue;
    if (t.cpu.family == cpu.family && t.cpu.model == cpu.model)
      return {&t, true};
    // Family first: a model number means nothing across families.
    int64_t d = int64_t{std::abs(t.cpu.family - cpu.family)} * 4096 +
                std::abs(t.cpu.model - cpu.model);
    if (d < best_distance) {
      best = &t;
      best_distance = d;
    }
  }
  return {best != nullptr ? best : &tables.front(), false};
}

ShippedMatch NearestShipped(const CpuIdentity& cpu) {
  return NearestShipped(cpu, ShippedPriceTables());
}

}  // namespace amarena
