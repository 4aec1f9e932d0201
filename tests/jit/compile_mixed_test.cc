// f32 activations times bf16 weights into f32 (`f32*bf16->f32`): search +
// JIT + run against the reference on the ISAs the host has. B is widened in
// the register as the kernels load it, or cast to f32 once by a packing copy
// where the search finds that cheaper (docs/bf16.md).
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

using testing::KernelMatchesReference;
using testing::Rt;
using testing::TextMatchesReference;
using testing::UsesKernel;

class MixedTest : public testing::IsaTest {};
AMARENA_INSTANTIATE_PER_ISA(MixedTest);

// Random user-level Specs: dims mostly small and odd, A and C row- or
// column-major, B plain, column-major, in panels, k-pair panels, sections or
// `b=any`, accumulating or not, alternately serial and with two threads.
// Only k-pair panels that no kernel reads in place and the unpacking copy
// cannot take are refused (beside a column-major C, or too wide).
TEST_P(MixedTest, RandomSpecsMatchTheReference) {
  const Isa isa = GetParam();
  const std::vector<std::string> texts = testing::RandomSpecTexts(
      testing::SweepCount(150), /*max_dim=*/200,
      /*seed=*/2300 + static_cast<int>(isa), "f32*bf16->f32");
  const testing::SweepCounts n =
      testing::CheckTextSweep(isa, texts, [](std::string text, size_t i) {
        if (i % 4 == 0 && !absl::StrContains(text, " b=")) text += " b=any";
        return text;
      });
  const int checked = n.checked, refused = n.refused;
  std::printf("%s: %d f32*bf16->f32 kernels checked, %d refused\n",
              std::string(Name(isa)).c_str(), checked, refused);
  EXPECT_GT(checked, refused);
}

// A grid of dims 1, 7, 13, 100 and primes, B row- and column-major, serial
// and with two threads.
TEST_P(MixedTest, GridMatchesTheReference) {
  for (int64_t m : {1, 7, 13})
    for (int64_t k : {1, 7, 13, 100, 1031})
      for (int64_t n : {1, 7, 13, 100, 131})
        for (const char* b : {"", " b=col"}) {
          const std::string text =
              absl::StrCat("matmul ", m, "x", k, "x", n, " f32*bf16->f32", b);
          EXPECT_TRUE(
              TextMatchesReference(GetParam(), 1 + (k + n) % 2, text, k * n));
        }
}

// The engines' shapes: the vector-matrix multiply with B plain,
// column-major, pre-packed, in k-pair panels and `b=any`, accumulating too,
// serial and with two threads; a few rows of A.
TEST_P(MixedTest, EngineShapes) {
  for (int threads : {1, 2})
    for (const char* text : {
             "matmul 1x2048x16384 f32*bf16->f32",
             "matmul 1x2048x16384 f32*bf16->f32 b=col",
             "matmul 1x2048x16384 f32*bf16->f32 b=p32s2",
             "matmul 1x2048x16384 f32*bf16->f32 b=p16x2",
             "matmul 1x2048x16384 f32*bf16->f32 b=any",
             "matmul 1x2048x4096 f32*bf16->f32 accum",
             "matmul 4x2048x1000 f32*bf16->f32 b=any",
             "matmul 17x33x129 f32*bf16->f32 a=col c=col accum",
         })
      EXPECT_TRUE(TextMatchesReference(GetParam(), threads, text));
}

// B in k-pair panels (`b=pPx2`, the layout vdpbf16ps reads, which would
// round an f32 A): widen_pairs splits each vector of pairs into two rows of
// f32, on both ISAs, up to the widest panel a row of C in registers allows
// (a tile never cuts a panel); wider ones are refused with a message.
TEST_P(MixedTest, KPairPanels) {
  const Target& t = *Rt(GetParam(), 1).target();
  for (int64_t p : {8, 16, 32, 64, 128, 256})
    for (const char* shape : {"1x2048x1000", "5x33x300", "2x7x13"}) {
      const std::string text =
          absl::StrCat("matmul ", shape, " f32*bf16->f32 b=p", p, "x2");
      absl::StatusOr<KernelPtr> k = Rt(GetParam(), 1).Get(text);
      if (p / t.f32_lanes + 4 > t.vector_registers) {
        EXPECT_TRUE(absl::IsUnimplemented(k.status())) << text;
        EXPECT_TRUE(absl::StrContains(k.status().message(),
                                      "a row of C across a panel"))
            << text << ": " << k.status();
        continue;
      }
      ASSERT_TRUE(k.ok()) << text << ": " << k.status();
      EXPECT_TRUE(KernelMatchesReference(*k, (*k)->spec())) << text;
      EXPECT_TRUE(UsesKernel((*k)->impl(), KernelId::kWidenPairs)) << text;
      EXPECT_TRUE(TextMatchesReference(GetParam(), 2, text + " accum"));
    }
}

// Dot products down a column-major B: k below, at and above one vector,
// odd and even, and longer than one kernel unrolls; the dot kernel takes
// an f32 A beside a bf16 B.
TEST_P(MixedTest, DotProducts) {
  int dots = 0;
  for (int64_t k : {2, 3, 7, 8, 9, 15, 16, 17, 33, 100, 1025, 2053}) {
    const std::string text =
        absl::StrCat("matmul 1x", k, "x3 f32*bf16->f32 b=col");
    EXPECT_TRUE(TextMatchesReference(GetParam(), 1, text));
    absl::StatusOr<KernelPtr> kernel = Rt(GetParam(), 1).Get(text);
    ASSERT_TRUE(kernel.ok());
    dots += UsesKernel((*kernel)->impl(), KernelId::kDot);
  }
  EXPECT_GT(dots, 0);
}

// The vector-matrix multiply reads B once, as bf16: no packing copy (a cast
// to f32 would write twice the bytes it reads), and the model prices it
// below the all-f32 multiply of the same shape (half the bytes of B).
TEST_P(MixedTest, VectorMatrixStreamsBf16B) {
  Runtime& rt = Rt(GetParam(), 1);
  for (const char* b : {"", " b=col", " b=p32s2"}) {
    absl::StatusOr<KernelPtr> mixed =
        rt.Get(absl::StrCat("matmul 1x2048x16384 f32*bf16->f32", b));
    absl::StatusOr<KernelPtr> f32 =
        rt.Get(absl::StrCat("matmul 1x2048x16384 f32", b));
    ASSERT_TRUE(mixed.ok()) << mixed.status();
    ASSERT_TRUE(f32.ok()) << f32.status();
    EXPECT_FALSE(UsesKernel((*mixed)->impl(), KernelId::kCopy)) << b;
    EXPECT_LT((*mixed)->impl().cost.main, (*f32)->impl().cost.main) << b;
  }
}

}  // namespace
}  // namespace amarena
