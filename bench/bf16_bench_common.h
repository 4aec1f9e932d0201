// What the bf16 benchmarks share (bench/bf16_benchmark.cc): the problem
// 1 x 2048 x 16384 (M varies), its reference check, page-aligned copies of B,
// the single-core DRAM read rate, and call-by-call alternation of several
// multiplies (and reads) with the counters made of it.
//
//   Problem p = MakeProblem(/*m=*/1);
//   ... run a kernel into p.c ...
//   if (!SampleMatches(p, p.c.data())) ...
#ifndef AMARENA_BENCH_BF16_BENCH_COMMON_H_
#define AMARENA_BENCH_BF16_BENCH_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "bench/page_aligned.h"

namespace amarena::bf16bench {

inline constexpr int64_t kK = 2048, kN = 16384;
// Each call reads the next of kCopies copies of B (256 MiB in all), so B
// comes from DRAM every time rather than partly from the 32 MiB L3.
inline constexpr int kCopies = 4;

// Reads n floats at p as `streams` equal parts side by side with 256-bit
// loads, prefetching 4 KiB ahead or not; returns a sum so the reads stay.
float ReadPass(const float* p, size_t n, size_t streams, bool prefetch);
// The single-core DRAM read rate in GB/s, measured once (the first call).
double DramGBps();

struct Problem {
  int64_t m;
  std::vector<uint16_t> a, b;  // bf16, row-major
  std::vector<float> c;
};
Problem MakeProblem(int64_t m);
// 2048 output elements sampled at random, exact in double, within the
// tolerance of every amarena check.
bool SampleMatches(const Problem& p, const float* c);

// The copies of B start on a page (bench/page_aligned.h), as oneDNN's own
// buffers (its pre-packed weights) start on at least 64 bytes and an
// engine's mapped weights on a page.
using Bf16Buffer = std::vector<uint16_t, bench::PageAligned<uint16_t>>;

// Runs each of `runs` once per round, in random order, each call on the next
// copy of its B, for `rounds` rounds: us[i][r] is run i's time in round r.
std::vector<std::vector<double>> Alternate(
    const std::vector<std::function<void(int copy)>>& runs, int rounds);
double Quantile(std::vector<double> v, double q);
// Sets `name` (the median over rounds of ratio[r]) and its quartiles q1 and
// q3.
void SetRatioCounters(benchmark::State& state, const std::string& name,
                      const std::vector<double>& ratio);
// Appends to `runs` DRAM reads of as many bytes as B (see the .cc).
void AppendDramReads(std::vector<std::function<void(int copy)>>& runs);
// us[0]: a multiply reading B once per call; us[1..3]: AppendDramReads'
// reads. Sets pct_dram_paired (with q1, q3), B_GBps and dram_GBps.
void SetDramCounters(benchmark::State& state,
                     const std::vector<std::vector<double>>& us);

}  // namespace amarena::bf16bench

#endif  // AMARENA_BENCH_BF16_BENCH_COMMON_H_
