// The moves (search/rewrites/moves.cc): an L1 view is offered only for a
// tile whose rows do not crowd more lines into an L1 set than
// Layout::kDenseRows, which would evict each other on every pass.
#include <string>

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

}  // namespace
}  // namespace amarena
