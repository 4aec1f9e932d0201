// Generated code stays inside its operands and its scratch area, on every ISA
// the host has: random Specs over every dtype and layout a caller may ask for,
// each run serially and on two threads with every operand and scratch buffer
// flush against PROT_NONE guard pages (tests/testing/check_kernel.h), checked
// against the reference. Unlike the valgrind tests, this checks AVX-512 code.
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/isa_runtime.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

class GuardPages : public ::testing::TestWithParam<Isa> {};

// The Specs that once went wrong on AVX-512, against guard pages.
TEST_P(GuardPages, KnownCases) {
  const Isa isa = GetParam();
  if (!testing::HasIsa(isa)) GTEST_SKIP() << "CPU lacks " << Name(isa);
  for (const std::string& text : testing::OnceFaultingSpecs()) {
    for (int threads : {1, 2}) {
      absl::StatusOr<KernelPtr> k = testing::Rt(isa, threads).Get(text);
      ASSERT_TRUE(k.ok()) << text << ": " << k.status();
      EXPECT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec()))
          << text << " on " << threads << " thread(s)";
    }
  }
}

TEST_P(GuardPages, RandomSpecsStayInsideTheirOperands) {
  const Isa isa = GetParam();
  if (!testing::HasIsa(isa)) GTEST_SKIP() << "CPU lacks " << Name(isa);
  const int count = testing::SweepCount(200);
  const std::vector<std::string> texts = testing::RandomSpecTexts(
      count, /*max_dim=*/160, /*seed=*/1600 + static_cast<int>(isa));
  int checked = 0, unimplemented = 0;
  for (size_t i = 0; i < texts.size(); i += testing::SweepStride()) {
    for (int threads : {1, 2}) {
      absl::StatusOr<KernelPtr> k = testing::Rt(isa, threads).Get(texts[i]);
      if (absl::IsUnimplemented(k.status())) {
        unimplemented += threads == 1;
        break;  // a layout this target cannot read (the message says why)
      }
      ASSERT_TRUE(k.ok()) << texts[i] << ": " << k.status();
      ASSERT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec(), i))
          << texts[i] << " on " << threads << " thread(s)";
      checked += threads == 1;
    }
  }
  std::printf(
      "%s: %d Specs checked serially and on two threads, %d refused "
      "as not implemented\n",
      std::string(Name(isa)).c_str(), checked, unimplemented);
  // Most Specs must be runnable, or the sweep checks little.
  const int tried = (count + static_cast<int>(testing::SweepStride()) - 1) /
                    static_cast<int>(testing::SweepStride());
  EXPECT_GE(checked, tried * 9 / 10);
}

// Batched matmuls (shared B, explicit batch strides, C side by side within
// ldc): operands sized by their whole batch, gaps between its matrices NaN.
TEST_P(GuardPages, RandomBatchSpecsStayInsideTheirOperands) {
  const Isa isa = GetParam();
  if (!testing::HasIsa(isa)) GTEST_SKIP() << "CPU lacks " << Name(isa);
  const int count = testing::SweepCount(100);
  const std::vector<std::string> texts = testing::RandomBatchSpecTexts(
      count, /*max_dim=*/64, /*seed=*/1900 + static_cast<int>(isa));
  int checked = 0;
  for (size_t i = 0; i < texts.size(); i += testing::SweepStride()) {
    for (int threads : {1, 2}) {
      absl::StatusOr<KernelPtr> k = testing::Rt(isa, threads).Get(texts[i]);
      ASSERT_TRUE(k.ok()) << texts[i] << ": " << k.status();
      ASSERT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec(), i))
          << texts[i] << " on " << threads << " thread(s)";
    }
    ++checked;
  }
  std::printf("%s: %d batched Specs checked serially and on two threads\n",
              std::string(Name(isa)).c_str(), checked);
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Isa, GuardPages,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) {
                           return std::string(Name(info.param));
                         });

}  // namespace
}  // namespace amarena
