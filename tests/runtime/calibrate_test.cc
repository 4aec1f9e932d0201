// Tests for runtime/calibrate.h that need no timing: how the DRAM run length
// is read off a curve of rates. (`amarena calibrate --json` itself runs in
// tests/tools/cli_calibrate_test.sh.)
#include "runtime/calibrate.h"

#include "gtest/gtest.h"

namespace amarena {
namespace {

using Runs = std::vector<std::pair<int64_t, double>>;

TEST(CalibrateTest, HalfRateRunInterpolatesInLogLength) {
  // Crossing 50 % exactly halfway (in log2) between 256 and 1024 bytes.
  EXPECT_EQ(HalfRateRun({{256, 40}, {1024, 60}, {4096, 90}}), 512);
  // At a measured length.
  EXPECT_EQ(HalfRateRun({{64, 10}, {128, 50}, {256, 90}}), 128);
  // Already at the shortest.
  EXPECT_EQ(HalfRateRun({{64, 70}, {128, 80}}), 64);
  // A multiple of one line, never below it.
  EXPECT_EQ(HalfRateRun({{64, 49}, {128, 100}}) % 64, 0);
  EXPECT_EQ(HalfRateRun({}), 64);
}

TEST(CalibrateTest, HalfRateRunIgnoresDipsAndPlateausNearHalf) {
  // A dip after the crossing does not move it.
  EXPECT_EQ(HalfRateRun({{256, 40}, {1024, 60}, {2048, 30}, {4096, 90}}), 512);
  // Runs that level off just under half the sequential rate: the threshold
  // is 90 % of the plateau (45 %), crossed between 512 and 1024.
  const int64_t r = HalfRateRun({{64, 15},
                                 {128, 23},
                                 {256, 41},
                                 {512, 44},
                                 {1024, 49.9},
                                 {2048, 45},
                                 {4096, 48}});
  EXPECT_GT(r, 512);
  EXPECT_LE(r, 1024);
  // The same curve a point higher gives nearly the same length, where a
  // 50 % threshold would jump from "never" to 1024.
  const int64_t r2 = HalfRateRun({{64, 16},
                                  {128, 24},
                                  {256, 42},
                                  {512, 45},
                                  {1024, 50.9},
                                  {2048, 46},
                                  {4096, 49}});
  EXPECT_GT(r2, 512);
  EXPECT_LE(r2, 1024);
}

}  // namespace
}  // namespace amarena
