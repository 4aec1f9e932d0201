// The cost model's code-size term (core/cost_model.h, RemainderCode): which
// loops pay for their remainder's code, that the charge depends on the Spec
// alone, and the trees it leads the search to (counted loops, not chains of
// unrolled remainders); and which views overlap the work below them
// (OverlapsWork).
#include "core/cost_model.h"

#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"
#include "search/search.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

Target Avx2() {
  return Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
}

bool MovesRegisters(const Spec& s, const LoopInfo& loop) {
  for (int i = 0; i < s.NumOperands(); ++i)
    if (OperandAxis(s, i, loop.dim) != Axis::kNone &&
        s.aux[i].level == Level::kVRF)
      return true;
  return false;
}

// Serial loops over memory with a remainder pay for it, the same whatever
// their children cost; other nodes pay nothing.
TEST(CostModelTest, OnlySerialMemoryLoopsWithARemainderPayForItsCode) {
  Target t = Avx2();
  t.workers = 2;
  int charged = 0, free = 0;
  std::vector<Spec> specs;
  for (const Spec& user : testing::RandomMatmuls(20, 100, /*seed=*/11))
    specs.push_back(t.Bind(user));
  specs.push_back(*ParseSpec("move 16x256 f32 dst=l3,p16"));
  specs.push_back(*ParseSpec("move 3x40 f32 src=l1 dst=vrf,v8"));
  for (const Spec& s : specs) {
    const Spec bound = s.budget ? s : t.Bind(s);
    for (const Candidate& c : EnumerateCandidates(bound, t)) {
      const Expansion& e = c.expansion;
      const int64_t code = RemainderCode(bound, e, t);
      const bool pays = e.type == NodeType::kLoop && e.children.size() == 2 &&
                        !e.loop.parallel && !MovesRegisters(bound, e.loop);
      EXPECT_EQ(code > 0, pays) << PrintSpec(bound);
      (pays ? charged : free) += 1;
      if (e.type != NodeType::kLoop) continue;
      // A constant: the same cost on top of cheap and of dear children.
      std::vector<Cost> cheap(e.children.size()), dear(e.children.size());
      for (Cost& k : dear) k.main = 1000;
      const int64_t extra_cheap = ComposeCost(bound, e, cheap, t).main;
      const int64_t extra_dear = ComposeCost(bound, e, dear, t).main;
      if (!e.loop.parallel) {
        const int64_t copies = e.loop.full_iters + (e.children.size() - 1);
        EXPECT_EQ(extra_dear - extra_cheap, 1000 * copies) << PrintSpec(bound);
      }
    }
  }
  EXPECT_GT(charged, 10);
  EXPECT_GT(free, 10);
}

// A view into L1 from L2 costs the larger of its traffic and its body; every
// other view adds its traffic to the body.
TEST(CostModelTest, OnlyViewsFromL2IntoL1OverlapTheirBody) {
  const Target t = Avx2();
  int overlapping = 0, adding = 0;
  for (const char* text :
       {"matmul 64x64x64 f32 a=l2 b=l2 c=l2", "matmul 64x64x64 f32 b=l3,p16",
        "matmul 64x64x64 f32"}) {
    const Spec s = t.Bind(*ParseSpec(text));
    for (const Candidate& c : EnumerateCandidates(s, t)) {
      const Expansion& e = c.expansion;
      if (e.type != NodeType::kAlloc || e.alloc.kind != AllocKind::kView)
        continue;
      std::vector<Cost> none(1), small(1), large(1);
      small[0].main = 1;
      large[0].main = int64_t{1} << 40;
      const int64_t traffic = ComposeCost(s, e, none, t).main;
      ASSERT_GT(traffic, 1) << PrintSpec(s);
      const Level from = s.aux[e.alloc.operand].level;
      if (OverlapsWork(from, e.alloc.to.level)) {
        ++overlapping;
        EXPECT_EQ(ComposeCost(s, e, small, t).main, traffic) << PrintSpec(s);
        EXPECT_EQ(ComposeCost(s, e, large, t).main, large[0].main);
      } else {
        ++adding;
        EXPECT_EQ(ComposeCost(s, e, small, t).main, traffic + 1)
            << PrintSpec(s);
        EXPECT_EQ(ComposeCost(s, e, large, t).main, traffic + large[0].main);
      }
    }
  }
  EXPECT_GT(overlapping, 0);
  EXPECT_GT(adding, 0);
}

// Beside zmm kernels an overlapping view's lines stream at the prices'
// share of L2's rate (CostParams::l2_overlap_pct_zmm): its traffic is
// divided by that share, and a body that takes longer still hides it.
TEST(CostModelTest, AnOverlappingViewBesideZmmKernelsGetsTheL2Share) {
  Target whole =
      Target::Avx512({.l1d = 32 << 10, .l2 = 1 << 20, .l3 = 16 << 20});
  CostParams all = whole.cost;
  all.l2_overlap_pct_zmm = 100;
  whole.SetPrices(all);
  Target half = whole;
  CostParams share = whole.cost;
  share.l2_overlap_pct_zmm = 50;
  half.SetPrices(share);
  const Spec s = whole.Bind(*ParseSpec("matmul 64x64x64 f32 a=l2 b=l2 c=l2"));
  int seen = 0;
  for (const Candidate& c : EnumerateCandidates(s, whole)) {
    const Expansion& e = c.expansion;
    if (e.type != NodeType::kAlloc || e.alloc.kind != AllocKind::kView ||
        !OverlapsWork(s.aux[e.alloc.operand].level, e.alloc.to.level))
      continue;
    ++seen;
    std::vector<Cost> none(1), large(1);
    large[0].main = int64_t{1} << 40;
    const int64_t traffic = ComposeCost(s, e, none, whole).main;
    EXPECT_EQ(ComposeCost(s, e, none, half).main, 2 * traffic) << PrintSpec(s);
    EXPECT_EQ(ComposeCost(s, e, large, half).main, large[0].main);
  }
  EXPECT_GT(seen, 0);
}

// Packing copies and zero fills too large for one kernel (more than
// kMaxUnrolledStores vectors) are counted loops without remainders, not a tile
// split 12 + 4, 8 + 4, ... into straight-line copies.
TEST(CostModelTest, PackingCopiesAreCountedLoops) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    Target t = Avx2();
    if (isa == Isa::kAvx512)
      t = Target::Avx512({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
    Searcher searcher(t);
    for (const char* text :
         {"move 16x256 f32 dst=l3,p16", "move 32x128 f32 dst=l2,p16",
          "zero 48x64 f32 out=l1"}) {
      absl::StatusOr<ImplPtr> best = searcher.Solve(t.Bind(*ParseSpec(text)));
      ASSERT_TRUE(best.ok()) << text << ": " << best.status();
      int counted = 0, remainders = 0;
      testing::ForEachNode(**best, [&](const ImplNode& n) {
        if (n.how.type != NodeType::kLoop) return;
        counted += !n.how.loop.unrolled;
        remainders += n.HasRemainder();
      });
      EXPECT_GE(counted, 1) << text << "\n" << PrintImpl(**best);
      EXPECT_EQ(remainders, 0) << text << "\n" << PrintImpl(**best);
    }
  }
}

// Where a tile may be placed (a rule of the space, Target::WorthPlacing): L1
// always; L2 from just over half of L1, so that an operand too large to
// share L1 with the others may sit in L2 while they use L1; L3 only beyond L2.
TEST(CostModelTest, TilesGoInL2FromHalfOfL1) {
  const Target t = Avx2();
  const int64_t l1 = t.Capacity(Level::kL1), l2 = t.Capacity(Level::kL2);
  EXPECT_TRUE(t.WorthPlacing(Level::kL1, 1));
  EXPECT_FALSE(t.WorthPlacing(Level::kL2, l1 / 2));
  EXPECT_TRUE(t.WorthPlacing(Level::kL2, l1 / 2 + 1));
  EXPECT_TRUE(t.WorthPlacing(Level::kL2, l2));
  EXPECT_FALSE(t.WorthPlacing(Level::kL3, l2));
  EXPECT_TRUE(t.WorthPlacing(Level::kL3, l2 + 1));
}

}  // namespace
}  // namespace amarena
