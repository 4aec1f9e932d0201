// The lower bound's terms (core/lower_bound.h), one by one; its
// admissibility over every Spec the brute force reaches is checked in
// tests/search/search_test.cc.
#include "core/lower_bound.h"

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/search.h"

namespace amarena {
namespace {

Target Avx2() {
  return Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
}

// A register tile's partial sums stay in registers from one k to the next
// only across a counted loop's back-edge: 6x64x16 with C's 12 ymm held pays
// 63 of them beyond 64 times the one-k tile, and its best tree costs at least
// that.
TEST(LowerBoundTest, ChargesTheStepsAlongK) {
  const Target t = Avx2();
  auto bound = [&](int64_t k) {
    const Spec s = Canonical(*ParseSpec(
        absl::StrCat("matmul 6x", k, "x16 f32 accum a=l1 b=l1 c=vrf,v8 serial ",
                     "budget=vrf:4,gpr:4,l1:0,l2:0,l3:0")));
    return std::pair(s, LowerBound(s, t));
  };
  const auto [one, one_bound] = bound(1);
  const auto [many, many_bound] = bound(64);
  EXPECT_EQ(many_bound, 64 * one_bound + 63 * t.cost.loop_iteration);
  Searcher searcher(t);
  const std::optional<Cost> best = searcher.BestCost(many);
  ASSERT_TRUE(best.has_value());
  EXPECT_LE(many_bound, best->main);
  // A C outside registers holds at most the register file less a kernel's
  // scratch, 16 - 2 ymm: a back-edge carries 112 of the 96 x 63 steps.
  auto in_l1 = [&](int64_t k) {
    return LowerBound(Canonical(*ParseSpec(
                          absl::StrCat("matmul 6x", k,
                                       "x16 f32 accum a=l1 b=l1 c=l1 serial "
                                       "budget=vrf:16,gpr:4,l1:0,l2:0,l3:0"))),
                      t);
  };
  EXPECT_EQ(in_l1(64) - in_l1(1) - 63 * one_bound,
            96 * 63 * t.cost.loop_iteration / (14 * 8));
}

// The search keeps one bound per Spec whatever its budget (search/memo_table.h,
// KeyInfo::lower, and a cache by key), so the bound may not depend on the
// budget: with fewer registers every tree costs at least as much, and the
// bound computed under any budget holds under each.
TEST(LowerBoundTest, IsTheSameUnderEveryBudget) {
  const Target t = Avx2();
  Searcher searcher(t);
  int64_t first = -1;
  for (int vrf : {4, 8, 16}) {
    const Spec s = Canonical(*ParseSpec(absl::StrCat(
        "matmul 6x64x16 f32 accum a=l1 b=l1 c=l1 serial budget=vrf:", vrf,
        ",gpr:4,l1:0,l2:0,l3:0")));
    const int64_t bound = LowerBound(s, t);
    if (first < 0) first = bound;
    EXPECT_EQ(bound, first) << "vrf:" << vrf;
    const std::optional<Cost> best = searcher.BestCost(s);
    ASSERT_TRUE(best.has_value()) << "vrf:" << vrf;
    EXPECT_LE(bound, best->main) << "vrf:" << vrf;
  }
}

}  // namespace
}  // namespace amarena
