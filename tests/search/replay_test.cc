// Stored decisions: action descriptors round-trip, replay rebuilds the
// searched tree exactly, and hostile decision text is an error, never a crash.
// Also the quick (greedy) search a deadline falls back to.
#include "search/replay.h"

#include <random>

#include "core/cost_model.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/action.h"
#include "search/greedy.h"
#include "search/rewrites/registry.h"
#include "search/search.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

Target Avx2() {
  return Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
}
Target Avx512() {
  return Target::Avx512({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
}

// Every Spec of a searched tree, with its candidates: the actions the
// rewrites really produce.
void CollectSpecs(const ImplNode& n, std::vector<Spec>& out) {
  out.push_back(n.spec);
  for (const ImplPtr& c : n.children) CollectSpecs(*c, out);
}

TEST(ActionTest, EveryCandidateRoundTripsThroughItsDescriptor) {
  int checked = 0;
  for (const Target& t : {Avx2(), Avx512()}) {
    Target two = t;
    two.workers = 2;  // parallel tiles too
    Searcher s(two);
    std::vector<Spec> specs;
    for (const char* text :
         {"matmul 64x64x64 f32", "matmul 513x200x300 f32 b=col",
          "matmul 1x2048x4096 f32 a=col c=col", "zero 17x33 f32"}) {
      absl::StatusOr<ImplPtr> impl = s.Solve(two.Bind(*ParseSpec(text)));
      ASSERT_TRUE(impl.ok()) << impl.status();
      CollectSpecs(**impl, specs);
    }
    for (const Spec& spec : specs) {
      for (const Candidate& c : EnumerateCandidates(spec, two)) {
        std::string d = Describe(c.action);
        absl::StatusOr<Action> back = ParseAction(d);
        ASSERT_TRUE(back.ok()) << d << ": " << back.status();
        EXPECT_EQ(*back, c.action) << d;
        EXPECT_EQ(Describe(ActionOf(c.expansion)), d) << PrintSpec(spec);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(ActionTest, MalformedDescriptorsAreErrors) {
  for (const char* bad : {"",
                          "tile",
                          "tile q 8",
                          "tile m",
                          "tile m -3",
                          "tile m 0",
                          "tile m 8 9",
                          "parallel m 8",
                          "split m 4",
                          "split k",
                          "to-accum 3",
                          "select",
                          "select no_such_kernel",
                          "view",
                          "view 3 l1",
                          "view 0 l9",
                          "pack 1 l2 p99999",
                          "regs 2 vrf vx",
                          "regs 2 vrf v16 extra",
                          "jump 4"}) {
    absl::StatusOr<Action> a = ParseAction(bad);
    EXPECT_FALSE(a.ok()) << "'" << bad << "' parsed as " << Describe(*a);
    if (!a.ok()) {
      EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

// bf16 with AVX-512 BF16: pair layouts (`p32x2`) in pack descriptors, the
// k-pair kernels in select ones, and the replayed tree equal to the searched
// one, for a plain B the search packs and a pre-packed pair B.
TEST(ReplayTest, PairLayoutsRoundTripAndReplay) {
  Target t = Avx512();
  t.bf16_dot = true;
  Searcher s(t);
  int pairs = 0;
  for (const char* text : {"matmul 16x100x200 bf16*bf16->f32",
                           "matmul 5x33x70 bf16*bf16->f32 b=p32x2"}) {
    const Spec bound = t.Bind(*ParseSpec(text));
    absl::StatusOr<ImplPtr> impl = s.Solve(bound);
    ASSERT_TRUE(impl.ok()) << impl.status();
    std::vector<Spec> specs;
    CollectSpecs(**impl, specs);
    for (const Spec& spec : specs)
      for (const Candidate& c : EnumerateCandidates(spec, t)) {
        const std::string d = Describe(c.action);
        absl::StatusOr<Action> back = ParseAction(d);
        ASSERT_TRUE(back.ok()) << d << ": " << back.status();
        EXPECT_EQ(*back, c.action) << d;
        pairs += c.action.to.layout.paired();
      }
    absl::StatusOr<ImplPtr> again = Replay(bound, EncodeDecisions(**impl), t);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(PrintImpl(**again), PrintImpl(**impl));
  }
  EXPECT_GT(pairs, 0);
}

TEST(ReplayTest, RebuildsTheSearchedTreeExactly) {
  for (const Target& t : {Avx2(), Avx512()}) {
    Searcher s(t);
    std::vector<Spec> specs = testing::RandomMatmuls(15, 300, 11);
    specs.push_back(Spec::Matmul(512, 512, 512));
    for (const Spec& user : specs) {
      Spec bound = t.Bind(user);
      absl::StatusOr<ImplPtr> impl = s.Solve(bound);
      ASSERT_TRUE(impl.ok()) << impl.status();
      std::string d = EncodeDecisions(**impl);
      absl::StatusOr<ImplPtr> again = Replay(bound, d, t);
      ASSERT_TRUE(again.ok()) << PrintSpec(bound) << ": " << again.status();
      EXPECT_EQ(PrintImpl(**again), PrintImpl(**impl));
      EXPECT_EQ((*again)->cost, (*impl)->cost);
      EXPECT_EQ(EncodeDecisions(**again), d);
    }
  }
}

// "*" hands a subtree to the search: the whole tree as "*" is the search's
// tree; a first decision then "*" per child is that decision with each child
// solved; stored decisions (no fill) may not hold it.
TEST(ReplayTest, StarLeavesSubtreesToTheSearch) {
  Target t = Avx2();
  Searcher s(t);
  const Fill fill = [&](const Spec& sub) { return s.Solve(sub); };
  Spec bound = t.Bind(*ParseSpec("matmul 100x37x70 f32"));
  ImplPtr best = *s.Solve(bound);
  absl::StatusOr<ImplPtr> all = Replay(bound, "*", t, fill);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(EncodeDecisions(**all), EncodeDecisions(*best));

  absl::StatusOr<ImplPtr> tiled = Replay(bound, "tile m 8;*;*", t, fill);
  ASSERT_TRUE(tiled.ok()) << tiled.status();
  ASSERT_EQ((*tiled)->children.size(), 2u);  // 12 tiles of 8, one of 4
  for (const ImplPtr& c : (*tiled)->children) {
    EXPECT_EQ(EncodeDecisions(*c), EncodeDecisions(**s.Solve(c->spec)));
  }
  EXPECT_GE((*tiled)->cost.main, best->cost.main);
  EXPECT_EQ(EncodeDecisions(**tiled).rfind("tile m 8;", 0), 0u);

  absl::StatusOr<ImplPtr> stored = Replay(bound, "tile m 8;*;*", t);
  ASSERT_FALSE(stored.ok());
  EXPECT_NE(stored.status().message().find("'*'"), std::string::npos)
      << stored.status();
  EXPECT_FALSE(Replay(bound, "tile m 8;*", t, fill).ok());  // one child short
  EXPECT_FALSE(Replay(bound, "*;*", t, fill).ok());         // one left over
}

TEST(ReplayTest, HostileDecisionsAreErrorsNeverCrashes) {
  Target t = Avx2();
  Searcher s(t);
  Spec bound = t.Bind(*ParseSpec("matmul 100x37x70 f32"));
  std::string good = EncodeDecisions(**s.Solve(bound));
  std::mt19937_64 rng(5);
  const std::string alphabet = "tilemknsplitviewpackregs0123456789 ;-_vrfl";
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string d = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !d.empty(); ++e) {
      size_t at = rng() % d.size();
      switch (rng() % 3) {
        case 0:
          d[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          d.erase(at, 1 + rng() % 8);
          break;
        default:
          d.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    absl::StatusOr<ImplPtr> r = Replay(bound, d, t);
    if (!r.ok()) {
      ++rejected;
      continue;
    }
    // Whatever replays is a valid tree for the Spec, costed by the model.
    EXPECT_EQ((*r)->spec, bound);
    EXPECT_GE((*r)->cost.main, (**s.Solve(bound)).cost.main);
  }
  EXPECT_GT(rejected, 2000);
  EXPECT_FALSE(Replay(bound, "", t).ok());
  EXPECT_FALSE(Replay(bound, good + ";select dot", t).ok());
  EXPECT_FALSE(Replay(bound, good.substr(0, good.rfind(';')), t).ok());
}

TEST(GreedyTest, FindsAValidTreeNoCheaperThanTheExactOne) {
  for (const Target& t : {Avx2(), Avx512()}) {
    Searcher s(t);
    std::vector<Spec> specs = testing::RandomMatmuls(12, 300, 12);
    specs.push_back(Spec::Matmul(1, 2048, 16384));
    for (const Spec& user : specs) {
      Spec bound = t.Bind(user);
      absl::StatusOr<ImplPtr> quick = SolveGreedy(bound, t);
      ASSERT_TRUE(quick.ok()) << quick.status();
      EXPECT_GE((*quick)->cost.main, (**s.Solve(bound)).cost.main);
      // It replays like any stored tree: every node is a real rewrite.
      absl::StatusOr<ImplPtr> again =
          Replay(bound, EncodeDecisions(**quick), t);
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_EQ((*again)->cost.main, (*quick)->cost.main);
    }
  }
}

}  // namespace
}  // namespace amarena
