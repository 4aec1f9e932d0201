#include "bench/peers/bandwidth.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace amarena::bench {
namespace {

// AVX2 loads only: amarena requires AVX2, and one 256-bit load per cycle is
// already far beyond what one core can pull from DRAM.
__attribute__((target("avx2"))) float SumAvx2(const float* p, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i + 32 <= n; i += 32) {
    s0 = _mm256_add_ps(s0, _mm256_load_ps(p + i));
    s1 = _mm256_add_ps(s1, _mm256_load_ps(p + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_load_ps(p + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_load_ps(p + i + 24));
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  float r = 0;
  for (float x : out) r += x;
  return r;
}

}  // namespace

double MeasureDramReadGBs(size_t bytes, int passes) {
  bytes = bytes / 128 * 128;
  float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (p == nullptr) return 0;
  std::memset(p, 0, bytes);  // commit the pages before timing
  double best = 0;
  volatile float sink = 0;
  for (int i = 0; i < std::max(passes, 2); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    sink = sink + SumAvx2(p, bytes / sizeof(float));
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    best = std::max(best, static_cast<double>(bytes) / s * 1e-9);
  }
  std::free(p);
  return best;
}

}  // namespace amarena::bench
