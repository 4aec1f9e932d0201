// The bf16 x bf16 -> f32 vector-matrix multiply 1x2048x16384 (and M = 4, 16,
// 64) with amarena per ISA and thread count, beside oneDNN's bf16 matmul
// (plain row-major weights, and weights pre-packed once into the layout
// oneDNN chooses), and the single-core DRAM read bandwidth, all measured in
// one run. Every kernel is checked against the reference (on a sample of its
// output) before it is timed; a wrong one stops its row.
//
//   ./build/bench/bf16_benchmark [--benchmark_repetitions=3]
// Counters: GFLOPS = achieved rate; B_GBps = bytes of B (K*N*2) per second;
// pct_dram = 100 * B_GBps / the single-core DRAM read bandwidth measured at
// start-up (dram_GBps, also the BM_DramRead row). oneDNN runs with the ISA it
// detects (it has no AVX2 bf16 matmul); its threads are set with OpenMP.
// Each call reads the next of kCopies copies of B (256 MiB in all), so B
// comes from DRAM every time rather than partly from the 32 MiB L3.
// BM_Paired rows alternate amarena (b=any) and oneDNN pre-packed call by call
// and report the median of the per-round ratio (x_onednn), the steadier
// comparison on a shared machine; BM_PairedDram rows likewise alternate an
// amarena M=1 kernel with reads of as many bytes from DRAM (pct_dram_paired):
//   ./build/bench/bf16_benchmark --benchmark_filter=Paired
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string_view>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "bench/bf16_bench_common.h"
#include "benchmark/benchmark.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "search/weight_layout.h"

namespace amarena {
namespace {

using namespace bf16bench;

void BM_DramRead(benchmark::State& state) {
  for (auto _ : state) state.counters["dram_GBps"] = DramGBps();
  state.SetLabel(
      "single-core read of a 1 GiB buffer, best of 8 ways, median of 5 "
      "passes each");
}

void SetCounters(benchmark::State& state, int64_t m) {
  const double flops = 2.0 * m * kK * kN, b_bytes = 2.0 * kK * kN;
  state.counters["GFLOPS"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["B_GBps"] = benchmark::Counter(
      b_bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["dram_GBps"] = DramGBps();
}

// --- The multiplies, prepared: each checked against the reference once,
// then `run(copy)` multiplies A by the copy-th copy of B.
struct Prepared {
  std::function<void(int copy)> run;
  std::string label;
  std::string error;  // set: not runnable (the row is skipped with it)
};
Prepared Failed(std::string why) {
  Prepared p;
  p.error = std::move(why);
  return p;
}

// amarena. `b`: B's layout option in the Spec text: "" (row-major), "col"
// (column-major: each column's k values contiguous, the [N, K] weights most
// inference engines store), "pP" (row panels of P), "pPx2" (k-pair panels,
// what vdpbf16ps reads) or "any" (the layout whose kernel the search prices
// cheapest, search/weight_layout.h); B is laid out once before timing, like
// oneDNN's pre-packed weights.
Prepared PrepareAmarena(Isa isa, int64_t m, int threads, const char* b) {
  Runtime* rt = CachedRuntime(isa, threads);
  if (rt == nullptr) return Failed("CPU lacks this ISA");
  const std::string text =
      absl::StrCat("matmul ", m, "x", kK, "x", kN, " bf16*bf16->f32",
                   *b ? absl::StrCat(" b=", b) : "");
  absl::StatusOr<KernelPtr> k = rt->Get(text);
  if (!k.ok()) return Failed(std::string(k.status().message()));
  auto p = std::make_shared<Problem>(MakeProblem(m));
  auto bs = std::make_shared<std::vector<Bf16Buffer>>(
      kCopies, Bf16Buffer(p->b.begin(), p->b.end()));
  const Spec& s = (*k)->spec();
  if (*b) {
    TensorSpec plain = s.Operand(1);
    plain.aux.layout = Layout();  // plain row-major
    for (auto& copy : *bs) {
      copy.resize(static_cast<size_t>(s.Operand(1).StoredElements()));
      Relayout(plain, p->b.data(), s.Operand(1), copy.data());
    }
  }
  KernelPtr kernel = *k;
  auto run = [kernel, p, bs](int copy) {
    void* ops[] = {p->a.data(), (*bs)[copy].data(), p->c.data()};
    AMARENA_CHECK_OK(kernel->Run(ops));
  };
  run(0);
  if (!SampleMatches(*p, p->c.data()))
    return Failed("kernel does not match the reference");
  return {
      run,
      absl::StrCat("amarena ", Name(isa), " ", text,
                   std::string_view(b) == "any"
                       ? absl::StrCat(" (b=", WeightLayoutName(s.aux[1]), ")")
                       : "",
                   " ", threads, " thread", threads > 1 ? "s" : ""),
      ""};
}

// oneDNN: the matmul primitive, bf16 x bf16 -> f32, row-major A and C;
// weights plain row-major (tag ab), plain column-major (tag ba), or in the
// layout oneDNN picks for them (tag any), reordered once before timing.
enum class Weights { kRowMajor, kColMajor, kPrePacked };
Prepared PrepareOneDnn(int64_t m, int threads, Weights w) {
  using dnnl::memory;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const bool prepacked = w == Weights::kPrePacked;
  // Read at each execute; each row prepares just before it is timed.
  omp_set_num_threads(threads);
  struct State {
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm{eng};
    dnnl::matmul prim;
    Problem p;
    std::vector<Bf16Buffer> bs;
    std::vector<memory> b_mems;
    std::unordered_map<int, memory> args;
  };
  auto st = std::make_shared<State>();
  st->p = MakeProblem(m);
  memory::desc a_md({m, kK}, dt::bf16, tag::ab);
  const tag b_tag = w == Weights::kColMajor ? tag::ba : tag::ab;
  memory::desc b_plain({kK, kN}, dt::bf16, tag::ab);
  memory::desc b_md({kK, kN}, dt::bf16, prepacked ? tag::any : b_tag);
  memory::desc c_md({m, kN}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md),
                                      st->eng);
  } catch (const dnnl::error& e) {
    return Failed(e.what());
  }
  st->prim = dnnl::matmul(pd);
  st->bs.assign(kCopies, Bf16Buffer(st->p.b.begin(), st->p.b.end()));
  for (auto& b : st->bs) {
    memory b_user(b_plain, st->eng, b.data());
    if (pd.weights_desc() == b_plain) {
      st->b_mems.push_back(b_user);
      continue;
    }
    // Column-major or pre-packed: laid out once, untimed.
    memory packed(pd.weights_desc(), st->eng);
    dnnl::reorder(b_user, packed).execute(st->strm, b_user, packed);
    st->strm.wait();
    st->b_mems.push_back(packed);
  }
  st->args = {{DNNL_ARG_SRC, memory(a_md, st->eng, st->p.a.data())},
              {DNNL_ARG_WEIGHTS, st->b_mems[0]},
              {DNNL_ARG_DST, memory(c_md, st->eng, st->p.c.data())}};
  auto run = [st](int copy) {
    st->args[DNNL_ARG_WEIGHTS] = st->b_mems[copy];
    st->prim.execute(st->strm, st->args);
    st->strm.wait();
  };
  run(0);
  if (!SampleMatches(st->p, st->p.c.data()))
    return Failed("oneDNN does not match the reference");
  return {run,
          absl::StrCat("oneDNN ",
                       prepacked                 ? "pre-packed"
                       : w == Weights::kColMajor ? "plain column-major"
                                                 : "plain",
                       " matmul ", m, "x", kK, "x", kN, " bf16*bf16->f32 ",
                       threads, " thread", threads > 1 ? "s" : ""),
          ""};
}

void TimeRows(benchmark::State& state, const Prepared& x, int64_t m) {
  if (!x.error.empty()) return state.SkipWithError(x.error.c_str());
  int copy = 0;
  for (auto _ : state) x.run(copy = (copy + 1) % kCopies);
  SetCounters(state, m);
  state.SetLabel(x.label);
}

void BM_Amarena(benchmark::State& state, Isa isa, int64_t m, int threads,
                const char* b) {
  DramGBps();
  TimeRows(state, PrepareAmarena(isa, m, threads, b), m);
}

void BM_OneDnn(benchmark::State& state, int64_t m, int threads, Weights w) {
  DramGBps();
  TimeRows(state, PrepareOneDnn(m, threads, w), m);
}

// amarena with B in the layout it chooses (b=any) against oneDNN's
// pre-packed weights, call by call (Alternate). Counters: each one's median
// us per call, and x_onednn = the median over rounds of oneDNN's time /
// amarena's (above 1: amarena is faster), with its quartiles q1 and q3.
void BM_Paired(benchmark::State& state, Isa isa, int64_t m, int threads,
               int rounds) {
  DramGBps();
  const Prepared ours = PrepareAmarena(isa, m, threads, "any");
  const Prepared theirs = PrepareOneDnn(m, threads, Weights::kPrePacked);
  if (!ours.error.empty()) return state.SkipWithError(ours.error.c_str());
  if (!theirs.error.empty()) return state.SkipWithError(theirs.error.c_str());
  std::vector<std::vector<double>> us;
  for (auto _ : state) us = Alternate({ours.run, theirs.run}, rounds);
  std::vector<double> ratio;
  for (int r = 0; r < rounds; ++r) ratio.push_back(us[1][r] / us[0][r]);
  const double ours_us = Quantile(us[0], 0.5);
  state.counters["amarena_us"] = ours_us;
  state.counters["onednn_us"] = Quantile(us[1], 0.5);
  SetRatioCounters(state, "x_onednn", ratio);
  state.counters["B_GBps"] = 2.0 * kK * kN / ours_us * 1e-3;
  state.counters["dram_GBps"] = DramGBps();
  state.SetLabel(
      absl::StrCat(ours.label, " vs ", theirs.label, ", ", rounds, " rounds"));
}

// amarena at M=1 against reading as many bytes from DRAM, call by call
// (Alternate, AppendDramReads, SetDramCounters).
void BM_PairedDram(benchmark::State& state, Isa isa, const char* b,
                   int rounds) {
  const Prepared ours = PrepareAmarena(isa, 1, 1, b);
  if (!ours.error.empty()) return state.SkipWithError(ours.error.c_str());
  std::vector<std::function<void(int)>> runs = {ours.run};
  AppendDramReads(runs);
  std::vector<std::vector<double>> us;
  for (auto _ : state) us = Alternate(runs, rounds);
  SetDramCounters(state, us);
  state.SetLabel(
      absl::StrCat(ours.label, " vs DRAM reads, ", rounds, " rounds"));
}

// --- A probe, not amarena: how far apart two streams read side by side
// must lie. A hand-written AVX2 vector-matrix multiply (as amarena's AVX2
// kernel: zero-extend, shift, FMA; no software prefetch) over B in row
// panels of 32, reading two panels `distance` panels apart in lockstep and
// every panel once, against DRAM reads of as many bytes (BM_PairedDram's
// three ways), call by call. Measured on the development machine, % of the
// DRAM rate: 81 at 1 panel apart (128 KiB, what the p32 schedule reads),
// 90 at 2, 93 at 4, 94 at 8, 96 at 16, 97-98 at 64 (8 MiB) and 256.
// Amarena cannot yet choose far-apart panels: a tile is a box of adjacent
// ones (README, "Not done").
// Eight bf16 at p as f32.
__attribute__((target("avx2"))) inline __m256 Widen8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

__attribute__((target("avx2,fma"))) void TwoPanelsApart(const uint16_t* a,
                                                        const uint16_t* b,
                                                        float* c,
                                                        int64_t distance) {
  constexpr int64_t kPanel = 32, kPanels = kN / kPanel;
  for (int64_t group = 0; group < kPanels; group += 2 * distance)
    for (int64_t j = group; j < group + distance; ++j) {
      const uint16_t* panel[2] = {b + j * kPanel * kK,
                                  b + (j + distance) * kPanel * kK};
      __m256 acc[2][4];
      for (auto& row : acc)
        for (auto& x : row) x = _mm256_setzero_ps();
      for (int64_t k = 0; k < kK; ++k) {
        const __m256 ak =
            _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_set1_epi32(a[k]), 16));
        for (int s = 0; s < 2; ++s)
          for (int v = 0; v < 4; ++v)
            acc[s][v] = _mm256_fmadd_ps(
                ak, Widen8(panel[s] + k * kPanel + 8 * v), acc[s][v]);
      }
      for (int s = 0; s < 2; ++s)
        for (int v = 0; v < 4; ++v)
          _mm256_storeu_ps(c + (j + s * distance) * kPanel + 8 * v, acc[s][v]);
    }
}

void BM_StreamDistance(benchmark::State& state, int64_t distance) {
  if (CachedRuntime(Isa::kAvx2, 1) == nullptr)
    return state.SkipWithError("CPU lacks AVX2");
  const Problem p = MakeProblem(1);
  TensorSpec plain{kK, kN, {}}, panels = plain;
  plain.aux.dtype = panels.aux.dtype = DType::kBF16;
  panels.aux.layout = Layout::Panels(Order::kRowMajor, 32);
  auto bufs = std::make_shared<std::vector<Bf16Buffer>>(
      kCopies, Bf16Buffer(static_cast<size_t>(panels.StoredElements())));
  for (auto& copy : *bufs) Relayout(plain, p.b.data(), panels, copy.data());
  auto c = std::make_shared<std::vector<float>>(kN);
  std::vector<std::function<void(int)>> runs = {[&, bufs, c](int copy) {
    TwoPanelsApart(p.a.data(), (*bufs)[copy].data(), c->data(), distance);
  }};
  runs[0](0);
  if (!SampleMatches(p, c->data()))
    return state.SkipWithError("probe does not match the reference");
  AppendDramReads(runs);
  std::vector<std::vector<double>> us;
  for (auto _ : state) us = Alternate(runs, 60);
  SetDramCounters(state, us);
  state.SetLabel(absl::StrCat("hand-written AVX2 probe, two p32 panels ",
                              distance * 32 * kK * 2 / 1024,
                              " KiB apart, vs DRAM reads"));
}

BENCHMARK(BM_DramRead)->Iterations(1);

// B row-major (""), column-major ("col") and pre-packed ("any": in the
// layout the search prices cheapest; "p32": row panels of 32, for the
// widening kernels beside vdpbf16ps). oneDNN: row-major, column-major and
// pre-packed weights.
#define AMARENA_BF16(name, isa, m, threads, b)            \
  BENCHMARK_CAPTURE(BM_Amarena, name, isa, m, threads, b) \
      ->Unit(benchmark::kMicrosecond)                     \
      ->UseRealTime()
#define ONEDNN_BF16(name, m, threads, weights)            \
  BENCHMARK_CAPTURE(BM_OneDnn, name, m, threads, weights) \
      ->Unit(benchmark::kMicrosecond)                     \
      ->UseRealTime()
#define BF16_M1(suffix, threads)                                              \
  AMARENA_BF16(avx2_m1##suffix, Isa::kAvx2, 1, threads, "");                  \
  AMARENA_BF16(avx512_m1##suffix, Isa::kAvx512, 1, threads, "");              \
  AMARENA_BF16(avx2_m1_col##suffix, Isa::kAvx2, 1, threads, "col");           \
  AMARENA_BF16(avx512_m1_col##suffix, Isa::kAvx512, 1, threads, "col");       \
  AMARENA_BF16(avx2_m1_prepacked##suffix, Isa::kAvx2, 1, threads, "any");     \
  AMARENA_BF16(avx512_m1_prepacked##suffix, Isa::kAvx512, 1, threads, "any"); \
  ONEDNN_BF16(plain_m1##suffix, 1, threads, Weights::kRowMajor);              \
  ONEDNN_BF16(col_m1##suffix, 1, threads, Weights::kColMajor);                \
  ONEDNN_BF16(prepacked_m1##suffix, 1, threads, Weights::kPrePacked)
BF16_M1(, 1);
BF16_M1(_2threads, 2);
AMARENA_BF16(avx512_m1_p32, Isa::kAvx512, 1, 1, "p32");
#define AMARENA_BF16_M(m)                                           \
  AMARENA_BF16(avx2_m##m, Isa::kAvx2, m, 1, "");                    \
  AMARENA_BF16(avx512_m##m, Isa::kAvx512, m, 1, "");                \
  AMARENA_BF16(avx2_m##m##_prepacked, Isa::kAvx2, m, 1, "any");     \
  AMARENA_BF16(avx512_m##m##_prepacked, Isa::kAvx512, m, 1, "any"); \
  ONEDNN_BF16(plain_m##m, m, 1, Weights::kRowMajor);                \
  ONEDNN_BF16(prepacked_m##m, m, 1, Weights::kPrePacked)
AMARENA_BF16_M(4);
AMARENA_BF16_M(16);
AMARENA_BF16_M(64);
// Call by call against oneDNN pre-packed (one iteration: `rounds` pairs).
// One thread only: with two, the thread pool that just ran spins on the
// cores the other library's threads need (oneDNN's OpenMP and amarena's
// pthreadpool), and the pairing measures that.
#define PAIRED(name, isa, m, threads, rounds)                 \
  BENCHMARK_CAPTURE(BM_Paired, name, isa, m, threads, rounds) \
      ->Iterations(1)                                         \
      ->Unit(benchmark::kMillisecond)                         \
      ->UseRealTime()
PAIRED(avx2_m1, Isa::kAvx2, 1, 1, 400);
PAIRED(avx512_m1, Isa::kAvx512, 1, 1, 400);
PAIRED(avx512_m4, Isa::kAvx512, 4, 1, 200);
PAIRED(avx512_m16, Isa::kAvx512, 16, 1, 100);
PAIRED(avx512_m64, Isa::kAvx512, 64, 1, 50);
#define PAIRED_DRAM(name, isa, b, rounds)                \
  BENCHMARK_CAPTURE(BM_PairedDram, name, isa, b, rounds) \
      ->Iterations(1)                                    \
      ->Unit(benchmark::kMillisecond)                    \
      ->UseRealTime()
PAIRED_DRAM(avx2_m1_any, Isa::kAvx2, "any", 200);
PAIRED_DRAM(avx512_m1_any, Isa::kAvx512, "any", 200);
PAIRED_DRAM(avx2_m1_col, Isa::kAvx2, "col", 100);
PAIRED_DRAM(avx512_m1_col, Isa::kAvx512, "col", 100);
PAIRED_DRAM(avx2_m1_row, Isa::kAvx2, "", 100);
PAIRED_DRAM(avx512_m1_row, Isa::kAvx512, "", 100);
#define STREAM_DISTANCE(panels)                                \
  BENCHMARK_CAPTURE(BM_StreamDistance, apart_##panels, panels) \
      ->Iterations(1)                                          \
      ->Unit(benchmark::kMillisecond)                          \
      ->UseRealTime()
STREAM_DISTANCE(1);
STREAM_DISTANCE(2);
STREAM_DISTANCE(4);
STREAM_DISTANCE(16);
STREAM_DISTANCE(64);
STREAM_DISTANCE(256);

}  // namespace
}  // namespace amarena

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  amarena::RatioReporter reporter("B_GBps", "dram_GBps", "pct_dram");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
