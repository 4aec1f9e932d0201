#include "search/search.h"

#include "core/cost_model.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

Target Avx2() { return Target::Avx2(48 * 1024); }

// Every node's cost is what the cost model composes from its children's costs.
void ExpectConsistent(const ImplNode& n, const Target& t) {
  std::vector<Cost> kids;
  for (const ImplPtr& c : n.children) {
    ExpectConsistent(*c, t);
    kids.push_back(c->cost);
    EXPECT_EQ(c->spec, n.how.children[kids.size() - 1]);
  }
  EXPECT_EQ(ComposeCost(n.spec, n.how, kids, t), n.cost) << PrintSpec(n.spec);
}

bool UsesKernel(const ImplNode& n, KernelId id) {
  if (n.how.type == NodeType::kKernel && n.how.kernel == id) return true;
  for (const ImplPtr& c : n.children)
    if (UsesKernel(*c, id)) return true;
  return false;
}

TEST(SearchTest, TreesAreConsistentWithTheCostModel) {
  Target t = Avx2();
  for (const char* text :
       {"matmul 64x64x64 f32", "matmul 7x13x5 f32", "matmul 1x300x17 f32"}) {
    Searcher s(t);
    auto impl = s.Solve(t.Bind(*ParseSpec(text)));
    ASSERT_TRUE(impl.ok()) << impl.status();
    ExpectConsistent(**impl, t);
  }
}

TEST(SearchTest, VectorisableMatmulUsesTheBroadcastFmaKernel) {
  Target t = Avx2();
  Searcher s(t);
  auto impl = s.Solve(t.Bind(Spec::Matmul(64, 64, 64)));
  ASSERT_TRUE(impl.ok());
  EXPECT_TRUE(UsesKernel(**impl, KernelId::kBroadcastFma)) << PrintImpl(**impl);
}

TEST(SearchTest, DeterministicForTheSameSpecAndTarget) {
  Target t = Avx2();
  Searcher a(t), b(t);
  Spec s = t.Bind(Spec::Matmul(100, 37, 70));
  EXPECT_EQ(PrintImpl(**a.Solve(s)), PrintImpl(**b.Solve(s)));
}

TEST(SearchTest, MoreBudgetNeverCostsMore) {
  Target t = Avx2();
  Searcher s(t);
  const int vrfs[] = {0, 2, 4, 8, 12, 16};
  const int64_t l1s[] = {0, 4, 16, 64, 512};
  for (const Spec& base : testing::RandomMatmuls(6, 24, /*seed=*/5)) {
    auto cost = [&](int vrf, int64_t l1) {
      Spec spec = base;
      spec.budget = Budget{vrf, l1};
      return s.BestCost(spec);
    };
    for (size_t v = 0; v < std::size(vrfs); ++v) {
      for (size_t l = 0; l < std::size(l1s); ++l) {
        std::optional<Cost> c = cost(vrfs[v], l1s[l]);
        if (!c) continue;
        // Anything feasible stays feasible, and no dearer, with one more step
        // of either.
        if (v + 1 < std::size(vrfs)) {
          std::optional<Cost> more = cost(vrfs[v + 1], l1s[l]);
          ASSERT_TRUE(more.has_value());
          EXPECT_LE(more->main, c->main) << PrintSpec(base);
        }
        if (l + 1 < std::size(l1s)) {
          std::optional<Cost> more = cost(vrfs[v], l1s[l + 1]);
          ASSERT_TRUE(more.has_value());
          EXPECT_LE(more->main, c->main) << PrintSpec(base);
        }
      }
    }
  }
}

// Strict order on Specs under which every rewrite's sub-Specs are smaller (the
// reason the search cannot cycle): volume, then kind (Matmul > MatmulAccum >
// Zero/Move), then total level speed.
std::tuple<int64_t, int, int> Size(const Spec& s) {
  int64_t volume = s.m * s.k * s.n;
  int kind = s.kind == Kind::kMatmul ? 2 : s.kind == Kind::kMatmulAccum ? 1 : 0;
  int slowness = 0;
  for (int i = 0; i < s.NumOperands(); ++i)
    slowness += 2 - static_cast<int>(s.aux[i].level);
  return {volume, kind, slowness};
}

TEST(SearchTest, SubSpecsAreCanonicalAndStrictlySmaller) {
  Target t = Avx2();
  std::vector<Spec> todo;
  for (const Spec& s : testing::RandomMatmuls(20, 40, /*seed=*/9))
    todo.push_back(t.Bind(s));
  int checked = 0;
  while (!todo.empty() && checked < 3000) {
    Spec s = todo.back();
    todo.pop_back();
    for (const Candidate& c : EnumerateCandidates(s, t)) {
      for (const Spec& child : c.expansion.children) {
        EXPECT_EQ(child, Canonical(child));
        EXPECT_LT(Size(child), Size(s))
            << PrintSpec(s) << " -> " << PrintSpec(child);
        if (todo.size() < 200) todo.push_back(child);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace amarena
