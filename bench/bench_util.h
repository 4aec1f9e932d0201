// Pieces the benchmark binaries share.
//
//   Runtime* rt = CachedRuntime(Isa::kAvx2, /*threads=*/1);  // nullptr: no
//   such ISA RatioReporter r("GFLOPS", "peak", "pct_peak");  // console column,
//   in % benchmark::RunSpecifiedBenchmarks(&r);
#ifndef AMARENA_BENCH_BENCH_UTIL_H_
#define AMARENA_BENCH_BENCH_UTIL_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/host.h"
#include "runtime/runtime.h"

namespace amarena {

// One runtime per (ISA, threads) for the whole process, so each Spec is
// searched once; nullptr when this CPU lacks the ISA.
inline Runtime* CachedRuntime(Isa isa, int threads) {
  static std::map<std::pair<Isa, int>, std::unique_ptr<Runtime>> rts;
  auto& rt = rts[{isa, threads}];
  if (!rt) {
    absl::StatusOr<Target> t = TargetFor(DetectCpu(), isa);
    if (!t.ok() || t->isa != isa) return nullptr;
    t->workers = threads;
    rt = std::make_unique<Runtime>(*t);
  }
  return rt.get();
}

// A console table with one more column, `out` = 100 * numerator /
// denominator for the rows that have both counters. Rates are only known
// once Google Benchmark has finished a run, hence a reporter rather than a
// counter set in the loop; the JSON keeps the raw counters.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter(std::string numerator, std::string denominator, std::string out)
      : ConsoleReporter(OO_Tabular),
        num_(std::move(numerator)),
        den_(std::move(denominator)),
        out_(std::move(out)) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> copy = runs;
    for (Run& r : copy) {
      auto n = r.counters.find(num_);
      auto d = r.counters.find(den_);
      if (n == r.counters.end() || d == r.counters.end() ||
          d->second.value == 0)
        continue;
      r.counters[out_] = 100.0 * n->second.value / d->second.value;
    }
    ConsoleReporter::ReportRuns(copy);
  }

 private:
  std::string num_, den_, out_;
};

}  // namespace amarena

#endif  // AMARENA_BENCH_BENCH_UTIL_H_
