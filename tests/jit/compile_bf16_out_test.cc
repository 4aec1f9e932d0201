// bf16 outputs (`f32*f32->bf16`, `bf16*bf16->bf16`, `f32*bf16->bf16`):
// search + JIT + run against the reference on the ISAs the host has. C is
// accumulated in an f32 buffer (k split only below it) and rounded to bf16
// once, to nearest even, by the copy that writes it back; accumulating, the
// buffer starts from C widened.
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/kernels.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "jit/compile.h"
#include "jit/disassemble.h"
#include "runtime/runtime.h"
#include "search/search.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/fixed_target.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/isa_runtime.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

using testing::KernelMatchesReference;
using testing::Rt;
using testing::TextMatchesReference;
using testing::UsesKernel;

class Bf16OutTest : public testing::IsaTest {};
AMARENA_INSTANTIATE_PER_ISA(Bf16OutTest);

constexpr const char* kDTypes[] = {"f32*f32->bf16", "bf16*bf16->bf16",
                                   "f32*bf16->bf16"};

// A grid of dims 1, 7, 13, 100 and primes, every input dtype, C row- or
// column-major, accumulating or not, serial and with two threads.
TEST_P(Bf16OutTest, GridMatchesTheReference) {
  int i = 0;
  for (int64_t m : {1, 7, 13, 100})
    for (int64_t k : {1, 7, 13, 100, 331})
      for (int64_t n : {1, 7, 13, 100, 37})
        for (const char* dtypes : kDTypes) {
          ++i;
          if (i % 3 != 0 && m == 100) continue;  // fewer of the large ones
          const std::string text = absl::StrCat(
              "matmul ", m, "x", k, "x", n, " ", dtypes,
              i % 5 == 0 ? " c=col" : "", i % 4 == 0 ? " accum" : "");
          EXPECT_TRUE(TextMatchesReference(GetParam(), 1 + i % 2, text, i));
        }
}

// The output is exactly the reference's f32 result rounded to nearest even:
// a long k (split into blocks below the f32 buffer) whose f32 sums are
// rounded once. The reference computes in double and rounds to bf16; the
// kernel's f32 sum may differ from it by a few f32 ulps, which moves the
// rounded bf16 by at most one ulp, so most elements agree bit for bit.
TEST_P(Bf16OutTest, RoundsOnceToNearestEven) {
  for (const char* text : {"matmul 8x4099x24 f32*f32->bf16",
                           "matmul 8x4099x24 bf16*bf16->bf16 accum",
                           "matmul 1x2048x300 f32*bf16->bf16"}) {
    absl::StatusOr<KernelPtr> k = Rt(GetParam(), 1).Get(text);
    ASSERT_TRUE(k.ok()) << text << ": " << k.status();
    const Spec& s = (*k)->spec();
    EXPECT_TRUE(KernelMatchesReference(*k, s)) << text;
    Operands got(s), want(s);
    FillRandom(s, got, 5);
    FillRandom(s, want, 5);
    ASSERT_TRUE((*k)->Run(got.ptrs()).ok());
    ASSERT_TRUE(RunReference(s, want.ptrs()).ok());
    const TensorSpec c = s.Operand(2);
    int64_t same = 0, off_by_more = 0;
    const auto* g = static_cast<const uint16_t*>(got.ptr(2));
    const auto* w = static_cast<const uint16_t*>(want.ptr(2));
    for (int64_t e = 0; e < c.StoredElements(); ++e) {
      same += g[e] == w[e];
      const int d = static_cast<int>(g[e]) - static_cast<int>(w[e]);
      off_by_more += (d > 1 || d < -1) && ((g[e] ^ w[e]) & 0x8000) == 0;
    }
    EXPECT_GT(same, c.StoredElements() * 9 / 10) << text;
    EXPECT_EQ(off_by_more, 0) << text;
  }
}

// The partial sums stay in f32: the tree writes C once per element through
// a narrowing copy, and splits k only below the f32 buffer.
TEST_P(Bf16OutTest, AccumulatesInAnF32Buffer) {
  for (const char* text : {"matmul 64x1024x64 f32*f32->bf16",
                           "matmul 64x1024x64 bf16*bf16->bf16 accum"}) {
    absl::StatusOr<KernelPtr> k = Rt(GetParam(), 1).Get(text);
    ASSERT_TRUE(k.ok()) << text << ": " << k.status();
    bool split_on_bf16_c = false;
    testing::ForEachNode((*k)->impl(), [&](const ImplNode& n) {
      if (n.how.type == NodeType::kLoop && n.how.loop.dim == Dim::kK &&
          n.spec.aux[2].dtype == DType::kBF16)
        split_on_bf16_c = true;
    });
    EXPECT_FALSE(split_on_bf16_c) << PrintImpl((*k)->impl());
    EXPECT_TRUE(UsesKernel((*k)->impl(), KernelId::kCopy));
    EXPECT_TRUE(TextMatchesReference(GetParam(), 2, text));
  }
}

// With alpha, and with B pre-packed or chosen (`b=any`).
TEST_P(Bf16OutTest, WithAlphaAndPackedB) {
  for (int threads : {1, 2})
    for (const char* text : {"matmul 13x100x37 f32*f32->bf16 alpha=0.5",
                             "matmul 13x100x37 bf16*bf16->bf16 alpha=-2 accum",
                             "matmul 1x2048x1000 f32*bf16->bf16 b=any",
                             "matmul 7x300x64 bf16*bf16->bf16 b=p32",
                             "matmul 7x300x64 bf16*bf16->bf16 b=p16x2",
                             "matmul 7x300x64 f32*bf16->bf16 b=p32x2"})
      EXPECT_TRUE(TextMatchesReference(GetParam(), threads, text));
}

// Random user-level Specs of every layout with a bf16 output, serial and
// with two threads (k-pair panels no kernel can read are refused).
TEST_P(Bf16OutTest, RandomSpecsMatchTheReference) {
  const Isa isa = GetParam();
  int checked = 0, refused = 0;
  for (const char* dtypes : kDTypes) {
    const std::vector<std::string> texts =
        testing::RandomSpecTexts(testing::SweepCount(60), /*max_dim=*/150,
                                 /*seed=*/4200 + static_cast<int>(isa), dtypes);
    const testing::SweepCounts n = testing::CheckTextSweep(isa, texts);
    checked += n.checked;
    refused += n.refused;
  }
  EXPECT_GT(checked, refused);
}

// The narrowing copy and the scaling as each ISA encodes them, compiled for
// a fixed target (AVX-512 whether or not the host has it): vpmovdw with
// AVX-512, vpackusdw + vpermq with AVX2; vmulps by the alpha table.
TEST(Bf16OutCode, EachIsaNarrowsAndScales) {
  if (!jit::Disassemble(nullptr, 0).ok()) GTEST_SKIP() << "built without Zydis";
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const Target t = testing::FixedTarget(isa, 1);
    Searcher searcher(t);
    const Spec root =
        t.Bind(*ParseSpec("matmul 13x100x64 f32*f32->bf16 alpha=0.5"));
    absl::StatusOr<ImplPtr> impl = searcher.Solve(root);
    ASSERT_TRUE(impl.ok()) << impl.status();
    absl::StatusOr<std::unique_ptr<CompiledKernel>> code =
        Compile(**impl, t, KernelName(root));
    ASSERT_TRUE(code.ok()) << code.status();
    absl::StatusOr<std::string> text =
        jit::Disassemble((*code)->code(), (*code)->code_size());
    ASSERT_TRUE(text.ok()) << text.status();
    const bool avx512 = isa == Isa::kAvx512;
    EXPECT_EQ(text->find("vpmovdw") != std::string::npos, avx512) << *text;
    EXPECT_EQ(text->find("vpackusdw") != std::string::npos, !avx512) << *text;
    EXPECT_NE(text->find("vmulps"), std::string::npos) << *text;
  }
}

}  // namespace
}  // namespace amarena
