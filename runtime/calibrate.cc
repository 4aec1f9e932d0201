#include "runtime/calibrate.h"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "jit/cpu_features.h"
#include "runtime/calibrate_dram.h"
#include "runtime/calibrate_loops.h"
#include "runtime/prices.h"

namespace amarena {

namespace {

using namespace calibrate_loops;

constexpr int kUnitsPerCycle = 6;
constexpr int64_t kClockWarmNs = 100'000'000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Times runs in cycles of the clock they ran at. Each timed run is bracketed
// by two chains of dependent adds (one cycle each) that time the clock just
// before and just after it, and its cycles are its nanoseconds over the
// faster bracket's nanoseconds per cycle (an interrupt can only slow a
// bracket). So a clock that moves during a calibration (a turbo step) moves a
// run and its brackets alike: timed against one clock read at the start
// instead, the dense L2 line of the Intel Xeon guest read 1.52-1.79 cycles
// from one calibration to the next, and 1.59-1.65 bracketed.
class CycleTimer {
 public:
  explicit CycleTimer(const CalibrationOptions& o)
      : min_run_ns_(static_cast<int64_t>(o.min_run_seconds * 1e9)),
        reps_(std::max(1, o.reps)) {
    // Brackets of a quarter of a run or more.
    while (ChainNs(chain_iters_) < min_run_ns_ / 4) chain_iters_ *= 2;
  }

  // Per unit of count: the first quartile of the runs' cycles (of 7, the
  // second least; of 4 or fewer, the least), and that run's nanoseconds. What
  // the core does per cycle is only ever slowed by what else runs (an
  // interrupt, a neighbour in a shared cache), so the low end is the figure,
  // and the second least of 7 is not one lucky run.
  struct Figure {
    double cycles = 0;
    double ns = 0;
  };

  // How many units one timed run of a figure does: sized by the first Time,
  // so that later rounds of the same figure reuse it.
  struct RunCount {
    int64_t n = 1;
    bool sized = false;
  };

  // run(count) with count doubled until one run lasts min_run_seconds (the
  // first, short runs double as warm-up), then timed `reps` times.
  Figure PerCount(const std::function<void(int64_t)>& run, int64_t count) {
    RunCount n{count};
    std::vector<Figure> runs;
    Time(run, &n, reps_, &runs);
    return FirstQuartile(std::move(runs));
  }

  // Appends `reps` timed runs of run(count->n) to `runs`, per unit of count.
  // With `warm`, a count sized before is run once untimed first (sizing it
  // warms too): a later round of a figure whose working set fits a cache
  // then finds it there, not evicted by the figures timed in between.
  void Time(const std::function<void(int64_t)>& run, RunCount* count, int reps,
            std::vector<Figure>* runs, bool warm = false) {
    if (count->sized && warm) run(count->n);
    while (!count->sized) {
      const int64_t start = ThreadNs();
      run(count->n);
      count->sized = ThreadNs() - start >= min_run_ns_;
      if (!count->sized) count->n *= 2;
    }
    const int64_t n = count->n;
    const double adds = static_cast<double>(chain_iters_ * kAddsPerIter);
    for (int rep = 0; rep < reps; ++rep) {
      const double before = static_cast<double>(ChainNs(chain_iters_)) / adds;
      const int64_t start = ThreadNs();
      run(n);
      const double ns =
          static_cast<double>(ThreadNs() - start) / static_cast<double>(n);
      const double after = static_cast<double>(ChainNs(chain_iters_)) / adds;
      ns_per_cycle_.push_back(before);
      ns_per_cycle_.push_back(after);
      runs->push_back({ns / std::min(before, after), ns});
    }
  }

  // The first quartile of runs by cycles (of 7 or 8, the second least; of 4
  // or fewer, the least).
  static Figure FirstQuartile(std::vector<Figure> runs) {
    const size_t i = (runs.size() - 1) / 4;
    std::nth_element(
        runs.begin(), runs.begin() + i, runs.end(),
        [](const Figure& a, const Figure& b) { return a.cycles < b.cycles; });
    return runs[i];
  }

  // The clock: the median over every bracket so far.
  double Ghz() const { return 1 / Median(ns_per_cycle_); }

 private:
  static int64_t ChainNs(int64_t iters) {
    const int64_t start = ThreadNs();
    AddChain(iters);
    return ThreadNs() - start;
  }

  int64_t min_run_ns_;
  int reps_;
  int64_t chain_iters_ = 1 << 10;
  std::vector<double> ns_per_cycle_;
};

// 2 MiB-aligned (so transparent huge pages can back it) and written once, so
// every page is mapped before anything is timed. With `huge`, asks for huge
// pages (where the kernel has transparent huge pages in `madvise` mode, as
// Debian's has, nothing else gets them): what a working set that fits a
// cache costs to read then does not depend on which 4 KiB pages the process
// was given. Without, the dense L2 line of the Intel Xeon guest read 1.82
// cycles in one process and 1.65 in the next, each steady within itself.
// The DRAM sets keep 4 KiB pages, as the operands an engine passes have:
// page walks are part of what streaming them costs (huge pages made the
// dense DRAM line a quarter cheaper there).
struct Buffer {
  Buffer(size_t want, bool huge) {
    constexpr size_t kAlign = size_t{2} << 20;
    bytes = (want + kAlign - 1) / kAlign * kAlign;
    p = static_cast<float*>(std::aligned_alloc(kAlign, bytes));
    if (p == nullptr) return;
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // a hint; fine if refused
    size_t n = bytes / sizeof(float);
    for (size_t i = 0; i < n; ++i) p[i] = 1e-3f * static_cast<float>(i % 7);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* p = nullptr;
  size_t bytes = 0;
};

// Pins the calling thread to the CPU it is on; restores its affinity after.
class PinToCurrentCpu {
 public:
  PinToCurrentCpu() {
    CPU_ZERO(&old_);
    if (sched_getaffinity(0, sizeof(old_), &old_) != 0) return;
    int cpu = sched_getcpu();
    if (cpu < 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~PinToCurrentCpu() {
    if (pinned_) sched_setaffinity(0, sizeof(old_), &old_);
  }

 private:
  cpu_set_t old_;
  bool pinned_ = false;
};

int64_t Units(double cycles) {
  return std::max<int64_t>(1, std::llround(cycles * kUnitsPerCycle));
}

// The price of an instruction a core issues `per_cycle` of: whole pipes, so
// that a rate measured a little under or over a whole number (another
// process's interrupts, a turbo step) gives the same price run after run
// instead of flipping between two roundings (1.7 and 1.8 loads a cycle
// would be 4 and 3 units).
int64_t PerPipeUnits(double per_cycle) {
  // Whole pipes, or half of one: Zen 4 stores a zmm every second cycle.
  const double pipes =
      per_cycle < 0.75 ? 0.5 : std::max(1.0, std::round(per_cycle));
  return Units(1 / pipes);
}

// A zmm price where it differs from the ymm one (CostParams::fma_zmm); 0
// where it is the same or the CPU has no AVX-512.
int64_t ZmmUnits(double zmm_per_cycle, int64_t ymm_units) {
  if (zmm_per_cycle <= 0) return 0;
  const int64_t units = PerPipeUnits(zmm_per_cycle);
  return units > ymm_units ? units : 0;
}

}  // namespace

absl::StatusOr<Calibration> Calibrate(const CalibrationOptions& o) {
  const CpuFeatures cpu = DetectCpu();
  if (!cpu.avx2 || !cpu.fma)
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot calibrate on this CPU (", cpu.brand, "): features are '",
        cpu.FeatureList(), "', must include avx2 and fma"));
  const int64_t start_ns = NowNs();
  PinToCurrentCpu pin;
  Calibration c;

  // Working sets by the host's cache sizes, each a power of two of at least
  // one 16 KiB panel: half of L1d (at most 16 KiB) ... the DRAM set at least
  // 8x L3 so no cache holds it. The DRAM buffer serves the DRAM figures, a
  // second one in huge pages the cache levels (Buffer).
  const int64_t l1 = 16 << 10;
  const int64_t l2 = std::max(FloorPow2(cpu.l2_bytes / 2), 4 * l1);
  const int64_t l3 = std::max(
      FloorPow2(std::min(std::max(cpu.l3_bytes / 4, 4 * cpu.l2_bytes),
                         cpu.l3_bytes / 2)),
      2 * l2);
  int64_t dram = FloorPow2(
      std::clamp<int64_t>(8 * cpu.l3_bytes, int64_t{256} << 20,
                          int64_t{1} << 30));
  // The strided L1 set is one panel, whose rows span kPanelRows pitches.
  const int64_t least = std::max<int64_t>(
      4 * l3, kPanelRows * kPitchFloats * sizeof(float));
  std::unique_ptr<Buffer> buf;
  for (; dram >= least; dram /= 2) {
    buf = std::make_unique<Buffer>(static_cast<size_t>(dram), false);
    if (buf->p != nullptr) break;
  }
  if (buf == nullptr || buf->p == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot calibrate: no working set of at least ", least >> 20,
        " MiB could be allocated for the DRAM measurements"));

  // 1. FMAs in cycles. The core is kept busy for kClockWarmNs first, so that
  // it runs at speed from the first timed run: without that, one calibration
  // in four on the Zen 4 host read the clock at 2.5 GHz where the others read
  // 2.84.
  for (const int64_t until = ThreadNs() + kClockWarmNs; ThreadNs() < until;)
    AddChain(1 << 12);
  CycleTimer timer(o);
  auto cycles_per = [&](const std::function<void(int64_t)>& run,
                        int64_t count) {
    return timer.PerCount(run, count).cycles;
  };
  const CycleTimer::Figure ymm = timer.PerCount(YmmFmas, 1 << 12);
  c.fma_ymm_per_cycle = kYmmChains / ymm.cycles;
  c.ghz_from_fma = kYmmChains / ymm.ns / 2;
  c.fma_latency_cycles = cycles_per(YmmFmaChain, 1 << 14);
  if (cpu.avx512f)
    c.fma_zmm_per_cycle = kZmmChains / cycles_per(ZmmFmas, 1 << 12);

  // 2. L1 loads and stores.
  auto ops_per_cycle = [&](auto loop) {
    return kOpsPerIter / cycles_per(loop, 1024);
  };
  c.loads_per_cycle = ops_per_cycle([&](int64_t n) { L1Loads(buf->p, n); });
  c.stores_per_cycle = ops_per_cycle([&](int64_t n) { L1Stores(buf->p, n); });
  const double mix_cycles =
      cycles_per([&](int64_t n) { LoadsBesideFmas(buf->p, n); }, 8);
  c.loads_beside_fmas_per_cycle = kMixLoads * kMixSteps / mix_cycles;
  // B 4 bytes off a line (A's 4-byte broadcasts never straddle one).
  c.split_beside_fmas_ratio =
      cycles_per([&](int64_t n) { LoadsBesideFmas(buf->p + 1, n); }, 8) /
      mix_cycles;
  if (cpu.avx512f) {
    c.zmm_loads_per_cycle =
        ops_per_cycle([&](int64_t n) { ZmmL1Loads(buf->p, n); });
    c.zmm_stores_per_cycle =
        ops_per_cycle([&](int64_t n) { ZmmL1Stores(buf->p, n); });
  }

  // 3. Lines from each level, dense and strided: every figure in
  // `level_rounds` interleaved rounds, so that something that slows the
  // core for a while (a fresh process's first passes over memory read the
  // strided L1 panel at 32 cycles a line for 7 runs in a row, then 3.1)
  // slows a few runs of each figure rather than every run of one.
  const char* names[] = {"l1", "l2", "l3", "dram"};
  const int64_t sets[] = {l1, l2, l3, dram};
  const int64_t cache_bytes =
      std::max<int64_t>(l3, kPanelRows * kPitchFloats * sizeof(float));
  const Buffer cache_set(static_cast<size_t>(cache_bytes), true);
  if (cache_set.p == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot calibrate: the ", cache_bytes >> 10,
        " KiB working set for the cache levels could not be allocated"));
  struct LevelRuns {
    CycleTimer::RunCount dense_count, strided_count;
    std::vector<CycleTimer::Figure> dense, strided;
  };
  std::array<LevelRuns, 4> level_runs;
  const int rounds = std::max(1, o.level_rounds);
  const int reps = std::max(1, (o.reps + rounds - 1) / rounds);
  for (int round = 0; round < rounds; ++round)
    for (int i = 0; i < 4; ++i) {
      float* set = i < 3 ? cache_set.p : buf->p;
      const size_t lines = static_cast<size_t>(sets[i]) / kLine;
      // Every set is a power-of-two multiple of one panel (16 KiB).
      const size_t panels = std::min(lines / kPanelRows, kPanelsPerRow);
      const size_t bands = lines / (kPanelRows * panels);
      LevelRuns& r = level_runs[i];
      const bool warm = i < 3;  // the DRAM set is read cold by design
      timer.Time([&](int64_t n) { DensePasses(set, lines, n); },
                 &r.dense_count, reps, &r.dense, warm);
      timer.Time(
          [&](int64_t n) { StridedPasses(set, bands, panels, n); },
          &r.strided_count, reps, &r.strided, warm);
    }
  for (int i = 0; i < 4; ++i) {
    Calibration::LevelReads& r = c.levels[i];
    r.name = names[i];
    r.bytes = sets[i];
    const double lines = static_cast<double>(sets[i] / kLine);
    r.dense_cycles =
        CycleTimer::FirstQuartile(std::move(level_runs[i].dense)).cycles /
        lines;
    r.strided_cycles =
        CycleTimer::FirstQuartile(std::move(level_runs[i].strided)).cycles /
        lines;
  }
  c.ghz = timer.Ghz();

  // 4-5. DRAM runs, bands and prefetched streams (runtime/calibrate_dram.h).
  const DramFigures dram_figures =
      MeasureDram(buf->p, dram, cpu.l3_bytes, o.dram_rounds, c);

  // 6. Prices.
  CostParams& m = c.measured;
  // ymm prices, and zmm ones where a zmm instruction costs more.
  m.fma = PerPipeUnits(c.fma_ymm_per_cycle);
  m.load = PerPipeUnits(c.loads_per_cycle);
  // Not whole pipes: what is measured is the price a load must have for the
  // broadcast kernel's max(FMAs, loads) to give the tile's k step its time.
  m.load_beside_fma = Units(1 / c.loads_beside_fmas_per_cycle);
  m.store = PerPipeUnits(c.stores_per_cycle);
  m.fma_zmm = ZmmUnits(c.fma_zmm_per_cycle, m.fma);
  m.load_zmm = ZmmUnits(c.zmm_loads_per_cycle, m.load);
  m.store_zmm = ZmmUnits(c.zmm_stores_per_cycle, m.store);
  const int gl = static_cast<int>(Level::kGL), l3i = static_cast<int>(Level::kL3),
            l2i = static_cast<int>(Level::kL2);
  m.line_dense[gl] = Units(c.levels[3].dense_cycles);
  m.line_dense[l3i] = Units(c.levels[2].dense_cycles);
  m.line_dense[l2i] = Units(c.levels[1].dense_cycles);
  m.line_strided[gl] = Units(c.levels[3].strided_cycles);
  m.line_strided[l3i] = Units(c.levels[2].strided_cycles);
  m.line_strided[l2i] = Units(c.levels[1].strided_cycles);
  m.dram_run_bytes = c.dram_run_bytes;
  // Each run length's line: the sequential line over the run's share of the
  // sequential rate (ClampPrices then orders them).
  for (int i = 0; i < CostParams::kDramRunSteps; ++i)
    m.line_gl_run[i] = std::llround(static_cast<double>(m.line_dense[gl]) *
                                    100 / std::max(1.0, c.dram_runs[i].second));
  // A band's line: the dense line times how much slower it streams than
  // the band of the shortest pieces (medians over the rounds of the time
  // ratio). Bands of short pieces read a few streams at once, on the Zen 4
  // guest 0.9-1.25x the rate of one sequential stream from one calibration
  // to the next, while the ratios between piece lengths held within about
  // 10 %: what the model is given is that ratio, with the shortest pieces at
  // the dense price (0; ClampPrices makes any band no slower 0 too).
  for (int i = 1; i < CostParams::kDramBandSteps; ++i)
    m.line_gl_band[i] = std::llround(static_cast<double>(m.line_dense[gl]) *
                                     dram_figures.band_slower[i]);
  // Panels side by side were measured only on the Zen 5 host, as ratios to
  // its dense GL price (core/target.h); kept in proportion here.
  const CostParams zen5;
  m.line_gl_adjacent_panels =
      std::llround(static_cast<double>(m.line_dense[gl]) *
                   zen5.line_gl_adjacent_panels / zen5.line_dense[gl]);
  m.line_gl_far_panels =
      std::llround(static_cast<double>(m.line_dense[gl]) *
                   zen5.line_gl_far_panels / zen5.line_dense[gl]);

  // Not measured, the nearest shipped table's: the L3 share (what streams
  // beside a buffer, and the neighbours on a shared host, are not this
  // process's to time), and what was found by timing whole trees: the share
  // of L2's rate a view gets beside the kernels (l2_overlap_pct_zmm) and the
  // price of lines crowded onto shared sets (line_shared_set_zmm), the
  // share of L2 the search may fill (l2_share_pct) and how far ahead the
  // kernels prefetch a packed B (panel_prefetch_bytes: a 6x16 tile's k
  // loops over a packed panel in L2, emulated, ran 1-2 % faster with the
  // prefetches on the Intel guest, where the picks ran up to 1.14x as fast).
  const CostParams& nearest = NearestShipped(IdentityOf(cpu)).table->cost;
  m.l3_share_pct = nearest.l3_share_pct;
  m.l2_overlap_pct_zmm = nearest.l2_overlap_pct_zmm;
  m.line_shared_set_zmm = nearest.line_shared_set_zmm;
  m.split_beside_fma = nearest.split_beside_fma;
  m.l2_share_pct = nearest.l2_share_pct;
  m.panel_prefetch_bytes = nearest.panel_prefetch_bytes;
  // A streamed B's prefetches: prefetcht0 where the emulation shows it
  // clearly (kPrefetchGain; the Zen 5 host read about twice as fast), else
  // the nearest table's, found by timing trees: the emulation read 1.045x
  // with prefetcht0 on the Intel guest, whose picks ran 1.24-1.40x as fast,
  // and 1.01-1.21x with prefetcht1 on the Zen 4 guest, whose picks ran
  // 1.04-1.10x as fast (docs/calibration.md).
  m.stream_prefetch =
      c.stream_prefetched_gbps >= kPrefetchGain * c.stream_gbps
          ? 1
          : nearest.stream_prefetch;

  // The search's orders (ClampPrices) hold for the table it is given even
  // when a noisy run broke them; the fields raised are reported.
  c.table.cost = ClampPrices(m);
  // By name: a field clamped to its default leaves the text.
  const std::vector<std::string> after =
      absl::StrSplit(CostParamsText(c.table.cost), ' ');
  for (absl::string_view field : absl::StrSplit(CostParamsText(m), ' '))
    if (std::find(after.begin(), after.end(), field) == after.end())
      c.clamped.emplace_back(field.substr(0, field.find('=')));
  c.table.label = "calibrated";
  c.table.cpu = IdentityOf(cpu);
  c.seconds = static_cast<double>(NowNs() - start_ns) / 1e9;
  return c;
}

}  // namespace amarena
