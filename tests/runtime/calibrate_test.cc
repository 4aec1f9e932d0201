// Tests for runtime/calibrate.h that need no timing: how the DRAM run length
// is read off a curve of rates, and how a rate becomes whole pipes.
// (`amarena calibrate --json` itself runs in
// tests/tools/cli_calibrate_test.sh.)
#include "runtime/calibrate.h"

#include "gtest/gtest.h"

namespace amarena {
namespace {

using Runs = std::vector<std::pair<int64_t, double>>;

TEST(CalibrateTest, HalfRateRunIsTheShortestLengthReachingTheThreshold) {
  // 50 % is crossed between 256 and 1024 bytes: the length is 1024.
  EXPECT_EQ(HalfRateRun({{256, 40}, {1024, 60}, {4096, 90}}), 1024);
  // At a measured length.
  EXPECT_EQ(HalfRateRun({{64, 10}, {128, 50}, {256, 90}}), 128);
  // Already at the shortest.
  EXPECT_EQ(HalfRateRun({{64, 70}, {128, 80}}), 64);
  // Just under the threshold is under it.
  EXPECT_EQ(HalfRateRun({{64, 49}, {128, 100}}), 128);
  // Never below a line.
  EXPECT_EQ(HalfRateRun({{32, 90}, {64, 95}}), 64);
  EXPECT_EQ(HalfRateRun({}), 64);
}

// Two calibrations of an Intel Xeon host: 128 B runs at 43-45 % of the
// sequential rate, 256 B at 55-57 %, so 50 % lies halfway between them in
// log2. Interpolated and rounded, the knee was 128 in one and 256 in the
// other; the shortest length reaching 50 % is 256 in both.
TEST(CalibrateTest, HalfRateRunDoesNotFlipWhereTheCrossingIsHalfway) {
  const Runs first = {{64, 27.3},   {128, 43.3},  {256, 55.6},
                      {512, 66.9},  {1024, 67.3}, {2048, 78.9},
                      {4096, 87.8}, {8192, 91.0}, {16384, 95.3}};
  const Runs second = {{64, 27.6},   {128, 44.8},  {256, 56.5},
                       {512, 67.9},  {1024, 67.6}, {2048, 78.1},
                       {4096, 89.1}, {8192, 93.6}, {16384, 97.7}};
  EXPECT_EQ(HalfRateRun(first), 256);
  EXPECT_EQ(HalfRateRun(second), 256);
}

TEST(CalibrateTest, HalfRateRunIgnoresDipsAndPlateausNearHalf) {
  // A dip after the crossing does not move it.
  EXPECT_EQ(HalfRateRun({{256, 40}, {1024, 60}, {2048, 30}, {4096, 90}}),
            1024);
  // Runs that level off just under half the sequential rate: the threshold
  // is 90 % of the median (44 % here: 39.6 %), crossed between 128 and 256.
  const int64_t r = HalfRateRun({{64, 15},
                                 {128, 23},
                                 {256, 41},
                                 {512, 44},
                                 {1024, 49.9},
                                 {2048, 45},
                                 {4096, 48}});
  EXPECT_EQ(r, 256);
  // The same curve a point higher gives the same length, where a 50 %
  // threshold would jump from "never" to 1024.
  EXPECT_EQ(HalfRateRun({{64, 16},
                         {128, 24},
                         {256, 42},
                         {512, 45},
                         {1024, 50.9},
                         {2048, 46},
                         {4096, 49}}),
            256);
}

// Two calibrations of one Zen 3 host: the plateau at 45-60 % lay on either
// side of 50 %, and runs of 16 KiB reached 82-94 %. With a threshold of 50 %
// (or 90 % of the best rate) the length read off was 192 B in one and 2.6 KiB
// in the other; 90 % of the median puts both at the knee.
TEST(CalibrateTest, HalfRateRunIsTheKneeWhenLongRunsClimb) {
  const Runs above = {{64, 23.0},   {128, 39.0},  {256, 55.9},
                      {512, 59.1},  {1024, 56.8}, {2048, 50.6},
                      {4096, 55.8}, {8192, 68.3}, {16384, 83.2}};
  const Runs below = {{64, 23.5},   {128, 31.4},  {256, 44.9},
                      {512, 46.6},  {1024, 48.3}, {2048, 41.2},
                      {4096, 53.5}, {8192, 68.4}, {16384, 82.3}};
  EXPECT_EQ(HalfRateRun(above), 256);
  EXPECT_EQ(HalfRateRun(below), 256);
}

// Two calibrations of the Emerald Rapids guest: 128 B runs at 49 % and at
// 51 % of the sequential rate, on either side of the threshold (50 %). The
// knee alone flips; with the shipped table's 128 as the prior, both keep
// it. A prior the data is not near (1024), or one not measured, is ignored.
TEST(CalibrateTest, HalfRateRunKeepsThePriorWithinTheNoise) {
  auto curve = [](double at128) {
    return Runs{{64, 28.8},   {128, at128}, {256, 60.1},
                {512, 78.0},  {1024, 80.2}, {2048, 80.5},
                {4096, 88.1}, {8192, 92.3}, {16384, 99.0}};
  };
  EXPECT_EQ(HalfRateRun(curve(49)), 256);
  EXPECT_EQ(HalfRateRun(curve(51)), 128);
  EXPECT_EQ(HalfRateRun(curve(49), 128), 128);
  EXPECT_EQ(HalfRateRun(curve(51), 128), 128);
  EXPECT_EQ(HalfRateRun(curve(49), 256), 256);
  EXPECT_EQ(HalfRateRun(curve(51), 256), 256);
  EXPECT_EQ(HalfRateRun(curve(49), 1024), 256);
  EXPECT_EQ(HalfRateRun(curve(51), 1024), 128);
  EXPECT_EQ(HalfRateRun(curve(51), 192), 128);
  // Far from the threshold the data decides: 128 B at 40 %.
  EXPECT_EQ(HalfRateRun(curve(40), 128), 256);
}

// Units are sixths of a cycle: 3 pipes 2 units, 2 pipes 3, 1 pipe 6.
TEST(CalibrateTest, PerPipeUnitsRoundsARateUpToWholePipes) {
  // Measured on quiet cores: a hair above or below the pipes.
  EXPECT_EQ(PerPipeUnits(3.012), 2);
  EXPECT_EQ(PerPipeUnits(2.962), 2);
  EXPECT_EQ(PerPipeUnits(2.011), 3);
  EXPECT_EQ(PerPipeUnits(1.853), 3);
  EXPECT_EQ(PerPipeUnits(0.994), 6);
  // Slowed by a neighbour on the core's other hardware thread (the Emerald
  // Rapids guest): still the pipes, not one fewer.
  EXPECT_EQ(PerPipeUnits(2.258), 2);
  EXPECT_EQ(PerPipeUnits(1.499), 3);
  EXPECT_EQ(PerPipeUnits(0.849), 6);
  // Within the slack above a whole number is that number; past it, the next.
  EXPECT_EQ(PerPipeUnits(2.0 + kPipeSlack - 0.01), 3);
  EXPECT_EQ(PerPipeUnits(2.0 + kPipeSlack + 0.01), 2);
  // Half a pipe below 0.75 a cycle (Zen 4's zmm stores), never less.
  EXPECT_EQ(PerPipeUnits(0.5), 12);
  EXPECT_EQ(PerPipeUnits(0.3), 12);
}

}  // namespace
}  // namespace amarena
