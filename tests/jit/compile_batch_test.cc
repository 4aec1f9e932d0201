// Batched matmuls (BxMxKxN: C[q] = A[q].B[q] for q < B): every kernel the
// runtime makes, serial and on two threads, matches the reference with its
// operands against guard pages sized by their whole batch, NaNs in every gap
// between the batch's matrices (and between the rows of a view), and the
// output's gaps checked untouched (tests/testing/check_kernel.h). Shared
// weights (sb=0) are one B for every batch element; its pointer never moves.
#include <cstdio>
#include <string>

#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/isa_runtime.h"
#include "tests/testing/matchers.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

using ::amarena::testing::StatusIs;
using ::testing::HasSubstr;

class BatchKernels : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!testing::HasIsa(GetParam()))
      GTEST_SKIP() << "CPU lacks " << Name(GetParam());
  }
  // Gets and checks the kernel for `text` on `threads` threads.
  void Check(const std::string& text, int threads, uint64_t seed) {
    absl::StatusOr<KernelPtr> k = testing::Rt(GetParam(), threads).Get(text);
    ASSERT_TRUE(k.ok()) << text << ": " << k.status();
    // The kernel is for the batch as asked, strides included.
    const absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_TRUE(s.ok()) << text;
    EXPECT_EQ((*k)->spec().b, s->b) << text;
    EXPECT_EQ((*k)->spec().batch_stride, s->batch_stride) << text;
    EXPECT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec(), seed))
        << text << " on " << threads << " thread(s)";
  }
};

// Batches of 1, 2, 3, 7 and 16; dims 1, 7, 13, 100 and primes; shared B,
// explicit strides, views, both dtypes, accumulating or not.
TEST_P(BatchKernels, ChosenShapes) {
  const char* const texts[] = {
      "matmul 1x7x13x100 f32",
      "matmul 2x1x1x1 f32",
      "matmul 2x7x13x100 f32",
      "matmul 3x13x7x1 f32 a=col b=col c=col",
      "matmul 7x100x100x100 f32",
      "matmul 16x1x64x64 f32",
      "matmul 16x13x17x31 f32 accum",
      "matmul 7x97x61x31 bf16*bf16->f32",
      "matmul 3x7x100x13 bf16*bf16->f32 accum b=col",
      // Shared weights: one B for the batch.
      "matmul 2x7x13x100 f32 sb=0",
      "matmul 7x1x256x256 f32 sb=0",
      "matmul 16x13x64x128 f32 sb=0",
      "matmul 3x100x100x100 f32 accum sb=0",
      "matmul 7x5x100x64 bf16*bf16->f32 sb=0",
      "matmul 16x4x64x64 f32 b=p16 sb=0",
      "matmul 3x4x64x64 f32 b=p16",
      // Explicit strides: A shared too, gaps between matrices, C's
      // matrices side by side within ldc (heads of one row).
      "matmul 3x7x13x17 f32 sa=0",
      "matmul 7x7x13x17 f32 sa=101 sb=239 sc=131",
      "matmul 3x13x7x1 f32 lda=11 sa=150",
      "matmul 7x13x16x8 f32 ldc=64 sc=8",
      "matmul 3x13x16x7 f32 accum ldc=29 sc=9 sb=0",
      "matmul 2x100x100x100 f32 lda=101 ldb=113 ldc=131",
  };
  uint64_t seed = 1;
  for (const char* text : texts)
    for (int threads : {1, 2}) Check(text, threads, seed++);
}

TEST_P(BatchKernels, RandomSpecsMatchTheReference) {
  const Isa isa = GetParam();
  const int count = testing::SweepCount(120);
  const std::vector<std::string> texts = testing::RandomBatchSpecTexts(
      count, /*max_dim=*/48, /*seed=*/4100 + static_cast<int>(isa));
  int checked = 0;
  for (size_t i = 0; i < texts.size(); i += testing::SweepStride()) {
    for (int threads : {1, 2}) Check(texts[i], threads, i + 1);
    ++checked;
  }
  std::printf("%s: %d batched Specs checked serially and on two threads\n",
              std::string(Name(isa)).c_str(), checked);
  EXPECT_GT(checked, 0);
}

// The trees: a batched Spec reaches kernels only through a loop over the
// batch, and a pack of a shared B sits above that loop (once for the batch,
// or once per parallel task), never below it.
TEST_P(BatchKernels, SharedBIsPackedAboveTheBatchLoop) {
  for (int threads : {1, 2}) {
    absl::StatusOr<KernelPtr> k =
        testing::Rt(GetParam(), threads).Get("matmul 16x8x256x256 f32 sb=0");
    ASSERT_TRUE(k.ok()) << k.status();
    int batch_loops = 0, packs_of_b = 0, packs_below = 0;
    testing::ForEachNode((*k)->impl(), [&](const ImplNode& n) {
      if (n.how.type == NodeType::kKernel) {
        EXPECT_EQ(n.spec.b, 1);
      }
      if (n.how.type == NodeType::kLoop && n.how.loop.dim == Dim::kB)
        ++batch_loops;
      if (n.how.type == NodeType::kAlloc &&
          n.how.alloc.kind == AllocKind::kBuffer && n.how.alloc.operand == 1 &&
          n.spec.IsMatmul()) {
        ++packs_of_b;
        packs_below += n.spec.b == 1;
      }
    });
    EXPECT_GE(batch_loops, 1) << PrintImpl((*k)->impl());
    // 256 x 256 f32 B is read by every batch element: packing it once is
    // what the model prefers, and never per element.
    EXPECT_GE(packs_of_b, 1) << PrintImpl((*k)->impl());
    EXPECT_EQ(packs_below, 0) << PrintImpl((*k)->impl());
  }
}

// What is not implemented is refused, naming it.
TEST_P(BatchKernels, RefusesWhatIsNotImplemented) {
  Runtime& rt = testing::Rt(GetParam(), 1);
  EXPECT_THAT(rt.Get("matmul 4x8x64x64 f32 b=any"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("shared by the batch (sb=0)")));
  absl::StatusOr<KernelPtr> k = rt.Get("matmul 4x8x64x64 f32");
  ASSERT_TRUE(k.ok()) << k.status();
  std::vector<float> b(64 * 64), out(4 * 64 * 64);
  EXPECT_THAT((*k)->PackB(b.data(), PackSource::kSame, 64, out.data(),
                          out.size() * sizeof(float)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("packing a batch of B is not implemented")));
}

// Shared weights requested with b=any: one B laid out for the batch.
TEST_P(BatchKernels, SharedWeightsWithAnyLayout) {
  for (int threads : {1, 2}) {
    absl::StatusOr<KernelPtr> k = testing::Rt(GetParam(), threads)
                                      .Get("matmul 7x3x100x64 f32 b=any sb=0");
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE((*k)->spec().SharedB());
    EXPECT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec(), 5));
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, BatchKernels,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) {
                           return std::string(Name(info.param));
                         });

}  // namespace
}  // namespace amarena
