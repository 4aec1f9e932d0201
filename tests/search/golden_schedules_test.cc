// The trees the search chooses for the benchmark suite's shapes on two fixed
// targets (an AVX2 and an AVX-512 BF16 machine with fixed caches, one and two
// workers), against tests/search/golden_schedules.txt: a refactoring of the
// search, the cost model, layouts or kernels that changes a choice shows up
// here, with the old and the new schedule. A change that is meant is
// recorded by running this test with AMARENA_UPDATE_GOLDEN=1, which rewrites
// the file (then explain the difference in the commit).
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/replay.h"
#include "search/search.h"
#include "tests/testing/fixed_target.h"

#ifndef AMARENA_GOLDEN_SCHEDULES
#error "the build names the golden file"
#endif

namespace amarena {
namespace {

constexpr const char* kShapes[] = {
    "matmul 8x8x8 f32",
    "matmul 100x100x100 f32",
    "matmul 256x256x256 f32",
    "matmul 1024x1024x1024 f32",
    "matmul 128x768x3072 f32",
    "matmul 16x4096x4096 f32",
    "matmul 49x2048x512 f32",
    "matmul 1x2048x16384 f32",
    "matmul 37x91x53 f32 a=col b=col c=col accum",
    "matmul 64x64x64 bf16*bf16->f32",
    "matmul 1x2048x16384 bf16*bf16->f32 b=p128x2s2",
    "matmul 16x4096x4096 bf16*bf16->f32 b=p32x2s2",
    "matmul 77x94x313 bf16*bf16->f32 b=p4x2s8",
};

// One line per (target, shape): "isa workers | spec | cost | schedule", or
// "... | error | CODE" where the target cannot implement the Spec.
std::vector<std::string> Lines() {
  std::vector<std::string> out;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    for (int workers : {1, 2}) {
      const Target t = testing::FixedTarget(isa, workers);
      Searcher searcher(t);
      for (const char* text : kShapes) {
        absl::StatusOr<Spec> s = ParseSpec(text);
        EXPECT_TRUE(s.ok()) << text;
        absl::StatusOr<ImplPtr> impl = searcher.Solve(t.Bind(*s));
        out.push_back(absl::StrCat(
            Name(isa), " ", workers, " | ", text, " | ",
            impl.ok() ? absl::StrCat((*impl)->cost.main, " | ",
                                     EncodeDecisions(**impl))
                      : absl::StrCat("error | ", absl::StatusCodeToString(
                                                     impl.status().code()))));
      }
    }
  }
  return out;
}

TEST(GoldenSchedules, SuiteShapesChooseTheRecordedTrees) {
  const std::vector<std::string> now = Lines();
  const char* update = std::getenv("AMARENA_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream f(AMARENA_GOLDEN_SCHEDULES);
    for (const std::string& l : now) f << l << "\n";
    GTEST_SKIP() << "rewrote " << AMARENA_GOLDEN_SCHEDULES;
  }
  std::ifstream f(AMARENA_GOLDEN_SCHEDULES);
  ASSERT_TRUE(f.good()) << "cannot read " << AMARENA_GOLDEN_SCHEDULES;
  std::stringstream text;
  text << f.rdbuf();
  std::vector<std::string> golden =
      absl::StrSplit(text.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(golden.size(), now.size());
  for (size_t i = 0; i < now.size(); ++i)
    EXPECT_EQ(now[i], golden[i]) << "line " << i + 1;
}

}  // namespace
}  // namespace amarena
