// Tests for core/price_table.h: text and JSON round trips and their errors,
// the clamp that keeps the search's price orders, settling onto a standing
// table, the nearest-table rule on synthetic CPU identities, and the prices'
// part in the target fingerprint (how a target applies them:
// target_prices_test.cc).
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
