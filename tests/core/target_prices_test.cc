// Tests for the prices as a target applies them (core/target.h): the
// stream prefetch fields resolved by ISA and dtype, the cache budgets that
// follow the prices' shares, loads beside FMAs, the L2 overlap share and the
// zmm prices of AVX-512 targets.
#include <string>

#include "core/price_table.h"
#include "core/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace amarena {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The stream prefetch fields refine one another: an f32 B under zmm kernels
// and a bf16 B under ymm kernels as stream_prefetch unless set, a bf16 B
// under zmm kernels as the bf16 field unless set; ClampPrices keeps them to
// the choices and kStreamPrefetchInherit.
TEST(TargetPricesTest, StreamPrefetchFieldsRefineOneAnother) {
  CostParams c;
  c.stream_prefetch = 0;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512})
    for (int bytes : {2, 4}) EXPECT_EQ(StreamPrefetchFor(c, isa, bytes), 0);
  c.stream_prefetch_zmm = kStreamPrefetchL2;
  c.stream_prefetch_bf16 = 1;
  EXPECT_EQ(StreamPrefetchFor(c, Isa::kAvx2, 4), 0);
  EXPECT_EQ(StreamPrefetchFor(c, Isa::kAvx512, 4), kStreamPrefetchL2);
  EXPECT_EQ(StreamPrefetchFor(c, Isa::kAvx2, 2), 1);
  EXPECT_EQ(StreamPrefetchFor(c, Isa::kAvx512, 2), 1);
  c.stream_prefetch_bf16_zmm = 0;
  EXPECT_EQ(StreamPrefetchFor(c, Isa::kAvx512, 2), 0);
  EXPECT_EQ(StreamPrefetchFor(c, Isa::kAvx2, 2), 1);
  c.stream_prefetch_zmm = 9;
  c.stream_prefetch_bf16 = -1;
  const CostParams clamped = ClampPrices(c);
  EXPECT_EQ(clamped.stream_prefetch_zmm, kStreamPrefetchInherit);
  EXPECT_EQ(clamped.stream_prefetch_bf16, 0);
}

// The L3 budget is the prices' share of the per-core L3, set with them.
TEST(TargetPricesTest, L3BudgetIsThePricesShare) {
  Target t = Target::Avx2({.l1d = 32 << 10, .l2 = 512 << 10, .l3 = 16 << 20});
  EXPECT_EQ(t.l3_lines, (16 << 20) / 64 * 3 / 4);
  CostParams quarter;
  quarter.l3_share_pct = 25;
  t.SetPrices(quarter);
  EXPECT_EQ(t.l3_lines, (16 << 20) / 64 / 4);
  EXPECT_EQ(CostParamsText(t.cost), CostParamsText(quarter));
  t.SetPrices(CostParams{});
  EXPECT_EQ(t.l3_lines, (16 << 20) / 64 * 3 / 4);
  const PriceTable* zen3 = FindShipped("zen3-epyc-vm");
  ASSERT_NE(zen3, nullptr);
  EXPECT_EQ(zen3->cost.l3_share_pct, 25);
  EXPECT_EQ(ClampPrices(CostParams{.l3_share_pct = 0}).l3_share_pct, 1);
  EXPECT_EQ(ClampPrices(CostParams{.l3_share_pct = 400}).l3_share_pct, 100);
}

// The L2 budget likewise: three quarters by default, the prices' share when
// they set one, rounded down onto the budget grid; left out of the text at
// the default.
TEST(TargetPricesTest, L2BudgetIsThePricesShare) {
  Target t = Target::Avx512({.l1d = 48 << 10, .l2 = 2 << 20, .l3 = 32 << 20});
  EXPECT_EQ(t.l2_lines, (2 << 20) / 64 * 3 / 4);
  CostParams half;
  half.l2_share_pct = 50;
  t.SetPrices(half);
  EXPECT_EQ(t.l2_lines, (2 << 20) / 64 / 2);
  EXPECT_EQ(t.MaxBudget().l2_lines, t.l2_lines);
  EXPECT_THAT(CostParamsText(half), HasSubstr(" l2_share_pct=50"));
  EXPECT_THAT(CostParamsText(CostParams{}), Not(HasSubstr("l2_share")));
  t.SetPrices(CostParams{});
  EXPECT_EQ(t.l2_lines, (2 << 20) / 64 * 3 / 4);
  EXPECT_EQ(ClampPrices(CostParams{.l2_share_pct = 0}).l2_share_pct, 1);
  EXPECT_EQ(ClampPrices(CostParams{.l2_share_pct = 400}).l2_share_pct, 100);
}

// A load beside FMAs costs what the table says where that is more than a
// load, and a load where not (0, or no more: clamped to 0).
TEST(TargetPricesTest, LoadsBesideFmasCostAtLeastALoad) {
  CostParams beside;
  beside.load = 2;
  beside.load_beside_fma = 3;
  Target avx2 = Target::Avx2({});
  avx2.SetPrices(beside);
  EXPECT_EQ(avx2.LoadPrice(), 2);
  EXPECT_EQ(avx2.BroadcastLoadPrice(), 3);
  avx2.SetPrices(CostParams{});
  EXPECT_EQ(avx2.BroadcastLoadPrice(), avx2.LoadPrice());
  EXPECT_THAT(CostParamsText(beside), HasSubstr(" load_beside_fma=3"));
  EXPECT_THAT(CostParamsText(CostParams{}), Not(HasSubstr("beside")));
  CostParams same = beside;
  same.load_beside_fma = 2;
  EXPECT_EQ(ClampPrices(same).load_beside_fma, 0);
  EXPECT_EQ(ClampPrices(beside).load_beside_fma, 3);
  // Measured with ymm: an AVX-512 target keeps its zmm load price.
  Target avx512 = Target::Avx512({});
  beside.load_zmm = 3;
  beside.load_beside_fma = 5;
  avx512.SetPrices(beside);
  EXPECT_EQ(avx512.BroadcastLoadPrice(), avx512.LoadPrice());
  EXPECT_EQ(avx512.BroadcastLoadPrice(), 3);
}

// A view from L2 into L1 beside zmm kernels streams at the table's share of
// L2's rate; beside ymm kernels at all of it.
TEST(TargetPricesTest, L2OverlapShareAppliesToAvx512Targets) {
  CostParams share;
  share.l2_overlap_pct_zmm = 50;
  Target avx512 = Target::Avx512({});
  avx512.SetPrices(share);
  EXPECT_EQ(avx512.OverlappedL2(130), 260);
  Target avx2 = Target::Avx2({});
  avx2.SetPrices(share);
  EXPECT_EQ(avx2.OverlappedL2(130), 130);
  CostParams all;
  all.l2_overlap_pct_zmm = 100;
  avx512.SetPrices(all);
  EXPECT_EQ(avx512.OverlappedL2(130), 130);
  EXPECT_THAT(CostParamsText(share), HasSubstr(" l2_overlap_pct_zmm=50"));
  EXPECT_THAT(CostParamsText(CostParams{}), Not(HasSubstr("overlap")));
  CostParams low, high;
  low.l2_overlap_pct_zmm = 0;
  high.l2_overlap_pct_zmm = 300;
  EXPECT_EQ(ClampPrices(low).l2_overlap_pct_zmm, 10);
  EXPECT_EQ(ClampPrices(high).l2_overlap_pct_zmm, 100);
  const PriceTable* zen4 = FindShipped("zen4-epyc-vm");
  ASSERT_NE(zen4, nullptr);
  EXPECT_LT(zen4->cost.l2_overlap_pct_zmm, 100);
}

// An AVX-512 target prices its vector instructions at the zmm prices where
// the table has them; an AVX2 target, and a table without them, at the ymm
// ones.
TEST(TargetPricesTest, ZmmPricesApplyToAvx512Targets) {
  CostParams halves;  // Zen 4: each zmm op is two ymm halves
  halves.fma_zmm = 2 * halves.fma;
  halves.load_zmm = 2 * halves.load;
  halves.store_zmm = 4 * halves.store;
  Target avx512 = Target::Avx512({});
  avx512.SetPrices(halves);
  EXPECT_EQ(avx512.FmaPrice(), 2 * halves.fma);
  EXPECT_EQ(avx512.LoadPrice(), 2 * halves.load);
  EXPECT_EQ(avx512.StorePrice(), 4 * halves.store);
  Target avx2 = Target::Avx2({});
  avx2.SetPrices(halves);
  EXPECT_EQ(avx2.FmaPrice(), halves.fma);
  EXPECT_EQ(avx2.StorePrice(), halves.store);
  Target same = Target::Avx512({});
  same.SetPrices(CostParams{});
  EXPECT_EQ(same.FmaPrice(), CostParams{}.fma);
  // The zmm prices are part of the table's hash, and so of the fingerprint.
  EXPECT_NE(avx512.Fingerprint(), same.Fingerprint());
  EXPECT_THAT(CostParamsText(CostParams{}), Not(HasSubstr("zmm")));
  // A zmm price at or under its ymm price means the same as none.
  CostParams cheap;
  cheap.fma_zmm = cheap.fma;
  cheap.load_zmm = 1;
  EXPECT_EQ(ClampPrices(cheap).fma_zmm, 0);
  EXPECT_EQ(ClampPrices(cheap).load_zmm, 0);
  EXPECT_EQ(ClampPrices(halves).store_zmm, halves.store_zmm);
  // The Zen 4 table has them; Zen 5 runs zmm at the ymm rate.
  const PriceTable* zen4 = FindShipped("zen4-epyc-vm");
  const PriceTable* zen5 = FindShipped("zen5-epyc-vm");
  ASSERT_NE(zen4, nullptr);
  ASSERT_NE(zen5, nullptr);
  EXPECT_GT(zen4->cost.fma_zmm, zen4->cost.fma);
  EXPECT_EQ(zen5->cost.fma_zmm, 0);
}

}  // namespace
}  // namespace amarena
