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
#include "runtime/calibrate_trees.h"
#include "runtime/calibrate_timer.h"
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

// A zmm price where it differs from the ymm one (CostParams::fma_zmm); 0
// where it is the same or the CPU has no AVX-512.
int64_t ZmmUnits(double zmm_per_cycle, int64_t ymm_units) {
  if (zmm_per_cycle <= 0) return 0;
  const int64_t units = PerPipeUnits(zmm_per_cycle);
  return units > ymm_units ? units : 0;
}

}  // namespace

int64_t PerPipeUnits(double per_cycle) {
  // Whole pipes, or half of one: Zen 4 stores a zmm every second cycle.
  const double pipes =
      per_cycle < 0.75 ? 0.5
                       : std::max(1.0, std::ceil(per_cycle - kPipeSlack));
  return Units(1 / pipes);
}

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
  // 8x this core's share of L3 and twice all of it (up to 1 GiB), so no
  // cache holds it, not even one shared with other tenants that are idle.
  // The DRAM buffer serves the DRAM figures, a second one in huge pages the
  // cache levels (Buffer).
  const int64_t l1 = 16 << 10;
  const int64_t l2 = std::max(FloorPow2(cpu.l2_bytes / 2), 4 * l1);
  const int64_t l3 = std::max(
      FloorPow2(std::min(std::max(cpu.l3_bytes / 4, 4 * cpu.l2_bytes),
                         cpu.l3_bytes / 2)),
      2 * l2);
  int64_t dram = FloorPow2(std::clamp<int64_t>(
      std::max(8 * cpu.l3_bytes, 2 * cpu.l3_total_bytes), int64_t{256} << 20,
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

  // 1. The short figures, each sampled a run at a time in every round below
  // (SampledFigures: a round between each level's DRAM reads and after each
  // round of the DRAM runs and bands), so that each one's runs spread over
  // the whole calibration: FMAs, L1 loads and stores, the broadcast kernel's
  // k step, and lines read from L1-L3. The core is kept busy for
  // kClockWarmNs first, so that it runs at speed from the first timed run:
  // without that, one calibration in four on the Zen 4 host read the clock
  // at 2.5 GHz where the others read 2.84.
  for (const int64_t until = ThreadNs() + kClockWarmNs; ThreadNs() < until;)
    AddChain(1 << 12);
  const int64_t core_ns = static_cast<int64_t>(o.core_run_seconds * 1e9);
  const int64_t cache_ns = static_cast<int64_t>(o.cache_run_seconds * 1e9);
  CycleTimer timer(static_cast<int64_t>(o.min_run_seconds * 1e9), core_ns);
  SampledFigures samples(&timer);
  // A core figure, or with `warm` a cache level's.
  auto add = [&](std::function<void(int64_t)> run, int64_t count,
                 bool warm = false) {
    return samples.Add(std::move(run), count, warm ? cache_ns : core_ns, warm);
  };
  const int ymm_fmas = add(YmmFmas, 1 << 12);
  const int fma_chain = add(YmmFmaChain, 1 << 14);
  const int zmm_fmas = cpu.avx512f ? add(ZmmFmas, 1 << 12) : -1;
  const int loads = add([&](int64_t n) { L1Loads(buf->p, n); }, 1024);
  const int stores = add([&](int64_t n) { L1Stores(buf->p, n); }, 1024);
  const int mix = add([&](int64_t n) { LoadsBesideFmas(buf->p, n); }, 8);
  // B 4 bytes off a line (A's 4-byte broadcasts never straddle one).
  const int split = add([&](int64_t n) { LoadsBesideFmas(buf->p + 1, n); }, 8);
  const int zmm_loads =
      cpu.avx512f ? add([&](int64_t n) { ZmmL1Loads(buf->p, n); }, 1024) : -1;
  const int zmm_stores =
      cpu.avx512f ? add([&](int64_t n) { ZmmL1Stores(buf->p, n); }, 1024) : -1;

  // Lines from each level, dense and strided. L1-L3 are sampled (warmed
  // before each run: the figures between evict them); the DRAM set, read
  // cold by design, is timed in `level_rounds` rounds of its own, so that
  // something that slows the core for a while (a fresh process's first
  // passes over memory read the strided L1 panel at 32 cycles a line for 7
  // runs in a row, then 3.1) slows a few runs of each figure rather than
  // every run of one.
  const char* names[] = {"l1", "l2", "l3", "dram"};
  const int64_t sets[] = {l1, l2, l3, dram};
  const int64_t cache_bytes =
      std::max<int64_t>(l3, kPanelRows * kPitchFloats * sizeof(float));
  const Buffer cache_set(static_cast<size_t>(cache_bytes), true);
  if (cache_set.p == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot calibrate: the ", cache_bytes >> 10,
        " KiB working set for the cache levels could not be allocated"));
  struct LevelPasses {
    std::function<void(int64_t)> dense, strided;
  };
  std::array<LevelPasses, 4> passes;
  std::array<int, 3> dense_figure{}, strided_figure{};
  for (int i = 0; i < 4; ++i) {
    float* set = i < 3 ? cache_set.p : buf->p;
    const size_t lines = static_cast<size_t>(sets[i]) / kLine;
    // Every set is a power-of-two multiple of one panel (16 KiB).
    const size_t panels = std::min(lines / kPanelRows, kPanelsPerRow);
    const size_t bands = lines / (kPanelRows * panels);
    passes[i].dense = [set, lines](int64_t n) { DensePasses(set, lines, n); };
    passes[i].strided = [set, bands, panels](int64_t n) {
      StridedPasses(set, bands, panels, n);
    };
    if (i < 3) {
      dense_figure[i] = add(passes[i].dense, 1, true);
      strided_figure[i] = add(passes[i].strided, 1, true);
    }
  }
  CycleTimer::RunCount dram_dense_count, dram_strided_count;
  std::vector<CycleTimer::Figure> dram_dense, dram_strided;
  for (int round = 0; round < std::max(1, o.level_rounds); ++round) {
    timer.Time(passes[3].dense, &dram_dense_count, 1, &dram_dense);
    timer.Time(passes[3].strided, &dram_strided_count, 1, &dram_strided);
    samples.Round();
  }

  // 2. DRAM runs, bands and prefetched streams (runtime/calibrate_dram.h),
  // a round of the samples after each of their rounds.
  const CostParams& nearest = NearestShipped(IdentityOf(cpu)).table->cost;
  const DramFigures dram_figures =
      MeasureDram(buf->p, dram, o.dram_rounds, nearest.dram_run_bytes, c,
                  [&] { samples.Round(); });

  // 3. The figures.
  const CycleTimer::Figure ymm = samples.Get(ymm_fmas);
  c.fma_ymm_per_cycle = kYmmChains / ymm.cycles;
  c.ghz_from_fma = kYmmChains / ymm.ns / 2;
  c.fma_latency_cycles = samples.Get(fma_chain).cycles;
  auto ops_per_cycle = [&](int figure) {
    return kOpsPerIter / samples.Get(figure).cycles;
  };
  c.loads_per_cycle = ops_per_cycle(loads);
  c.stores_per_cycle = ops_per_cycle(stores);
  const double mix_cycles = samples.Get(mix).cycles;
  c.loads_beside_fmas_per_cycle = kMixLoads * kMixSteps / mix_cycles;
  c.split_beside_fmas_ratio = samples.Get(split).cycles / mix_cycles;
  if (cpu.avx512f) {
    c.fma_zmm_per_cycle = kZmmChains / samples.Get(zmm_fmas).cycles;
    c.zmm_loads_per_cycle = ops_per_cycle(zmm_loads);
    c.zmm_stores_per_cycle = ops_per_cycle(zmm_stores);
  }
  for (int i = 0; i < 4; ++i) {
    Calibration::LevelReads& r = c.levels[i];
    r.name = names[i];
    r.bytes = sets[i];
    const double lines = static_cast<double>(sets[i] / kLine);
    r.dense_cycles = (i < 3 ? samples.Get(dense_figure[i])
                            : CycleTimer::MedianOf(dram_dense))
                         .cycles /
                     lines;
    r.strided_cycles = (i < 3 ? samples.Get(strided_figure[i])
                              : CycleTimer::MedianOf(dram_strided))
                           .cycles /
                       lines;
  }
  c.ghz = timer.Ghz();

  // 4. Prices.
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
  const int gl = static_cast<int>(Level::kGL);
  const int l3i = static_cast<int>(Level::kL3);
  const int l2i = static_cast<int>(Level::kL2);
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
  m.l3_share_pct = nearest.l3_share_pct;
  m.l2_overlap_pct_zmm = nearest.l2_overlap_pct_zmm;
  m.line_shared_set_zmm = nearest.line_shared_set_zmm;
  m.split_beside_fma = nearest.split_beside_fma;
  m.l2_share_pct = nearest.l2_share_pct;
  m.panel_prefetch_bytes = nearest.panel_prefetch_bytes;
  // A streamed B's prefetches, by timing the f32 vector-matrix pick with
  // each choice (runtime/calibrate_trees.h): one faster than the standing
  // choice in every round and by kPrefetchTreeGain in the median ratio, else
  // the standing one: the stored table's (so a second calibration keeps the
  // first's unless it clearly loses), else the nearest shipped table's.
  // The emulation above read it otherwise than the kernels ran: prefetcht0
  // 1.045x on the Intel guest, whose picks ran 1.24-1.40x as fast with it;
  // prefetcht1 1.01-1.21x on the Zen 4 guest, whose AVX2 picks ran
  // 1.15-1.23x as fast without (docs/calibration.md). A bf16 B keeps the
  // standing choices (not timed here). SettlePrices leaves these alone.
  const CostParams& standing = o.standing ? *o.standing : nearest;
  int64_t f32_ymm = StreamPrefetchFor(standing, Isa::kAvx2, 4);
  int64_t f32_zmm = StreamPrefetchFor(standing, Isa::kAvx512, 4);
  const int64_t bf16_ymm = StreamPrefetchFor(standing, Isa::kAvx2, 2);
  const int64_t bf16_zmm = StreamPrefetchFor(standing, Isa::kAvx512, 2);
  if (dram >= static_cast<int64_t>(sizeof(float)) * kPrefetchTreeFloats) {
    // The prices measured so far, with the standing choices to time against.
    CostParams timed = m;
    timed.stream_prefetch = f32_ymm;
    timed.stream_prefetch_zmm = f32_zmm;
    absl::StatusOr<std::vector<PrefetchTiming>> trees =
        TimeStreamPrefetch(cpu, ClampPrices(timed), buf->p, o.tree_rounds);
    if (!trees.ok()) return trees.status();
    c.prefetch_trees = *trees;
    for (const PrefetchTiming& t : c.prefetch_trees)
      (t.isa == Isa::kAvx2 ? f32_ymm : f32_zmm) = t.chosen;
    if (!cpu.avx512f) f32_zmm = f32_ymm;
  }
  auto refine = [](int64_t value, int64_t refined) {
    return value == refined ? kStreamPrefetchInherit : value;
  };
  m.stream_prefetch = f32_ymm;
  m.stream_prefetch_zmm = refine(f32_zmm, f32_ymm);
  m.stream_prefetch_bf16 = refine(bf16_ymm, f32_ymm);
  m.stream_prefetch_bf16_zmm = refine(bf16_zmm, bf16_ymm);

  // Within its noise of the standing table, a price stays as it was.
  c.had_standing = o.standing != nullptr;
  const CostParams settled =
      c.had_standing ? SettlePrices(m, *o.standing, o.settle_pct, &c.settled)
                     : m;
  // The search's orders (ClampPrices) hold for the table it is given even
  // when a noisy run broke them; the fields raised are reported.
  c.table.cost = ClampPrices(settled);
  // By name: a field clamped to its default leaves the text.
  const std::vector<std::string> after =
      absl::StrSplit(CostParamsText(c.table.cost), ' ');
  for (absl::string_view field : absl::StrSplit(CostParamsText(settled), ' '))
    if (std::find(after.begin(), after.end(), field) == after.end())
      c.clamped.emplace_back(field.substr(0, field.find('=')));
  c.table.label = "calibrated";
  c.table.cpu = IdentityOf(cpu);
  c.seconds = static_cast<double>(NowNs() - start_ns) / 1e9;
  return c;
}

}  // namespace amarena
