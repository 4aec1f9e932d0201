// What the search reuses between solves only saves work: with the bounds
// (SearchOptions::reuse_bounds: a key's best cost under the most budget as a
// floor for less, and a key's first solve's per-candidate bounds for its
// later solves) and the relaxed budgets (relax_budgets: solving under the
// top budget lowered only where the top's peak does not fit), every Spec
// gets the same tree and cost as the plain branch and bound, whatever the
// Spec, its budget, the target and what the searcher solved before.
#include <random>
#include <string>
#include <vector>

#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"
#include "search/search.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

Target SmallCaches(bool avx512) {
  // Small caches, so that L2 and L3 placements and tight budgets matter.
  const CacheSizes caches{.l1d = 4 << 10, .l2 = 64 << 10, .l3 = 1 << 20};
  return avx512 ? Target::Avx512(caches) : Target::Avx2(caches);
}

Target HostLike(int workers) {
  Target t = Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  t.workers = workers;
  return t;
}

// `s` (bound) under a random budget at most its own: each component kept, or
// cut to a random smaller one.
Spec UnderLess(const Spec& s, std::mt19937_64& rng) {
  Spec b = s;
  auto cut = [&](int64_t v) {
    if (v <= 0 || rng() % 2 == 0) return v;
    return static_cast<int64_t>(rng() % static_cast<uint64_t>(v + 1));
  };
  Budget& budget = *b.budget;
  budget.vrf = static_cast<int32_t>(cut(budget.vrf));
  budget.gpr = static_cast<int32_t>(cut(budget.gpr));
  for (Level l : kCacheLevels)
    budget.Lines(l) = FloorBudgetLines(cut(budget.Lines(l)));
  return Canonical(b);
}

Spec UnderRandomBudget(const Spec& s, const Target& t, std::mt19937_64& rng) {
  return UnderLess(t.Bind(s), rng);
}

// Each Spec searched by `fast` (one searcher for all, in order, so earlier
// Specs' floors and bounds are in its memo) and by a fresh plain searcher.
void ExpectSameTrees(const Target& t, const std::vector<Spec>& specs) {
  Searcher fast(t);
  for (const Spec& s : specs) {
    Searcher plain(
        t, SearchOptions{.relax_budgets = false, .reuse_bounds = false});
    absl::StatusOr<ImplPtr> a = fast.Solve(s);
    absl::StatusOr<ImplPtr> b = plain.Solve(s);
    ASSERT_EQ(a.ok(), b.ok()) << PrintSpec(s);
    if (!a.ok()) {
      EXPECT_EQ(a.status(), b.status());
      continue;
    }
    EXPECT_EQ((*a)->cost, (*b)->cost) << PrintSpec(s);
    EXPECT_EQ(PrintImpl(**a), PrintImpl(**b)) << PrintSpec(s);
  }
}

std::vector<Spec> Parsed(const std::vector<std::string>& texts) {
  std::vector<Spec> out;
  for (const std::string& text : texts) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    EXPECT_TRUE(s.ok()) << text;
    if (s.ok()) out.push_back(*s);
  }
  return out;
}

TEST(SearchBoundsTest, SameTreesAsPlainSearchOnRandomSpecs) {
  for (bool avx512 : {false, true}) {
    const Target t = SmallCaches(avx512);
    std::vector<Spec> bound;
    for (const Spec& s : Parsed(testing::RandomSpecTexts(24, 160, 23)))
      bound.push_back(t.Bind(s));
    ExpectSameTrees(t, bound);
  }
}

// Batched Specs (shared B, strides), alpha and bf16 outputs: the batch loop
// and the f32 buffer of a bf16 C prune as every other rewrite.
TEST(SearchBoundsTest, SameTreesAsPlainSearchOnBatchedSpecs) {
  const Target t = HostLike(/*workers=*/2);
  std::vector<Spec> specs;
  for (const Spec& s : Parsed(testing::RandomBatchSpecTexts(16, 80, 29)))
    specs.push_back(t.Bind(s));
  for (const char* text : {"matmul 3x37x61x29 f32 sb=0 alpha=0.25",
                           "matmul 2x45x70x33 bf16*bf16->bf16 accum",
                           "matmul 77x91x53 f32*bf16->bf16 alpha=-3"})
    specs.push_back(t.Bind(*ParseSpec(text)));
  ExpectSameTrees(t, specs);
}

TEST(SearchBoundsTest, SameTreesAsPlainSearchUnderRandomBudgets) {
  const Target t = SmallCaches(false);
  std::mt19937_64 rng(31);
  std::vector<Spec> specs;
  for (const Spec& s : Parsed(testing::RandomSpecTexts(30, 100, 37)))
    specs.push_back(UnderRandomBudget(s, t, rng));
  ExpectSameTrees(t, specs);
}

TEST(SearchBoundsTest, SameTreesAsPlainSearchOnIrregularShapes) {
  // Irregular extents make many remainder Specs, each reached under many
  // budgets; two workers add the parallel loop at the root.
  const Target t = HostLike(/*workers=*/2);
  std::vector<Spec> specs;
  for (const char* text :
       {"matmul 123x457x91 f32 b=col", "matmul 97x211x133 f32",
        "matmul 61x300x45 f32 accum", "matmul 1x509x67 f32"})
    specs.push_back(t.Bind(*ParseSpec(text)));
  for (const Spec& s : testing::RandomMatmuls(6, 200, /*seed=*/41))
    specs.push_back(t.Bind(s));
  ExpectSameTrees(t, specs);
}

// What the prior bounds rest on: under less budget a Spec is offered the
// candidates it is offered under more, less those that no longer fit, in the
// same order (a later solve matches them up with the first's).
TEST(SearchBoundsTest, LessBudgetOffersASubsequenceOfTheCandidates) {
  const Target t = SmallCaches(false);
  std::mt19937_64 rng(43);
  int compared = 0;
  for (const Spec& user : Parsed(testing::RandomSpecTexts(40, 100, 47))) {
    // The root and the Specs on a random path down from it.
    Spec at = t.Bind(user);
    for (int depth = 0; depth < 12; ++depth) {
      const std::vector<Candidate> cands = EnumerateCandidates(at, t);
      std::vector<Action> more;
      for (const Candidate& c : cands) more.push_back(c.action);
      for (int i = 0; i < 4; ++i) {
        const Spec less = UnderLess(at, rng);
        size_t j = 0;
        for (const Candidate& c : EnumerateCandidates(less, t)) {
          while (j < more.size() && !(more[j] == c.action)) ++j;
          ASSERT_LT(j, more.size())
              << PrintSpec(less) << " offers " << Describe(c.action)
              << ", not offered (in that order) under " << PrintSpec(at);
          ++j;
          ++compared;
        }
      }
      std::vector<Spec> children;
      for (const Candidate& c : cands)
        for (const Spec& child : c.expansion.children)
          children.push_back(child);
      if (children.empty()) break;
      at = children[rng() % children.size()];
    }
  }
  EXPECT_GT(compared, 1000);
}

}  // namespace
}  // namespace amarena
