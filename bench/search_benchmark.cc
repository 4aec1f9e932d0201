// Cold search time (empty memo table) per Spec, with the size of the table it
// built; then all of the issue's Specs searched into one table, for the
// compression of the whole; then the distribution of cold search CPU time over
// the suite's f32 shapes and seeded random ones (among them the random shapes
// scripts/bench.sh times).
//
//   ./build/bench/search_benchmark
//   AMARENA_BENCH_SEED=7 ./build/bench/search_benchmark
//     --benchmark_filter=Distribution
// Counters: specs = Specs solved, candidates = expansions costed, boxes =
// boxes stored, answered = budget points the boxes cover (Specs the table
// answers without search), per_box = answered / boxes, asked = distinct Specs
// (budget included) the search looked up, asked_per_box = asked / boxes, KiB =
// table size.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/random_shapes.h"
#include "benchmark/benchmark.h"
#include "core/spec_text.h"
#include "runtime/host.h"
#include "search/search.h"

namespace amarena {
namespace {

// The memo table counters both benchmarks report.
void ReportTable(benchmark::State& state, const MemoStats& memo) {
  const double boxes = static_cast<double>(std::max<int64_t>(memo.boxes, 1));
  state.counters["boxes"] = static_cast<double>(memo.boxes);
  state.counters["answered"] = static_cast<double>(memo.specs_answered);
  state.counters["per_box"] = static_cast<double>(memo.specs_answered) / boxes;
  state.counters["KiB"] = static_cast<double>(memo.bytes) / 1024;
  state.counters["asked"] = static_cast<double>(memo.specs_asked);
  state.counters["asked_per_box"] =
      static_cast<double>(memo.specs_asked) / boxes;
}

void BM_ColdSearch(benchmark::State& state, const char* text) {
  absl::StatusOr<Target> target = HostTarget();
  absl::StatusOr<Spec> spec = ParseSpec(text);
  if (!target.ok() || !spec.ok()) {
    state.SkipWithError(!target.ok() ? "no AVX2+FMA" : "bad spec");
    return;
  }
  Spec root = target->Bind(*spec);
  *target = target->ForRoot(root);  // as the runtime searches it
  SearchStats last;
  MemoStats memo;
  for (auto _ : state) {
    Searcher s(*target);
    absl::StatusOr<ImplPtr> impl = s.Solve(root);
    if (!impl.ok()) {
      state.SkipWithError("search failed");
      return;
    }
    benchmark::DoNotOptimize(impl->get());
    last = s.stats();
  }
  // Once more, untimed, counting the distinct Specs the search asked about.
  Searcher counted(*target, SearchOptions{.count_queries = true});
  (void)counted.Solve(root);
  memo = counted.memo_stats();
  state.SetLabel(text);
  state.counters["specs"] = static_cast<double>(last.specs_solved);
  state.counters["candidates"] = static_cast<double>(last.candidates_tried);
  ReportTable(state, memo);
}

const char* const kIssueSpecs[] = {
    "matmul 64x64x64 f32",       "matmul 256x256x256 f32",
    "matmul 1024x1024x1024 f32", "matmul 2048x2048x2048 f32",
    "matmul 128x768x3072 f32",   "matmul 16x4096x4096 f32",
    "matmul 1x2048x16384 f32"};

// Every Spec above into one table, in order: the table's size and compression
// after all of them.
void BM_AllIntoOneTable(benchmark::State& state) {
  absl::StatusOr<Target> target = HostTarget();
  if (!target.ok()) {
    state.SkipWithError("no AVX2+FMA");
    return;
  }
  MemoStats memo;
  SearchStats last;
  for (auto _ : state) {
    Searcher s(*target);
    for (const char* text : kIssueSpecs) {
      absl::StatusOr<ImplPtr> impl = s.Solve(target->Bind(*ParseSpec(text)));
      if (!impl.ok()) {
        state.SkipWithError("search failed");
        return;
      }
    }
    last = s.stats();
  }
  Searcher counted(*target, SearchOptions{.count_queries = true});
  for (const char* text : kIssueSpecs)
    (void)counted.Solve(target->Bind(*ParseSpec(text)));
  memo = counted.memo_stats();
  state.counters["specs"] = static_cast<double>(last.specs_solved);
  ReportTable(state, memo);
}

// This thread's CPU time in milliseconds: the machine may be shared, and
// other processes' load does not show in it as it does in wall time.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 +
         static_cast<double>(ts.tv_nsec) * 1e-6;
}

// The suite's f32 shapes, the two irregular ones the search must stay fast
// on, `random` shapes drawn from `seed` (each extent uniform in 1..2048,
// every third B column-major), and the `random` shapes scripts/bench.sh
// times for the same seed (bench/random_shapes.h).
std::vector<std::string> DistributionShapes(uint64_t seed, int random) {
  std::vector<std::string> shapes;
  for (int e = 8; e <= 2048; e *= 2)
    shapes.push_back(absl::StrCat("matmul ", e, "x", e, "x", e, " f32"));
  for (const char* s :
       {"matmul 100x100x100 f32", "matmul 128x768x3072 f32",
        "matmul 128x768x768 f32", "matmul 16x4096x4096 f32",
        "matmul 49x2048x512 f32", "matmul 1x2048x16384 f32",
        "matmul 1x4096x4096 f32", "matmul 997x1009x1013 f32",
        "matmul 123x457x91 f32 b=col"})
    shapes.push_back(s);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> extent(1, 2048);
  for (int i = 0; i < random; ++i) {
    const int m = extent(rng), k = extent(rng), n = extent(rng);
    shapes.push_back(absl::StrCat("matmul ", m, "x", k, "x", n, " f32",
                                  i % 3 == 2 ? " b=col" : ""));
  }
  for (const RandomShape& r : RandomShapes(random, seed))
    shapes.push_back(absl::StrCat("matmul ", r.m, "x", r.k, "x", r.n, " f32"));
  return shapes;
}

// One cold search per shape (a new Searcher each), timed in thread CPU time;
// prints each shape's time and reports the median and the worst. The seed is
// AMARENA_BENCH_SEED (default 1), printed so a run can be repeated.
void BM_ColdSearchDistribution(benchmark::State& state) {
  absl::StatusOr<Target> target = HostTarget();
  if (!target.ok()) {
    state.SkipWithError("no AVX2+FMA");
    return;
  }
  const char* env = std::getenv("AMARENA_BENCH_SEED");
  const uint64_t seed = env ? std::strtoull(env, nullptr, 10) : 1;
  const std::vector<std::string> shapes = DistributionShapes(seed, 20);
  std::vector<double> ms;
  std::string worst;
  for (auto _ : state) {
    ms.clear();
    std::fprintf(stderr, "cold search CPU time, seed %llu:\n",
                 static_cast<unsigned long long>(seed));
    for (const std::string& text : shapes) {
      absl::StatusOr<Spec> spec = ParseSpec(text);
      if (!spec.ok()) {
        state.SkipWithError("bad spec");
        return;
      }
      const Spec root = target->Bind(*spec);
      Searcher s(target->ForRoot(root));  // as the runtime searches it
      const double start = ThreadCpuMs();
      absl::StatusOr<ImplPtr> impl = s.Solve(root);
      const double took = ThreadCpuMs() - start;
      if (!impl.ok()) {
        state.SkipWithError("search failed");
        return;
      }
      std::fprintf(stderr, "  %-36s %9.1f ms %8lld specs\n", text.c_str(),
                   took, static_cast<long long>(s.stats().specs_solved));
      if (ms.empty() || took > *std::max_element(ms.begin(), ms.end()))
        worst = text;
      ms.push_back(took);
    }
  }
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
  const double most = sorted.empty() ? 0 : sorted.back();
  std::fprintf(stderr, "median %.1f ms, worst %.1f ms (%s), seed %llu\n",
               median, most, worst.c_str(),
               static_cast<unsigned long long>(seed));
  state.SetLabel(absl::StrCat("worst: ", worst));
  state.counters["seed"] = static_cast<double>(seed);
  state.counters["shapes"] = static_cast<double>(ms.size());
  state.counters["median_ms"] = median;
  state.counters["worst_ms"] = most;
}

#define AMARENA_SEARCH_BENCH(name, text) \
  BENCHMARK_CAPTURE(BM_ColdSearch, name, text)->Unit(benchmark::kMillisecond)

AMARENA_SEARCH_BENCH(m64, "matmul 64x64x64 f32");
AMARENA_SEARCH_BENCH(m256, "matmul 256x256x256 f32");
AMARENA_SEARCH_BENCH(m1024, "matmul 1024x1024x1024 f32");
AMARENA_SEARCH_BENCH(m2048, "matmul 2048x2048x2048 f32");
AMARENA_SEARCH_BENCH(bert_ffn, "matmul 128x768x3072 f32");
AMARENA_SEARCH_BENCH(m16x4096, "matmul 16x4096x4096 f32");
AMARENA_SEARCH_BENCH(gemv, "matmul 1x2048x16384 f32");
AMARENA_SEARCH_BENCH(odd100, "matmul 100x100x100 f32");
BENCHMARK(BM_AllIntoOneTable)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ColdSearchDistribution)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace amarena

BENCHMARK_MAIN();
