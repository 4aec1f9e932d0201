// Roots whose operands stream from DRAM and roots whose operands fit in L3
// (Target::ForRoot): the runtime searches each under its own target, and
// stores their results apart in the database.
#include <memory>

#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "runtime/search_db.h"
#include "search/search.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/temp_dir.h"

namespace amarena {
namespace {

using testing::TempDir;
using testing::WithDb;

// The host's target with every band from DRAM priced at three dense lines,
// so that whether a search prices bands shows in its costs on any host.
Target BandedHost() {
  Target t = *HostTarget();
  CostParams c = t.cost;
  const int64_t dense = c.Line(Level::kGL, true);
  c.line_gl_band.fill(3 * dense);
  t.SetPrices(c);
  return t;
}

int64_t SearchedCost(const Target& t, const Spec& bound) {
  Searcher s(t);
  absl::StatusOr<ImplPtr> best = s.Solve(bound);
  EXPECT_TRUE(best.ok()) << best.status();
  return best.ok() ? (*best)->cost.main : -1;
}

TEST(RootTargetTest, ForRootSaysWhetherTheOperandsFitInL3) {
  const Target t = BandedHost();
  // 128 MiB of B: more than any host's L3 budget.
  const Spec big = t.Bind(*ParseSpec("matmul 1x2048x16384 f32"));
  const Spec small = t.Bind(*ParseSpec("matmul 1x256x2048 f32"));  // 2 MiB
  EXPECT_FALSE(big.OperandsFitL3());
  EXPECT_TRUE(small.OperandsFitL3());
  EXPECT_TRUE(t.ForRoot(big).dram_operands);
  EXPECT_FALSE(t.ForRoot(small).dram_operands);
  EXPECT_EQ(t.ForRoot(big).Fingerprint(), t.Fingerprint());
  EXPECT_NE(t.ForRoot(small).Fingerprint(), t.Fingerprint());
}

TEST(RootTargetTest, TheRuntimeSearchesAndStoresEachRootUnderItsOwn) {
  TempDir dir;
  const std::string db = dir.path() + "/amarena.db";
  const Target t = BandedHost();
  const Spec small = t.Bind(*ParseSpec("matmul 1x256x2048 f32"));
  const Spec big = t.Bind(*ParseSpec("matmul 1x2048x16384 f32"));
  const Target warm = t.ForRoot(small), cold = t.ForRoot(big);
  // Priced with its bands, the small root would cost more: the two
  // searches differ, so the kernel's cost tells which one made it.
  const int64_t small_warm = SearchedCost(warm, small);
  ASSERT_GT(SearchedCost(cold, small), small_warm);

  Runtime rt(t, WithDb(db));
  absl::StatusOr<KernelPtr> ks = rt.Get(small);
  absl::StatusOr<KernelPtr> kb = rt.Get(big);
  ASSERT_TRUE(ks.ok() && kb.ok()) << ks.status() << kb.status();
  EXPECT_EQ((*ks)->impl().cost.main, small_warm);
  EXPECT_EQ((*kb)->impl().cost.main, SearchedCost(cold, big));
  EXPECT_TRUE(testing::KernelMatchesReference(*ks, small));

  // Each under its own target's key in the database, never the other's.
  ASSERT_NE(rt.db(), nullptr);
  EXPECT_TRUE(rt.db()->Find(warm, ClampBudget(small, warm)).has_value());
  EXPECT_FALSE(rt.db()->Find(cold, ClampBudget(small, cold)).has_value());
  EXPECT_TRUE(rt.db()->Find(cold, ClampBudget(big, cold)).has_value());
  EXPECT_EQ(rt.db()->Stats()->targets, 2);

  // A second runtime replays both from the file.
  Runtime again(t, WithDb(db));
  absl::StatusOr<KernelPtr> ks2 = again.Get(small);
  ASSERT_TRUE(ks2.ok()) << ks2.status();
  EXPECT_EQ((*ks2)->source(), KernelSource::kDatabase);
  EXPECT_EQ((*ks2)->impl().cost.main, small_warm);
}

}  // namespace
}  // namespace amarena
