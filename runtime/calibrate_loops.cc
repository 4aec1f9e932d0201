#include "runtime/calibrate_loops.h"

#include <immintrin.h>
#include <time.h>

#include <algorithm>

#include "core/layout.h"
#include "core/target.h"

namespace amarena::calibrate_loops {

int64_t ThreadNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

namespace {

volatile float g_sink;
volatile int64_t g_int_sink;

__attribute__((target("avx2"))) void Sink(__m256 v) {
  alignas(32) float f[8];
  _mm256_store_ps(f, v);
  float s = 0;
  for (float x : f) s += x;
  g_sink = s;
}

// Reads `lines` 64-byte lines at base, base + pitch, base + 2 * pitch, ...
// (pitch in floats; lines a multiple of 4) into 8 vaddps accumulators.
__attribute__((target("avx2"), always_inline)) inline void SumLines(
    const float* base, size_t pitch, size_t lines, __m256 acc[8]) {
  for (size_t i = 0; i < lines; i += 4, base += 4 * pitch) {
    acc[0] = _mm256_add_ps(acc[0], _mm256_load_ps(base));
    acc[1] = _mm256_add_ps(acc[1], _mm256_load_ps(base + 8));
    acc[2] = _mm256_add_ps(acc[2], _mm256_load_ps(base + pitch));
    acc[3] = _mm256_add_ps(acc[3], _mm256_load_ps(base + pitch + 8));
    acc[4] = _mm256_add_ps(acc[4], _mm256_load_ps(base + 2 * pitch));
    acc[5] = _mm256_add_ps(acc[5], _mm256_load_ps(base + 2 * pitch + 8));
    acc[6] = _mm256_add_ps(acc[6], _mm256_load_ps(base + 3 * pitch));
    acc[7] = _mm256_add_ps(acc[7], _mm256_load_ps(base + 3 * pitch + 8));
  }
}

__attribute__((target("avx2"))) void SinkAcc(const __m256 acc[8]) {
  Sink(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]),
                                   _mm256_add_ps(acc[2], acc[3])),
                     _mm256_add_ps(_mm256_add_ps(acc[4], acc[5]),
                                   _mm256_add_ps(acc[6], acc[7]))));
}

}  // namespace

// `iters` rounds of 32 dependent register adds: 32 cycles a round.
void AddChain(int64_t iters) {
  int64_t a = 0, b = 1;
#define AMARENA_ADD "add %[b], %[a]\n\t"
#define AMARENA_ADD8 AMARENA_ADD AMARENA_ADD AMARENA_ADD AMARENA_ADD \
    AMARENA_ADD AMARENA_ADD AMARENA_ADD AMARENA_ADD
  asm volatile("1:\n\t" AMARENA_ADD8 AMARENA_ADD8 AMARENA_ADD8 AMARENA_ADD8
               "dec %[n]\n\tjnz 1b\n\t"
               : [a] "+r"(a), [n] "+r"(iters)
               : [b] "r"(b)
               : "cc");
#undef AMARENA_ADD
#undef AMARENA_ADD8
  g_int_sink = a;
}

// `iters` rounds of kYmmChains independent FMAs.
__attribute__((target("avx2,fma"), noinline)) void YmmFmas(int64_t iters) {
  const __m256 mul = _mm256_set1_ps(0.999999f);
  const __m256 add = _mm256_set1_ps(1e-7f);
  __m256 acc[kYmmChains];
#pragma GCC unroll 16
  for (int c = 0; c < kYmmChains; ++c) acc[c] = _mm256_set1_ps(1.0f + c);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kYmmChains; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
  }
  __m256 s = acc[0];
  for (int c = 1; c < kYmmChains; ++c) s = _mm256_add_ps(s, acc[c]);
  Sink(s);
}

// `iters` dependent FMAs: one chain.
__attribute__((target("avx2,fma"), noinline)) void YmmFmaChain(int64_t iters) {
  const __m256 mul = _mm256_set1_ps(0.999999f);
  const __m256 add = _mm256_set1_ps(1e-7f);
  __m256 acc = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < iters; ++i) acc = _mm256_fmadd_ps(acc, mul, add);
  Sink(acc);
}

// `iters` rounds of kZmmChains independent FMAs (only where AVX-512F is).
__attribute__((target("avx512f"), noinline)) void ZmmFmas(int64_t iters) {
  const __m512 mul = _mm512_set1_ps(0.999999f);
  const __m512 add = _mm512_set1_ps(1e-7f);
  __m512 acc[kZmmChains];
#pragma GCC unroll 16
  for (int c = 0; c < kZmmChains; ++c) acc[c] = _mm512_set1_ps(1.0f + c);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kZmmChains; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
  }
  __m512 s = acc[0];
  for (int c = 1; c < kZmmChains; ++c) s = _mm512_add_ps(s, acc[c]);
  alignas(64) float f[16];
  _mm512_store_ps(f, s);
  float sum = 0;
  for (float x : f) sum += x;
  g_sink = sum;
}

// `passes` sequential reads of lines * 64 bytes.
__attribute__((target("avx2"), noinline)) void DensePasses(const float* buf,
                                                           size_t lines,
                                                           int64_t passes) {
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  for (int64_t p = 0; p < passes; ++p)
    SumLines(buf, kFloatsPerLine, lines, acc);
  SinkAcc(acc);
}

// `passes` column-panel reads of a matrix of `bands` * kPanelRows rows of
// kPitchFloats, `panels` 64-byte panels per band, each read top to bottom.
__attribute__((target("avx2"), noinline)) void StridedPasses(const float* mat,
                                                             size_t bands,
                                                             size_t panels,
                                                             int64_t passes) {
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  for (int64_t p = 0; p < passes; ++p)
    for (size_t b = 0; b < bands; ++b) {
      const float* band = mat + b * kPanelRows * kPitchFloats;
      for (size_t c = 0; c < panels; ++c)
        SumLines(band + c * kFloatsPerLine, kPitchFloats, kPanelRows, acc);
    }
  SinkAcc(acc);
}

// Reads a rows x pitch-float matrix as runs of `run` floats: for each band
// of columns, each row's run in turn.
__attribute__((target("avx2"), noinline)) void RunPass(const float* m,
                                                       size_t rows,
                                                       size_t pitch,
                                                       size_t run) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  for (size_t c = 0; c < pitch; c += run)
    for (size_t r = 0; r < rows; ++r) {
      const float* p = m + r * pitch + c;
      for (size_t i = 0; i < run; i += 16) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
      }
    }
  Sink(_mm256_add_ps(a0, a1));
}

__attribute__((target("avx2"), noinline)) void BlockPass(const float* m,
                                                         size_t rows,
                                                         size_t pitch,
                                                         size_t run,
                                                         int prefetch) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  const size_t ahead = kBlockRows * pitch;
  const size_t along = kLineBytes / sizeof(float);
  for (size_t r0 = 0; r0 + kBlockRows <= rows; r0 += kBlockRows)
    for (size_t c = 0; c < pitch; c += run)
      for (size_t r = r0; r < r0 + kBlockRows; ++r) {
        const float* p = m + r * pitch + c;
        for (size_t i = 0; i < run; i += 16) {
          // The last block's prefetches fall past the matrix: prefetches
          // never fault, and the buffer is larger anyway.
          if (prefetch == kStreamPrefetchL2)
            _mm_prefetch(reinterpret_cast<const char*>(p + i + ahead + along),
                         _MM_HINT_T1);
          else if (prefetch != 0)
            _mm_prefetch(reinterpret_cast<const char*>(p + i + ahead),
                         _MM_HINT_T0);
          a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
          a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
        }
      }
  Sink(_mm256_add_ps(a0, a1));
}

// 32 ymm loads / stores covering the 1 KiB at %[p].
// clang-format off
#define AMARENA_LD(off, r) "vmovups " #off "(%[p]), %%ymm" #r "\n\t"
#define AMARENA_LD8(o)                                                  \
  AMARENA_LD(o + 0, 0)   AMARENA_LD(o + 32, 1)  AMARENA_LD(o + 64, 2)   \
  AMARENA_LD(o + 96, 3)  AMARENA_LD(o + 128, 4) AMARENA_LD(o + 160, 5)  \
  AMARENA_LD(o + 192, 6) AMARENA_LD(o + 224, 7)
#define AMARENA_LD32 \
  AMARENA_LD8(0) AMARENA_LD8(256) AMARENA_LD8(512) AMARENA_LD8(768)
#define AMARENA_ST(off) "vmovups %%ymm0, " #off "(%[p])\n\t"
#define AMARENA_ST8(o)                                                  \
  AMARENA_ST(o + 0)   AMARENA_ST(o + 32)  AMARENA_ST(o + 64)            \
  AMARENA_ST(o + 96)  AMARENA_ST(o + 128) AMARENA_ST(o + 160)           \
  AMARENA_ST(o + 192) AMARENA_ST(o + 224)
#define AMARENA_ST32 \
  AMARENA_ST8(0) AMARENA_ST8(256) AMARENA_ST8(512) AMARENA_ST8(768)
// clang-format on

void L1Loads(const float* p, int64_t iters) {
  asm volatile("1:\n\t" AMARENA_LD32 "dec %[n]\n\tjnz 1b\n\tvzeroupper\n\t"
               : [n] "+r"(iters)
               : [p] "r"(p)
               : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                 "cc", "memory");
}

void L1Stores(float* p, int64_t iters) {
  asm volatile(
      "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
      "1:\n\t" AMARENA_ST32 "dec %[n]\n\tjnz 1b\n\tvzeroupper\n\t"
      : [n] "+r"(iters)
      : [p] "r"(p)
      : "xmm0", "cc", "memory");
}

// One row of a 3x16 broadcast kernel: a broadcast of A (row `off` bytes
// from %[a]) into ymm14 and its two FMAs with the B vectors in ymm12-13.
// clang-format off
#define AMARENA_MIX_ROW(off, acc0, acc1)                                  \
  "vbroadcastss " #off "(%[a]), %%ymm14\n\t"                             \
  "vfmadd231ps %%ymm14, %%ymm12, %%ymm" #acc0 "\n\t"                     \
  "vfmadd231ps %%ymm14, %%ymm13, %%ymm" #acc1 "\n\t"
// clang-format on

void LoadsBesideFmas(const float* p, int64_t iters) {
  const float* a0 = p;  // 3 rows, 8 KiB apart, 512 bytes read of each
  const float* b0 = p + (32 << 10) / sizeof(float);  // the B panel, 16 KiB
  for (int64_t pass = 0; pass < iters; ++pass) {
    const float* a = a0;
    const float* b = b0;
    int64_t k = kMixSteps;
    asm volatile(
        "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
        "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
        "vxorps %%xmm2, %%xmm2, %%xmm2\n\t"
        "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"
        "vxorps %%xmm4, %%xmm4, %%xmm4\n\t"
        "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"
        "vxorps %%xmm6, %%xmm6, %%xmm6\n\t"
        "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"
        "vxorps %%xmm8, %%xmm8, %%xmm8\n\t"
        "vxorps %%xmm9, %%xmm9, %%xmm9\n\t"
        "vxorps %%xmm10, %%xmm10, %%xmm10\n\t"
        "vxorps %%xmm11, %%xmm11, %%xmm11\n\t"
        "1:\n\t"
        "vmovups (%[b]), %%ymm12\n\t"
        "vmovups 32(%[b]), %%ymm13\n\t"
        AMARENA_MIX_ROW(0, 0, 1) AMARENA_MIX_ROW(8192, 2, 3)
        AMARENA_MIX_ROW(16384, 4, 5)
        "vmovups 64(%[b]), %%ymm12\n\t"
        "vmovups 96(%[b]), %%ymm13\n\t"
        AMARENA_MIX_ROW(0, 6, 7) AMARENA_MIX_ROW(8192, 8, 9)
        AMARENA_MIX_ROW(16384, 10, 11)
        "add $4, %[a]\n\tadd $128, %[b]\n\tdec %[k]\n\tjnz 1b\n\t"
        "vzeroupper\n\t"
        : [k] "+r"(k), [a] "+r"(a), [b] "+r"(b)
        :
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
          "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
          "xmm15", "cc", "memory");
  }
}

// 32 zmm loads / stores covering the 2 KiB at %[p] (only where AVX-512F is).
// clang-format off
#define AMARENA_ZLD(off, r) "vmovups " #off "(%[p]), %%zmm" #r "\n\t"
#define AMARENA_ZLD8(o)                                                   \
  AMARENA_ZLD(o + 0, 0)   AMARENA_ZLD(o + 64, 1)  AMARENA_ZLD(o + 128, 2)  \
  AMARENA_ZLD(o + 192, 3) AMARENA_ZLD(o + 256, 4) AMARENA_ZLD(o + 320, 5)  \
  AMARENA_ZLD(o + 384, 6) AMARENA_ZLD(o + 448, 7)
#define AMARENA_ZLD32 \
  AMARENA_ZLD8(0) AMARENA_ZLD8(512) AMARENA_ZLD8(1024) AMARENA_ZLD8(1536)
#define AMARENA_ZST(off) "vmovups %%zmm0, " #off "(%[p])\n\t"
#define AMARENA_ZST8(o)                                                   \
  AMARENA_ZST(o + 0)   AMARENA_ZST(o + 64)  AMARENA_ZST(o + 128)          \
  AMARENA_ZST(o + 192) AMARENA_ZST(o + 256) AMARENA_ZST(o + 320)          \
  AMARENA_ZST(o + 384) AMARENA_ZST(o + 448)
#define AMARENA_ZST32 \
  AMARENA_ZST8(0) AMARENA_ZST8(512) AMARENA_ZST8(1024) AMARENA_ZST8(1536)
// clang-format on

void ZmmL1Loads(const float* p, int64_t iters) {
  asm volatile("1:\n\t" AMARENA_ZLD32 "dec %[n]\n\tjnz 1b\n\tvzeroupper\n\t"
               : [n] "+r"(iters)
               : [p] "r"(p)
               : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                 "cc", "memory");
}

void ZmmL1Stores(float* p, int64_t iters) {
  asm volatile(
      "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"
      "1:\n\t" AMARENA_ZST32 "dec %[n]\n\tjnz 1b\n\tvzeroupper\n\t"
      : [n] "+r"(iters)
      : [p] "r"(p)
      : "xmm0", "cc", "memory");
}

#undef AMARENA_ZLD
#undef AMARENA_ZLD8
#undef AMARENA_ZLD32
#undef AMARENA_ZST
#undef AMARENA_ZST8
#undef AMARENA_ZST32
#undef AMARENA_LD
#undef AMARENA_LD8
#undef AMARENA_LD32
#undef AMARENA_ST
#undef AMARENA_ST8
#undef AMARENA_ST32
#undef AMARENA_MIX_ROW

}  // namespace amarena::calibrate_loops
