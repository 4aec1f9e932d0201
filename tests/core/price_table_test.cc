// Tests for core/price_table.h: text and JSON round trips and their errors,
// the clamp that keeps the search's price orders, the nearest-table rule on
// synthetic CPU identities, and the prices' part in the target fingerprint.
#include "core/price_table.h"

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace amarena {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kGL = static_cast<int>(Level::kGL);
constexpr int kL3 = static_cast<int>(Level::kL3);
constexpr int kL2 = static_cast<int>(Level::kL2);

PriceTable Sample() {
  PriceTable t;
  t.label = "sample";
  t.cpu = {.vendor = "GenuineIntel",
           .family = 6,
           .model = 143,
           .name = "Intel(R) Xeon(R) Platinum 8480+ \"quoted\" \\ name",
           .l1d_bytes = 48 << 10,
           .l2_bytes = 2 << 20,
           .l3_bytes = 105 << 20};
  // Every price differs from the defaults, so a field read into the wrong
  // place shows.
  int64_t v = 11;
  t.cost.fma = v++;
  t.cost.load = v++;
  t.cost.store = v++;
  t.cost.loop_iteration = v++;
  t.cost.loop_iteration_stack = v++;
  t.cost.parallel_setup = 123456;
  t.cost.line_dense = {71, 31, 21, 0, 0};
  t.cost.line_strided = {171, 131, 121, 0, 0};
  t.cost.dram_run_bytes = 768;
  t.cost.dram_streams = 3;
  t.cost.line_gl_adjacent_panels = 75;
  t.cost.line_gl_far_panels = 65;
  t.cost.l3_share_pct = 40;
  t.cost.fma_zmm = 22;
  t.cost.load_zmm = 24;
  t.cost.store_zmm = 26;
  t.cost.load_beside_fma = 25;
  t.cost.stream_prefetch = 0;
  t.cost.stream_prefetch_zmm = kStreamPrefetchL2;
  t.cost.stream_prefetch_bf16 = 1;
  t.cost.panel_prefetch_bytes = 512;
  t.cost.l2_overlap_pct_zmm = 70;
  return t;
}

TEST(PriceTableTest, TextRoundTrips) {
  PriceTable t = Sample();
  std::string text = PricesToText(t);
  absl::StatusOr<PriceTable> back = PricesFromText(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
  EXPECT_EQ(PricesToText(*back), text);
  for (const PriceTable& shipped : ShippedPriceTables()) {
    absl::StatusOr<PriceTable> s = PricesFromText(PricesToText(shipped));
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(*s, shipped);
  }
}

TEST(PriceTableTest, JsonRoundTrips) {
  PriceTable t = Sample();
  std::string json = PricesToJson(t);
  absl::StatusOr<PriceTable> back = PricesFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status() << " in " << json;
  EXPECT_EQ(*back, t);
  EXPECT_EQ(back->cpu.name, t.cpu.name);
  // Whitespace between tokens is allowed.
  std::string spaced = absl::StrReplaceAll(json, {{",", " ,\n "}, {":", " : "}});
  absl::StatusOr<PriceTable> again = PricesFromJson(" " + spaced + "\n");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, t);
}

TEST(PriceTableTest, TextErrorsNameTheField) {
  std::string text = PricesToText(Sample());
  struct Case {
    std::string text;
    std::string wanted;
  };
  std::vector<Case> cases = {
      {absl::StrReplaceAll(text, {{"fma 11\n", ""}}), "'fma' is missing"},
      {text + "fma 11\n", "'fma' appears twice"},
      {text + "frobnicate 1\n", "'frobnicate' is unknown"},
      {absl::StrReplaceAll(text, {{"load 12", "load twelve"}}),
       "'load' is 'twelve', must be an integer"},
      {absl::StrReplaceAll(text, {{"store 13", "store -1"}}),
       "'store' is '-1', must be an integer from 0"},
      {absl::StrReplaceAll(text, {{"family 6", "family 99999"}}),
       "'family' is '99999'"},
      {"", "'label' is missing"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<PriceTable> t = PricesFromText(c.text);
    ASSERT_FALSE(t.ok()) << c.wanted;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(), HasSubstr(c.wanted));
  }
  // Comments and blank lines are fine.
  EXPECT_TRUE(PricesFromText("# a table\n\n" + text).ok());
  // A table stored before the L3 share, the zmm prices and the prefetch
  // switch were fields reads with the defaults.
  absl::StatusOr<PriceTable> old = PricesFromText(
      absl::StrReplaceAll(text, {{"l3_share_pct 40\n", ""},
                                 {"fma_zmm 22\n", ""},
                                 {"stream_prefetch 0\n", ""},
                                 {"stream_prefetch_zmm 2\n", ""},
                                 {"stream_prefetch_bf16 1\n", ""},
                                 {"panel_prefetch_bytes 512\n", ""},
                                 {"l2_overlap_pct_zmm 70\n", ""}}));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->cost.l3_share_pct, CostParams{}.l3_share_pct);
  EXPECT_EQ(old->cost.fma_zmm, 0);
  EXPECT_EQ(old->cost.stream_prefetch, CostParams{}.stream_prefetch);
  EXPECT_EQ(old->cost.stream_prefetch_zmm, kStreamPrefetchInherit);
  EXPECT_EQ(old->cost.stream_prefetch_bf16, kStreamPrefetchInherit);
  EXPECT_EQ(old->cost.panel_prefetch_bytes, 0);
  EXPECT_EQ(old->cost.l2_overlap_pct_zmm, CostParams{}.l2_overlap_pct_zmm);
}

// The stream prefetch fields refine one another: an f32 B under zmm kernels
// and a bf16 B under ymm kernels as stream_prefetch unless set, a bf16 B
// under zmm kernels as the bf16 field unless set; ClampPrices keeps them to
// the choices and kStreamPrefetchInherit.
TEST(PriceTableTest, StreamPrefetchFieldsRefineOneAnother) {
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
TEST(PriceTableTest, L3BudgetIsThePricesShare) {
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
TEST(PriceTableTest, L2BudgetIsThePricesShare) {
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
TEST(PriceTableTest, LoadsBesideFmasCostAtLeastALoad) {
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
TEST(PriceTableTest, L2OverlapShareAppliesToAvx512Targets) {
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
TEST(PriceTableTest, ZmmPricesApplyToAvx512Targets) {
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

TEST(PriceTableTest, JsonErrorsAreClear) {
  std::string json = PricesToJson(Sample());
  for (const std::string& bad :
       {std::string(""), std::string("[]"), json.substr(0, json.size() - 1),
        json + "x", absl::StrReplaceAll(json, {{"\"fma\":11", "\"fma\":1.5"}}),
        absl::StrReplaceAll(json, {{"\"fma\":11", "\"fma\":true"}}),
        absl::StrReplaceAll(json, {{"\"fma\":11", "\"fma\":\"11\""}}),
        absl::StrReplaceAll(json, {{"\"fma\":11,", ""}}),
        absl::StrReplaceAll(json, {{"\"label\":\"sample\"", "\"label\":5"}})}) {
    absl::StatusOr<PriceTable> t = PricesFromJson(bad);
    EXPECT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

// The orders docs/search.md's lower bound and memo rely on.
void ExpectOrdered(const CostParams& c) {
  for (const auto* p : {&c.line_dense, &c.line_strided}) {
    EXPECT_GE((*p)[kGL], (*p)[kL3]);
    EXPECT_GE((*p)[kL3], (*p)[kL2]);
    EXPECT_GE((*p)[kL2], 1);
  }
  for (int l : {kGL, kL3, kL2}) EXPECT_GE(c.line_strided[l], c.line_dense[l]);
  EXPECT_GE(c.line_gl_adjacent_panels, c.line_dense[kGL]);
  EXPECT_LE(c.line_gl_adjacent_panels, c.line_strided[kGL]);
  EXPECT_GE(c.line_gl_far_panels, c.line_dense[kL3]);
  EXPECT_LE(c.line_gl_far_panels, c.line_strided[kGL]);
  for (int64_t p : {c.fma, c.load, c.store, c.loop_iteration}) EXPECT_GE(p, 1);
  EXPECT_GE(c.loop_iteration_stack, c.loop_iteration);
  EXPECT_GE(c.dram_run_bytes, kLineBytes);
  EXPECT_GE(c.dram_streams, 1);
  for (int i = 0; i < CostParams::kDramRunSteps; ++i) {
    EXPECT_GE(c.line_gl_run[i], c.line_dense[kGL]);
    if (i > 0) {
      EXPECT_LE(c.line_gl_run[i], c.line_gl_run[i - 1]);
    }
  }
}

TEST(PriceTableTest, ClampRestoresTheOrdersAndKeepsOrderedTables) {
  for (const PriceTable& t : ShippedPriceTables()) {
    ExpectOrdered(t.cost);
    EXPECT_EQ(CostParamsText(ClampPrices(t.cost)), CostParamsText(t.cost))
        << t.label;
  }
  CostParams broken;
  broken.fma = 0;
  broken.loop_iteration_stack = 1;
  broken.line_dense = {10, 20, 30, 0, 0};    // inverted levels
  broken.line_strided = {5, 25, 0, 0, 0};    // below dense, L2 zero
  broken.line_gl_adjacent_panels = 1000;     // above strided
  broken.line_gl_far_panels = 0;
  broken.dram_run_bytes = 0;
  broken.dram_streams = 0;
  // Below dense, and a longer run dearer than a shorter one.
  broken.line_gl_run = {50, 10, 60, 40, 40, 40, 40, 40, 5};
  CostParams c = ClampPrices(broken);
  ExpectOrdered(c);
  // Raised, never lowered: each price is the least that keeps the orders.
  EXPECT_EQ(c.line_dense[kL2], 30);
  EXPECT_EQ(c.line_dense[kL3], 30);
  EXPECT_EQ(c.line_dense[kGL], 30);
  EXPECT_EQ(c.line_strided[kL2], 30);
  EXPECT_EQ(c.line_gl_adjacent_panels, c.line_strided[kGL]);
  EXPECT_EQ(c.fma, 1);
  // From the longest run down: each the least of dense GL and the price of
  // any longer run that keeps the order.
  EXPECT_EQ(c.line_gl_run[8], 30);
  EXPECT_EQ(c.line_gl_run[3], 40);
  EXPECT_EQ(c.line_gl_run[2], 60);
  EXPECT_EQ(c.line_gl_run[1], 60);
  EXPECT_EQ(c.line_gl_run[0], 60);
}

TEST(PriceTableTest, SettleKeepsPricesWithinNoiseOfTheStandingTable) {
  CostParams standing;
  standing.line_dense = {113, 47, 10, 0, 0};
  standing.line_gl_run = {380, 236, 189, 161, 161, 158, 140, 130, 114};
  standing.line_gl_band = {0, 117, 0, 128, 135, 151, 137};
  standing.fma_zmm = 0;
  CostParams measured = standing;
  measured.line_dense[kL2] = 9;       // one unit: a rounding's flip
  measured.line_dense[kL3] = 50;      // 6.4 %: noise
  measured.line_dense[kGL] = 123;     // 8.8 %: the host reads differently
  measured.line_gl_run[5] = 146;      // 7.6 % below: noise
  measured.line_gl_band[2] = 115;     // 0 stands for another price
  measured.line_gl_band[1] = 0;
  measured.fma_zmm = 1;
  // A choice one unit off is another choice.
  standing.stream_prefetch = 1;
  measured.stream_prefetch = kStreamPrefetchL2;
  std::vector<std::string> kept;
  const CostParams s = SettlePrices(measured, standing, 8, &kept);
  EXPECT_EQ(s.line_dense[kL2], 10);
  EXPECT_EQ(s.line_dense[kL3], 47);
  EXPECT_EQ(s.line_dense[kGL], 123);
  EXPECT_EQ(s.line_gl_run[5], 158);
  EXPECT_EQ(s.line_gl_band[2], 115);
  EXPECT_EQ(s.line_gl_band[1], 0);
  EXPECT_EQ(s.fma_zmm, 1);
  EXPECT_EQ(s.stream_prefetch, kStreamPrefetchL2);
  EXPECT_THAT(kept, ::testing::ElementsAre("line_dense_l3", "line_dense_l2",
                                           "line_gl_run_2048"));
  // Settling onto itself changes nothing, and a table measured within noise
  // of the standing one settles onto it exactly.
  EXPECT_EQ(CostParamsText(SettlePrices(standing, standing, 8)),
            CostParamsText(standing));
  CostParams near = standing;
  near.line_dense = {110, 49, 9, 0, 0};
  near.line_gl_run[8] = 120;
  EXPECT_EQ(CostParamsText(SettlePrices(near, standing, 8)),
            CostParamsText(standing));
}

PriceTable Synthetic(std::string label, std::string vendor, int family,
                     int model) {
  PriceTable t;
  t.label = std::move(label);
  t.cpu.vendor = std::move(vendor);
  t.cpu.family = family;
  t.cpu.model = model;
  return t;
}

TEST(PriceTableTest, NearestTablePrefersVendorThenFamilyThenModel) {
  const std::vector<PriceTable> tables = {
      Synthetic("amd-26-2", "AuthenticAMD", 26, 2),
      Synthetic("amd-25-17", "AuthenticAMD", 25, 17),
      Synthetic("amd-25-1", "AuthenticAMD", 25, 1),
      Synthetic("intel-6-143", "GenuineIntel", 6, 143),
      Synthetic("intel-6-85", "GenuineIntel", 6, 85),
  };
  auto nearest = [&](std::string vendor, int family, int model) {
    CpuIdentity id;
    id.vendor = std::move(vendor);
    id.family = family;
    id.model = model;
    ShippedMatch m = NearestShipped(id, tables);
    return std::make_pair(m.table->label, m.exact);
  };
  EXPECT_EQ(nearest("AuthenticAMD", 25, 17),
            std::make_pair(std::string("amd-25-17"), true));
  EXPECT_EQ(nearest("GenuineIntel", 6, 85),
            std::make_pair(std::string("intel-6-85"), true));
  // Same family, closest model.
  EXPECT_EQ(nearest("AuthenticAMD", 25, 4).first, "amd-25-1");
  EXPECT_EQ(nearest("AuthenticAMD", 25, 16).first, "amd-25-17");
  // Closest family before closest model.
  EXPECT_EQ(nearest("AuthenticAMD", 27, 17),
            std::make_pair(std::string("amd-26-2"), false));
  EXPECT_EQ(nearest("AuthenticAMD", 23, 49).first, "amd-25-17");
  EXPECT_EQ(nearest("GenuineIntel", 6, 207).first, "intel-6-143");
  // Same family and model of another vendor is no match; a vendor without
  // tables gets the first (the defaults).
  EXPECT_EQ(nearest("HygonGenuine", 25, 17),
            std::make_pair(std::string("amd-26-2"), false));
}

TEST(PriceTableTest, ShippedTablesHaveDistinctLabelsAndTheDefaultsFirst) {
  absl::Span<const PriceTable> shipped = ShippedPriceTables();
  ASSERT_GE(shipped.size(), 2u);
  EXPECT_EQ(CostParamsText(shipped.front().cost), CostParamsText(CostParams{}));
  for (size_t i = 0; i < shipped.size(); ++i) {
    EXPECT_EQ(FindShipped(shipped[i].label), &shipped[i]);
    EXPECT_FALSE(shipped[i].label.empty());
  }
  EXPECT_EQ(FindShipped("no-such-table"), nullptr);
}

TEST(PriceTableTest, FingerprintChangesWithEveryPrice) {
  const Target base = Target::Avx2({});
  const std::string fp = base.Fingerprint();
  EXPECT_THAT(fp, HasSubstr("-p" + PricesHash(base.cost)));
  EXPECT_EQ(Target::Avx2({}).Fingerprint(), fp);  // stable
  std::vector<std::string> seen = {fp};
  auto changed = [&](void (*change)(CostParams&)) {
    Target t = base;
    change(t.cost);
    std::string f = t.Fingerprint();
    for (const std::string& s : seen) EXPECT_NE(f, s);
    seen.push_back(f);
  };
  changed([](CostParams& c) { c.fma += 1; });
  changed([](CostParams& c) { c.load += 1; });
  changed([](CostParams& c) { c.store += 1; });
  changed([](CostParams& c) { c.line_dense[kGL] += 1; });
  changed([](CostParams& c) { c.line_strided[kL2] += 1; });
  changed([](CostParams& c) { c.dram_run_bytes += 64; });
  changed([](CostParams& c) { c.line_gl_run[4] += 1; });
  changed([](CostParams& c) { c.line_gl_far_panels += 1; });
  changed([](CostParams& c) { c.l3_share_pct = 50; });
  changed([](CostParams& c) { c.l2_share_pct = 50; });
  changed([](CostParams& c) { c.load_beside_fma = 9; });
  // Every shipped table has its own.
  for (const PriceTable& t : ShippedPriceTables()) {
    Target s = base;
    s.cost = t.cost;
    if (CostParamsText(t.cost) != CostParamsText(base.cost)) {
      EXPECT_NE(s.Fingerprint(), fp) << t.label;
    }
  }
}

TEST(PriceTableTest, HashIsFixedAcrossBuilds) {
  // FNV-1a of the text: the same in every process, so stored results stay
  // found. A change here means every stored result is searched again.
  EXPECT_EQ(PricesHash(CostParams{}), "4bd052c7");
  // A share of L3 other than the default is part of the text and the hash.
  CostParams quarter;
  quarter.l3_share_pct = 25;
  EXPECT_THAT(CostParamsText(quarter), HasSubstr(" l3_share_pct=25"));
  EXPECT_NE(PricesHash(quarter), PricesHash(CostParams{}));
  EXPECT_THAT(CostParamsText(CostParams{}),
              HasSubstr("fma=3 load=3 store=3 loop_iteration=2"));
}

}  // namespace
}  // namespace amarena
