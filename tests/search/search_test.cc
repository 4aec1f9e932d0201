#include "search/search.h"

#include <random>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "core/cost_model.h"
#include "core/lower_bound.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

Target Avx2() {
  return Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
}

// Every node's cost is what the cost model composes from its children's costs.
void ExpectConsistent(const ImplNode& n, const Target& t) {
  std::vector<Cost> kids;
  for (const ImplPtr& c : n.children) {
    ExpectConsistent(*c, t);
    kids.push_back(c->cost);
  }
  EXPECT_EQ(ComposeCost(n.spec, ExpansionOf(n), kids, t), n.cost)
      << PrintSpec(n.spec);
}

using testing::ForEachNode;

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

TEST(SearchTest, DeterministicForTheSameSpecAndTarget) {
  Target t = Avx2();
  Searcher a(t), b(t);
  Spec s = t.Bind(Spec::Matmul(100, 37, 70));
  EXPECT_EQ(PrintImpl(**a.Solve(s)), PrintImpl(**b.Solve(s)));
}

TEST(SearchTest, MoreBudgetNeverCostsMore) {
  Target t = Avx2();
  Searcher s(t);
  const Budget max = t.MaxBudget();
  // Steps along each axis of the budget, from nothing to the target's whole.
  const std::vector<Budget> steps[] = {
      {{2, 2, 16, 0, 0}, {4, 2, 16, 0, 0}, {8, 2, 16, 0, 0}, {16, 2, 16, 0, 0}},
      {{8, 0, 16, 0, 0}, {8, 1, 16, 0, 0}, {8, 3, 16, 0, 0}, {8, 10, 16, 0, 0}},
      {{8, 3, 1, 0, 0}, {8, 3, 4, 0, 0}, {8, 3, 64, 0, 0}, {8, 3, 512, 0, 0}},
      {{8, 3, 64, 0, 0},
       {8, 3, 64, 1024, 0},
       {8, 3, 64, max.l2_lines, 0},
       {8, 3, 64, max.l2_lines, max.l3_lines}},
  };
  for (const Spec& base : testing::RandomMatmuls(6, 40, /*seed=*/5)) {
    for (const std::vector<Budget>& axis : steps) {
      std::optional<Cost> prev;
      for (const Budget& b : axis) {
        Spec spec = base;
        spec.budget = b;
        std::optional<Cost> c = s.BestCost(Canonical(spec));
        if (prev) {
          // Anything feasible stays feasible, and no dearer, with more.
          ASSERT_TRUE(c.has_value()) << PrintSpec(spec);
          EXPECT_LE(c->main, prev->main) << PrintSpec(spec);
        }
        prev = c;
      }
    }
  }
}

// Strict order on Specs under which every rewrite's sub-Specs are smaller (the
// reason the search cannot cycle): kind (Matmul > MatmulAccum > Zero, Move),
// then volume (the batch's), then how far out the operands are.
std::tuple<int, int64_t, int> Size(const Spec& s) {
  int64_t volume = s.b * s.m * s.k * s.n;
  int kind = s.kind == Kind::kMatmul ? 2 : s.kind == Kind::kMatmulAccum ? 1 : 0;
  int slowness = 0;
  for (int i = 0; i < s.NumOperands(); ++i)
    slowness +=
        static_cast<int>(Level::kVRF) - static_cast<int>(s.aux[i].level);
  return {kind, volume, slowness};
}

TEST(SearchTest, SubSpecsAreCanonicalAndStrictlySmaller) {
  Target t = Avx2();
  std::vector<Spec> todo;
  for (const Spec& s : testing::RandomMatmuls(20, 600, /*seed=*/9))
    todo.push_back(t.Bind(s));
  t.workers = 2;  // parallel loops over the batch too
  for (const std::string& text : testing::RandomBatchSpecTexts(10, 64, 9)) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_TRUE(s.ok()) << text;
    todo.push_back(t.Bind(*s));
  }
  int checked = 0;
  while (!todo.empty() && checked < 20000) {
    Spec s = todo.back();
    todo.pop_back();
    for (const Candidate& c : EnumerateCandidates(s, t)) {
      for (const Spec& child : c.expansion.children) {
        EXPECT_EQ(child, Canonical(child)) << PrintSpec(child);
        EXPECT_LT(Size(child), Size(s))
            << PrintSpec(s) << " -> " << PrintSpec(child);
        if (todo.size() < 400) todo.push_back(child);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

// The cost model is monotone in every child: a dearer child never makes its
// parent cheaper (what makes the memoised DP, and the brute force below,
// exact).
TEST(SearchTest, CostIsMonotoneInEachChild) {
  Target t = Avx2();
  std::mt19937_64 rng(3);
  int checked = 0;
  for (const Spec& user : testing::RandomMatmuls(10, 64, /*seed=*/4)) {
    for (const Candidate& c : EnumerateCandidates(t.Bind(user), t)) {
      std::vector<Cost> kids(c.expansion.children.size());
      for (Cost& k : kids) k.main = static_cast<int64_t>(rng() % 1000);
      Cost base = ComposeCost(t.Bind(user), c.expansion, kids, t);
      for (Cost& k : kids) {
        k.main += 1 + static_cast<int64_t>(rng() % 100);
        Cost more = ComposeCost(t.Bind(user), c.expansion, kids, t);
        EXPECT_GT(more.main, base.main) << Describe(c.action);
        base = more;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// A small target so that tiles of at most 8x8 already need L2 and L3.
Target Tiny() {
  Target t = Avx2();
  t.l1_lines = 4;
  t.l2_lines = 8;
  t.l3_lines = 64;
  return t;
}

// Every tree the rewrites allow, enumerated without any of the search's
// shortcuts (no lower bounds, no pruning, no budget clamping, no boxes, no
// solving at the top budget): the minimum over candidates of the cost model
// composed from each child's minimum. Memoised on the exact Spec, so shared
// subtrees are costed once; that is exact because the model is monotone in
// every child (CostIsMonotoneInEachChild).
class BruteForce {
 public:
  explicit BruteForce(const Target& t) : t_(t) {}
  std::optional<Cost> Best(const Spec& s) {
    if (auto it = memo_.find(s); it != memo_.end()) return it->second;
    std::optional<Cost> best;
    for (const Candidate& c : EnumerateCandidates(s, t_)) {
      std::vector<Cost> kids;
      for (const Spec& child : c.expansion.children) {
        std::optional<Cost> k = Best(child);
        if (!k) break;
        kids.push_back(*k);
      }
      if (kids.size() != c.expansion.children.size()) continue;
      Cost cost = ComposeCost(s, c.expansion, kids, t_);
      if (!best || cost < *best) best = cost;
    }
    memo_.emplace(s, best);
    return best;
  }
  // Calls f(spec, best) for every Spec costed so far.
  template <typename F>
  void ForEachCosted(F f) const {
    for (const auto& [spec, best] : memo_) f(spec, best);
  }

 private:
  Target t_;
  absl::flat_hash_map<Spec, std::optional<Cost>> memo_;
};

TEST(SearchTest, DpEqualsBruteForceUpTo8x8x8) {
  const Target t = Tiny();
  const Budget budgets[] = {
      t.MaxBudget(), {6, 2, 4, 8, 64}, {3, 0, 2, 8, 16}, {16, 10, 1, 2, 64}};
  BruteForce brute(t);
  // The brute force walks the whole space: remainders searched too.
  Searcher dp(t, SearchOptions{.follow_remainders = false});
  int feasible = 0;
  for (int64_t m = 1; m <= 8; ++m)
    for (int64_t k = 1; k <= 8; ++k)
      for (int64_t n = 1; n <= 8; ++n)
        for (const Budget& b : budgets) {
          Spec s = Spec::Matmul(m, k, n);
          s.budget = b;
          s = Canonical(s);
          std::optional<Cost> want = brute.Best(s);
          std::optional<Cost> got = dp.BestCost(s);
          ASSERT_EQ(got.has_value(), want.has_value()) << PrintSpec(s);
          if (!want) continue;
          ++feasible;
          ASSERT_EQ(got->main, want->main) << PrintSpec(s);
          EXPECT_EQ(got->peak, want->peak) << PrintSpec(s);
        }
  EXPECT_GT(feasible, 1000);
}

// The same for bf16 inputs (widening kernels, vdpbf16ps dot products, B
// packed as bf16 or cast to f32), row- and column-major B.
TEST(SearchTest, DpEqualsBruteForceBf16UpTo6x6x6) {
  Target t = Target::Avx512({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  t.bf16_dot = true;
  t.l1_lines = 4;
  t.l2_lines = 8;
  t.l3_lines = 64;
  const Budget budgets[] = {
      t.MaxBudget(), {6, 2, 4, 8, 64}, {16, 10, 1, 2, 64}};
  BruteForce brute(t);
  // The brute force walks the whole space: remainders searched too.
  Searcher dp(t, SearchOptions{.follow_remainders = false});
  int feasible = 0;
  for (Order layout : {Order::kRowMajor, Order::kColMajor})
    for (int64_t m = 1; m <= 6; ++m)
      for (int64_t k = 1; k <= 6; ++k)
        for (int64_t n = 1; n <= 6; ++n)
          for (const Budget& b : budgets) {
            Spec s = Spec::Matmul(m, k, n, {.dtype = DType::kBF16},
                                  {.dtype = DType::kBF16, .layout = layout});
            s.budget = b;
            s = Canonical(s);
            std::optional<Cost> want = brute.Best(s);
            std::optional<Cost> got = dp.BestCost(s);
            ASSERT_EQ(got.has_value(), want.has_value()) << PrintSpec(s);
            if (!want) continue;
            ++feasible;
            ASSERT_EQ(got->main, want->main) << PrintSpec(s);
            EXPECT_EQ(got->peak, want->peak) << PrintSpec(s);
          }
  EXPECT_GT(feasible, 500);
}

// The lower bound is admissible at every Spec the brute force reaches from
// small matmuls with A and B in either order (the column-major B's bound
// counts its pack's copy, or one lane per op without one, and the dot
// products' horizontal sums), f32 and bf16, on both ISAs: not only on the
// best trees' nodes but on every sub-Spec of every candidate.
TEST(SearchTest, LowerBoundIsAtMostTheBestCostOfEverySpecReached) {
  Target bf16 =
      Target::Avx512({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  bf16.bf16_dot = true;
  bf16.l1_lines = 4;
  bf16.l2_lines = 8;
  bf16.l3_lines = 64;
  // Small tiles and vectors' edges, and long dot products.
  const std::tuple<int64_t, int64_t, int64_t> kShapes[] = {
      {1, 1, 1},  {1, 1, 9},  {1, 1, 16}, {1, 6, 1},  {1, 6, 9},
      {1, 6, 16}, {6, 1, 1},  {6, 1, 9},  {6, 1, 16}, {6, 6, 1},
      {6, 6, 9},  {6, 6, 16}, {1, 64, 1}, {2, 33, 3}};
  int64_t checked = 0;
  for (const Target& t : {Tiny(), bf16}) {
    const Budget budgets[] = {t.MaxBudget(), {6, 2, 4, 8, 64}};
    BruteForce brute(t);
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      if (dtype == DType::kBF16 && !t.bf16_dot) continue;
      for (Order a : {Order::kRowMajor, Order::kColMajor})
        for (Order b : {Order::kRowMajor, Order::kColMajor})
          for (auto [m, k, n] : kShapes)
            for (const Budget& budget : budgets) {
              Spec s = Spec::Matmul(m, k, n, {.dtype = dtype, .layout = a},
                                    {.dtype = dtype, .layout = b});
              s.budget = budget;
              brute.Best(Canonical(s));
            }
    }
    brute.ForEachCosted([&](const Spec& s, const std::optional<Cost>& best) {
      if (!best) return;
      ++checked;
      EXPECT_LE(LowerBound(s, t), best->main) << PrintSpec(s);
    });
  }
  EXPECT_GT(checked, 500000);
}

// With two workers: a parallel loop runs only at the root, so every Spec
// below it is serial, and the lower bound, which counts one worker, holds at
// each child of the root's candidates; at the root itself it allows for the
// workers (a tree there may run in parallel: 512^3's best costs about 0.56x
// what one worker's bound counts).
TEST(SearchTest, WithTwoWorkersTheBoundHoldsAtTheRootAndBelowIt) {
  Target t = Target::Avx2({.l1d = 32 << 10, .l2 = 512 << 10, .l3 = 32 << 20});
  t.workers = 2;
  for (const char* text : {"matmul 512x512x512 f32", "matmul 100x100x100 f32",
                           "matmul 37x91x53 f32 a=col b=col c=col accum"}) {
    const Spec root = t.Bind(*ParseSpec(text));
    Searcher dp(t);
    const std::optional<Cost> best = dp.BestCost(root);
    ASSERT_TRUE(best.has_value()) << text;
    EXPECT_LE(LowerBound(root, t), best->main) << text;
    int children = 0;
    for (const Candidate& c : EnumerateCandidates(root, t))
      for (const Spec& child : c.expansion.children) {
        EXPECT_TRUE(child.serial) << PrintSpec(child);
        const std::optional<Cost> b = dp.BestCost(child);
        if (!b) continue;
        ++children;
        EXPECT_LE(LowerBound(child, t), b->main) << PrintSpec(child);
      }
    EXPECT_GT(children, 10) << text;
  }
  // Applying an action (as Build and Replay do) yields the same serial
  // children, so no parallel loop can be replayed below the root either.
  const Spec root =
      t.Bind(*ParseSpec("matmul 37x91x53 f32 a=col b=col c=col accum"));
  absl::StatusOr<Action> tile = ParseAction("tile m 32");
  absl::StatusOr<Action> parallel = ParseAction("parallel tile m 16");
  ASSERT_TRUE(tile.ok() && parallel.ok());
  absl::StatusOr<Candidate> c = ApplyAction(root, *tile, t);
  ASSERT_TRUE(c.ok()) << c.status();
  for (const Spec& child : c->expansion.children) {
    EXPECT_TRUE(child.serial) << PrintSpec(child);
    EXPECT_FALSE(ApplyAction(child, *parallel, t).ok()) << PrintSpec(child);
  }
}

// A tree may mix the broadcast form (on packed columns of a column-major B)
// with dot products (on a remaining column), and cost less than either form
// alone: here 8 columns packed and one column of dot products. A bound that
// took the lesser of the two forms' own bounds was 44010 against a best of
// 36904.
TEST(SearchTest, LowerBoundHoldsForTreesMixingBothForms) {
  const Target t =
      Target::Avx2({.l1d = 32 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  for (const char* text : {"matmul 47x142x9 f32 accum a=l2 b=col c=l1 serial "
                           "budget=vrf:16,gpr:10,l1:256,l2:8192,l3:393216",
                           "matmul 47x142x73 f32 accum a=l2 b=col c=l1 serial "
                           "budget=vrf:16,gpr:10,l1:256,l2:8192,l3:393216"}) {
    const Spec s = Canonical(*ParseSpec(text));
    Searcher exact(t, SearchOptions{.prune = false});
    const std::optional<Cost> best = exact.BestCost(s);
    ASSERT_TRUE(best.has_value()) << text;
    EXPECT_LE(LowerBound(s, t), best->main) << text;
  }
}

TEST(SearchTest, CompressedAndPlainMemoGiveTheSameTrees) {
  const Target t = Avx2();
  for (const char* text :
       {"matmul 37x19x41 f32", "matmul 64x64x64 f32", "matmul 100x37x70 f32",
        "matmul 1x300x17 f32 b=col", "matmul 13x8x200 f32 accum"}) {
    Spec s = t.Bind(*ParseSpec(text));
    Searcher compressed(t);
    Searcher plain(
        t, SearchOptions{.compress_memo = false, .solve_at_top = false});
    auto a = compressed.Solve(s);
    auto b = plain.Solve(s);
    ASSERT_TRUE(a.ok() && b.ok()) << text;
    EXPECT_EQ(PrintImpl(**a), PrintImpl(**b)) << text;
  }
}

TEST(SearchTest, ResolvingAtThePeakGivesTheSameDecision) {
  const Target t = Avx2();
  for (const Spec& user : testing::RandomMatmuls(12, 120, /*seed=*/11)) {
    Spec s = t.Bind(user);
    Searcher full(t);
    std::optional<Cost> cost = full.BestCost(s);
    std::optional<Action> action = full.BestAction(s);
    ASSERT_TRUE(cost && action) << PrintSpec(s);
    Spec at_peak = s;
    at_peak.budget = cost->peak;
    at_peak = Canonical(at_peak);
    Searcher fresh(t);
    EXPECT_EQ(fresh.BestCost(at_peak), cost) << PrintSpec(at_peak);
    EXPECT_EQ(fresh.BestAction(at_peak), action) << PrintSpec(at_peak);
  }
}

// The lower bound is admissible: at every node of the best trees for random
// f32 matmuls, bf16 ones and pre-packed B (every node's cost is the best for
// its Spec), on both ISAs, it is at most the node's cost.
TEST(SearchTest, LowerBoundNeverExceedsTheBestCost) {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  std::vector<Spec> specs = testing::RandomMatmuls(40, 200, /*seed=*/5);
  for (const char* text : {"matmul 1x2048x16384 bf16*bf16->f32",
                           "matmul 16x300x100 bf16*bf16->f32 b=p32",
                           "matmul 3x100x70 bf16*bf16->f32 b=col",
                           "matmul 1x2048x16384 bf16*bf16->f32 b=p64",
                           "matmul 1x2048x16384 bf16*bf16->f32 b=p32s2",
                           "matmul 16x300x100 bf16*bf16->f32 b=p16s2"})
    specs.push_back(*ParseSpec(text));
  int64_t nodes = 0;
  for (const Target& t : {Target::Avx2(caches), Target::Avx512(caches)}) {
    Searcher searcher(t);
    for (const Spec& spec : specs) {
      auto impl = searcher.Solve(t.Bind(spec));
      ASSERT_TRUE(impl.ok()) << impl.status();
      ForEachNode(**impl, [&](const ImplNode& node) {
        const ImplNode* n = &node;
        ++nodes;
        EXPECT_LE(LowerBound(n->spec, t), n->cost.main) << PrintSpec(n->spec);
      });
    }
  }
  EXPECT_GT(nodes, 1000);
}

// A view of a wider matrix costs what the same problem as a tile costs
// (WithoutLds: no leading dimension, each operand's way offset kept; every
// view is priced per row), its tree is consistent, and below the Specs of
// the whole operands (the root, its zero and accumulate) no Spec carries a
// leading dimension: tiles and cache views share the tile problem's.
TEST(SearchTest, LeadingDimensionsShareTheDenseProblemsTrees) {
  Target t = Avx2();
  t.workers = 2;
  for (const char* text :
       {"matmul 64x64x64 f32 lda=4096 ldc=100",
        "matmul 100x37x70 f32 a=col b=col lda=101 ldb=50 ldc=71 accum",
        "matmul 256x256x256 f32 lda=263 ldb=257 ldc=300",
        "matmul 7x300x17 bf16*bf16->f32 lda=301 ldb=18"}) {
    const Spec view = *ParseSpec(text);
    Searcher s(t), d(t);
    auto impl = s.Solve(t.Bind(view));
    auto dense = d.Solve(t.Bind(WithoutLds(view)));
    ASSERT_TRUE(impl.ok() && dense.ok()) << text;
    ExpectConsistent(**impl, t);
    EXPECT_EQ((*impl)->cost, (*dense)->cost) << text;
    ForEachNode(**impl, [&](const ImplNode& n) {
      for (int i = 0; i < n.spec.NumOperands(); ++i) {
        const TensorSpec op = n.spec.Operand(i);
        if (op.layout().ld() == 0) continue;
        // Only a whole operand of the root (in the pack's copy, B) keeps it.
        bool whole = false;
        for (int j = 0; j < 3; ++j) {
          const TensorSpec r = view.Operand(j);
          whole |= r.rows == op.rows && r.cols == op.cols &&
                   r.layout().ld() == op.layout().ld();
        }
        EXPECT_TRUE(whole && op.aux.level == Level::kGL)
            << PrintSpec(n.spec) << " in\n"
            << PrintImpl(**impl);
      }
    });
  }
}

}  // namespace
}  // namespace amarena
