// bf16 x bf16 -> f32 programs: search + JIT + run against the reference
// (inputs are bf16 values, products and sums exact in double), on both ISAs.
#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "jit/compile.h"
#include "jit/disassemble.h"
#include "runtime/host.h"
#include "search/search.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/impl_walk.h"
#include "tests/testing/isa_runtime.h"

namespace amarena {
namespace {

using testing::HasIsa;
using testing::KernelMatchesReference;
using testing::Rt;

Spec Bf16Matmul(int64_t m, int64_t k, int64_t n, Layout b_layout,
                bool accum = false) {
  return Spec::Matmul(m, k, n, {.dtype = DType::kBF16},
                      {.dtype = DType::kBF16, .layout = b_layout}, {}, accum);
}

using testing::UsesKernel;

// The issue's grid: M in {1, 3, 16}, K and N in {1, 7, 100, 2053}, B row- or
// column-major; one shard per ISA, layout and M so that ctest -j spreads them.
class Bf16Grid
    : public ::testing::TestWithParam<std::tuple<Isa, Order, int64_t>> {};

TEST_P(Bf16Grid, MatchesTheReference) {
  const auto [isa, layout, m] = GetParam();
  if (!HasIsa(isa)) GTEST_SKIP() << "CPU lacks " << Name(isa);
  for (int64_t k : {1, 7, 100, 2053})
    for (int64_t n : {1, 7, 100, 2053})
      EXPECT_TRUE(
          KernelMatchesReference(Rt(isa, 1), Bf16Matmul(m, k, n, layout),
                                 /*seed=*/static_cast<uint64_t>(k * n)));
}

INSTANTIATE_TEST_SUITE_P(
    Bf16, Bf16Grid,
    ::testing::Combine(::testing::Values(Isa::kAvx2, Isa::kAvx512),
                       ::testing::Values(Order::kRowMajor, Order::kColMajor),
                       ::testing::Values(1, 3, 16)),
    [](const auto& info) {
      return absl::StrCat(Name(std::get<0>(info.param)), "_b",
                          Name(std::get<1>(info.param)), "_m",
                          std::get<2>(info.param));
    });

class Bf16Test : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!HasIsa(GetParam())) GTEST_SKIP() << "CPU lacks " << Name(GetParam());
  }
};

INSTANTIATE_TEST_SUITE_P(Isa, Bf16Test,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) {
                           return std::string(Name(info.param));
                         });

// Each Spec text, serial and with two threads, against the reference.
void ExpectEachMatches(Isa isa, std::initializer_list<const char*> texts) {
  for (int threads : {1, 2})
    for (const char* text : texts) {
      absl::StatusOr<Spec> s = ParseSpec(text);
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_TRUE(KernelMatchesReference(Rt(isa, threads), *s))
          << text << ", " << threads << " threads";
    }
}

// The issue's shapes, serial and with two threads (a parallel root loop),
// accumulating too, and through the Spec text.
TEST_P(Bf16Test, IssueShapes) {
  ExpectEachMatches(
      GetParam(),
      {"matmul 1x2048x16384 bf16*bf16->f32",
       "matmul 1x2048x16384 bf16*bf16->f32 b=col",
       "matmul 4x2048x1000 bf16*bf16->f32", "matmul 64x300x515 bf16*bf16->f32",
       "matmul 17x33x129 bf16*bf16->f32 accum",
       "matmul 9x130x20 bf16*bf16->f32 a=col b=col c=col"});
}

// B pre-packed in row panels (b=pP, the weights a caller packs once with
// Relayout): panels wider than, equal to and narrower than a vector, a last
// panel cut short, serial and with two threads; f32 too.
TEST_P(Bf16Test, PrePackedB) {
  ExpectEachMatches(GetParam(),
                    {"matmul 1x2048x16384 bf16*bf16->f32 b=p32",
                     "matmul 3x100x2053 bf16*bf16->f32 b=p32",
                     "matmul 16x7x100 bf16*bf16->f32 b=p64",
                     "matmul 4x33x50 bf16*bf16->f32 b=p16",
                     "matmul 5x64x40 bf16*bf16->f32 b=p8 accum",
                     "matmul 7x13x50 f32 b=p16", "matmul 64x64x64 f32 b=p32"});
}

// B pre-packed in panels dealt round sections (b=pPsS): two, four and eight
// sections, a number of panels that fills the last group and ones that do
// not (65 panels in two sections, 7 in four), k-pairs in sections, one panel
// (no order to keep), serial and with two threads (each thread's tile is
// compiled on its own and needs the whole matrix's section stride); f32 too.
TEST_P(Bf16Test, PrePackedBInSections) {
  ExpectEachMatches(
      GetParam(),
      {"matmul 1x2048x16384 bf16*bf16->f32 b=p32s2",
       "matmul 3x100x2053 bf16*bf16->f32 b=p32s2",
       "matmul 16x7x100 bf16*bf16->f32 b=p16s4",
       "matmul 1x1x100 bf16*bf16->f32 b=p16s2",
       "matmul 4x33x50 bf16*bf16->f32 b=p16x2s2",
       "matmul 13x2053x7 bf16*bf16->f32 b=p32s2", "matmul 7x13x50 f32 b=p16s2",
       "matmul 64x64x64 f32 b=p8s4", "matmul 2x64x1000 f32 b=p32s2",
       "matmul 3x40x300 bf16*bf16->f32 b=p8s8"});
}

// A pre-packed B whose panels are long DRAM streams, and a column-major one
// whose columns are, get software prefetches (core/kernels.h,
// kPrefetchPanelBytes, kPrefetchColumnBytes); short panels or columns (a
// cache-sized matrix) do not. The broadcast kernel's (the panels') only
// where the prices keep them (CostParams::stream_prefetch); the others
// whatever the host. f32 panels only as far ahead as the prices say
// (CostParams::panel_prefetch_bytes; 0, the default here: none).
TEST_P(Bf16Test, PrefetchesOnlyLongStreams) {
  if (!jit::Disassemble(nullptr, 0).ok()) GTEST_SKIP() << "built without Zydis";
  auto listing = [&](const char* text, int64_t stream_prefetch = 1,
                     int64_t panel_prefetch_bytes = 0,
                     int64_t zmm = kStreamPrefetchInherit,
                     int64_t bf16 = kStreamPrefetchInherit) {
    Target t = *Rt(GetParam(), 1).target();
    CostParams prices = t.cost;
    prices.stream_prefetch = stream_prefetch;
    prices.stream_prefetch_zmm = zmm;
    prices.stream_prefetch_bf16 = bf16;
    prices.stream_prefetch_bf16_zmm = kStreamPrefetchInherit;
    prices.panel_prefetch_bytes = panel_prefetch_bytes;
    t.SetPrices(prices);
    Searcher searcher(t);
    const Spec root = t.Bind(*ParseSpec(text));
    absl::StatusOr<ImplPtr> impl = searcher.Solve(root);
    EXPECT_TRUE(impl.ok()) << impl.status();
    if (!impl.ok()) return std::string();
    absl::StatusOr<std::unique_ptr<CompiledKernel>> code =
        Compile(**impl, t, KernelName(root));
    EXPECT_TRUE(code.ok()) << code.status();
    if (!code.ok()) return std::string();
    absl::StatusOr<std::string> text =
        jit::Disassemble((*code)->code(), (*code)->code_size());
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : std::string();
  };
  // 2048 rows x 32 bf16: 128 KiB panels, prefetched unless the prices say
  // the host streams them faster without.
  EXPECT_NE(
      listing("matmul 1x2048x16384 bf16*bf16->f32 b=p32").find("prefetcht0"),
      std::string::npos);
  const std::string without =
      listing("matmul 1x2048x16384 bf16*bf16->f32 b=p32", 0);
  EXPECT_NE(without.find("vfmadd231ps"), std::string::npos);
  EXPECT_EQ(without.find("prefetch"), std::string::npos);
  // 100 rows x 32 bf16: 6.4 KiB panels.
  EXPECT_EQ(listing("matmul 3x100x2053 bf16*bf16->f32 b=p32").find("prefetch"),
            std::string::npos);
  // A plain f32 B whose rows are 64 KiB apart (the vector-matrix trees read
  // it straight from memory): prefetched where the prices keep them; one of
  // 256-byte rows (a cache-sized matrix) never; nor f32 panels, long as
  // they may be.
  EXPECT_NE(listing("matmul 1x2048x16384 f32").find("prefetcht0"),
            std::string::npos);
  EXPECT_EQ(listing("matmul 1x2048x16384 f32", 0).find("prefetch"),
            std::string::npos);
  // kStreamPrefetchL2: prefetcht1 only, 8 rows of 64 KiB and a line ahead.
  const std::string to_l2 =
      listing("matmul 1x2048x16384 f32", kStreamPrefetchL2);
  EXPECT_NE(to_l2.find("prefetcht1"), std::string::npos) << to_l2;
  EXPECT_EQ(to_l2.find("prefetcht0"), std::string::npos) << to_l2;
  EXPECT_NE(to_l2.find("+0x80040]"), std::string::npos) << to_l2;
  EXPECT_EQ(listing("matmul 1x300x64 f32").find("prefetch"),
            std::string::npos);
  // The choice may differ by the ISA's kernels and by B's dtype
  // (stream_prefetch_zmm, stream_prefetch_bf16): none for an f32 B under
  // ymm kernels, prefetcht1 under zmm ones; a bf16 B's panels by its own.
  const bool zmm = Rt(GetParam(), 1).target()->isa == Isa::kAvx512;
  const std::string by_isa =
      listing("matmul 1x2048x16384 f32", 0, 0, kStreamPrefetchL2);
  EXPECT_EQ(by_isa.find("prefetcht1") != std::string::npos, zmm) << by_isa;
  EXPECT_EQ(by_isa.find("prefetcht0"), std::string::npos) << by_isa;
  EXPECT_NE(listing("matmul 1x2048x16384 bf16*bf16->f32 b=p32", 0, 0,
                    kStreamPrefetchInherit, 1)
                .find("prefetcht0"),
            std::string::npos);
  EXPECT_EQ(listing("matmul 1x2048x16384 f32 b=p32").find("prefetch"),
            std::string::npos);
  // With a distance, each row of a panel read prefetches the row that far
  // down the panel: 1024 bytes is 8 rows of 32 f32.
  const std::string panels = listing("matmul 1x2048x16384 f32 b=p32", 0, 1024);
  EXPECT_NE(panels.find("prefetcht0"), std::string::npos);
  EXPECT_NE(panels.find("+0x400]"), std::string::npos) << panels;
  // Column-major: 4 KiB columns are one stream, 200-byte ones are not.
  EXPECT_NE(
      listing("matmul 1x2048x512 bf16*bf16->f32 b=col").find("prefetcht0"),
      std::string::npos);
  EXPECT_EQ(listing("matmul 1x100x512 bf16*bf16->f32 b=col").find("prefetch"),
            std::string::npos);
  // The vdpbf16ps outer product prefetches pair panels only from
  // kPairPrefetchMinRows rows of A on (one row: vdpbf16ps and loads only).
  if (Rt(GetParam(), 1).target()->bf16_dot) {
    const std::string one_row =
        listing("matmul 1x2048x1024 bf16*bf16->f32 b=p64x2");
    EXPECT_NE(one_row.find("vdpbf16ps"), std::string::npos);
    EXPECT_EQ(one_row.find("prefetch"), std::string::npos);
    const std::string four_rows =
        listing("matmul 4x2048x1024 bf16*bf16->f32 b=p64x2");
    EXPECT_NE(four_rows.find("vdpbf16ps"), std::string::npos);
    EXPECT_NE(four_rows.find("prefetcht0"), std::string::npos);
  }
}

// Dot products down a column-major B: k below, at and above one vector of
// each form (8/16 f32 lanes, 32 bf16 for vdpbf16ps), odd and even, and longer
// than one kernel unrolls. With AVX-512 BF16 the search takes vdpbf16ps.
TEST_P(Bf16Test, DotProducts) {
  int dp = 0;
  for (int64_t k : {2, 3, 15, 16, 17, 31, 32, 33, 63, 100, 1025, 2053}) {
    Spec s = Bf16Matmul(1, k, 3, Order::kColMajor);
    EXPECT_TRUE(KernelMatchesReference(Rt(GetParam(), 1), s));
    absl::StatusOr<KernelPtr> kernel = Rt(GetParam(), 1).Get(s);
    ASSERT_TRUE(kernel.ok());
    dp += UsesKernel((*kernel)->impl(), KernelId::kDotBf16);
  }
  // Short ones are faster widened (vdpbf16ps has a longer latency chain).
  if (Rt(GetParam(), 1).target()->bf16_dot) {
    EXPECT_GE(dp, 4);
  }
}

}  // namespace
}  // namespace amarena
