// The moves (search/rewrites/moves.cc): an L1 view is offered only for a
// tile whose rows do not crowd more lines into an L1 set than
// Layout::kDenseRows, which would evict each other on every pass; where a
// tile is worth placing (Target::WorthPlacing) limits what is offered, not
// what an action applied may do.
#include <string>

#include "search/rewrites/registry.h"

#include "gtest/gtest.h"
#include "tests/search/rewrites/offered.h"

namespace amarena {
namespace {

using ::amarena::testing::Offered;

bool OffersL1ViewOfA(const std::string& text, const Target& t) {
  for (const std::string& d : Offered(text, t))
    if (d.rfind("view 0 l1", 0) == 0) return true;
  return false;
}

TEST(ViewTest, RowsThatCrowdAnL1SetAreNoL1View) {
  const Target t = Target::Avx512(
      CacheSizes{.l1d = 48 << 10, .l2 = 2 << 20, .l3 = 32 << 20});
  // A's rows 8 KiB apart start on one set: 8 rows fill each set they use
  // with 8 lines, 9 or 16 with more.
  EXPECT_TRUE(OffersL1ViewOfA("matmul 8x64x16 f32 lda=2048 serial", t));
  EXPECT_FALSE(OffersL1ViewOfA("matmul 9x64x16 f32 lda=2048 serial", t));
  EXPECT_FALSE(OffersL1ViewOfA("matmul 16x64x16 f32 lda=2048 serial", t));
  // Rows 260 bytes apart spread over every set: 16 of them are a view.
  EXPECT_TRUE(OffersL1ViewOfA("matmul 16x64x16 f32 lda=65 serial", t));
  // A view into L2 is still offered for crowded rows (a tile large enough
  // to be worth placing there: 16 rows of 4 KiB).
  bool l2 = false;
  for (const std::string& d :
       Offered("matmul 16x1024x16 f32 lda=2048 serial", t))
    l2 = l2 || d.rfind("view 0 l2", 0) == 0;
  EXPECT_TRUE(l2);
}

// A k remainder that follows its body re-applies the body's placements: a
// B of 145x512 fits L2, so packing it into L3 is not offered, but the
// action still applies (and replays), as it does to the 1024-row body.
TEST(PackTest, PlacementsNotOfferedStillApply) {
  const Target t = Target::Avx2(
      CacheSizes{.l1d = 32 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  const std::string small = "matmul 256x145x512 f32 serial";
  const std::string large = "matmul 256x1024x512 f32 serial";
  EXPECT_EQ(Offered(small, t).count("pack 1 l3 p16"), 0u);
  EXPECT_EQ(Offered(large, t).count("pack 1 l3 p16"), 1u);
  EXPECT_EQ(Offered(small, t).count("pack 1 l2 p16"), 1u);
  absl::StatusOr<Action> pack = ParseAction("pack 1 l3 p16");
  ASSERT_TRUE(pack.ok());
  absl::StatusOr<Spec> s = ParseSpec(small);
  ASSERT_TRUE(s.ok());
  absl::StatusOr<Candidate> c = ApplyAction(t.Bind(*s), *pack, t);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->expansion.children.size(), 2u);
  // The same for a view of C in L2 where its 16 lines would fit L1.
  absl::StatusOr<Action> view = ParseAction("view 2 l2");
  ASSERT_TRUE(view.ok());
  const std::string tiny = "matmul 4x64x64 f32 serial";
  EXPECT_EQ(Offered(tiny, t).count("view 2 l2"), 0u);
  absl::StatusOr<Spec> v = ParseSpec(tiny);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(ApplyAction(t.Bind(*v), *view, t).ok());
  // What is not valid still does not apply: no view into L3.
  absl::StatusOr<Action> l3 = ParseAction("view 2 l3");
  ASSERT_TRUE(l3.ok());
  EXPECT_FALSE(ApplyAction(t.Bind(*v), *l3, t).ok());
}

}  // namespace
}  // namespace amarena
