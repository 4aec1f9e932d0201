// A and C tiles whose rows all start on one L1 set (core/cost_model.cc,
// SharedSets; Layout::RowsOnOneSet): what a C view into L1 pays for the lines
// its rows, A's rows and B's lines crowd onto those sets beyond the ways, and
// the row tiles that leads a small product at 16 KiB pitches to.
#include <algorithm>

#include "core/cost_model.h"
#include "core/price_table.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"
#include "search/search.h"
#include "tests/testing/cost_probe.h"
#include "tests/testing/impl_walk.h"

namespace amarena {
namespace {

constexpr Order kRow = Order::kRowMajor;

Target Zen4Avx512() { return testing::Zen4Target(Isa::kAvx512); }

TEST(CostSetsTest, RowsOnOneSetAreThoseOfAPitchOfWholeWays) {
  // A 4 KiB pitch (1024 floats), 16 KiB, and a tile of such a matrix.
  EXPECT_EQ(Layout(kRow).RowsOnOneSet(6, 1024, 4), 6);
  EXPECT_EQ(Layout(kRow).WithLd(4096).RowsOnOneSet(6, 64, 4), 6);
  EXPECT_EQ(Layout(kRow).WithWayOffset(0).RowsOnOneSet(6, 64, 4), 6);
  // One row, a pitch of 2 KiB (two starts), 256 B, an odd one, panels.
  EXPECT_EQ(Layout(kRow).WithLd(4096).RowsOnOneSet(1, 64, 4), 0);
  EXPECT_EQ(Layout(kRow).WithLd(512).RowsOnOneSet(6, 64, 4), 0);
  EXPECT_EQ(Layout(kRow).RowsOnOneSet(6, 64, 4), 0);
  EXPECT_EQ(Layout(kRow).WithLd(1031).RowsOnOneSet(6, 64, 4), 0);
  EXPECT_EQ(Layout::Panels(kRow, 32).RowsOnOneSet(64, 64, 4), 0);
}

TEST(CostSetsTest, ASmallTileKeepsOnlyWhetherItsRowsShareOneSet) {
  // Asked to (A's and C's tiles): stored where its own pitch says otherwise,
  // either way.
  const Layout one_set = Layout(kRow).WithWayOffset(0);
  const Layout all_sets = Layout(kRow).WithWayOffset(64);
  EXPECT_EQ(one_set.Canonical(6, 64, 4, true).Text(), "way0");
  EXPECT_EQ(all_sets.Canonical(6, 1024, 4, true).Text(), "way64");
  // Any offset but 0 says the same of so short a tile: one line.
  EXPECT_EQ(Layout(kRow).WithWayOffset(12).Canonical(6, 1024, 4, true),
            all_sets.Canonical(6, 1024, 4, true));
  // Not where it agrees, nor where neither is one set, nor for one row.
  EXPECT_EQ(one_set.Canonical(6, 1024, 4, true), Layout(kRow));
  EXPECT_EQ(all_sets.Canonical(6, 64, 4, true), Layout(kRow));
  EXPECT_EQ(one_set.Canonical(1, 64, 4, true), Layout(kRow));
  // Not asked to (B's tiles): no offset at all.
  EXPECT_EQ(one_set.Canonical(6, 64, 4), Layout(kRow));
  // A Spec's A and C tiles of 6 rows keep it, B's does not; the dense Spec's
  // tiles have none.
  const Target t = Zen4Avx512();
  auto tile = [&](absl::string_view text) {
    Spec s = WithoutLds(t.Bind(*ParseSpec(text)));
    s.m = 6;
    s.k = 6;
    return Canonical(s);
  };
  const Spec strided = tile("matmul 64x64x64 f32 lda=4096 ldb=4096 ldc=4096");
  EXPECT_EQ(strided.Operand(0).RowsOnOneSet(), 6);
  EXPECT_EQ(strided.Operand(1).layout().way_code(), 0);
  EXPECT_EQ(strided.Operand(2).RowsOnOneSet(), 6);
  const Spec dense = tile("matmul 64x64x64 f32");
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(dense.Operand(i).RowsOnOneSet(), 0) << i;
}

TEST(CostSetsTest, ACViewPaysTheLinesItsSetsCannotHold) {
  const Target t = Zen4Avx512();
  const int64_t l2 = t.cost.line_shared_set_zmm;
  ASSERT_GT(l2, 0);
  auto view_c = [&](absl::string_view text) {
    return testing::AloneCost(t.Bind(*ParseSpec(text)), t, "view 2 l1");
  };
  // 6 rows of A and of C on one set, and B's 256 lines in L1 (4 a set): 16
  // lines where 8 fit, on each of the 4 sets a 64-float row covers.
  const int64_t crowded =
      view_c("matmul 6x64x64 f32 a=l1,way0 b=l1,p32 c=way0");
  const int64_t spread = view_c("matmul 6x64x64 f32 a=l1 b=l1,p32 c=way0");
  EXPECT_EQ(crowded - spread, 8 * 4 * l2);
  // A's rows spread over the sets (or C's): nothing more.
  EXPECT_EQ(view_c("matmul 6x64x64 f32 a=l1,way0 b=l1,p32"), spread);
  // 4 rows: 4 + 4 + 4; 2 rows: 2 + 2 + 4 fit the ways.
  EXPECT_EQ(view_c("matmul 4x64x64 f32 a=l1,way0 b=l1,p32 c=way0") -
                view_c("matmul 4x64x64 f32 a=l1 b=l1,p32 c=way0"),
            4 * 4 * l2);
  EXPECT_EQ(view_c("matmul 2x64x64 f32 a=l1,way0 b=l1,p32 c=way0"),
            view_c("matmul 2x64x64 f32 a=l1 b=l1,p32 c=way0"));
  // B in L2 leaves its lines out; A in L2 still passes through L1. A row of
  // 32 floats covers 2 sets.
  EXPECT_EQ(view_c("matmul 6x32x64 f32 a=l2,way0 b=l2,p32 c=way0") -
                view_c("matmul 6x32x64 f32 a=l2 b=l2,p32 c=way0"),
            4 * 2 * l2);
  // ymm kernels, and prices that measured none, pay nothing.
  Target avx2 = Target::Avx2({.l1d = 32 << 10, .l2 = 1 << 20, .l3 = 16 << 20});
  avx2.SetPrices(t.cost);
  Target unpriced = t;
  CostParams none = t.cost;
  none.line_shared_set_zmm = 0;
  unpriced.SetPrices(none);
  for (const Target* other : {&avx2, &unpriced}) {
    auto cost = [&](absl::string_view text) {
      return testing::AloneCost(other->Bind(*ParseSpec(text)), *other,
                                "view 2 l1");
    };
    EXPECT_EQ(cost("matmul 6x64x64 f32 a=l1,way0 b=l1,p32 c=way0"),
              cost("matmul 6x64x64 f32 a=l1 b=l1,p32 c=way0"));
  }
}

// The row tiles of a 64^3 product, dense and with every pitch 16 KiB: the
// dense one keeps its 6-row tiles, the strided one takes tiles of at most 4
// rows, whose lines fit their sets beside A's and B's.
TEST(CostSetsTest, SixteenKiBPitchesTakeShortRowTiles) {
  const Target t = Zen4Avx512();
  for (absl::string_view text : {"matmul 64x64x64 f32",
                                 "matmul 64x64x64 f32 lda=4096 ldb=4096 "
                                 "ldc=4096"}) {
    const Spec root = t.Bind(*ParseSpec(text));
    Searcher searcher(t);
    absl::StatusOr<ImplPtr> best = searcher.Solve(root);
    ASSERT_TRUE(best.ok()) << best.status();
    int64_t tallest = 0;
    testing::ForEachNode(**best, [&](const ImplNode& n) {
      if (n.how.type == NodeType::kAlloc &&
          n.how.alloc.kind == AllocKind::kRegisters)
        tallest = std::max(tallest, n.spec.m);
    });
    if (root.aux[0].layout.ld() == 0) {
      EXPECT_GE(tallest, 6) << PrintImpl(**best);
    } else {
      EXPECT_GE(tallest, 2) << PrintImpl(**best);
      EXPECT_LE(tallest, 4) << PrintImpl(**best);
    }
  }
}

}  // namespace
}  // namespace amarena
