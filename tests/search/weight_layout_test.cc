// Tests for search/weight_layout.h: which layouts of B are tried, and that the
// cheapest is chosen, by a given cost and by the search.
#include "search/weight_layout.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "search/search.h"
#include "tests/testing/matchers.h"

namespace amarena {
namespace {

using ::amarena::testing::IsOk;
using ::amarena::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr CacheSizes kCaches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};

Target Avx512Bf16() {
  Target t = Target::Avx512(kCaches);
  t.bf16_dot = true;
  return t;
}

std::vector<std::string> Names(const std::vector<Spec>& specs) {
  std::vector<std::string> out;
  for (const Spec& s : specs) out.push_back(WeightLayoutName(s.aux[1]));
  return out;
}

TEST(WeightLayoutTest, CandidatesFollowTheTarget) {
  const Spec bf16 = *ParseSpec("matmul 1x2048x16384 bf16*bf16->f32");
  EXPECT_THAT(
      Names(WeightLayoutCandidates(bf16, Avx512Bf16())),
      ElementsAre("row", "col", "p16", "p32", "p64", "p128", "p16x2", "p32x2",
                  "p64x2", "p128x2", "p16s2", "p32s2", "p64s2", "p128s2",
                  "p16x2s2", "p32x2s2", "p64x2s2", "p128x2s2"));
  // No vdpbf16ps: no k-pairs; f32 never.
  EXPECT_THAT(Names(WeightLayoutCandidates(bf16, Target::Avx2(kCaches))),
              ElementsAre("row", "col", "p16", "p32", "p64", "p128", "p16s2",
                          "p32s2", "p64s2", "p128s2"));
  EXPECT_THAT(Names(WeightLayoutCandidates(*ParseSpec("matmul 8x64x100 f32"),
                                           Avx512Bf16())),
              ElementsAre("row", "col", "p16", "p32", "p64"));
  // Beside an f32 A, widen_pairs reads k-pairs on either ISA.
  const Spec mixed = *ParseSpec("matmul 1x2048x1024 f32*bf16->f32");
  for (const Target& t : {Avx512Bf16(), Target::Avx2(kCaches)})
    EXPECT_THAT(
        Names(WeightLayoutCandidates(mixed, t)),
        ElementsAre("row", "col", "p16", "p32", "p64", "p128", "p16x2",
                    "p32x2", "p64x2", "p128x2", "p16s2", "p32s2", "p64s2",
                    "p128s2", "p16x2s2", "p32x2s2", "p64x2s2", "p128x2s2"));
}

// Sections only where each holds kMinSectionBytes (2 MiB): 2048 x 1024 bf16
// is 4 MiB, two sections of 2 MiB; 2000 x 1000 (padded to 1024) is not.
TEST(WeightLayoutTest, SectionsOnlyWhereTheyAreFarApart) {
  auto sectioned = [](const char* text) {
    int n = 0;
    for (const Spec& s :
         WeightLayoutCandidates(*ParseSpec(text), Target::Avx2(kCaches)))
      n += s.aux[1].layout.in_sections();
    return n;
  };
  EXPECT_EQ(sectioned("matmul 1x2048x1024 bf16*bf16->f32"), 4);
  EXPECT_EQ(sectioned("matmul 1x2000x1000 bf16*bf16->f32"), 0);
  EXPECT_EQ(sectioned("matmul 1x1024x1024 f32"), 4);
}

// Each candidate is canonical and distinct: panels no wider than N rounded
// up to 16 (a panel of 16 pads 13 columns), and pairs only with K > 1.
TEST(WeightLayoutTest, CandidatesAreCanonicalAndDistinct) {
  EXPECT_THAT(Names(WeightLayoutCandidates(
                  *ParseSpec("matmul 3x7x13 bf16*bf16->f32"), Avx512Bf16())),
              ElementsAre("row", "col", "p16", "p16x2"));
  EXPECT_THAT(Names(WeightLayoutCandidates(
                  *ParseSpec("matmul 3x1x40 bf16*bf16->f32"), Avx512Bf16())),
              ElementsAre("row", "col", "p16", "p32"));
  for (const Spec& s : WeightLayoutCandidates(
           *ParseSpec("matmul 5x100x70 bf16*bf16->f32"), Avx512Bf16()))
    EXPECT_EQ(s, *ParseSpec(PrintSpec(s)));
}

TEST(WeightLayoutTest, ChoosesTheCheapestFirstOnTies) {
  const Spec spec = *ParseSpec("matmul 16x256x512 f32");
  const Target t = Target::Avx2(kCaches);
  // Cost by name: p32 and p64 tie at the lowest; p16 has no tree.
  auto cost = [](const Spec& s) -> absl::StatusOr<int64_t> {
    const std::string n = WeightLayoutName(s.aux[1]);
    if (n == "p16") return absl::UnimplementedError("no tree");
    return n == "p32" || n == "p64" ? 10 : 20;
  };
  absl::StatusOr<WeightLayoutChoice> c = ChooseWeightLayout(spec, t, cost);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ(WeightLayoutName(c->spec.aux[1]), "p32");
  EXPECT_EQ(c->cost, 10);
  std::vector<std::string> tried;
  for (const auto& [s, cost] : c->tried)
    tried.push_back(WeightLayoutName(s.aux[1]));
  EXPECT_THAT(tried, ElementsAre("row", "col", "p32", "p64", "p128"));
}

// Over a range of M, the choice minimises the worst ratio to the best layout
// at each M: p128 is cheapest wherever it has a tree but has none at M = 4,
// so it is no choice; p32 is up to 6x the best, p64 at most 3x (at M = 1),
// so p64 serves the range. Alone, M = 1 picks p128.
TEST(WeightLayoutTest, OverARangeOfMTheWorstRatioDecides) {
  const Spec spec = *ParseSpec("matmul 1x256x512 f32");
  const Target t = Target::Avx2(kCaches);
  std::vector<int64_t> asked;
  auto cost = [&](const Spec& s) -> absl::StatusOr<int64_t> {
    asked.push_back(s.m);
    const std::string n = WeightLayoutName(s.aux[1]);
    if (n == "p32") return s.m == 1 ? 10 : 30 * s.m;
    if (n == "p64") return s.m == 1 ? 15 : 10 * s.m;
    if (n == "p128" && s.m == 4) return absl::UnimplementedError("no tree");
    if (n == "p128") return 5 * s.m;
    return 1000 * s.m;
  };
  absl::StatusOr<WeightLayoutRangeChoice> r =
      ChooseWeightLayoutOverM(spec, t, 1, 64, cost);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(WeightLayoutName(r->at_m.spec.aux[1]), "p64");
  EXPECT_EQ(r->at_m.spec.m, 1);
  EXPECT_EQ(r->at_m.cost, 15);
  EXPECT_THAT(r->ms, ElementsAre(1, 2, 4, 8, 16, 32, 64));
  EXPECT_DOUBLE_EQ(r->regret, 3.0);
  // Each candidate (row, col, p16, p32, p64, p128) once at M = 64.
  EXPECT_EQ(std::count(asked.begin(), asked.end(), 64), 6);
  absl::StatusOr<WeightLayoutRangeChoice> one =
      ChooseWeightLayoutOverM(spec, t, 1, 1, cost);
  ASSERT_THAT(one, IsOk());
  EXPECT_EQ(WeightLayoutName(one->at_m.spec.aux[1]), "p128");
  EXPECT_EQ(one->regret, 1.0);
  EXPECT_THAT(ChooseWeightLayoutOverM(spec, t, 2, 64, cost),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must be 1 <= lo <= M <= hi")));
}

TEST(WeightLayoutTest, ErrorsNameTheProblem) {
  const Target t = Target::Avx2(kCaches);
  auto none = [](const Spec&) -> absl::StatusOr<int64_t> {
    return absl::UnimplementedError("no tree");
  };
  EXPECT_THAT(ChooseWeightLayout(*ParseSpec("matmul 4x4x4 f32"), t, none),
              StatusIs(absl::StatusCode::kUnimplemented,
                       HasSubstr("in any layout of B")));
  auto broken = [](const Spec&) -> absl::StatusOr<int64_t> {
    return absl::CancelledError("stopped");
  };
  EXPECT_THAT(ChooseWeightLayout(*ParseSpec("matmul 4x4x4 f32"), t, broken),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("stopped")));
  auto one = [](const Spec&) -> absl::StatusOr<int64_t> { return 1; };
  EXPECT_THAT(ChooseWeightLayout(*ParseSpec("matmul 4x4x4 f32 b=col"), t, one),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("B plain row-major in gl")));
  EXPECT_THAT(ChooseWeightLayout(*ParseSpec("zero 4x4 f32"), t, one),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must be a matmul")));
}

// With the search as the cost: the chosen layout's tree is no dearer than
// any candidate's, and a vector-matrix multiply with bf16 weights is read
// from k-pair panels where vdpbf16ps exists, from panels of rows where not,
// in two sections (its two panels side by side far apart, 4 MiB here).
TEST(WeightLayoutTest, SearchChoosesPanelsForStreamedWeights) {
  for (const Target& t : {Avx512Bf16(), Target::Avx2(kCaches)}) {
    Searcher searcher(t);
    auto cost = [&](const Spec& s) -> absl::StatusOr<int64_t> {
      absl::StatusOr<ImplPtr> impl = searcher.Solve(t.Bind(s));
      if (!impl.ok()) return impl.status();
      return (*impl)->cost.main;
    };
    absl::StatusOr<WeightLayoutChoice> c = ChooseWeightLayout(
        *ParseSpec("matmul 1x1024x4096 bf16*bf16->f32"), t, cost);
    ASSERT_THAT(c, IsOk());
    for (const auto& [s, cost] : c->tried) EXPECT_LE(c->cost, cost);
    const Layout& b = c->spec.aux[1].layout;
    EXPECT_TRUE(b.packed()) << PrintSpec(c->spec);
    EXPECT_EQ(b.paired(), t.bf16_dot) << PrintSpec(c->spec);
    EXPECT_EQ(b.section_count(), 2) << PrintSpec(c->spec);
  }
}

}  // namespace
}  // namespace amarena
