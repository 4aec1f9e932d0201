// Measures, on this host, the prices of the affine cost model used by the
// search, in the project's cost unit of 1/6 core cycle.
//
//   ./build/bench/cost_calibration [--json]
//
// Single thread, every number is the median of kReps timed runs, each sized
// to last at least kMinRunNs (one or two passes for DRAM).
//
// 1. Core clock: independent vfmadd231ps ymm chains (kFmaChains of them, more
//    than latency x pipes), assuming 2 FMA per cycle (Zen 5 has two FMA
//    pipes): cycles/s = FMAs/s / 2. All other times are converted to cycles
//    with this clock (the TSC of a VM does not track the core clock).
// 2. Cost to bring one 64-byte line into L1 from each level, reading with
//    ymm loads summed by vaddps into 8 accumulators, for working sets that
//    sit in L1 (16 KiB), L2 (512 KiB), L3 (8 MiB) and DRAM (512 MiB, or
//    256 MiB if that cannot be allocated). Two patterns per level:
//      dense:   sequential read of a contiguous buffer;
//      strided: 64-byte column panels of a row-major 1024-column f32 matrix
//               (row pitch 4096 B) read top to bottom, one line per row,
//               then the next panel. Panels are kPanelRows tall and at most
//               64 of them (a full row) are read per band of rows; the
//               matrix has as many bands as needed to touch exactly the
//               working set (L1: 1 panel of 256 rows of a 1 MiB matrix; L2:
//               32 panels of a 1 MiB matrix; L3 and DRAM: every panel of
//               every band).
//    Reported as cycles per line and units per line = round(6 * cycles).
// 3. L1 throughput of vmovups ymm loads and stores (inline asm, 32 per loop
//    iteration over a 1 KiB window): units per load = round(6 / loads per
//    cycle), likewise for stores.
//
// 4. DRAM runs: a 64 MiB matrix with 32 KiB rows (a 2048 x 16384 bf16 B) read
//    as runs of R bytes, row after row down a column band, then the next
//    band (how a loop over k walks B below a tile over n); as a percentage
//    of reading the same matrix sequentially. What makes the cost model
//    price short runs from DRAM as strided (CostParams::dram_run_bytes).
//
// With --json the last line is one JSON object holding every value.
#include <immintrin.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kReps = 7;
constexpr int64_t kMinRunNs = 50'000'000;  // 50 ms.
constexpr int kUnitsPerCycle = 6;
constexpr size_t kLine = 64;
constexpr size_t kFloatsPerLine = kLine / sizeof(float);
constexpr size_t kRowPitchFloats = 1024;  // 4096-byte rows.
constexpr size_t kPanelsPerRow = kRowPitchFloats / kFloatsPerLine;
constexpr size_t kPanelRows = 256;
constexpr int kFmaChains = 10;

volatile float g_sink;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Times run(count) with count doubled until one run lasts kMinRunNs (the
// first, short runs double as warm-up), then returns the median over kReps
// runs of the nanoseconds per unit of count.
double MedianNsPerCount(const std::function<void(int64_t)>& run,
                        int64_t count = 1) {
  while (true) {
    int64_t start = NowNs();
    run(count);
    if (NowNs() - start >= kMinRunNs) break;
    count *= 2;
  }
  std::vector<double> ns(kReps);
  for (double& t : ns) {
    int64_t start = NowNs();
    run(count);
    t = static_cast<double>(NowNs() - start) / static_cast<double>(count);
  }
  std::nth_element(ns.begin(), ns.begin() + kReps / 2, ns.end());
  return ns[kReps / 2];
}

__attribute__((target("avx2"))) void Sink(__m256 v) {
  alignas(32) float f[8];
  _mm256_store_ps(f, v);
  float s = 0;
  for (float x : f) s += x;
  g_sink = s;
}

// `iters` rounds of kFmaChains independent FMAs.
__attribute__((target("avx2,fma"), noinline)) void FmaChains(int64_t iters) {
  const __m256 mul = _mm256_set1_ps(0.999999f);
  const __m256 add = _mm256_set1_ps(1e-7f);
  __m256 acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = _mm256_set1_ps(1.0f + c);
  for (int64_t i = 0; i < iters; ++i) {
    for (int c = 0; c < kFmaChains; ++c) {
      acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
    }
  }
  __m256 s = acc[0];
  for (int c = 1; c < kFmaChains; ++c) s = _mm256_add_ps(s, acc[c]);
  Sink(s);
}

// Reads `lines` 64-byte lines at base, base + pitch, base + 2 * pitch, ...
// (pitch in floats; lines a multiple of 4) into 8 vaddps accumulators.
__attribute__((target("avx2"), always_inline)) inline void SumLines(
    const float* base, size_t pitch, size_t lines, __m256 acc[8]) {
  for (size_t i = 0; i < lines; i += 4, base += 4 * pitch) {
    acc[0] = _mm256_add_ps(acc[0], _mm256_load_ps(base));
    acc[1] = _mm256_add_ps(acc[1], _mm256_load_ps(base + 8));
    acc[2] = _mm256_add_ps(acc[2], _mm256_load_ps(base + pitch));
    acc[3] = _mm256_add_ps(acc[3], _mm256_load_ps(base + pitch + 8));
    acc[4] = _mm256_add_ps(acc[4], _mm256_load_ps(base + 2 * pitch));
    acc[5] = _mm256_add_ps(acc[5], _mm256_load_ps(base + 2 * pitch + 8));
    acc[6] = _mm256_add_ps(acc[6], _mm256_load_ps(base + 3 * pitch));
    acc[7] = _mm256_add_ps(acc[7], _mm256_load_ps(base + 3 * pitch + 8));
  }
}

// Reads a rows x pitch-float matrix as runs of `run` floats: for each band
// of columns, each row's run in turn.
__attribute__((target("avx2"), noinline)) void RunPass(const float* m,
                                                       size_t rows,
                                                       size_t pitch,
                                                       size_t run) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  for (size_t c = 0; c < pitch; c += run)
    for (size_t r = 0; r < rows; ++r) {
      const float* p = m + r * pitch + c;
      for (size_t i = 0; i < run; i += 16) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
      }
    }
  Sink(_mm256_add_ps(a0, a1));
}

__attribute__((target("avx2"))) void SinkAcc(const __m256 acc[8]) {
  Sink(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),
                                   _mm256_add_ps(acc[2], acc[3])),
                     _mm256_add_ps(_mm256_add_ps(acc[4], acc[5]),
                                   _mm256_add_ps(acc[6], acc[7]))));
}

// `passes` sequential reads of lines * 64 bytes.
__attribute__((target("avx2"), noinline)) void DensePasses(const float* buf,
                                                           size_t lines,
                                                           int64_t passes) {
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  for (int64_t p = 0; p < passes; ++p) {
    SumLines(buf, kFloatsPerLine, lines, acc);
  }
  SinkAcc(acc);
}

// `passes` column-panel reads of a matrix of `bands` * kPanelRows rows,
// `panels` panels per band.
__attribute__((target("avx2"), noinline)) void StridedPasses(const float* mat,
                                                             size_t bands,
                                                             size_t panels,
                                                             int64_t passes) {
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  for (int64_t p = 0; p < passes; ++p) {
    for (size_t b = 0; b < bands; ++b) {
      const float* band = mat + b * kPanelRows * kRowPitchFloats;
      for (size_t c = 0; c < panels; ++c) {
        SumLines(band + c * kFloatsPerLine, kRowPitchFloats, kPanelRows, acc);
      }
    }
  }
  SinkAcc(acc);
}

// 32 ymm loads / stores covering the 1 KiB at %[p] (the assembler folds
// the "o + 32" offset expressions).
// clang-format off
#define AMARENA_LD(off, r) "vmovups " #off "(%[p]), %%ymm" #r "\n\t"
#define AMARENA_LD8(o)                                                  \
  AMARENA_LD(o + 0, 0)   AMARENA_LD(o + 32, 1)  AMARENA_LD(o + 64, 2)   \
  AMARENA_LD(o + 96, 3)  AMARENA_LD(o + 128, 4) AMARENA_LD(o + 160, 5)  \
  AMARENA_LD(o + 192, 6) AMARENA_LD(o + 224, 7)
#define AMARENA_LD32 \
  AMARENA_LD8(0) AMARENA_LD8(256) AMARENA_LD8(512) AMARENA_LD8(768)
#define AMARENA_ST(off) "vmovups %%ymm0, " #off "(%[p])\n\t"
#define AMARENA_ST8(o)                                                  \
  AMARENA_ST(o + 0)   AMARENA_ST(o + 32)  AMARENA_ST(o + 64)            \
  AMARENA_ST(o + 96)  AMARENA_ST(o + 128) AMARENA_ST(o + 160)           \
  AMARENA_ST(o + 192) AMARENA_ST(o + 224)
#define AMARENA_ST32 \
  AMARENA_ST8(0) AMARENA_ST8(256) AMARENA_ST8(512) AMARENA_ST8(768)
// clang-format on
constexpr int kOpsPerIter = 32;

// `iters` rounds of kOpsPerIter ymm loads from the 1 KiB window at p.
void L1Loads(const float* p, int64_t iters) {
  asm volatile("1:\n\t" AMARENA_LD32 "dec %[n]\n\tjnz 1b\n\t"
               : [n] "+r"(iters)
               : [p] "r"(p)
               : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                 "cc", "memory");
}

// `iters` rounds of kOpsPerIter ymm stores to the 1 KiB window at p.
void L1Stores(float* p, int64_t iters) {
  asm volatile(
      "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
      "1:\n\t" AMARENA_ST32 "dec %[n]\n\tjnz 1b\n\t"
      : [n] "+r"(iters)
      : [p] "r"(p)
      : "xmm0", "cc", "memory");
}

#undef AMARENA_LD
#undef AMARENA_LD8
#undef AMARENA_LD32
#undef AMARENA_ST
#undef AMARENA_ST8
#undef AMARENA_ST32

// 2 MiB-aligned (so transparent huge pages can back it), first-touched.
float* AllocTouched(size_t bytes) {
  constexpr size_t kAlign = size_t{2} << 20;
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  auto* p = static_cast<float*>(std::aligned_alloc(kAlign, bytes));
  if (p == nullptr) return nullptr;
  size_t n = bytes / sizeof(float);
  for (size_t i = 0; i < n; ++i) p[i] = 1e-3f * static_cast<float>(i % 7);
  return p;
}

int Units(double cycles) {
  return std::max(1, static_cast<int>(std::lround(cycles * kUnitsPerCycle)));
}

struct Level {
  const char* name;
  size_t bytes;
  double dense_cycles = 0;
  double strided_cycles = 0;
};

void PinToCurrentCpu() {
#ifdef __linux__
  int cpu = sched_getcpu();
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else {
      std::fprintf(stderr, "usage: %s [--json]\n", argv[0]);
      return 2;
    }
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::fprintf(stderr, "needs AVX2 and FMA\n");
    return 1;
  }
  PinToCurrentCpu();

  // 1. Clock.
  double fma_round_ns = MedianNsPerCount(FmaChains, 1 << 16);
  double ghz = kFmaChains / fma_round_ns / 2;  // FMAs per ns / 2.
  auto cycles = [ghz](double ns) { return ns * ghz; };

  // 2. Lines into L1.
  std::vector<Level> levels = {{"L1", size_t{16} << 10},
                               {"L2", size_t{512} << 10},
                               {"L3", size_t{8} << 20},
                               {"DRAM", size_t{512} << 20}};
  for (Level& level : levels) {
    bool dram = &level == &levels.back();
    size_t lines = level.bytes / kLine;
    float* buf = AllocTouched(level.bytes);
    if (buf == nullptr && dram) {
      level.bytes /= 2;
      lines /= 2;
      buf = AllocTouched(level.bytes);
    }
    if (buf == nullptr) {
      std::fprintf(stderr, "cannot allocate %zu bytes\n", level.bytes);
      return 1;
    }
    level.dense_cycles = cycles(MedianNsPerCount(
                             [&](int64_t n) { DensePasses(buf, lines, n); })) /
                         static_cast<double>(lines);
    std::free(buf);

    // Every working set is a multiple of one kPanelRows panel (16 KiB).
    size_t panels = std::min(lines / kPanelRows, kPanelsPerRow);
    size_t bands = lines / (kPanelRows * panels);
    float* mat =
        AllocTouched(bands * kPanelRows * kRowPitchFloats * sizeof(float));
    if (mat == nullptr) {
      std::fprintf(stderr, "cannot allocate the %s matrix\n", level.name);
      return 1;
    }
    level.strided_cycles = cycles(MedianNsPerCount([&](int64_t n) {
                             StridedPasses(mat, bands, panels, n);
                           })) /
                           static_cast<double>(lines);
    std::free(mat);
  }

  // 3. L1 load and store throughput.
  float* window = AllocTouched(1024);
  double load_cycles =
      cycles(MedianNsPerCount([&](int64_t n) { L1Loads(window, n); }, 1024)) /
      kOpsPerIter;
  double store_cycles =
      cycles(MedianNsPerCount([&](int64_t n) { L1Stores(window, n); }, 1024)) /
      kOpsPerIter;
  std::free(window);

  // 4. DRAM runs.
  const size_t run_rows = 2048, run_pitch = 8192;  // floats: 32 KiB rows
  float* big = AllocTouched(run_rows * run_pitch * sizeof(float));
  auto pass_ns = [&](size_t run) {
    return MedianNsPerCount([&](int64_t n) {
      for (int64_t i = 0; i < n; ++i) RunPass(big, run_rows, run_pitch, run);
    });
  };
  const double seq_ns = pass_ns(run_pitch);
  std::vector<std::pair<size_t, double>> runs;
  for (size_t bytes : {64, 128, 256, 512, 1024, 2048, 4096})
    runs.emplace_back(bytes, 100 * seq_ns / pass_ns(bytes / sizeof(float)));
  std::free(big);

  std::printf("clock: %.3f GHz (vfmadd231ps ymm, assuming 2 FMA/cycle)\n", ghz);
  std::printf("unit = 1/6 cycle; median of %d runs\n\n", kReps);
  std::printf("%-5s %9s  %-8s %12s %7s\n", "level", "set", "pattern",
              "cycles/line", "units");
  for (const Level& level : levels) {
    std::string set = level.bytes >= (size_t{1} << 20)
                          ? std::to_string(level.bytes >> 20) + " MiB"
                          : std::to_string(level.bytes >> 10) + " KiB";
    std::printf("%-5s %9s  %-8s %12.3f %7d\n", level.name, set.c_str(), "dense",
                level.dense_cycles, Units(level.dense_cycles));
    std::printf("%-5s %9s  %-8s %12.3f %7d\n", "", "", "strided",
                level.strided_cycles, Units(level.strided_cycles));
  }
  std::printf("\n%-26s %12s %7s\n", "L1 ymm op", "per cycle", "units");
  std::printf("%-26s %12.3f %7d\n", "vmovups load", 1 / load_cycles,
              Units(load_cycles));
  std::printf("%-26s %12.3f %7d\n", "vmovups store", 1 / store_cycles,
              Units(store_cycles));

  std::printf(
      "\nDRAM runs at a 32 KiB pitch, %% of a sequential read (%.1f GB/s)\n",
      static_cast<double>(run_rows * run_pitch * sizeof(float)) / seq_ns);
  for (const auto& [bytes, pct] : runs)
    std::printf("%6zu B %7.1f %%\n", bytes, pct);

  if (json) {
    std::string out = "{\"ghz\":" + std::to_string(ghz);
    for (const auto& [bytes, pct] : runs)
      out += ",\"dram_run_" + std::to_string(bytes) +
             "_pct\":" + std::to_string(pct);
    for (const Level& level : levels) {
      std::string key = level.name;
      for (char& ch : key) ch = static_cast<char>(std::tolower(ch));
      out += ",\"" + key + "_bytes\":" + std::to_string(level.bytes);
      out +=
          ",\"" + key + "_dense_cycles\":" + std::to_string(level.dense_cycles);
      out += ",\"" + key +
             "_dense_units\":" + std::to_string(Units(level.dense_cycles));
      out += ",\"" + key +
             "_strided_cycles\":" + std::to_string(level.strided_cycles);
      out += ",\"" + key +
             "_strided_units\":" + std::to_string(Units(level.strided_cycles));
    }
    out += ",\"loads_per_cycle\":" + std::to_string(1 / load_cycles);
    out += ",\"load_units\":" + std::to_string(Units(load_cycles));
    out += ",\"stores_per_cycle\":" + std::to_string(1 / store_cycles);
    out += ",\"store_units\":" + std::to_string(Units(store_cycles)) + "}";
    std::printf("%s\n", out.c_str());
  }
  return 0;
}
