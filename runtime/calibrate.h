// Measures the cost model's prices on this host (`amarena calibrate`), in the
// model's unit of 1/6 core cycle. docs/calibration.md describes each
// measurement; sized to fit in a few seconds.
//
//   absl::StatusOr<Calibration> c = Calibrate();
//   if (c.ok()) StorePrices(DefaultDbPath(), c->table);  // runtime/prices.h
//
// Runs on the calling thread, pinned to the CPU it is on while it measures
// (its affinity is restored afterwards). Allocates up to about 1 GiB for the
// DRAM working set (half as much, then a quarter, if that fails). Each
// figure in cycles is the first quartile of its timed runs, each run's time
// over the clock measured just before and after it: the DRAM level figures'
// runs, of at least `min_run_seconds`, in `level_rounds` rounds; every other
// figure in cycles one run (`core_run_seconds`, `cache_run_seconds`) a
// round, in rounds spread over the whole calibration
// (runtime/calibrate_timer.h). The DRAM run
// lengths and the prefetched stream are medians over `dram_rounds`
// interleaved rounds. All are timed in the thread's CPU time, so that
// waiting for a shared core is not counted.
#ifndef AMARENA_RUNTIME_CALIBRATE_H_
#define AMARENA_RUNTIME_CALIBRATE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/price_table.h"
#include "runtime/calibrate_trees.h"

namespace amarena {

struct CalibrationOptions {
  // Runs of the DRAM level figures, of the sampled core figures (FMAs, L1
  // loads and stores) and of the sampled cache level figures, all of the
  // thread's CPU time. A cache level's run reads its set several times: on
  // the Emerald Rapids guest, the L3 set (non-inclusive there) read twice a
  // run, in runs of 1 ms, cost 13 cycles a line, and 7 read 4 times or more.
  double min_run_seconds = 0.005;
  double core_run_seconds = 0.001;
  double cache_run_seconds = 0.002;
  // Rounds of the DRAM level figures (its dense and strided reads), each
  // followed by a round of the samples.
  int level_rounds = 8;
  // Rounds of the DRAM run-length passes (one pass of each length a round).
  int dram_rounds = 7;
  // Rounds of the trees timed for the stream prefetch choice (each round one
  // call of each choice, about 10 ms a call; runtime/calibrate_trees.h).
  int tree_rounds = 7;
  // The table in force for this CPU (the one a previous calibration stored),
  // or null: a measured price within `settle_pct` per cent of its price, or
  // one unit, keeps that price (SettlePrices, core/price_table.h). Five
  // calibrations on the Intel Xeon guest read the DRAM run and band prices
  // up to 6.6 % apart and line_dense_l2 at 1.583-1.586 cycles, the midpoint
  // of 9 and 10 units, so each fresh measurement moved some price, and with
  // it the prices' hash and every search result stored under it.
  const CostParams* standing = nullptr;
  int64_t settle_pct = 8;
};

// Bytes of each row a vector-matrix kernel reads per step of a block (a
// 256-column bf16 tile).
inline constexpr int64_t kBlockRunBytes = 512;

struct Calibration {
  // The core clock, from chains of dependent register adds (one cycle each
  // on every x86-64 core) timed around every run measured in cycles (their
  // median), and the clock one would infer from the ymm FMA runs' rate
  // assuming two FMAs per cycle, for comparison.
  double ghz = 0;
  double ghz_from_fma = 0;
  // Vector FMAs per cycle (independent chains), 0 for a width the CPU lacks;
  // the latency of one vfmadd231ps ymm in a dependent chain, in cycles.
  double fma_ymm_per_cycle = 0;
  double fma_zmm_per_cycle = 0;
  double fma_latency_cycles = 0;
  // ymm vmovups to and from one L1-resident KiB, per cycle; zmm to and from
  // 2 KiB (0 without AVX-512).
  double loads_per_cycle = 0;
  double stores_per_cycle = 0;
  double zmm_loads_per_cycle = 0;
  double zmm_stores_per_cycle = 0;
  // ymm loads and broadcasts per cycle issued among FMAs as the broadcast
  // kernels of a 3x32 tile issue them in a k loop
  // (calibrate_loops::LoadsBesideFmas: 10 loads and 12 FMAs a step).
  double loads_beside_fmas_per_cycle = 0;
  // The same k step's time with the B panel 4 bytes off a line (half its
  // ymm vectors straddle two lines), over the aligned time.
  double split_beside_fmas_ratio = 0;

  // Cycles to read one 64-byte line into registers from a working set that
  // sits in a level: dense = sequentially, strided = down 64-byte column
  // panels of a matrix whose rows are `pitch_bytes` apart.
  struct LevelReads {
    std::string name;  // "l1", "l2", "l3", "dram"
    int64_t bytes = 0;
    double dense_cycles = 0;
    double strided_cycles = 0;
  };
  std::array<LevelReads, 4> levels;
  int64_t pitch_bytes = 4096;

  // A matrix of `dram_row_bytes` rows read as runs of R bytes down a column
  // band, band after band: GB/s of a sequential read, and each R's rate as a
  // percentage of it. dram_run_bytes is the shortest R whose percentage
  // (made monotone in R) reaches 50, or 90 % of its median if that is lower
  // (the prior knee where the data is within noise of that); at least 64
  // (runtime/calibrate_dram.cc, HalfRateRun).
  int64_t dram_row_bytes = CostParams::kDramRowBytes;
  double dram_sequential_gbps = 0;
  std::vector<std::pair<int64_t, double>> dram_runs;  // (R, % of sequential)
  int64_t dram_run_bytes = 0;
  // The same matrix read as the vector-matrix kernels read a plain B, GB/s
  // without and with the broadcast kernel's prefetches (calibrate_loops.h,
  // BlockPass), for information: the choice is made by timing trees
  // (prefetch_trees).
  double stream_gbps = 0;
  double stream_prefetched_gbps = 0;
  // With prefetcht1 a line further along (kStreamPrefetchL2).
  double stream_prefetched_l2_gbps = 0;
  // The f32 vector-matrix pick timed with each stream prefetch choice, per
  // ISA (empty when the DRAM working set was too small to hold its B).
  std::vector<PrefetchTiming> prefetch_trees;
  // The same blocks of dram_band_rows rows read in pieces of each
  // CostParams::kDramBandBytes length, without prefetches: (bytes, % of the
  // sequential rate in the same rounds).
  int64_t dram_band_rows = 0;
  std::vector<std::pair<int64_t, double>> dram_bands;

  double seconds = 0;  // wall time of Calibrate
  // Measured prices before ClampPrices, and the fields it changed.
  CostParams measured;
  std::vector<std::string> clamped;
  // The fields measured differently from CalibrationOptions::standing that
  // kept its price, and whether there was a standing table.
  std::vector<std::string> settled;
  bool had_standing = false;
  // The host's identity and the clamped prices. Prices not measured
  // (loop_iteration*, parallel_setup, dram_streams) keep their defaults;
  // line_gl_adjacent_panels and line_gl_far_panels are the dense GL price
  // scaled as on the Zen 5 host (44/42 and 40/42).
  PriceTable table;
};

// Calibration::dram_run_bytes from (R, % of sequential) pairs in increasing
// R: see there. 64 for no pairs. `prior` (the nearest shipped table's) is
// kept when it is a measured length whose rate lies within kKneeSlack of the
// threshold: on the Emerald Rapids guest 128 B runs read 45-51 % against a
// threshold of 49.5, and the knee flipped between 128 and 256 from one
// calibration to the next.
inline constexpr double kKneeSlack = 0.1;
int64_t HalfRateRun(const std::vector<std::pair<int64_t, double>>& runs,
                    int64_t prior = 0);

// The price, in the model's units, of an instruction a core issues
// `per_cycle` of: whole pipes (or half of one, below 0.75 a cycle: Zen 4
// stores a zmm every second cycle), so that a rate measured a little under
// or over a whole number (another process's interrupts, a turbo step) gives
// the same price run after run instead of flipping between two roundings
// (1.7 and 1.8 loads a cycle would be 4 and 3 units). Rounded up unless
// within kPipeSlack above a whole number: what else runs on the core only
// ever slows a rate, and on the Emerald Rapids guest, whose cores' other
// hardware threads run other tenants' work, L1 ymm loads read 2.26-2.99 a
// cycle over five calibrations (three pipes) and stores 1.50-2.00 (two),
// while no rate measured on any host read more than 0.02 above its pipes.
inline constexpr double kPipeSlack = 0.15;
int64_t PerPipeUnits(double per_cycle);

// FailedPrecondition without AVX2+FMA; ResourceExhausted when the working
// sets cannot be allocated.
absl::StatusOr<Calibration> Calibrate(const CalibrationOptions& options = {});

}  // namespace amarena

#endif  // AMARENA_RUNTIME_CALIBRATE_H_
