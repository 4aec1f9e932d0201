// amarena's own f32 matmul speed, single thread, per ISA, as a fraction of the
// FMA peak measured in the same run (jit/peak.h). Each kernel is checked
// against the reference before it is timed; a wrong one stops its row.
//
//   ./build/bench/gemm_benchmark [--benchmark_repetitions=5]
// Counters: GFLOPS = achieved rate, pct_peak = 100 * GFLOPS / peak of that
// ISA's vector width, peak = the measured one-core peak (GFLOP/s) times the
// threads. The *_2threads rows run with two workers; their ratio to the
// one-thread row of the same ISA is the parallel scaling.
#include <cstdio>
#include <map>
#include <memory>

#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "jit/peak.h"
#include "runtime/host.h"
#include "runtime/runtime.h"

namespace amarena {
namespace {

double Peak(Isa isa) {
  static std::map<Isa, double> peaks;
  auto it = peaks.find(isa);
  if (it != peaks.end()) return it->second;
  PeakResult p = MeasureFmaPeak(isa == Isa::kAvx512 ? 512 : 256, 0.5);
  return peaks[isa] = p.available ? p.gflops : 0;
}

void BM_Matmul(benchmark::State& state, Isa isa, const char* text,
               int threads = 1) {
  Runtime* rt = CachedRuntime(isa, threads);
  if (rt == nullptr) {
    state.SkipWithError("CPU lacks this ISA");
    return;
  }
  const double peak = Peak(isa);
  absl::StatusOr<Spec> spec = ParseSpec(text);
  absl::StatusOr<KernelPtr> k = rt->Get(*spec);
  if (!k.ok()) {
    state.SkipWithError(std::string(k.status().message()).c_str());
    return;
  }
  Operands ops(*spec);
  FillRandom(*spec, ops, 1);
  std::vector<uint8_t> before = ops.Snapshot(spec->OutputIndex());
  if (absl::Status run = (*k)->Run(ops.ptrs()); !run.ok()) {
    state.SkipWithError(std::string(run.message()).c_str());
    return;
  }
  Verdict v = CheckAgainstReference(*spec, ops, before);
  if (!v.ok) {
    state.SkipWithError("kernel does not match the reference");
    return;
  }
  for (auto _ : state) AMARENA_CHECK_OK((*k)->Run(ops.ptrs()));
  const double flops = 2.0 * static_cast<double>(spec->Macs());
  state.counters["GFLOPS"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // The peak of `threads` cores (one core's, measured, times the threads).
  state.counters["peak"] = peak * threads;
  state.SetLabel(absl::StrCat(Name(isa), " ", text, " ", threads, " thread",
                              threads > 1 ? "s" : ""));
}

#define AMARENA_GEMM(name, text)                                  \
  BENCHMARK_CAPTURE(BM_Matmul, avx2_##name, Isa::kAvx2, text)     \
      ->Unit(benchmark::kMicrosecond)                             \
      ->UseRealTime();                                            \
  BENCHMARK_CAPTURE(BM_Matmul, avx512_##name, Isa::kAvx512, text) \
      ->Unit(benchmark::kMicrosecond)                             \
      ->UseRealTime()

AMARENA_GEMM(m64, "matmul 64x64x64 f32");
AMARENA_GEMM(m256, "matmul 256x256x256 f32");
AMARENA_GEMM(m512, "matmul 512x512x512 f32");
AMARENA_GEMM(m1024, "matmul 1024x1024x1024 f32");
AMARENA_GEMM(m2048, "matmul 2048x2048x2048 f32");
// Two threads (the parallel root loop on the runtime's pool).
BENCHMARK_CAPTURE(BM_Matmul, avx2_m1024_2threads, Isa::kAvx2,
                  "matmul 1024x1024x1024 f32", 2)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, avx512_m1024_2threads, Isa::kAvx512,
                  "matmul 1024x1024x1024 f32", 2)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace amarena

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  amarena::RatioReporter reporter("GFLOPS", "peak", "pct_peak");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
