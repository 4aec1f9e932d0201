// The rewrite registry: every action a registered rewrite offers is owned by
// that rewrite alone, describes itself with the rewrite's keyword, parses back
// to itself and re-applies to the same expansion; every action the search
// chooses for random Specs names a registered rewrite.
#include "search/rewrites/registry.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_split.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/replay.h"
#include "search/search.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

// Both ISAs, bf16 dot products on AVX-512, and two workers (parallel tiles).
std::vector<Target> Targets() {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  Target avx2 = Target::Avx2(caches);
  Target avx512 = Target::Avx512(caches);
  avx512.bf16_dot = true;
  avx2.workers = avx512.workers = 2;
  return {avx2, avx512};
}

// User-level Specs of every kind a caller may ask for, and the user's f32
// matmuls with random layouts.
std::vector<Spec> RandomUserSpecs() {
  std::vector<Spec> out;
  for (const std::string& text : testing::RandomSpecTexts(24, 40, 21)) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    if (s.ok()) out.push_back(*s);
  }
  for (const Spec& s : testing::RandomMatmuls(6, 100, 22)) out.push_back(s);
  // Batched: loops over the batch, parallel ones, packs of a shared B.
  for (const std::string& text : testing::RandomBatchSpecTexts(8, 40, 23)) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    if (s.ok()) out.push_back(*s);
  }
  return out;
}

void Collect(const ImplNode& n, absl::flat_hash_set<Spec>& out) {
  out.insert(n.spec);
  for (const ImplPtr& c : n.children) Collect(*c, out);
}

// The searched trees and the distinct Specs at their nodes, for every target
// and random Spec.
struct Searched {
  Target target;
  std::vector<ImplPtr> trees;
  std::vector<Spec> specs;
};

std::vector<Searched> Search() {
  std::vector<Searched> out;
  const std::vector<Spec> specs = RandomUserSpecs();
  for (const Target& t : Targets()) {
    Searched s{.target = t, .trees = {}, .specs = {}};
    Searcher searcher(t);
    for (const Spec& user : specs) {
      absl::StatusOr<ImplPtr> impl = searcher.Solve(t.Bind(user));
      if (!impl.ok()) continue;  // no kernel for it on this target
      s.trees.push_back(*impl);
    }
    absl::flat_hash_set<Spec> distinct;
    for (const ImplPtr& tree : s.trees) Collect(*tree, distinct);
    s.specs.assign(distinct.begin(), distinct.end());
    out.push_back(std::move(s));
  }
  return out;
}

// Searched once for the tests below.
const std::vector<Searched>& SearchedTrees() {
  static const std::vector<Searched> trees = Search();
  return trees;
}

TEST(RegistryTest, EveryRewriteIsCompleteWithItsOwnNameAndKeyword) {
  std::set<absl::string_view> names, keywords;
  for (const Rewrite* r : Rewrites()) {
    EXPECT_FALSE(r->name.empty());
    EXPECT_FALSE(r->keyword.empty()) << r->name;
    EXPECT_EQ(r->keyword.find(' '), absl::string_view::npos) << r->name;
    EXPECT_NE(r->enumerate, nullptr) << r->name;
    EXPECT_NE(r->owns, nullptr) << r->name;
    EXPECT_NE(r->describe, nullptr) << r->name;
    EXPECT_NE(r->parse, nullptr) << r->name;
    EXPECT_TRUE(names.insert(r->name).second) << r->name;
    EXPECT_TRUE(keywords.insert(r->keyword).second) << r->keyword;
  }
}

// Every candidate each rewrite offers at every node of the searched trees (so
// at Specs deep inside real trees, not only at the roots).
TEST(RegistryTest, EveryActionOfEveryRewriteRoundTripsThroughItsDescriptor) {
  std::map<absl::string_view, int> offered;
  for (const Searched& searched : SearchedTrees()) {
    const Target& t = searched.target;
    for (const Spec& spec : searched.specs) {
      for (const Rewrite* r : Rewrites()) {
        std::vector<Candidate> cands;
        r->enumerate(spec, t, cands);
        for (const Candidate& c : cands) {
          ++offered[r->name];
          const Action& a = c.action;
          int owners = 0;
          for (const Rewrite* other : Rewrites()) owners += other->owns(a);
          ASSERT_EQ(owners, 1) << r->name << " at " << PrintSpec(spec);
          ASSERT_TRUE(r->owns(a)) << r->name << " at " << PrintSpec(spec);
          const std::string d = Describe(a);
          EXPECT_EQ(d, r->describe(a));
          const std::vector<absl::string_view> words = absl::StrSplit(d, ' ');
          EXPECT_EQ(words[0], r->keyword) << d;
          absl::StatusOr<Action> back = ParseAction(d);
          ASSERT_TRUE(back.ok()) << d << ": " << back.status();
          EXPECT_EQ(*back, a) << d;
          // What a stored tree records for this node is the same action.
          EXPECT_EQ(ActionOf(c.expansion), a) << d;
          absl::StatusOr<Candidate> applied = ApplyAction(spec, *back, t);
          ASSERT_TRUE(applied.ok()) << d << ": " << applied.status();
          // The children as the search sees them: every Spec below the root
          // is serial (EnumerateCandidates and ApplyAction mark them).
          auto want = c.expansion.children;
          for (Spec& w : want) w.serial = true;
          EXPECT_EQ(applied->expansion.children, want) << d;
        }
      }
    }
  }
  for (const Rewrite* r : Rewrites())
    EXPECT_GT(offered[r->name], 0)
        << r->name << " offered nothing: its actions went untested";
}

TEST(RegistryTest, EveryChosenActionNamesARegisteredRewrite) {
  std::set<absl::string_view> chosen;
  int trees = 0;
  for (const Searched& searched : SearchedTrees()) {
    for (const ImplPtr& tree : searched.trees) {
      ++trees;
      for (absl::string_view d : absl::StrSplit(EncodeDecisions(*tree), ';')) {
        const absl::string_view keyword = *absl::StrSplit(d, ' ').begin();
        const Rewrite* named = nullptr;
        for (const Rewrite* r : Rewrites())
          if (r->keyword == keyword) named = r;
        ASSERT_NE(named, nullptr) << "'" << d << "' names no rewrite";
        absl::StatusOr<Action> a = ParseAction(d);
        ASSERT_TRUE(a.ok()) << a.status();
        EXPECT_TRUE(named->owns(*a)) << d;
        chosen.insert(named->name);
      }
    }
  }
  EXPECT_GT(trees, 50);
  // The random Specs exercise most rewrites in chosen trees, not only offered.
  EXPECT_GE(chosen.size(), 6u);
}

}  // namespace
}  // namespace amarena
