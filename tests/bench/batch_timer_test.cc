#include "bench/batch_timer.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace amarena::bench {
namespace {

// What the timer does with the calls, never how long they took: each
// figure is per call, over whole batches, and the batch count obeys the
// options.

TEST(BatchTimerTest, ExactBatchCountWhenMinAndMaxAgree) {
  int64_t calls = 0;
  BatchTimerOptions o;
  o.min_batch_ns = 0;  // a batch of one call is long enough
  o.min_batches = o.max_batches = 3;
  BatchTiming t = TimeBatches([&] { ++calls; }, o);
  EXPECT_EQ(t.batch, 1);
  EXPECT_EQ(t.batches, 3);
  // One warm-up, then three batches of one (the first also sized the batch).
  EXPECT_EQ(calls, 1 + 3);
  EXPECT_LE(t.min_ns, t.median_ns);
  EXPECT_GE(t.min_ns, 0);
}

TEST(BatchTimerTest, CallsAreWholeBatches) {
  int64_t calls = 0;
  BatchTimerOptions o;
  o.min_batch_ns = 20000;  // 20 us: a few doublings for a trivial call
  o.budget_ns = 0;
  o.min_batches = 4;
  BatchTiming t = TimeBatches([&] { ++calls; }, o);
  EXPECT_EQ(t.batches, 4);
  EXPECT_GE(t.batch, 1);
  // Warm-up, the sizing batches 1, 2, ..., batch / 2 (a geometric series),
  // then the four timed ones, the first of which ended the sizing.
  EXPECT_EQ(calls, 1 + (t.batch - 1) + 4 * t.batch);
}

TEST(BatchTimerTest, BudgetGivesAtLeastTheMinimum) {
  int64_t calls = 0;
  BatchTimerOptions o;
  o.min_batch_ns = 0;
  o.budget_ns = 1e5;
  o.min_batches = 2;
  o.max_batches = 50;
  BatchTiming t = TimeBatches([&] { ++calls; }, o);
  EXPECT_GE(t.batches, 2);
  EXPECT_LE(t.batches, 50);
  EXPECT_EQ(calls, 1 + t.batches);
}

TEST(BatchTimerTest, WithoutWarmUpOneBatchIsOneCall) {
  int64_t calls = 0;
  BatchTimerOptions o;
  o.min_batch_ns = 0;
  o.min_batches = o.max_batches = 1;
  o.warm_up = false;
  BatchTiming t = TimeBatches([&] { ++calls; }, o);
  EXPECT_EQ(t.batches, 1);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(t.min_ns, t.median_ns);
}

}  // namespace
}  // namespace amarena::bench
