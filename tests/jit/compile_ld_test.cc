// Operands that are views of wider matrices (lda=, ldb=, ldc=): every kernel
// the runtime makes for such a Spec, serial and on two threads, matches the
// reference with its operands against guard pages sized by their pitched
// bytes ((outer - 1) * ld + inner elements: an access past the last row's
// end faults), NaNs between the rows of every operand (a kernel computing
// with one fails the comparison) and the output's gaps checked untouched
// (tests/testing/check_kernel.h).
#include <cstdio>
#include <string>

#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/isa_runtime.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

class LdKernels : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!testing::HasIsa(GetParam()))
      GTEST_SKIP() << "CPU lacks " << Name(GetParam());
  }
  // Gets and checks the kernel for `text`; false when the target cannot
  // make it (Unimplemented, the message saying why).
  bool Check(const std::string& text, int threads, uint64_t seed) {
    absl::StatusOr<KernelPtr> k = testing::Rt(GetParam(), threads).Get(text);
    if (absl::IsUnimplemented(k.status())) return false;
    EXPECT_TRUE(k.ok()) << text << ": " << k.status();
    if (!k.ok()) return false;
    // The kernel is for the view, not for a dense copy.
    const absl::StatusOr<Spec> s = ParseSpec(text);
    EXPECT_TRUE(s.ok()) << text;
    for (int i = 0; s.ok() && i < 3; ++i)
      EXPECT_EQ((*k)->spec().aux[i].layout.ld(), s->aux[i].layout.ld())
          << text << ", operand " << i;
    EXPECT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec(), seed))
        << text << " on " << threads << " thread(s)";
    return true;
  }
};

// Shapes of 1, 7, 13, 100 and primes, pitches one, 13 and a prime past the
// row, both orders, both dtypes, accumulating or not.
TEST_P(LdKernels, ChosenShapes) {
  const char* const texts[] = {
      "matmul 1x1x1 f32 lda=5",
      "matmul 7x13x100 f32 lda=14 ldb=113 ldc=101",
      "matmul 13x7x1 f32 a=col b=col c=col lda=14 ldb=8 ldc=20",
      "matmul 100x100x100 f32 lda=101 ldb=113 ldc=131",
      "matmul 100x100x100 f32 accum a=col c=col lda=113 ldb=101 ldc=227",
      "matmul 97x61x31 bf16*bf16->f32 lda=62 ldb=44 ldc=37",
      "matmul 7x100x13 bf16*bf16->f32 accum b=col lda=113 ldb=101 ldc=14",
      "matmul 1x100x1 f32 b=col ldb=101",
      "matmul 100x1x100 f32 a=col lda=101 ldc=4096",
      "matmul 64x64x64 f32 lda=4096 ldc=100",
      "matmul 256x64x256 f32 lda=67 ldb=263 ldc=257",
      "matmul 17x256x512 bf16*bf16->f32 lda=300 ldb=523 ldc=521",
  };
  for (const char* text : texts)
    for (int threads : {1, 2})
      EXPECT_TRUE(Check(text, threads, 7)) << text << ": unimplemented";
}

TEST_P(LdKernels, RandomSpecsMatchTheReference) {
  const Isa isa = GetParam();
  const int count = testing::SweepCount(120);
  const std::vector<std::string> texts = testing::RandomLdSpecTexts(
      count, /*max_dim=*/160, /*seed=*/3100 + static_cast<int>(isa));
  int checked = 0, with_ld = 0;
  for (size_t i = 0; i < texts.size(); i += testing::SweepStride()) {
    with_ld += texts[i].find(" ld") != std::string::npos;
    for (int threads : {1, 2})
      checked += Check(texts[i], threads, i + 1) && threads == 1;
  }
  std::printf("%s: %d Specs (%d with a leading dimension) checked serially "
              "and on two threads\n",
              std::string(Name(isa)).c_str(), checked, with_ld);
  const int tried = (count + static_cast<int>(testing::SweepStride()) - 1) /
                    static_cast<int>(testing::SweepStride());
  EXPECT_EQ(checked, tried);
  EXPECT_GE(with_ld, tried / 2);
}

INSTANTIATE_TEST_SUITE_P(Isa, LdKernels,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) {
                           return std::string(Name(info.param));
                         });

}  // namespace
}  // namespace amarena
