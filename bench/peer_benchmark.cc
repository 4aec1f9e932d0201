// amarena against the libraries a user would pick instead (OpenBLAS, BLIS,
// oneDNN's sgemm and matmul primitive, libxsmm, Eigen, XNNPACK), on the issue's
// Specs, with one and two threads, under one ISA cap per process; plus the
// limits every figure is a fraction of (FMA peak with ymm and zmm, one-core
// DRAM read bandwidth) and amarena's cold search + JIT latency per Spec.
//
//   ./build/bench/peer_benchmark --isa=avx2 [--peers=amarena,openblas]
//       [--threads=1,2] [--shapes=64x64x64,...|small] [--random=N:SEED]
//       [benchmark flags]
//
// --random=N:SEED adds N shapes drawn from SEED (each dimension uniform in
// 1..2048), printed and stored in the context (random_shapes) so a run is
// repeatable.
//
// scripts/bench.sh runs it once per ISA and turns the JSON into
// bench/results/. Rows:
//   limits/fma_peak_{ymm,zmm}, limits/dram_read      counters GFLOPS / GBs
//   create/<isa>/<MxKxN>/threads:<t>                 search_ms, jit_ms
//   gemm/<isa>/<peer>/<MxKxN>/threads:<t>            GFLOPS, peak
// (a gemm row's iteration is a batch of calls_per_iter calls, and its GFLOPS
// is one call's flops over the median call time, see RunGemmRow).
// Every gemm row runs its implementation once and checks it against the
// reference (bench/peers/check.h) before timing; a wrong result is an error
// row ("error: wrong result ..."), a configuration a library cannot do a
// skipped row ("skipped: <why>"). Each library's CPU choice is in the context
// (cpu_choice:<peer>), printed before the table and stored in the JSON.
// The ISA cap is per process because OpenBLAS, BLIS and oneDNN fix theirs
// when loaded. All libraries live in one process (OpenBLAS's and BLIS's
// cblas_sgemm kept apart by dlopen), so each shape's inputs and exact answer
// are computed once.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "bench/peers/bandwidth.h"
#include "bench/peers/check.h"
#include "bench/peers/peer.h"
#include "bench/random_shapes.h"
#include "benchmark/benchmark.h"
#include "jit/cpu_features.h"
#include "jit/peak.h"
#include "runtime/host.h"
#include "runtime/runtime.h"

namespace amarena::bench {
namespace {

// The suite's Specs, M x K x N.
const std::vector<Problem>& AllShapes() {
  static const auto* shapes = new std::vector<Problem>{
      {8, 8, 8},        {16, 16, 16},       {32, 32, 32},
      {64, 64, 64},     {128, 128, 128},    {256, 256, 256},
      {512, 512, 512},  {1024, 1024, 1024}, {2048, 2048, 2048},
      {1, 2048, 16384}, {1, 4096, 4096},    {1, 4096, 11008},
      {16, 4096, 4096}, {128, 768, 768},    {128, 768, 3072},
      {49, 2048, 512},  {100, 100, 100}};
  return *shapes;
}

std::string ShapeName(const Problem& p) {
  return absl::StrCat(p.m, "x", p.k, "x", p.n);
}

double FmaPeak(int bits) {
  static std::map<int, double> peaks;
  auto it = peaks.find(bits);
  if (it != peaks.end()) return it->second;
  PeakResult r = MeasureFmaPeak(bits, 0.5);
  return peaks[bits] = r.available ? r.gflops : 0;
}

// One core's peak for the ISA a cap allows on this CPU.
double PeakFor(IsaCap cap) {
  return cap == IsaCap::kBest && DetectCpu().avx512f ? FmaPeak(512)
                                                     : FmaPeak(256);
}

const Reference& ReferenceFor(const Problem& p) {
  static std::map<std::string, std::unique_ptr<Reference>> refs;
  std::unique_ptr<Reference>& r = refs[ShapeName(p)];
  if (r == nullptr) r = std::make_unique<Reference>(p);
  return *r;
}

// Skips are what a library cannot do; everything else is an error.
std::string RowMessage(const absl::Status& s) {
  const bool skip = absl::IsUnimplemented(s) || absl::IsUnavailable(s);
  return absl::StrCat(skip ? "skipped: " : "error: ", s.message());
}

struct PeerSlot {
  std::unique_ptr<Peer> peer;
  absl::Status init;
};

struct Row {
  PeerSlot* slot = nullptr;
  Problem p;
  int threads = 1;
  IsaCap cap = IsaCap::kBest;
  bool prepared = false;
  absl::Status status;
  std::unique_ptr<PreparedGemm> gemm;
};

void RunGemmRow(benchmark::State& state, Row* row) {
  // Rows run one after another; the previous one's operator (packed weights,
  // primitive) is dropped when the next starts.
  static Row* current = nullptr;
  if (current != row) {
    if (current != nullptr) {
      current->gemm.reset();
      // Worker threads of a library that just ran in parallel spin for a
      // while before they sleep (OpenBLAS's for up to ~2^28 cycles, about
      // 70 ms here): let them settle before timing the next library.
      if (current->threads > 1)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    current = row;
    row->prepared = false;
  }
  if (!row->prepared) {
    row->prepared = true;
    row->status = row->slot->init;
    if (row->status.ok()) {
      const Reference& ref = ReferenceFor(row->p);
      absl::StatusOr<std::unique_ptr<PreparedGemm>> g =
          row->slot->peer->Prepare(row->p, row->threads, ref.a(), ref.b(),
                                   ref.c());
      if (g.ok()) {
        row->gemm = *std::move(g);
        row->status = VerifyOnce(*row->gemm, ref);
      } else {
        row->status = g.status();
      }
    }
  }
  if (!row->status.ok()) {
    state.SkipWithError(RowMessage(row->status).c_str());
    return;
  }
  // One benchmark iteration is a batch of calls lasting at least ~5 us (the
  // clock's own ~20 ns stays under 1 %); GFLOPS comes from the median batch,
  // not the mean, so the time slices other processes take from a shared
  // machine (whole milliseconds, which a two-thread call waiting for its
  // second thread loses entirely) do not decide the figure.
  using Clock = std::chrono::steady_clock;
  PreparedGemm& g = *row->gemm;
  auto t0 = Clock::now();
  for (int i = 0; i < 4; ++i) g.Run();
  const double once_ns =
      std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / 4;
  const int64_t batch =
      std::max<int64_t>(1, static_cast<int64_t>(5000 / std::max(once_ns, 1.0)));
  std::vector<double> batch_ns;
  for (auto _ : state) {
    auto start = Clock::now();
    for (int64_t i = 0; i < batch; ++i) g.Run();
    batch_ns.push_back(
        std::chrono::duration<double, std::nano>(Clock::now() - start).count());
  }
  std::sort(batch_ns.begin(), batch_ns.end());
  const double median_call_ns = batch_ns[batch_ns.size() / 2] / batch;
  state.counters["GFLOPS"] = row->p.Flops() / median_call_ns;
  state.counters["calls_per_iter"] = static_cast<double>(batch);
  state.counters["peak"] = PeakFor(row->cap) * row->threads;
  for (const auto& [k, v] : row->gemm->Extra()) state.counters[k] = v;
  std::string detail = row->gemm->Detail();
  state.SetLabel(absl::StrCat("matmul ", ShapeName(row->p), " f32",
                              detail.empty() ? "" : " | ", detail));
}

// A fresh runtime per iteration: the whole search and JIT of one Spec.
void RunCreateRow(benchmark::State& state, Target target, Problem p) {
  const std::string text = absl::StrCat("matmul ", ShapeName(p), " f32");
  double search_ms = 0, jit_ms = 0;
  for (auto _ : state) {
    Runtime rt(target);
    absl::StatusOr<KernelPtr> k = rt.Get(text);
    if (!k.ok()) {
      state.SkipWithError(RowMessage(k.status()).c_str());
      return;
    }
    search_ms += (*k)->synth_ms();
    jit_ms += (*k)->jit_ms();
  }
  state.counters["search_ms"] =
      benchmark::Counter(search_ms, benchmark::Counter::kAvgIterations);
  state.counters["jit_ms"] =
      benchmark::Counter(jit_ms, benchmark::Counter::kAvgIterations);
  state.SetLabel(text);
}

void RunPeakRow(benchmark::State& state, int bits) {
  double g = FmaPeak(bits);
  for (auto _ : state) benchmark::DoNotOptimize(g);
  if (g == 0) {
    state.SkipWithError("skipped: the CPU lacks this vector width");
    return;
  }
  state.counters["GFLOPS"] = g;
  state.SetLabel(absl::StrCat("one core, ", bits, "-bit FMAs"));
}

void RunBandwidthRow(benchmark::State& state) {
  double gbs = 0;
  for (auto _ : state) gbs = MeasureDramReadGBs(size_t{1} << 30);
  state.counters["GBs"] = gbs;
  state.SetLabel("one core, 1 GiB read with 256-bit loads");
}

struct Options {
  IsaCap cap = IsaCap::kBest;
  std::vector<std::string> peers = PeerNames();
  std::vector<int> threads = {1, 2};
  std::vector<Problem> shapes = AllShapes();
  std::vector<Problem> random;  // --random, after `shapes`
  int64_t random_seed = -1;
  bool limits = true, latency = true;
};

bool ParseFlag(absl::string_view arg, absl::string_view name,
               absl::string_view* value) {
  if (!absl::ConsumePrefix(&arg, name) || !absl::ConsumePrefix(&arg, "="))
    return false;
  *value = arg;
  return true;
}

// The shapes scripts/bench.sh draws (bench/random_shapes.h).
std::vector<Problem> RandomProblems(int n, uint64_t seed) {
  std::vector<Problem> out;
  for (const RandomShape& r : RandomShapes(n, seed))
    out.push_back(Problem{.m = r.m, .k = r.k, .n = r.n});
  return out;
}

// Our flags (Google Benchmark has already removed its own).
bool ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view v;
    if (ParseFlag(argv[i], "--isa", &v)) {
      if (v != "avx2" && v != "best" && v != "avx512") return false;
      o->cap = v == "avx2" ? IsaCap::kAvx2 : IsaCap::kBest;
    } else if (ParseFlag(argv[i], "--peers", &v)) {
      o->peers = absl::StrSplit(v, ',', absl::SkipEmpty());
    } else if (ParseFlag(argv[i], "--threads", &v)) {
      o->threads.clear();
      for (absl::string_view t : absl::StrSplit(v, ',', absl::SkipEmpty())) {
        int n = 0;
        if (!absl::SimpleAtoi(t, &n) || n < 1) return false;
        o->threads.push_back(n);
      }
    } else if (ParseFlag(argv[i], "--shapes", &v)) {
      o->shapes.clear();
      if (v == "small") {
        o->shapes = {{8, 8, 8}, {64, 64, 64}, {100, 100, 100}, {49, 64, 33}};
        continue;
      }
      for (absl::string_view s : absl::StrSplit(v, ',', absl::SkipEmpty())) {
        std::vector<absl::string_view> d = absl::StrSplit(s, 'x');
        Problem p;
        if (d.size() != 3 || !absl::SimpleAtoi(d[0], &p.m) ||
            !absl::SimpleAtoi(d[1], &p.k) || !absl::SimpleAtoi(d[2], &p.n) ||
            p.m < 1 || p.k < 1 || p.n < 1)
          return false;
        o->shapes.push_back(p);
      }
    } else if (ParseFlag(argv[i], "--random", &v)) {
      std::vector<absl::string_view> ns = absl::StrSplit(v, ':');
      int n = 0;
      uint64_t seed = 0;
      if (ns.size() != 2 || !absl::SimpleAtoi(ns[0], &n) || n < 0 || n > 1000 ||
          !absl::SimpleAtoi(ns[1], &seed))
        return false;
      std::vector<Problem> r = RandomProblems(n, seed);
      o->random_seed = static_cast<int64_t>(seed);
      o->random.insert(o->random.end(), r.begin(), r.end());
    } else if (ParseFlag(argv[i], "--limits", &v)) {
      o->limits = v != "false" && v != "0";
    } else if (ParseFlag(argv[i], "--latency", &v)) {
      o->latency = v != "false" && v != "0";
    } else {
      std::fprintf(stderr, "peer_benchmark: unknown flag %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

int Main(int argc, char** argv) {
  // The console table gets pct_peak; any other --benchmark_format keeps
  // Google Benchmark's own reporter.
  bool console = true;
  for (int i = 1; i < argc; ++i) {
    absl::string_view f;
    if (ParseFlag(argv[i], "--benchmark_format", &f)) console = f == "console";
  }
  benchmark::Initialize(&argc, argv);
  Options o;
  if (!ParseOptions(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: peer_benchmark [--isa=avx2|best] [--peers=a,b] "
                 "[--threads=1,2] [--shapes=MxKxN,...|small] "
                 "[--random=N:SEED] [--limits=false] [--latency=false] "
                 "[benchmark flags]\n");
    return 2;
  }
  const std::string isa(Name(o.cap));
  if (!o.random.empty()) {
    std::string list;
    for (const Problem& p : o.random)
      absl::StrAppend(&list, list.empty() ? "" : ",", ShapeName(p));
    std::printf("random shapes (seed %lld): %s\n",
                static_cast<long long>(o.random_seed), list.c_str());
    benchmark::AddCustomContext("random_seed", absl::StrCat(o.random_seed));
    benchmark::AddCustomContext("random_shapes", list);
    o.shapes.insert(o.shapes.end(), o.random.begin(), o.random.end());
  }
  benchmark::AddCustomContext("isa_cap", isa);
  benchmark::AddCustomContext("cpu_features", DetectCpu().FeatureList());

  static std::vector<std::unique_ptr<PeerSlot>> slots;
  static std::vector<std::unique_ptr<Row>> rows;
  for (const std::string& name : o.peers) {
    auto slot = std::make_unique<PeerSlot>();
    slot->peer = MakePeer(name);
    if (slot->peer == nullptr) {
      std::fprintf(stderr, "peer_benchmark: unknown peer '%s'\n", name.c_str());
      return 2;
    }
    slot->init = slot->peer->Init(o.cap);
    benchmark::AddCustomContext(
        "cpu_choice:" + name,
        slot->init.ok() ? slot->peer->CpuChoice() : RowMessage(slot->init));
    slots.push_back(std::move(slot));
  }

  if (o.limits) {
    benchmark::RegisterBenchmark("limits/fma_peak_ymm", RunPeakRow, 256)
        ->Iterations(1);
    benchmark::RegisterBenchmark("limits/fma_peak_zmm", RunPeakRow, 512)
        ->Iterations(1);
    benchmark::RegisterBenchmark("limits/dram_read", RunBandwidthRow)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  if (o.latency) {
    std::optional<Isa> max;
    if (o.cap == IsaCap::kAvx2) max = Isa::kAvx2;
    absl::StatusOr<Target> t = HostTargetFor(DetectCpu(), max);
    for (int threads : o.threads)
      for (const Problem& p : o.shapes) {
        if (!t.ok()) break;
        Target target = *t;
        target.workers = threads;
        benchmark::RegisterBenchmark(
            absl::StrCat("create/", isa, "/", ShapeName(p),
                         "/threads:", threads)
                .c_str(),
            RunCreateRow, target, p)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
  }
  // Shape, then threads, then library: the rows a ratio compares run within
  // seconds of each other, so a shared machine's load, which drifts over
  // minutes, is about the same for all of them.
  for (const Problem& p : o.shapes)
    for (int threads : o.threads)
      for (auto& slot : slots) {
        auto row = std::make_unique<Row>();
        row->slot = slot.get();
        row->p = p;
        row->threads = threads;
        row->cap = o.cap;
        rows.push_back(std::move(row));
        benchmark::RegisterBenchmark(
            absl::StrCat("gemm/", isa, "/", slot->peer->name(), "/",
                         ShapeName(p), "/threads:", threads)
                .c_str(),
            RunGemmRow, rows.back().get())
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
      }

  RatioReporter reporter("GFLOPS", "peak", "pct_peak");
  if (console) {
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace amarena::bench

int main(int argc, char** argv) { return amarena::bench::Main(argc, argv); }
