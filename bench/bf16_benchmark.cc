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
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/host.h"
#include "runtime/runtime.h"

namespace amarena {
namespace {

constexpr int64_t kK = 2048, kN = 16384;
constexpr int kCopies = 4;

// --- DRAM read bandwidth: one core streams a 1 GiB buffer (32x the 32 MiB
// L3) with 256-bit loads into four independent adds; the median of 5 passes.
__attribute__((target("avx2"))) float ReadPass(const float* p, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

double MeasureDramGBps() {
  const size_t bytes = size_t{1} << 30;
  float* p = static_cast<float*>(std::aligned_alloc(4096, bytes));
  std::memset(p, 0, bytes);
  std::vector<double> r;
  volatile float sink = 0;
  for (int rep = 0; rep < 6; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    sink = sink + ReadPass(p, bytes / 4);
    auto t1 = std::chrono::steady_clock::now();
    if (rep > 0)  // the first pass warms the TLB and the page tables
      r.push_back(static_cast<double>(bytes) /
                  std::chrono::duration<double>(t1 - t0).count() * 1e-9);
  }
  std::free(p);
  std::sort(r.begin(), r.end());
  return r[r.size() / 2];
}

double DramGBps() {
  static const double gbps = MeasureDramGBps();
  return gbps;
}

void BM_DramRead(benchmark::State& state) {
  for (auto _ : state) state.counters["dram_GBps"] = DramGBps();
  state.SetLabel("single-core read of a 1 GiB buffer, median of 5 passes");
}

// --- Checking: 2048 output elements sampled at random, exact in double.
struct Problem {
  int64_t m;
  std::vector<uint16_t> a, b;  // bf16, row-major
  std::vector<float> c;
};

uint16_t ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
double FromBf16(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Problem MakeProblem(int64_t m) {
  Problem p{m, std::vector<uint16_t>(m * kK), std::vector<uint16_t>(kK * kN),
            std::vector<float>(m * kN)};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& x : p.a) x = ToBf16(d(rng));
  for (auto& x : p.b) x = ToBf16(d(rng));
  return p;
}

// The largest sampled error over Σ|a·b|, within (k + 4) * 2^-23 as for every
// amarena check.
bool SampleMatches(const Problem& p, const float* c) {
  std::mt19937_64 rng(11);
  const double tol = (kK + 4) * std::ldexp(1.0, -23);
  for (int s = 0; s < 2048; ++s) {
    int64_t i = static_cast<int64_t>(rng() % p.m), j = rng() % kN;
    double sum = 0, scale = 0;
    for (int64_t q = 0; q < kK; ++q) {
      double x = FromBf16(p.a[i * kK + q]) * FromBf16(p.b[q * kN + j]);
      sum += x;
      scale += std::fabs(x);
    }
    if (!(std::fabs(c[i * kN + j] - sum) <= tol * scale + 1e-30)) return false;
  }
  return true;
}

void SetCounters(benchmark::State& state, int64_t m) {
  const double flops = 2.0 * m * kK * kN, b_bytes = 2.0 * kK * kN;
  state.counters["GFLOPS"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["B_GBps"] = benchmark::Counter(
      b_bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["dram_GBps"] = DramGBps();
}

// --- amarena

// `b`: B's layout option in the Spec text: "" (row-major), "col"
// (column-major: each column's k values contiguous, the [N, K] weights most
// inference engines store), "pP" (pre-packed in row panels of P) or "pPx2"
// (k-pair panels, what vdpbf16ps reads); laid out once before timing, like
// oneDNN's pre-packed weights.
void BM_Amarena(benchmark::State& state, Isa isa, int64_t m, int threads,
                const char* b = "") {
  DramGBps();
  Runtime* rt = CachedRuntime(isa, threads);
  if (rt == nullptr) return state.SkipWithError("CPU lacks this ISA");
  const std::string text =
      absl::StrCat("matmul ", m, "x", kK, "x", kN, " bf16*bf16->f32",
                   *b ? absl::StrCat(" b=", b) : "");
  absl::StatusOr<KernelPtr> k = rt->Get(text);
  if (!k.ok())
    return state.SkipWithError(std::string(k.status().message()).c_str());
  Problem p = MakeProblem(m);
  std::vector<std::vector<uint16_t>> bs(kCopies, p.b);
  if (*b) {
    const Spec& s = (*k)->spec();
    TensorSpec plain = s.Operand(1);
    plain.aux.pack = 0;
    plain.aux.interleave = 0;
    plain.aux.layout = Layout::kRowMajor;
    for (auto& copy : bs) {
      copy.resize(static_cast<size_t>(StoredElements(s.Operand(1))));
      Relayout(plain, p.b.data(), s.Operand(1), copy.data());
    }
  }
  void* ops[] = {p.a.data(), bs[0].data(), p.c.data()};
  (*k)->Run(ops);
  if (!SampleMatches(p, p.c.data()))
    return state.SkipWithError("kernel does not match the reference");
  int copy = 0;
  for (auto _ : state) {
    ops[1] = bs[copy = (copy + 1) % kCopies].data();
    (*k)->Run(ops);
  }
  SetCounters(state, m);
  state.SetLabel(absl::StrCat("amarena ", Name(isa), " ", text, " ", threads,
                              " thread", threads > 1 ? "s" : ""));
}

// --- oneDNN: the matmul primitive, bf16 x bf16 -> f32, row-major A and C;
// weights plain row-major (tag ab), plain column-major (tag ba), or in the
// layout oneDNN picks for them (tag any), reordered once before timing.
enum class Weights { kRowMajor, kColMajor, kPrePacked };
void BM_OneDnn(benchmark::State& state, int64_t m, int threads, Weights w) {
  const bool prepacked = w == Weights::kPrePacked;
  DramGBps();
  using dnnl::memory;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  omp_set_num_threads(threads);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  memory::desc a_md({m, kK}, dt::bf16, tag::ab);
  const tag b_tag = w == Weights::kColMajor ? tag::ba : tag::ab;
  memory::desc b_plain({kK, kN}, dt::bf16, tag::ab);
  memory::desc b_md({kK, kN}, dt::bf16, prepacked ? tag::any : b_tag);
  memory::desc c_md({m, kN}, dt::f32, tag::ab);
  Problem p = MakeProblem(m);
  dnnl::matmul::primitive_desc pd;
  try {
    pd =
        dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md), eng);
  } catch (const dnnl::error& e) {
    return state.SkipWithError(e.what());
  }
  dnnl::matmul prim(pd);
  memory a_mem(a_md, eng, p.a.data()), c_mem(c_md, eng, p.c.data());
  std::vector<std::vector<uint16_t>> bs(kCopies, p.b);
  std::vector<memory> b_mems;
  for (auto& b : bs) {
    memory b_user(b_plain, eng, b.data());
    if (pd.weights_desc() == b_plain) {
      b_mems.push_back(b_user);
      continue;
    }
    // Column-major or pre-packed: laid out once, untimed.
    memory packed(pd.weights_desc(), eng);
    dnnl::reorder(b_user, packed).execute(strm, b_user, packed);
    strm.wait();
    b_mems.push_back(packed);
  }
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, a_mem},
                                          {DNNL_ARG_WEIGHTS, b_mems[0]},
                                          {DNNL_ARG_DST, c_mem}};
  prim.execute(strm, args);
  strm.wait();
  if (!SampleMatches(p, p.c.data()))
    return state.SkipWithError("oneDNN does not match the reference");
  int copy = 0;
  for (auto _ : state) {
    args[DNNL_ARG_WEIGHTS] = b_mems[copy = (copy + 1) % kCopies];
    prim.execute(strm, args);
    strm.wait();
  }
  SetCounters(state, m);
  state.SetLabel(absl::StrCat(
      "oneDNN ",
      prepacked                  ? "pre-packed"
      : w == Weights::kColMajor ? "plain column-major"
                                 : "plain",
      " matmul ", m, "x", kK,
      "x", kN, " bf16*bf16->f32 ", threads, " thread", threads > 1 ? "s" : ""));
}

BENCHMARK(BM_DramRead)->Iterations(1);

// B row-major (""), column-major ("col"), pre-packed in panels of 32
// ("p32": each call streams K x 32 panels, one per 64-byte line of a row;
// of the widths tried, 32, 64, 128 and 256 within the noise of each other)
// and, for M >= 4, in k-pair panels of 32 ("p32x2", AVX-512 BF16's
// vdpbf16ps outer product). oneDNN: row-major, column-major and pre-packed
// weights.
#define AMARENA_BF16(name, isa, m, threads, b)            \
  BENCHMARK_CAPTURE(BM_Amarena, name, isa, m, threads, b) \
      ->Unit(benchmark::kMicrosecond)                     \
      ->UseRealTime()
#define ONEDNN_BF16(name, m, threads, weights)            \
  BENCHMARK_CAPTURE(BM_OneDnn, name, m, threads, weights) \
      ->Unit(benchmark::kMicrosecond)                     \
      ->UseRealTime()
#define BF16_M1(suffix, threads)                                        \
  AMARENA_BF16(avx2_m1##suffix, Isa::kAvx2, 1, threads, "");            \
  AMARENA_BF16(avx512_m1##suffix, Isa::kAvx512, 1, threads, "");        \
  AMARENA_BF16(avx2_m1_col##suffix, Isa::kAvx2, 1, threads, "col");     \
  AMARENA_BF16(avx512_m1_col##suffix, Isa::kAvx512, 1, threads, "col"); \
  AMARENA_BF16(avx2_m1_prepacked##suffix, Isa::kAvx2, 1, threads, "p32"); \
  AMARENA_BF16(avx512_m1_prepacked##suffix, Isa::kAvx512, 1, threads,   \
               "p32");                                                  \
  ONEDNN_BF16(plain_m1##suffix, 1, threads, Weights::kRowMajor);        \
  ONEDNN_BF16(col_m1##suffix, 1, threads, Weights::kColMajor);          \
  ONEDNN_BF16(prepacked_m1##suffix, 1, threads, Weights::kPrePacked)
BF16_M1(, 1);
BF16_M1(_2threads, 2);
// Wider pre-packed panels, one thread: one panel of 64 or 128 per step.
AMARENA_BF16(avx2_m1_p64, Isa::kAvx2, 1, 1, "p64");
AMARENA_BF16(avx512_m1_p64, Isa::kAvx512, 1, 1, "p64");
AMARENA_BF16(avx2_m1_p128, Isa::kAvx2, 1, 1, "p128");
AMARENA_BF16(avx512_m1_p128, Isa::kAvx512, 1, 1, "p128");
#define AMARENA_BF16_M(m)                                              \
  AMARENA_BF16(avx2_m##m, Isa::kAvx2, m, 1, "");                       \
  AMARENA_BF16(avx512_m##m, Isa::kAvx512, m, 1, "");                   \
  AMARENA_BF16(avx2_m##m##_prepacked, Isa::kAvx2, m, 1, "p32");        \
  AMARENA_BF16(avx512_m##m##_prepacked, Isa::kAvx512, m, 1, "p32");    \
  AMARENA_BF16(avx512_m##m##_pairs, Isa::kAvx512, m, 1, "p32x2");      \
  ONEDNN_BF16(plain_m##m, m, 1, Weights::kRowMajor);                   \
  ONEDNN_BF16(prepacked_m##m, m, 1, Weights::kPrePacked)
AMARENA_BF16_M(4);
AMARENA_BF16_M(16);
AMARENA_BF16_M(64);

}  // namespace
}  // namespace amarena

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  amarena::RatioReporter reporter("B_GBps", "dram_GBps", "pct_dram");
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
