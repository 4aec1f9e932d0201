// Where a plain tile's rows start in an L1 way (Layout::WayOffset), and the
// lines it puts on each set (Layout::Dense): what decides whether a tall
// view of a matrix is priced dense or strided.
#include <cstdint>

#include "core/layout.h"
#include "gtest/gtest.h"

namespace amarena {
namespace {

constexpr Order kRow = Order::kRowMajor;
constexpr Order kCol = Order::kColMajor;

TEST(LayoutTest, WayOffsetFollowsThePitch) {
  // A matrix's own pitch (its leading dimension, or its row) modulo 4 KiB,
  // kept by tiles.
  EXPECT_EQ(Layout(kRow).WayOffset(64, 128, 4), 512);
  EXPECT_EQ(Layout(kRow).WithLd(1024).WayOffset(64, 128, 4), 0);
  EXPECT_EQ(Layout(kRow).WithLd(2051).WayOffset(64, 128, 4), 12);
  EXPECT_EQ(Layout(kCol).WayOffset(128, 64, 4), 512);
  EXPECT_EQ(Layout(kRow).WithLd(2049).WayOffset(4, 8, 2), 2);
  const Layout tile = Layout(kRow).AsTileOf(64, 128, 4);
  EXPECT_EQ(tile.WayOffset(64, 64, 4), 512);
  EXPECT_EQ(tile.AsTileOf(64, 64, 4), tile);  // a tile of a tile: the same
  EXPECT_EQ(Layout(kRow).WithLd(1024).AsTileOf(64, 128, 4).ld(), 0);
  EXPECT_EQ(Layout::Panels(kRow, 16).AsTileOf(64, 128, 4),
            Layout::Panels(kRow, 16));
}

TEST(LayoutTest, DenseCountsTheLinesOnEachSet) {
  // At a pitch of whole ways every row starts on one set: 8 rows fit, 9 not.
  EXPECT_TRUE(Layout(kRow).WithLd(1024).Dense(8, 16, 4));
  EXPECT_FALSE(Layout(kRow).WithLd(1024).Dense(9, 16, 4));
  // 512 B apart: 8 starts, 8 sets apart, so 64 rows of 8 lines fill every
  // set 8 times; a ninth line a row, or a 65th row, is one too many.
  EXPECT_TRUE(Layout(kRow).Dense(64, 128, 4));
  EXPECT_FALSE(Layout(kRow).WithLd(128).Dense(64, 129, 4));
  EXPECT_FALSE(Layout(kRow).Dense(65, 128, 4));
  // 2051 floats (4 KiB + 12 B, 8 KiB + 12 B): the rows drift a line every 5
  // or 6 rows, so 12 rows of 1 KiB put 12 lines on the sets they share,
  // although 2051 is odd (59 of 192 lines beyond 8 on their sets), and 9
  // rows of 256 B 3 of 36; rows of one line drift off a set before more
  // than 6 share it.
  for (int64_t ld : {1027, 2051}) {
    EXPECT_FALSE(Layout(kRow).WithLd(ld).Dense(12, 256, 4)) << ld;
    EXPECT_FALSE(Layout(kRow).WithLd(ld).Dense(9, 64, 4)) << ld;
    EXPECT_TRUE(Layout(kRow).WithLd(ld).Dense(9, 16, 4)) << ld;
    EXPECT_TRUE(Layout(kRow).WithLd(ld).Dense(48, 16, 4)) << ld;
  }
  // A line and 4 B past a way (1041 floats): each row's 16 lines start a
  // set after the last's, so the 12 rows share sets 11 to 15. 1169 floats
  // (580 B past a way) start 9 sets apart: 12 rows of 1 KiB spread.
  EXPECT_FALSE(Layout(kRow).WithLd(1041).Dense(12, 256, 4));
  EXPECT_TRUE(Layout(kRow).WithLd(1169).Dense(12, 256, 4));
  // A tile keeps its matrix's offset; more lines than 8 a set in all never
  // fit.
  EXPECT_FALSE(Layout(kRow).WithLd(2051).AsTileOf(49, 2048, 4).Dense(
      12, 256, 4));
  EXPECT_FALSE(Layout(kRow).Dense(64, 1024, 4));
}

TEST(LayoutTest, DenseWhenTheRowsFitTheSets) {
  // At a 4 KiB pitch every row starts on one set: at most kDenseRows rows.
  const Layout far = Layout(kRow).WithLd(1024);
  EXPECT_TRUE(far.Dense(8, 1000, 4));
  EXPECT_FALSE(far.Dense(9, 1000, 4));
  EXPECT_FALSE(far.AsTileOf(64, 1024, 4).Dense(64, 64, 4));
  // At 512 B rows start on 8 sets, 8 apart: 64 rows of up to 8 lines fill
  // each set 8 times, 72 rows 9 times.
  const Layout near = Layout(kRow).AsTileOf(64, 128, 4);
  EXPECT_TRUE(near.Dense(64, 64, 4));
  EXPECT_TRUE(near.Dense(64, 128, 4));
  EXPECT_FALSE(near.Dense(72, 64, 4));
  // An odd pitch spreads the rows over every set, unevenly: 64 rows of 400
  // B put 9 lines on 4 sets, few enough of their 448 (at most a sixteenth
  // may overflow); 1329 floats, 128 rows of 256 B 14 of 512.
  const Layout odd = Layout(kRow).AsTileOf(100, 100, 4);  // 400 B
  EXPECT_TRUE(odd.Dense(64, 100, 4));
  EXPECT_TRUE(Layout(kRow).WithLd(1329).Dense(128, 64, 4));
  EXPECT_TRUE(odd.Dense(512, 1, 4));
  EXPECT_FALSE(odd.Dense(100, 100, 4));                   // 100 x 7 lines
  // Column-major: the columns are the outer rows.
  EXPECT_TRUE(Layout(kCol).AsTileOf(128, 64, 4).Dense(64, 64, 4));
}

TEST(LayoutTest, WayOffsetText) {
  const Layout l = Layout(kCol).WithWayOffset(12);
  EXPECT_EQ(l.Text(), "col,way12");
  EXPECT_EQ(Layout(kRow).WithWayOffset(0).Text(), "way0");
  EXPECT_EQ(Layout::ParseWayOffset("way12").value(), 12);
  EXPECT_EQ(Layout::ParseWayOffset("way4094").value(), 4094);
  EXPECT_FALSE(Layout::ParseWayOffset("way3").ok());
  EXPECT_FALSE(Layout::ParseWayOffset("way4096").ok());
  EXPECT_FALSE(Layout::ParseWayOffset("wayx").ok());
  EXPECT_FALSE(Layout::ParseWayOffset("way-2").ok());
  // Canonical: a tile of few enough rows is dense at any pitch.
  EXPECT_EQ(Layout(kRow).WithWayOffset(12).Canonical(8, 64, 4), Layout(kRow));
  EXPECT_EQ(Layout(kRow).WithWayOffset(12).Canonical(9, 64, 4).Text(),
            "way12");
}

}  // namespace
}  // namespace amarena
