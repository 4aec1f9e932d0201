// Kernel-creation latency, per Spec: a cache hit (the Spec already generated
// by this runtime); a database hit (a fresh runtime, as in a new process,
// whose search database holds the Spec: open the file, look up, replay, JIT);
// and a cold creation (fresh runtime, no database: search + JIT).
//
//   ./build/bench/runtime_benchmark --benchmark_repetitions=5
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "core/spec_text.h"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "runtime/search_db.h"

namespace amarena {
namespace {

RuntimeOptions NoDb() {
  RuntimeOptions o;
  o.db = "off";
  return o;
}

// A database file of this process's, filled on first use.
const std::string& DbPath() {
  static const std::string path = [] {
    std::string p =
        absl::StrCat("/tmp/amarena-runtime-benchmark-", getpid(), ".db");
    std::atexit([] {
      for (const char* suffix : {"", "-wal", "-shm", ".lock"})
        std::remove(absl::StrCat(DbPath(), suffix).c_str());
    });
    return p;
  }();
  return path;
}

// Get(Spec) on a runtime that has the kernel: the engine's per-call path.
void BM_CacheHit(benchmark::State& state, const char* text) {
  Runtime rt(HostTargetFor(DetectCpu(), std::nullopt), NoDb());
  Spec spec = *ParseSpec(text);
  if (!rt.Get(spec).ok()) {
    state.SkipWithError("cannot create the kernel");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<KernelPtr> k = rt.Get(spec);
    benchmark::DoNotOptimize(k);
  }
}

// A fresh runtime each time: the whole search and JIT.
void BM_ColdCreate(benchmark::State& state, const char* text) {
  Spec spec = *ParseSpec(text);
  const absl::StatusOr<Target> target =
      HostTargetFor(DetectCpu(), std::nullopt);
  for (auto _ : state) {
    Runtime rt(target, NoDb());
    absl::StatusOr<KernelPtr> k = rt.Get(spec);
    if (!k.ok()) {
      state.SkipWithError("cannot create the kernel");
      return;
    }
    benchmark::DoNotOptimize(k);
  }
}

// A fresh runtime whose database holds the Spec: what a new process pays for
// its first request of a shape any process has searched before.
void BM_DatabaseHit(benchmark::State& state, const char* text) {
  Spec spec = *ParseSpec(text);
  absl::StatusOr<Target> target = HostTargetFor(DetectCpu(), std::nullopt);
  RuntimeOptions with_db;
  with_db.db = DbPath();
  {
    Runtime fill(target, with_db);
    if (!fill.Get(spec).ok()) {
      state.SkipWithError("cannot create the kernel");
      return;
    }
  }
  for (auto _ : state) {
    state.PauseTiming();
    // Made at load time (it opens the database: BM_DatabaseOpen).
    auto rt = std::make_unique<Runtime>(target, with_db);
    state.ResumeTiming();
    absl::StatusOr<KernelPtr> k = rt->Get(spec);
    state.PauseTiming();
    if (!k.ok() || (*k)->source() != KernelSource::kDatabase) {
      state.SkipWithError("the kernel did not come from the database");
      return;
    }
    k->reset();
    rt.reset();
    state.ResumeTiming();
  }
}

// Opening the file: once per process, when its runtime is made.
void BM_DatabaseOpen(benchmark::State& state) {
  { auto db = SearchDb::Open(DbPath()); }
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<SearchDb>> db = SearchDb::Open(DbPath());
    benchmark::DoNotOptimize(db);
  }
}

BENCHMARK_CAPTURE(BM_CacheHit, m64, "matmul 64x64x64 f32");
BENCHMARK_CAPTURE(BM_CacheHit, m1024, "matmul 1024x1024x1024 f32");
BENCHMARK_CAPTURE(BM_DatabaseHit, m64, "matmul 64x64x64 f32")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DatabaseHit, m1024, "matmul 1024x1024x1024 f32")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DatabaseOpen)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ColdCreate, m64, "matmul 64x64x64 f32")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ColdCreate, m1024, "matmul 1024x1024x1024 f32")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace amarena

BENCHMARK_MAIN();
