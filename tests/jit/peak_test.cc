// Tests for jit/peak.h: the JIT'd FMA loop runs, reports a plausible
// throughput, and is available exactly when the CPU has the instructions. The
// features are checked with GCC's own CPUID probe, independent of the Xbyak one
// that peak.cc uses.
#include "jit/peak.h"

#include <cmath>
#include <cstdio>

#include "gtest/gtest.h"

namespace amarena {
namespace {

TEST(PeakTest, YmmPeakIsMeasured) {
  bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  PeakResult p = MeasureFmaPeak(256, /*seconds=*/0.1);
  ASSERT_EQ(p.available, has);
  if (!has) GTEST_SKIP() << "no AVX2+FMA";
  EXPECT_TRUE(std::isfinite(p.gflops));
  EXPECT_GT(p.gflops, 1.0);
  std::printf("ymm FMA peak: %.1f GFLOP/s\n", p.gflops);
}

TEST(PeakTest, ZmmAvailableMatchesCpu) {
  bool has = __builtin_cpu_supports("avx512f");
  PeakResult p = MeasureFmaPeak(512, /*seconds=*/0.1);
  ASSERT_EQ(p.available, has);
  if (!has) {
    EXPECT_EQ(p.gflops, 0);
    GTEST_SKIP() << "no AVX-512F";
  }
  EXPECT_TRUE(std::isfinite(p.gflops));
  EXPECT_GT(p.gflops, 1.0);
  std::printf("zmm FMA peak: %.1f GFLOP/s\n", p.gflops);
}

TEST(PeakTest, OtherWidthsAreUnavailable) {
  for (int bits : {0, 128, 384, 1024}) {
    PeakResult p = MeasureFmaPeak(bits);
    EXPECT_FALSE(p.available) << bits;
    EXPECT_EQ(p.gflops, 0) << bits;
  }
}

}  // namespace
}  // namespace amarena
