// Whole programs: search + JIT + run, against the scalar reference.
#include "jit/compile.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/kernels.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "jit/disassemble.h"
#include "runtime/host.h"
#include "search/search.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/isa_runtime.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

using testing::KernelMatchesReference;

// One runtime per ISA the host can run and thread count (1: serial; 2: the
// search may choose a parallel root loop, run on the runtime's pool).
Runtime& Rt(Isa isa, int threads = 1) { return testing::Rt(isa, threads); }

class IsaTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    absl::StatusOr<Target> t = TargetFor(DetectCpu(), GetParam());
    ASSERT_TRUE(t.ok()) << t.status();
    if (t->isa != GetParam()) GTEST_SKIP() << "CPU lacks " << Name(GetParam());
  }
  Runtime& Rt() { return amarena::Rt(GetParam()); }
};

std::string IsaName(const ::testing::TestParamInfo<Isa>& info) {
  return std::string(Name(info.param));
}

using CompileTest = IsaTest;
INSTANTIATE_TEST_SUITE_P(Isa, CompileTest,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512), IsaName);

TEST_P(CompileTest, OddAndEdgeShapes) {
  const int64_t dims[] = {1, 2, 7, 8, 9, 13, 16, 17, 31, 100};
  for (int64_t m : dims)
    for (int64_t k : {1, 7, 13, 64, 100})
      for (int64_t n : dims)
        EXPECT_TRUE(KernelMatchesReference(Rt(), Spec::Matmul(m, k, n)));
}

// A register tile of an accumulating C over k blocks of kLateOutputMinK or
// more, viewed into L1 from memory, starts from zero, prefetches C and adds it
// after the k loop (core/kernels.h); over shorter blocks, for one row, or with
// C viewed from L2, it loads C first. Each matches the reference.
TEST_P(CompileTest, AccumulatingTilesAddTheirOutputLate) {
  if (!jit::Disassemble(nullptr, 0).ok()) GTEST_SKIP() << "built without Zydis";
  const int64_t lanes = GetParam() == Isa::kAvx512 ? 16 : 8;
  struct Case {
    int64_t m, k_block;
    const char* c_in_l2;  // "" or a view of C into L2 first
    bool late;
  };
  for (const Case c : {Case{6, kLateOutputMinK, "", true},
                       Case{6, kLateOutputMinK / 4, "", false},
                       Case{1, kLateOutputMinK, "", false},
                       Case{6, kLateOutputMinK, "view 2 l2;", false}}) {
    // C too big for L1 (rows of 128 vectors), tiled to 2-vector columns; B's
    // rows, a page apart, packed.
    const std::string text = absl::StrCat("matmul ", 2 * c.m, "x",
                                          2 * kLateOutputMinK, "x",
                                          128 * lanes, " f32");
    const std::string decisions = absl::StrCat(
        "to-accum;*;", c.c_in_l2, "split k ", c.k_block, ";tile n ",
        2 * lanes, ";view 0 l1;pack 1 l1 p", 2 * lanes, ";*;tile m ", c.m,
        ";view 2 l1;regs 2 vrf v", lanes, ";*;*;*");
    absl::StatusOr<KernelPtr> k = Rt().GetScheduled(text, decisions);
    ASSERT_TRUE(k.ok()) << text << ": " << decisions << ": " << k.status();
    EXPECT_TRUE(KernelMatchesReference(*k, (*k)->spec())) << decisions;
    // B's buffer copied ahead: filled on first use, the first tile would
    // prefetch B's stream where the host's table says so (jit/emitter.h).
    absl::StatusOr<std::unique_ptr<CompiledKernel>> code =
        Compile((*k)->impl(), *Rt().target(), "late_output",
                CompileOptions{.fill_on_first_use = false});
    ASSERT_TRUE(code.ok()) << code.status();
    absl::StatusOr<std::string> listing =
        jit::Disassemble((*code)->code(), (*code)->code_size());
    ASSERT_TRUE(listing.ok()) << listing.status();
    EXPECT_EQ(listing->find("prefetcht0") != std::string::npos, c.late)
        << decisions << "\n" << *listing;
    // The add reads C from memory: "vaddps ymm0, ymm0, [rsi]".
    EXPECT_EQ(listing->find("vaddps") != std::string::npos, c.late)
        << decisions << "\n" << *listing;
  }
}

TEST_P(CompileTest, IssueShapes) {
  for (int threads : {1, 2}) {
    for (const char* text :
         {"matmul 1x1x1 f32", "matmul 7x13x5 f32", "matmul 64x64x64 f32",
          "matmul 100x100x100 f32", "matmul 256x256x256 f32",
          "matmul 513x257x129 f32", "matmul 1x2048x16384 f32"}) {
      absl::StatusOr<Spec> s = ParseSpec(text);
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_TRUE(KernelMatchesReference(amarena::Rt(GetParam(), threads), *s))
          << threads << " threads";
    }
  }
}

// With two workers the big shapes get a parallel root loop, and it computes
// the same result.
TEST_P(CompileTest, ParallelRootLoop) {
  Runtime& rt = amarena::Rt(GetParam(), 2);
  absl::StatusOr<KernelPtr> k = rt.Get("matmul 256x256x256 f32");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_TRUE((*k)->impl().how.loop.parallel) << PrintImpl((*k)->impl());
  EXPECT_TRUE(KernelMatchesReference(rt, Spec::Matmul(256, 256, 256)));
}

TEST_P(CompileTest, LayoutsAndAccumulation) {
  TensorAux row, col;
  col.layout = Order::kColMajor;
  for (bool accum : {false, true})
    for (const TensorAux& a : {row, col})
      for (const TensorAux& b : {row, col})
        for (const TensorAux& c : {row, col})
          EXPECT_TRUE(KernelMatchesReference(
              Rt(), Spec::Matmul(37, 19, 41, a, b, c, accum)));
}

TEST_P(CompileTest, ZeroSpecs) {
  for (const char* text :
       {"zero 13x29 f32", "zero 64x64 f32 out=col", "zero 1x1 f32"}) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(KernelMatchesReference(Rt(), *s)) << text;
  }
}

// Random shapes, dims 1..300, fixed seed, on each ISA, serial and with two
// threads; four shards each so that ctest -j runs them side by side. CI runs
// the first 100 (the guard-page sweep adds 200 random Specs of every layout);
// jit_random_shapes_500 (exhaustive) runs all 500, and jit_valgrind_random
// (exhaustive) the first 50 on AVX2 under memcheck.
class RandomShapes
    : public ::testing::TestWithParam<std::tuple<Isa, int, int>> {};

TEST_P(RandomShapes, MatchTheReference) {
  const auto [isa, threads, shard] = GetParam();
  if (TargetFor(DetectCpu(), isa)->isa != isa)
    GTEST_SKIP() << "CPU lacks " << Name(isa);
  const std::vector<Spec> all = testing::RandomMatmuls(500, 300, /*seed=*/2024);
  const size_t count =
      std::min(all.size(), static_cast<size_t>(testing::SweepCount(100)));
  for (size_t i = static_cast<size_t>(shard); i < count;
       i += 4 * testing::SweepStride())
    EXPECT_TRUE(
        KernelMatchesReference(Rt(isa, threads), all[i], /*seed=*/i + 1));
}

using testing::UsesKernel;

// Column-major B makes every output a dot product along k: k below, at, above
// and a multiple of the vector width (masked tails), and longer than one
// kernel unrolls.
TEST_P(CompileTest, DotProductShapes) {
  int dots = 0;
  for (int64_t m : {1, 3})
    for (int64_t k : {2, 7, 8, 9, 16, 17, 31, 100, 513, 2053})
      for (int64_t n : {1, 5}) {
        Spec s = Spec::Matmul(m, k, n, {}, {.layout = Order::kColMajor});
        EXPECT_TRUE(KernelMatchesReference(Rt(), s));
        absl::StatusOr<KernelPtr> kernel = Rt().Get(s);
        ASSERT_TRUE(kernel.ok());
        dots += UsesKernel((*kernel)->impl(), KernelId::kDot);
      }
  EXPECT_GT(dots, 10);
}

// Operands that are windows of larger matrices, with prime pitches (elements
// between rows, or columns when column-major): each kernel is compiled with
// CompileOptions::leading and run on padded buffers; the padding must stay
// untouched and the window must match the reference computed on dense copies.
TEST_P(CompileTest, StridedOperandsWithPrimePitches) {
  const Target t = *TargetFor(DetectCpu(), GetParam());
  const int64_t pads[] = {3, 7, 13};
  for (const Spec& user :
       {Spec::Matmul(7, 13, 17), Spec::Matmul(37, 19, 41),
        Spec::Matmul(64, 64, 64),
        Spec::Matmul(13, 29, 31, {.layout = Order::kColMajor}, {},
                     {.layout = Order::kColMajor},
                     /*accum=*/true)}) {
    Searcher searcher(t);
    absl::StatusOr<ImplPtr> impl = searcher.Solve(t.Bind(user));
    ASSERT_TRUE(impl.ok()) << impl.status();
    CompileOptions opts;
    std::vector<std::vector<float>> padded(3);
    Operands dense(user);
    FillRandom(user, dense, 5);
    std::vector<uint8_t> before = dense.Snapshot(2);
    void* ptrs[3];
    for (int i = 0; i < 3; ++i) {
      TensorSpec op = user.Operand(i);
      const bool row_major = op.aux.layout.row_major();
      const int64_t inner = row_major ? op.cols : op.rows;
      const int64_t outer = row_major ? op.rows : op.cols;
      const int64_t pitch = inner + pads[i];
      opts.leading[static_cast<size_t>(i)] = pitch;
      padded[i].assign(static_cast<size_t>(outer * pitch), -7.0f);
      const float* src = static_cast<const float*>(dense.ptr(i));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t p = 0; p < inner; ++p)
          padded[i][static_cast<size_t>(o * pitch + p)] = src[o * inner + p];
      ptrs[i] = padded[i].data();
    }
    auto code = Compile(**impl, t, "strided_test", opts);
    ASSERT_TRUE(code.ok()) << code.status();
    ASSERT_TRUE((**code)(ptrs).ok());
    // Copy the output window back into the dense operands and check it; the
    // padding of every operand is still -7.
    TensorSpec c = user.Operand(2);
    const bool row_major = c.aux.layout.row_major();
    const int64_t inner = row_major ? c.cols : c.rows;
    const int64_t outer = row_major ? c.rows : c.cols;
    float* out = static_cast<float*>(dense.ptr(2));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t p = 0; p < inner; ++p)
        out[o * inner + p] =
            padded[2][static_cast<size_t>(o * (inner + pads[2]) + p)];
    Verdict v = CheckAgainstReference(user, dense, before);
    EXPECT_TRUE(v.ok) << PrintSpec(user) << ": " << v.max_rel_err;
    for (int i = 0; i < 3; ++i) {
      TensorSpec op = user.Operand(i);
      const int64_t in = op.aux.layout.row_major() ? op.cols : op.rows;
      for (size_t q = 0; q < padded[i].size(); ++q) {
        if (static_cast<int64_t>(q) % (in + pads[i]) >= in) {
          ASSERT_EQ(padded[i][q], -7.0f) << "operand " << i << " padding";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    CompileTest, RandomShapes,
    ::testing::Combine(::testing::Values(Isa::kAvx2, Isa::kAvx512),
                       ::testing::Values(1, 2), ::testing::Range(0, 4)),
    [](const auto& info) {
      return absl::StrCat(Name(std::get<0>(info.param)), "_",
                          std::get<1>(info.param), "threads_",
                          std::get<2>(info.param));
    });

}  // namespace
}  // namespace amarena

namespace amarena {
namespace {

// A search given no GPRs keeps every loop counter in a stack slot (and packs
// nothing, a buffer needing a pointer); the emitter also falls back to the
// stack when its pool runs dry, down to just the three operand bases.
TEST(CompileTest, LoopCountersSpillToTheStackWhenGprsRunOut) {
  Target t = *TargetFor(DetectCpu());
  for (const Spec& user :
       {Spec::Matmul(100, 37, 70), Spec::Matmul(64, 300, 9)}) {
    Searcher searcher(t);
    Spec no_gprs = t.Bind(user);
    no_gprs.budget->gpr = 0;
    absl::StatusOr<ImplPtr> impl = searcher.Solve(no_gprs);
    ASSERT_TRUE(impl.ok()) << impl.status();
    for (size_t gprs : {3, 4, 14}) {
      auto code =
          Compile(**impl, t, "spill_test", CompileOptions{.max_gprs = gprs});
      ASSERT_TRUE(code.ok()) << code.status();
      Operands ops(user);
      FillRandom(user, ops, 3);
      std::vector<uint8_t> before = ops.Snapshot(2);
      ASSERT_TRUE((**code)(ops.ptrs()).ok());
      Verdict v = CheckAgainstReference(user, ops, before);
      EXPECT_TRUE(v.ok) << PrintSpec(user) << " with " << gprs
                        << " GPRs: " << v.max_rel_err;
    }
  }
}

}  // namespace
}  // namespace amarena
