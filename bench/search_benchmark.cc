// Cold search time (empty memo table) per Spec, with the size of the table it
// built; then all of the issue's Specs searched into one table, for the
// compression of the whole.
//
//   ./build/bench/search_benchmark
// Counters: specs = Specs solved, candidates = expansions costed, boxes =
// boxes stored, answered = budget points the boxes cover (Specs the table
// answers without search), per_box = answered / boxes, asked = distinct Specs
// (budget included) the search looked up, asked_per_box = asked / boxes, KiB =
// table size.
#include <algorithm>

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

}  // namespace
}  // namespace amarena

BENCHMARK_MAIN();
