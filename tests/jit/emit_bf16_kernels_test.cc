// The k-pair kernels (jit/emit_bf16_kernels.cc: outer_bf16, copy_pairs):
// bf16 x bf16 -> f32 programs searched, JIT-compiled and run against the
// reference, with B pre-packed in k-pair panels (`b=pPx2`) or plain (the
// search packs it). Needs AVX-512 BF16 for the kernels themselves; a pair B
// on a target without it is unpacked by the search (checked with AVX2).
// Operands are filled whole, padding included, with random values: the
// kernels must never let a pad element reach an output.
#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "runtime/host.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/isa_runtime.h"

namespace amarena {
namespace {

using testing::HasIsa;
using testing::KernelMatchesReference;
using testing::Rt;

bool HasBf16Dot() {
  absl::StatusOr<Target> t = TargetFor(DetectCpu(), Isa::kAvx512);
  return t.ok() && t->isa == Isa::kAvx512 && t->bf16_dot;
}

// bf16 A (row-major) times B, f32 C; B plain row-major (panel 0) or in
// k-pair panels of `panel`.
Spec PairMatmul(int64_t m, int64_t k, int64_t n, int panel,
                bool accum = false) {
  TensorAux b{.dtype = DType::kBF16};
  if (panel) {
    b.layout = Layout::Panels(Order::kRowMajor, panel).Paired();
  }
  return Spec::Matmul(m, k, n, {.dtype = DType::kBF16}, b, {}, accum);
}

using testing::UsesKernel;

// M in {1, 2, 3, 4, 16}, K and N in {1, 7, 100, 2053}: B pre-packed in pair
// panels of 32 for every shape; plain B for the M the Bf16Grid of
// compile_bf16_test.cc does not already cover (2 and 4). One shard per M.
class PairGrid : public ::testing::TestWithParam<int64_t> {};

TEST_P(PairGrid, MatchesTheReference) {
  if (!HasBf16Dot()) GTEST_SKIP() << "CPU lacks AVX-512 BF16";
  const int64_t m = GetParam();
  for (int64_t k : {1, 7, 100, 2053})
    for (int64_t n : {1, 7, 100, 2053}) {
      const auto seed = static_cast<uint64_t>(k * n + m);
      EXPECT_TRUE(KernelMatchesReference(Rt(Isa::kAvx512, 1),
                                         PairMatmul(m, k, n, 32), seed));
      if (m == 2 || m == 4) {
        EXPECT_TRUE(KernelMatchesReference(Rt(Isa::kAvx512, 1),
                                           PairMatmul(m, k, n, 0), seed));
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Pairs, PairGrid, ::testing::Values(1, 2, 3, 4, 16),
                         [](const auto& info) {
                           return absl::StrCat("m", info.param);
                         });

// Panels of one and four vectors, and ymm-wide ones (p8x2: the search must
// use 8-lane tiles or unpack B); odd k everywhere; accumulating; two threads
// (a parallel root loop stepping over whole pair panels).
TEST(PairKernels, PanelWidthsAccumulationAndThreads) {
  if (!HasBf16Dot()) GTEST_SKIP() << "CPU lacks AVX-512 BF16";
  for (int threads : {1, 2})
    for (const char* text :
         {"matmul 16x7x100 bf16*bf16->f32 b=p16x2",
          "matmul 5x33x130 bf16*bf16->f32 b=p64x2",
          "matmul 3x9x20 bf16*bf16->f32 b=p8x2",
          "matmul 17x33x129 bf16*bf16->f32 accum b=p32x2",
          "matmul 6x2x1 bf16*bf16->f32 b=p32x2",
          "matmul 9x130x20 bf16*bf16->f32 a=col b=p32x2 c=col",
          "matmul 64x300x515 bf16*bf16->f32 b=p32x2"}) {
      absl::StatusOr<Spec> s = ParseSpec(text);
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_TRUE(KernelMatchesReference(Rt(Isa::kAvx512, threads), *s))
          << threads << " threads";
    }
}

// The search takes vdpbf16ps's outer-product form for a pre-packed pair B,
// and packs a plain one into pairs itself (copy_pairs) when M is large
// enough to pay for the copy.
TEST(PairKernels, SearchChoosesTheOuterProduct) {
  if (!HasBf16Dot()) GTEST_SKIP() << "CPU lacks AVX-512 BF16";
  for (const Spec& s : {PairMatmul(16, 100, 100, 32), PairMatmul(4, 64, 64, 32),
                        PairMatmul(16, 512, 512, 0)}) {
    absl::StatusOr<KernelPtr> k = Rt(Isa::kAvx512, 1).Get(s);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE(UsesKernel((*k)->impl(), KernelId::kOuterBf16))
        << PrintImpl((*k)->impl());
    if (!s.aux[1].layout.paired()) {
      EXPECT_TRUE(UsesKernel((*k)->impl(), KernelId::kCopyPairs))
          << PrintImpl((*k)->impl());
    }
  }
}

// Without AVX-512 BF16 a pre-packed pair B still works: the search unpacks
// it into plain panels element by element.
TEST(PairKernels, Avx2UnpacksPairs) {
  if (!HasIsa(Isa::kAvx2)) GTEST_SKIP() << "CPU lacks AVX2";
  for (const Spec& s : {PairMatmul(3, 7, 100, 32), PairMatmul(16, 100, 7, 32),
                        PairMatmul(1, 2053, 7, 32), PairMatmul(4, 1, 33, 16)}) {
    EXPECT_TRUE(KernelMatchesReference(Rt(Isa::kAvx2, 1), s));
    absl::StatusOr<KernelPtr> k = Rt(Isa::kAvx2, 1).Get(s);
    ASSERT_TRUE(k.ok());
    EXPECT_FALSE(UsesKernel((*k)->impl(), KernelId::kOuterBf16));
  }
}

}  // namespace
}  // namespace amarena
