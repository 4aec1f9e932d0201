// The loops (search/rewrites/loops.cc): a batched matmul is offered only a
// loop over its batch (tiles of 1; on two or more workers, a parallel one at
// the root) and the moves of what its batch shares, and the body of the loop
// is the batch-1 matmul. A matmul one vector wide is not tiled along n but
// into single columns of a column-major B; one whose B is column-major far
// out is not tiled along m. A parallel loop is offered the even share.
#include <set>
#include <string>

#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"
#include "tests/search/rewrites/offered.h"

namespace amarena {
namespace {

using ::amarena::testing::Offered;

using ::testing::UnorderedElementsAre;

Target TwoWorkers() {
  Target t =
      Target::Avx2(CacheSizes{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  t.workers = 2;
  return t;
}

TEST(BatchLoopTest, ABatchIsOfferedOnlyItsLoops) {
  const Target t = TwoWorkers();
  // 7 on two workers: tiles of 1, 2 and 4 (ceil(7 / 2)) make at least two
  // tasks; nothing else applies to a batch of A, B and C of their own.
  EXPECT_THAT(Offered("matmul 7x13x64x64 f32", t),
              UnorderedElementsAre("tile b 1", "parallel tile b 1",
                                   "parallel tile b 2", "parallel tile b 4"));
  // Serial: no parallel loop.
  EXPECT_THAT(Offered("matmul 3x13x64x64 f32 serial", t),
              UnorderedElementsAre("tile b 1"));
}

TEST(BatchLoopTest, ASharedBMayBeMovedAboveTheLoop) {
  const Target t = TwoWorkers();
  const std::set<std::string> offered =
      Offered("matmul 4x13x256x256 f32 sb=0 serial", t);
  EXPECT_TRUE(offered.count("tile b 1"));
  int packs_of_b = 0;
  for (const std::string& d : offered) {
    EXPECT_TRUE(d == "tile b 1" || d.rfind("pack 1 ", 0) == 0 ||
                d.rfind("view 1 ", 0) == 0)
        << d;
    packs_of_b += d.rfind("pack 1 ", 0) == 0;
  }
  EXPECT_GT(packs_of_b, 0);
}

TEST(BatchLoopTest, TheBodyIsTheBatchOneMatmul) {
  const Target t = TwoWorkers();
  absl::StatusOr<Spec> s =
      ParseSpec("matmul 5x13x64x64 f32 lda=70 sb=0 sc=5000");
  ASSERT_TRUE(s.ok());
  const Spec bound = t.Bind(*s);
  int seen = 0;
  for (const Candidate& c : EnumerateCandidates(bound, t)) {
    const std::string d = Describe(c.action);
    seen += d == "tile b 1" || d == "parallel tile b 2";
    if (d == "tile b 1") {
      ASSERT_EQ(c.expansion.children.size(), 1u);
      const Spec& body = c.expansion.children[0];
      // No leading dimension; where each operand's rows start in an L1
      // way stays (A's rows 280 bytes apart, B's and C's 256), and that
      // A's start off 32-byte boundaries.
      EXPECT_EQ(PrintSpec(body).rfind(
                    "matmul 13x64x64 f32 a=way280,unaligned b=way256 "
                    "c=way256 serial budget=",
                    0),
                0u)
          << PrintSpec(body);
      EXPECT_EQ(c.expansion.loop.full_iters, 5);
    }
    if (d == "parallel tile b 2") {
      // Two full tiles of two and a remainder of one; the strides stay,
      // written out (A's came from its lda).
      ASSERT_EQ(c.expansion.children.size(), 2u);
      EXPECT_EQ(c.expansion.children[0].b, 2);
      EXPECT_EQ(c.expansion.children[1].b, 1);
      EXPECT_EQ(c.expansion.children[0].BatchStride(0), 13 * 70);
      EXPECT_EQ(c.expansion.children[0].BatchStride(1), 0);
      EXPECT_EQ(c.expansion.children[0].BatchStride(2), 5000);
      EXPECT_TRUE(c.expansion.children[0].serial);
    }
  }
  EXPECT_EQ(seen, 2);
}

// The tiles along a dimension offered to a matmul, as "tile n N"
// descriptors.
std::set<std::string> TilesAlong(const char* prefix, const char* spec,
                                 const Target& t) {
  std::set<std::string> tiles;
  for (const std::string& d : Offered(spec, t))
    if (d.rfind(prefix, 0) == 0) tiles.insert(d);
  return tiles;
}
std::set<std::string> TilesAlongN(const char* spec, const Target& t) {
  return TilesAlong("tile n ", spec, t);
}

TEST(NarrowTileTest, OneVectorWideIsNotTiledAlongN) {
  const Target t = TwoWorkers();  // AVX2: 8 f32 lanes
  // Five columns are one (masked) vector a row: 4 + 1 or 2 + 2 + 1 would
  // only repeat the row's instructions.
  EXPECT_THAT(TilesAlongN("matmul 6x64x5 f32 serial", t), ::testing::IsEmpty());
  EXPECT_THAT(TilesAlongN("matmul 6x64x8 f32 accum serial", t),
              ::testing::IsEmpty());
  // A column-major B: single columns remain (a dot product each).
  EXPECT_THAT(TilesAlongN("matmul 6x64x5 f32 b=col serial", t),
              UnorderedElementsAre("tile n 1"));
  // A column-major C (vectors run down its columns) and a B in panels of 8
  // (whose vectors may not straddle a panel) keep their tiles.
  EXPECT_THAT(TilesAlongN("matmul 6x64x5 f32 c=col serial", t),
              UnorderedElementsAre("tile n 1", "tile n 2", "tile n 4"));
  EXPECT_THAT(TilesAlongN("matmul 6x64x16 f32 b=p8 serial", Target::Avx512({})),
              UnorderedElementsAre("tile n 8"));
  // Wider than a vector: tiles as before.
  EXPECT_THAT(
      TilesAlongN("matmul 6x64x9 f32 serial", t),
      UnorderedElementsAre("tile n 1", "tile n 2", "tile n 4", "tile n 8"));
}

// A parallel loop is also offered the even share of its extent: one task a
// worker, rounded up to two vectors along n.
TEST(ParallelTileTest, TheEvenShareMakesOneTaskAWorker) {
  const Target t = TwoWorkers();  // AVX2: 8 f32 lanes
  // 143 rows: 72 and 71, where 64 makes three tasks (two rounds).
  EXPECT_THAT(TilesAlong("parallel tile m ", "matmul 143x64x64 f32", t),
              ::testing::Contains("parallel tile m 72"));
  // 796 columns: half is 398, rounded up to 16 columns.
  EXPECT_THAT(TilesAlong("parallel tile n ", "matmul 17x64x796 f32", t),
              ::testing::Contains("parallel tile n 400"));
  // 255 rows: 128 and 127 (128 is a size, but one full tile of it is too
  // few for the powers-of-two loop).
  EXPECT_THAT(TilesAlong("parallel tile m ", "matmul 255x64x64 f32", t),
              ::testing::Contains("parallel tile m 128"));
  // Where the share is a power of two it is offered once; serial, never.
  EXPECT_THAT(TilesAlong("parallel tile m ", "matmul 128x64x64 f32", t),
              UnorderedElementsAre("parallel tile m 1", "parallel tile m 2",
                                   "parallel tile m 3", "parallel tile m 4",
                                   "parallel tile m 6", "parallel tile m 8",
                                   "parallel tile m 12", "parallel tile m 16",
                                   "parallel tile m 32", "parallel tile m 64"));
  EXPECT_THAT(TilesAlong("parallel tile m ", "matmul 143x64x64 f32 serial", t),
              ::testing::IsEmpty());
}

TEST(PackBeforeTilingRowsTest, AColumnMajorBFarOutIsNotTiledAlongM) {
  const Target t = TwoWorkers();
  // B column-major in GL or L3: no tiles of rows, at any m.
  EXPECT_THAT(TilesAlong("tile m ", "matmul 256x64x64 f32 b=col serial", t),
              ::testing::IsEmpty());
  EXPECT_THAT(TilesAlong("tile m ", "matmul 24x64x64 f32 b=col serial", t),
              ::testing::IsEmpty());
  // In L2, only above 64 rows: a few rows may read B by dot products.
  EXPECT_THAT(TilesAlong("tile m ", "matmul 96x64x64 f32 b=l2,col serial", t),
              ::testing::IsEmpty());
  EXPECT_THAT(TilesAlong("tile m ", "matmul 24x64x64 f32 b=l2,col serial", t),
              ::testing::Contains("tile m 8"));
  // Row-major or packed B, or a column-major one in L1: tiled as before.
  for (const char* spec :
       {"matmul 256x64x64 f32 serial", "matmul 256x64x64 f32 b=p16 serial",
        "matmul 24x64x64 f32 b=l1,col serial"})
    EXPECT_THAT(TilesAlong("tile m ", spec, t), ::testing::Contains("tile m 8"))
        << spec;
  // A stored or hand-written tree may still tile there.
  absl::StatusOr<Spec> s = ParseSpec("matmul 256x64x64 f32 b=col serial");
  ASSERT_TRUE(s.ok());
  absl::StatusOr<Action> a = ParseAction("tile m 64");
  ASSERT_TRUE(a.ok());
  absl::StatusOr<Candidate> c = ApplyAction(t.Bind(*s), *a, t);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->expansion.children[0].m, 64);
}

}  // namespace
}  // namespace amarena
