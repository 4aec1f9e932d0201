// alpha (C = alpha * A.B, C += alpha * A.B accumulating): search + JIT + run
// against the reference on the ISAs the host has. Each matmul kernel scales
// its own products (core/kernels.cc, Scaled), so a k split scales every
// slice once; alpha = 1 is the plain product, with the same trees and code.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/kernels.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "runtime/runtime.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/isa_runtime.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

using testing::Rt;
using testing::TextMatchesReference;
using testing::UsesKernel;

class AlphaTest : public testing::IsaTest {};
AMARENA_INSTANTIATE_PER_ISA(AlphaTest);

// A grid of dims 1, 7, 13, 100 and primes (non-divisible tiles, masked
// tails, k split into blocks), every input dtype, accumulating or not,
// serial and with two threads.
TEST_P(AlphaTest, GridMatchesTheReference) {
  int i = 0;
  for (int64_t m : {1, 7, 13, 100})
    for (int64_t k : {1, 7, 13, 100, 331})
      for (int64_t n : {1, 7, 13, 100, 37})
        for (const char* dtypes : {"f32", "bf16*bf16->f32", "f32*bf16->f32"}) {
          ++i;
          if (i % 3 != 0 && m == 100) continue;  // fewer of the large ones
          const char* alpha = i % 2 ? "0.5" : "-1.75";
          const std::string text =
              absl::StrCat("matmul ", m, "x", k, "x", n, " ", dtypes,
                           " alpha=", alpha, i % 4 == 0 ? " accum" : "");
          EXPECT_TRUE(TextMatchesReference(GetParam(), 1 + i % 2, text, i));
        }
}

// The kernels the search picks with alpha: the broadcast kernel scaling B's
// vectors (more rows than vectors) and A's broadcasts (a wide row), and the
// dot products (column-major B). (tests/jit/kernel_edges_test.cc runs every
// scaling kernel, scalar_fma too, on its edge shapes.)
TEST_P(AlphaTest, EveryScalingKernel) {
  struct Case {
    const char* text;
    KernelId kernel;
  };
  for (const Case& c : {
           Case{"matmul 64x64x64 f32 alpha=0.5", KernelId::kBroadcastFma},
           Case{"matmul 1x300x200 f32 alpha=3", KernelId::kBroadcastFma},
           Case{"matmul 3x257x5 f32 b=col alpha=-2", KernelId::kDot},
       }) {
    for (int threads : {1, 2}) {
      EXPECT_TRUE(TextMatchesReference(GetParam(), threads, c.text));
      EXPECT_TRUE(TextMatchesReference(GetParam(), threads,
                                       std::string(c.text) + " accum"));
    }
    absl::StatusOr<KernelPtr> k = Rt(GetParam(), 1).Get(c.text);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE(UsesKernel((*k)->impl(), c.kernel)) << c.text << "\n"
                                                    << PrintImpl((*k)->impl());
  }
}

// alpha = 0 writes zeros (C = 0 * A.B), or leaves C as it was when
// accumulating; -0 is the same Spec as 0.
TEST_P(AlphaTest, ZeroAlpha) {
  for (const char* text :
       {"matmul 13x100x37 f32 alpha=0", "matmul 13x100x37 f32 alpha=0 accum",
        "matmul 13x100x37 f32 alpha=-0 accum"}) {
    EXPECT_TRUE(TextMatchesReference(GetParam(), 1, text));
  }
  absl::StatusOr<Spec> zero = ParseSpec("matmul 4x4x4 f32 alpha=0");
  absl::StatusOr<Spec> minus = ParseSpec("matmul 4x4x4 f32 alpha=-0");
  ASSERT_TRUE(zero.ok() && minus.ok());
  EXPECT_EQ(*zero, *minus);
}

// A large k split into blocks: each block's products scaled once. An error
// of alpha applied twice (alpha^2) or not at all would be far beyond the
// tolerance with alpha = 0.5.
TEST_P(AlphaTest, KSplitScalesEachBlockOnce) {
  for (int threads : {1, 2})
    for (const char* text : {"matmul 8x4099x24 f32 alpha=0.5",
                             "matmul 8x4099x24 f32 alpha=0.5 accum",
                             "matmul 1x4099x300 bf16*bf16->f32 alpha=0.5",
                             "matmul 6x2053x16 f32*bf16->f32 alpha=0.5 b=col"})
      EXPECT_TRUE(TextMatchesReference(GetParam(), threads, text));
}

// Random user-level Specs of every layout and dtype with an alpha, serial
// and with two threads. k-pair panels are refused with alpha where only the
// k-pair kernels (which compute the plain product) would read them.
TEST_P(AlphaTest, RandomSpecsMatchTheReference) {
  const Isa isa = GetParam();
  const std::vector<std::string> texts =
      testing::RandomSpecTexts(testing::SweepCount(120), /*max_dim=*/150,
                               /*seed=*/4100 + static_cast<int>(isa));
  const testing::SweepCounts n = testing::CheckTextSweep(
      isa, texts, [](const std::string& text, size_t i) {
        return absl::StrCat(text, " alpha=", i % 2 ? "0.75" : "-3");
      });
  EXPECT_GT(n.checked, n.refused);
}

// alpha = 1 is the plain product: the same Spec, the same tree.
TEST_P(AlphaTest, AlphaOneIsThePlainProduct) {
  absl::StatusOr<Spec> one = ParseSpec("matmul 64x64x64 f32 alpha=1");
  absl::StatusOr<Spec> plain = ParseSpec("matmul 64x64x64 f32");
  ASSERT_TRUE(one.ok() && plain.ok());
  EXPECT_EQ(*one, *plain);
  EXPECT_EQ(PrintSpec(*one), "matmul 64x64x64 f32");
  absl::StatusOr<KernelPtr> a = Rt(GetParam(), 1).Get(*one);
  absl::StatusOr<KernelPtr> b = Rt(GetParam(), 1).Get(*plain);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(PrintImpl((*a)->impl()), PrintImpl((*b)->impl()));
}

}  // namespace
}  // namespace amarena
