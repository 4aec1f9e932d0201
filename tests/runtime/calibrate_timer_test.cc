// Tests for runtime/calibrate_timer.h that assert no time: which runs a
// round of sampled figures makes, and what a figure is read as.
#include "runtime/calibrate_timer.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/calibrate_loops.h"

namespace amarena::calibrate_loops {
namespace {

// A run of `n` units that lasts about n microseconds of CPU time and records
// its count.
std::function<void(int64_t)> Recorder(std::vector<int64_t>* counts) {
  return [counts](int64_t n) {
    counts->push_back(n);
    const int64_t until = ThreadNs() + n * 1000;
    while (ThreadNs() < until) {
    }
  };
}

TEST(SampledFiguresTest, EachRoundTimesEveryFigureOnceAtItsSizedCount) {
  CycleTimer timer(/*min_run_ns=*/200'000, /*least_run_ns=*/20'000);
  SampledFigures samples(&timer);
  std::vector<int64_t> cold, warm;
  const int a = samples.Add(Recorder(&cold), 1, 20'000, false);
  const int b = samples.Add(Recorder(&warm), 1, 40'000, true);
  EXPECT_NE(a, b);
  samples.Round();
  // Sizing doubles the count until a run lasts the figure's least run time,
  // then one timed run at that count.
  ASSERT_GE(cold.size(), 2u);
  const int64_t cold_n = cold.back();
  const int64_t warm_n = warm.back();
  // A run of n units lasts at least n us of the clock the sizing reads, so
  // sizing stops by 32 (20 us) and 64 (40 us). It may stop sooner: that clock
  // can jump within a run on a loaded machine (a run of 4 read 20 us once
  // under ctest -j2), so there is no lower bound to assert.
  EXPECT_LE(cold_n, 32);
  EXPECT_LE(warm_n, 64);
  for (size_t i = 1; i + 1 < cold.size(); ++i)
    EXPECT_EQ(cold[i], 2 * cold[i - 1]);
  const size_t cold_calls = cold.size(), warm_calls = warm.size();
  for (int round = 0; round < 3; ++round) samples.Round();
  // Afterwards one run a round at the sized count; a warm figure is run once
  // more, untimed, before it.
  EXPECT_EQ(cold.size(), cold_calls + 3);
  EXPECT_EQ(warm.size(), warm_calls + 6);
  for (size_t i = cold_calls; i < cold.size(); ++i) EXPECT_EQ(cold[i], cold_n);
  for (size_t i = warm_calls; i < warm.size(); ++i) EXPECT_EQ(warm[i], warm_n);
  // A figure is per unit of count, in cycles and in nanoseconds.
  const CycleTimer::Figure f = samples.Get(a);
  EXPECT_GT(f.cycles, 0);
  EXPECT_GT(f.ns, 0);
  EXPECT_GT(timer.Ghz(), 0);
}

TEST(CycleTimerTest, FirstQuartileIsTheSecondLeastOfSevenAndTheLeastOfFour) {
  std::vector<CycleTimer::Figure> seven;
  for (double c : {9.0, 3.0, 7.0, 1.0, 5.0, 8.0, 2.0})
    seven.push_back({c, 10 * c});
  const CycleTimer::Figure q = CycleTimer::FirstQuartile(seven);
  EXPECT_EQ(q.cycles, 2.0);
  EXPECT_EQ(q.ns, 20.0);  // that run's nanoseconds
  std::vector<CycleTimer::Figure> four = {{4, 0}, {2, 0}, {3, 0}, {5, 0}};
  EXPECT_EQ(CycleTimer::FirstQuartile(four).cycles, 2.0);
  std::vector<CycleTimer::Figure> many;
  for (int i = 24; i >= 1; --i) many.push_back({double(i), 0});
  EXPECT_EQ(CycleTimer::FirstQuartile(many).cycles, 6.0);  // (24 - 1) / 4
}

// The DRAM passes' figure: three fast passes of eight (a shared L3 that
// kept part of the set) do not move it.
TEST(CycleTimerTest, MedianOfEightIsTheFourthLeast) {
  std::vector<CycleTimer::Figure> eight;
  for (double c : {48.0, 41.1, 43.3, 41.0, 47.9, 47.8, 48.1, 48.0})
    eight.push_back({c, 2 * c});
  const CycleTimer::Figure m = CycleTimer::MedianOf(eight);
  EXPECT_EQ(m.cycles, 47.8);
  EXPECT_EQ(m.ns, 95.6);
  EXPECT_EQ(CycleTimer::FirstQuartile(eight).cycles, 41.1);
  std::vector<CycleTimer::Figure> one = {{7, 1}};
  EXPECT_EQ(CycleTimer::MedianOf(one).cycles, 7.0);
}

}  // namespace
}  // namespace amarena::calibrate_loops
