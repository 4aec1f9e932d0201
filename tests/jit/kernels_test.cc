// Every row of the kernel catalogue (core/kernels.h) against its emitter and
// the lower bound, on random Specs each kernel applies to, for AVX2 and for
// AVX-512 with BF16 (emitted, never run, so any x86 host checks both):
// - its emitter holds at most scratch_vregs registers besides the operands,
//   and scratch_vregs lies between least_scratch_vregs and
//   most_scratch_vregs;
// - its cost is at least LowerBound, and a matmul kernel's at least LeastCost
//   at its own peak rate, whose op price is at least an FMA's (other kernels
//   declare none);
// - in trees the search builds, every ancestor of a leaf declares at least
//   the leaf's scratch (most_scratch_vregs, which the budget clamp adds up)
//   and a peak rate for its kernel (which the lower bound folds over).
// The Specs: leaves of trees the search builds for random user Specs, those
// leaves with their extents moved, and random kernel-level Specs.
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>

#include "core/cost_model.h"
#include "core/lower_bound.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "jit/kernel_scratch.h"
#include "search/search.h"
#include "tests/testing/fixed_target.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

// Per kernel: Specs checked (with repeats) and distinct ones.
struct Tally {
  int checked = 0;
  std::set<std::string> distinct;
};

class CatalogueChecker {
 public:
  explicit CatalogueChecker(const Target& t) : t_(t) {}

  // Checks `s` (without its budget) against every kernel that applies.
  // Register tiles and scratch beyond the register file fit no budget.
  void CheckLeaf(Spec s) {
    s.budget.reset();
    s = Canonical(s);
    int64_t operands = 0;
    for (int i = 0; i < s.NumOperands(); ++i)
      if (s.aux[i].level == Level::kVRF) operands += s.Operand(i).Registers();
    for (KernelId id : AllKernels())
      if (Info(id).applies(s, t_) &&
          operands + Info(id).scratch_vregs(s, t_) <= t_.vector_registers)
        Check(s, id);
  }

  // A leaf of a searched tree and its ancestors.
  void CheckAncestors(const Spec& leaf, KernelId id,
                      const std::vector<const Spec*>& ancestors) {
    const KernelInfo& k = Info(id);
    const int scratch = k.scratch_vregs(leaf, t_);
    for (const Spec* a : ancestors) {
      EXPECT_GE(k.most_scratch_vregs(*a, t_), scratch)
          << k.name << " at " << PrintSpec(leaf) << " under " << PrintSpec(*a);
      if (k.kind == Kind::kMatmulAccum) {
        EXPECT_TRUE(k.peak_rate(*a, t_).has_value())
            << k.name << " at " << PrintSpec(leaf) << " under "
            << PrintSpec(*a);
      }
      ++ancestors_checked_;
    }
  }

  int Checked(KernelId id) const {
    auto it = tally_.find(id);
    return it == tally_.end() ? 0 : it->second.checked;
  }
  int Distinct(KernelId id) const {
    auto it = tally_.find(id);
    return it == tally_.end() ? 0
                              : static_cast<int>(it->second.distinct.size());
  }
  void Print() const {
    std::printf("%s: %lld ancestor checks\n", std::string(Name(t_.isa)).c_str(),
                static_cast<long long>(ancestors_checked_));
    for (KernelId id : AllKernels()) {
      auto it = tally_.find(id);
      if (it == tally_.end()) continue;
      std::printf("%s %-14s %6d Specs checked, %6zu distinct\n",
                  std::string(Name(t_.isa)).c_str(),
                  std::string(Info(id).name).c_str(), it->second.checked,
                  it->second.distinct.size());
    }
  }

 private:
  void Check(const Spec& s, KernelId id) {
    Tally& tally = tally_[id];
    ++tally.checked;
    if (!tally.distinct.insert(PrintSpec(s)).second) return;  // seen
    const KernelInfo& k = Info(id);
    const std::string what = absl::StrCat(k.name, " at ", PrintSpec(s));
    const int scratch = k.scratch_vregs(s, t_);
    EXPECT_LE(k.least_scratch_vregs, scratch) << what;
    EXPECT_LE(scratch, k.most_scratch_vregs(s, t_)) << what;
    absl::StatusOr<int> used = jit::EmittedScratchVregs(s, id, t_);
    ASSERT_TRUE(used.ok()) << used.status();
    EXPECT_LE(*used, scratch) << what;
    const int64_t cost = k.cost(s, t_);
    EXPECT_GE(cost, LowerBound(s, t_)) << what;
    const std::optional<PeakRate> rate = k.peak_rate(s, t_);
    if (k.kind == Kind::kMatmulAccum) {
      ASSERT_TRUE(rate.has_value()) << what;
      EXPECT_GE(cost, LeastCost(*rate, s)) << what;
      EXPECT_GE(rate->op_price, t_.cost.fma) << what;
    } else {
      EXPECT_FALSE(rate.has_value()) << what;
    }
  }

  Target t_;
  std::map<KernelId, Tally> tally_;
  int64_t ancestors_checked_ = 0;
};

// Walks the tree, checking each kernel leaf (and its extents moved) and its
// ancestors.
void CheckTree(CatalogueChecker& c, const ImplNode& node,
               std::vector<const Spec*>& path, int lanes) {
  if (node.how.type == NodeType::kKernel) {
    c.CheckAncestors(node.spec, node.how.kernel, path);
    c.CheckLeaf(node.spec);
    for (int64_t dm : {-1, 1, 5})
      for (int64_t dn : {-1, 1, lanes, lanes + 3})
        for (int64_t dk : {0, 1, lanes}) {
          Spec s = node.spec;
          s.m = std::max<int64_t>(1, s.m + dm);
          s.n = std::max<int64_t>(1, s.n + dn);
          if (s.IsMatmul()) s.k = std::max<int64_t>(1, s.k + dk);
          c.CheckLeaf(s);
        }
    return;
  }
  path.push_back(&node.spec);
  for (const ImplPtr& child : node.children) CheckTree(c, *child, path, lanes);
  path.pop_back();
}

// A random kernel-level Spec: small extents (often 1, or about a vector),
// operands in L1 or registers, in any layout the catalogue knows.
Spec RandomLeaf(std::mt19937_64& rng, const Target& t) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int64_t lanes = t.f32_lanes;
  auto dim = [&] {
    switch (pick(0, 3)) {
      case 0:
        return int64_t{1};
      case 1:
        return pick(std::max<int64_t>(1, lanes - 2), 2 * lanes + 2);
      default:
        return pick(1, 40);
    }
  };
  const bool bf16 = pick(0, 1) == 1;
  auto aux = [&](bool may_be_bf16) {
    TensorAux a;
    a.dtype = may_be_bf16 && bf16 ? DType::kBF16 : DType::kF32;
    a.level = pick(0, 1) ? Level::kL1 : Level::kVRF;
    const Order order = pick(0, 2) ? Order::kRowMajor : Order::kColMajor;
    a.layout = order;
    a.vector_width =
        static_cast<uint8_t>(std::array<int64_t, 3>{1, 8, lanes}[pick(0, 2)]);
    if (pick(0, 2) == 0) {
      a.layout = Layout::Panels(order, int64_t{8} << pick(0, 3));
      // k-pairs are row-major panels only.
      if (order == Order::kRowMajor && pick(0, 1)) a.layout = a.layout.Paired();
    }
    return a;
  };
  switch (pick(0, 5)) {
    case 0:
      return Spec::Zero(dim(), dim(), aux(false));
    case 1: {
      TensorAux src = aux(true), dst = aux(true);
      if (pick(0, 1)) dst.dtype = src.dtype;
      return Spec::Move(dim(), dim(), src, dst);
    }
    case 2: {  // shaped for the dot kernels: one output, k up to their most
      TensorAux a = aux(true), b = aux(true), c = aux(false);
      a.layout = Order::kRowMajor;
      b.layout = Order::kColMajor;
      b.dtype = a.dtype;
      // f32 activations beside bf16 weights, a third of the bf16 ones.
      if (bf16 && pick(0, 2) == 0) a.dtype = DType::kF32;
      return Spec::Matmul(1, pick(2, 2 * kMaxDotVectors * lanes + 2), 1, a, b,
                          c, /*accum=*/true);
    }
    case 3: {  // shaped for register tiles: a few rows, k of one or two
      TensorAux a = aux(true), b = aux(true), c = aux(false);
      a.level = b.level = Level::kL1;
      c.level = Level::kVRF;
      b.dtype = a.dtype;
      if (bf16 && pick(0, 2) == 0) a.dtype = DType::kF32;
      return Spec::Matmul(pick(1, 6), pick(1, 2), pick(1, 3 * lanes), a, b, c,
                          /*accum=*/true);
    }
    default: {
      const int64_t k = pick(0, 2) ? pick(1, 2) : pick(2, 40 * lanes);
      return Spec::Matmul(dim(), k, dim(), aux(true), aux(true), aux(false),
                          /*accum=*/true);
    }
  }
}

class KernelCatalogue : public ::testing::TestWithParam<Isa> {};

TEST_P(KernelCatalogue, RowsHoldForTheirEmittersAndTheLowerBound) {
  const Target t = testing::FixedTarget(GetParam(), 1);
  CatalogueChecker checker(t);
  // Trees the search builds.
  Searcher searcher(t);
  const std::vector<std::string> texts =
      testing::RandomSpecTexts(80, /*max_dim=*/120,
                               /*seed=*/4100 + static_cast<int>(t.isa));
  for (const std::string& text : texts) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<ImplPtr> impl = searcher.Solve(t.Bind(*s));
    if (!impl.ok()) continue;  // not every user Spec has a tree on `t`
    std::vector<const Spec*> path;
    CheckTree(checker, **impl, path, t.f32_lanes);
  }
  // 300 000 random kernel-level Specs, then more until every kernel that
  // applies on `t` has been checked on 1000 (some apply to few distinct
  // Specs: scalar_fma to one, and a 16-register file holds a few hundred
  // register tiles).
  constexpr int kWanted = 1000;
  std::mt19937_64 rng(77 + static_cast<int>(t.isa));
  auto enough = [&] {
    for (KernelId id : AllKernels()) {
      const int n = checker.Checked(id);
      if (n > 0 && n < kWanted) return false;
    }
    return true;
  };
  for (int tries = 0; tries < 4'000'000 && (tries < 300'000 || !enough());
       ++tries) {
    checker.CheckLeaf(RandomLeaf(rng, t));
    if (::testing::Test::HasFatalFailure()) return;
  }
  checker.Print();
  for (KernelId id : AllKernels()) {
    const int n = checker.Checked(id);
    // Without AVX-512 BF16 the k-pair kernels never apply.
    if (n == 0 && !t.bf16_dot) continue;
    EXPECT_GE(n, kWanted) << Info(id).name;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, KernelCatalogue,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) {
                           return std::string(Name(info.param));
                         });

}  // namespace
}  // namespace amarena
