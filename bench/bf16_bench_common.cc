#include "bench/bf16_bench_common.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "core/dtype.h"

namespace amarena::bf16bench {
// --- DRAM read bandwidth: one core streams a 1 GiB buffer (32x the 32 MiB
// L3) with 256-bit loads into four independent adds, as `streams` equal
// parts read side by side, with or without prefetching 4 KiB ahead; the best
// of those eight ways (each the median of 5 passes) is the rate the kernels
// are held to. On this machine one stream alone reads 27-39 GB/s from one
// run to the next and two to eight streams 33-37: no single way is the
// fastest every time.
__attribute__((target("avx2"))) float ReadPass(const float* p, size_t n,
                                               size_t streams, bool prefetch) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const size_t part = n / streams;
  for (size_t i = 0; i < part; i += 32)
    for (size_t s = 0; s < streams; ++s) {
      const float* q = p + s * part + i;
      if (prefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(q) + 4096, _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(q) + 4096 + 64, _MM_HINT_T0);
      }
      a0 = _mm256_add_ps(a0, _mm256_load_ps(q));
      a1 = _mm256_add_ps(a1, _mm256_load_ps(q + 8));
      a2 = _mm256_add_ps(a2, _mm256_load_ps(q + 16));
      a3 = _mm256_add_ps(a3, _mm256_load_ps(q + 24));
    }
  __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

static double MeasureDramGBps() {
  const size_t bytes = size_t{1} << 30;
  float* p = static_cast<float*>(std::aligned_alloc(4096, bytes));
  std::memset(p, 0, bytes);
  volatile float sink = 0;
  double best = 0;
  for (size_t streams : {1, 2, 4, 8})
    for (bool prefetch : {false, true}) {
      std::vector<double> r;
      for (int rep = 0; rep < 6; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        sink = sink + ReadPass(p, bytes / 4, streams, prefetch);
        auto t1 = std::chrono::steady_clock::now();
        if (rep > 0)  // the first pass warms the TLB and the page tables
          r.push_back(static_cast<double>(bytes) /
                      std::chrono::duration<double>(t1 - t0).count() * 1e-9);
      }
      std::sort(r.begin(), r.end());
      best = std::max(best, r[r.size() / 2]);
    }
  std::free(p);
  return best;
}

double DramGBps() {
  static const double gbps = MeasureDramGBps();
  return gbps;
}

// --- Checking: 2048 output elements sampled at random, exact in double.

Problem MakeProblem(int64_t m) {
  Problem p{m, std::vector<uint16_t>(m * kK), std::vector<uint16_t>(kK * kN),
            std::vector<float>(m * kN)};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& x : p.a) x = Bf16FromF32(d(rng));
  for (auto& x : p.b) x = Bf16FromF32(d(rng));
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
      double x = static_cast<double>(F32FromBf16(p.a[i * kK + q])) *
                 F32FromBf16(p.b[q * kN + j]);
      sum += x;
      scale += std::fabs(x);
    }
    if (!(std::fabs(c[i * kN + j] - sum) <= tol * scale + 1e-30)) return false;
  }
  return true;
}

// Runs each of `runs` once per round, in random order, each call on the next
// copy of its B, for `rounds` rounds: us[i][r] is run i's time in round r.
// On a shared machine whose DRAM rate drifts by 10 % from one second to the
// next, ratios of calls of one round are steadier than ratios of rows timed
// seconds apart.
std::vector<std::vector<double>> Alternate(
    const std::vector<std::function<void(int copy)>>& runs, int rounds) {
  std::vector<std::vector<double>> us(runs.size());
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 rng(5);
  int copy = 0;
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      copy = (copy + 1) % kCopies;
      const auto t0 = std::chrono::steady_clock::now();
      runs[i](copy);
      us[i].push_back(std::chrono::duration<double, std::micro>(
                          std::chrono::steady_clock::now() - t0)
                          .count());
    }
  }
  return us;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// Sets x_<name> (the median over rounds of ratio[r]) and its quartiles q1
// and q3.
void SetRatioCounters(benchmark::State& state, const std::string& name,
                      const std::vector<double>& ratio) {
  state.counters[name] = Quantile(ratio, 0.5);
  state.counters["q1"] = Quantile(ratio, 0.25);
  state.counters["q3"] = Quantile(ratio, 0.75);
}

// Appends to `runs` reads of a 64 MiB buffer (kCopies of them, as there are
// copies of B) in the three ways that were fastest in BM_DramRead on this
// machine: two and four parts side by side without prefetching, one with.
void AppendDramReads(std::vector<std::function<void(int copy)>>& runs) {
  auto bufs = std::make_shared<std::vector<Bf16Buffer>>(
      kCopies, Bf16Buffer(static_cast<size_t>(kK * kN), 0x3f80));
  static volatile float sink = 0;
  for (auto [streams, prefetch] :
       {std::pair<size_t, bool>{2, false}, {4, false}, {1, true}})
    runs.push_back([bufs, streams, prefetch](int copy) {
      sink =
          sink + ReadPass(reinterpret_cast<const float*>((*bufs)[copy].data()),
                          kK * kN / 2, streams, prefetch);
    });
}

// us[0]: a multiply reading B (64 MiB) once per call; us[1..3]: the reads
// AppendDramReads added, the fastest of which is each round's DRAM rate.
// Counters: pct_dram_paired = 100 x the median over rounds of (DRAM time /
// multiply time), with its quartiles; dram_GBps = the median of the rounds'
// DRAM rates (so pct_dram, the ratio of the medians, is beside it).
void SetDramCounters(benchmark::State& state,
                     const std::vector<std::vector<double>>& us) {
  std::vector<double> ratio, dram_gbps;
  for (size_t r = 0; r < us[0].size(); ++r) {
    const double read_us = std::min({us[1][r], us[2][r], us[3][r]});
    ratio.push_back(100 * read_us / us[0][r]);
    dram_gbps.push_back(2.0 * kK * kN / read_us * 1e-3);
  }
  SetRatioCounters(state, "pct_dram_paired", ratio);
  state.counters["B_GBps"] = 2.0 * kK * kN / Quantile(us[0], 0.5) * 1e-3;
  state.counters["dram_GBps"] = Quantile(dram_gbps, 0.5);
}

}  // namespace amarena::bf16bench
