#include "runtime/runtime.h"

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "runtime/host.h"
#include "search/replay.h"
#include "search/weight_layout.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/isa_runtime.h"

namespace amarena {
namespace {

TEST(RuntimeTest, EightThreadsGetOneKernelGeneratedOnce) {
  Runtime rt(HostTarget());
  std::vector<KernelPtr> got(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      absl::StatusOr<KernelPtr> k = rt.Get("matmul 96x200x72 f32");
      ASSERT_TRUE(k.ok()) << k.status();
      got[i] = *k;
    });
  for (auto& t : threads) t.join();
  for (const KernelPtr& k : got) EXPECT_EQ(k.get(), got[0].get());
  EXPECT_EQ(rt.generated(), 1);
  // A later request is a hit too.
  EXPECT_EQ(rt.Get("matmul 96x200x72 f32")->get(), got[0].get());
  EXPECT_EQ(rt.generated(), 1);
}

TEST(RuntimeTest, EquivalentTextsShareAKernel) {
  Runtime rt(HostTarget());
  auto a = rt.Get("matmul 8x8x8 f32");
  auto b = rt.Get("  matmul  8x8x8   f32*f32->f32 a=row ");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(rt.generated(), 1);
}

TEST(RuntimeTest, BadSpecIsInvalidArgument) {
  Runtime rt(HostTarget());
  auto k = rt.Get("matmul 0x5x5 f32");
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(k.status().message().find("dimension M is 0"),
            absl::string_view::npos);
}

TEST(RuntimeTest, UnsupportedFeaturesAreUnimplemented) {
  Runtime rt(HostTarget());
  absl::Status swapped = rt.Get("matmul 4x4x4 bf16*f32->f32").status();
  EXPECT_EQ(swapped.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(swapped.message().find("dtypes are bf16*f32->f32"),
            absl::string_view::npos)
      << swapped;
  EXPECT_EQ(rt.Get("matmul 4x4x4 bf16*f32->bf16").status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(rt.Get("zero 4x4 bf16").status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(rt.Get("matmul 4x4x4 f32 a=p16").status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(rt.Get("matmul 4x4x4 f32 b=col,p16").status().code(),
            absl::StatusCode::kUnimplemented);
  // A batch is implemented (tests/jit/compile_batch_test.cc); a B per batch
  // element laid out by the runtime is not, and is refused.
  EXPECT_TRUE(rt.Get("matmul 2x4x4x4 f32").ok());
  EXPECT_EQ(rt.Get("matmul 2x4x4x4 f32 b=any").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rt.Get("move 4x4 f32").status().code(),
            absl::StatusCode::kUnimplemented);
}

// A budget in the Spec text that no tree fits: Unimplemented, or
// InvalidArgument when no kernel at all could fit it; never NotFound or
// Internal.
TEST(RuntimeTest, NoTreeIsUnimplementedAnImpossibleBudgetInvalid) {
  Runtime rt(HostTarget());
  absl::Status none =
      rt.Get("matmul 3x5x7 f32 budget=vrf:2,gpr:0,l1:1,l2:0,l3:0").status();
  EXPECT_EQ(none.code(), absl::StatusCode::kUnimplemented) << none;
  EXPECT_NE(none.message().find("no tree fits the budget"),
            absl::string_view::npos);
  absl::Status impossible =
      rt.Get("matmul 3x5x7 f32 budget=vrf:1,gpr:4,l1:8,l2:0,l3:0").status();
  EXPECT_EQ(impossible.code(), absl::StatusCode::kInvalidArgument)
      << impossible;
  // The quick search behind a deadline says the same.
  absl::Status quick =
      rt.Get("matmul 3x5x7 f32 budget=vrf:2,gpr:0,l1:1,l2:0,l3:0",
             GetOptions{.deadline = std::chrono::steady_clock::now()})
          .status();
  EXPECT_EQ(quick.code(), absl::StatusCode::kUnimplemented) << quick;
}

TEST(RuntimeTest, AcceptsBf16InputsWithAnF32Output) {
  Runtime rt(HostTarget());
  for (const char* text :
       {"matmul 4x4x4 bf16*bf16->f32", "matmul 1x64x33 bf16*bf16->f32 b=col",
        "matmul 2x64x33 bf16*bf16->f32 b=p16"}) {
    absl::StatusOr<KernelPtr> k = rt.Get(text);
    ASSERT_TRUE(k.ok()) << text << ": " << k.status();
    EXPECT_TRUE(testing::KernelMatchesReference(rt, *ParseSpec(text))) << text;
  }
}

// bf16 outputs (accumulated in f32, rounded once) and alpha: accepted and
// right; the tests of their kernels are tests/jit/compile_bf16_out_test.cc
// and compile_alpha_test.cc.
TEST(RuntimeTest, AcceptsBf16OutputsAndAlpha) {
  Runtime rt(HostTarget());
  for (const char* text :
       {"matmul 4x4x4 bf16", "matmul 4x4x4 f32*bf16->bf16",
        "matmul 4x4x4 f32*f32->bf16 accum", "matmul 5x9x33 f32 alpha=0.5",
        "matmul 5x9x33 bf16 alpha=-2 accum"}) {
    EXPECT_TRUE(testing::KernelMatchesReference(rt, *ParseSpec(text))) << text;
  }
}

// A schedule given as decisions runs like a searched one; one that does not
// fit the Spec is an error that names the decision, never a kernel.
TEST(RuntimeTest, GetScheduledReplaysTheSearchsDecisionsOrRejectsThem) {
  RuntimeOptions options;
  options.db = "off";
  Runtime rt(HostTarget(), options);
  for (const char* text :
       {"matmul 13x7x100 f32", "matmul 3x100x70 bf16*bf16->f32",
        "matmul 1x256x96 bf16*bf16->f32 b=p32"}) {
    absl::StatusOr<KernelPtr> searched = rt.Get(text);
    ASSERT_TRUE(searched.ok()) << searched.status();
    const std::string decisions = EncodeDecisions((*searched)->impl());
    absl::StatusOr<KernelPtr> k = rt.GetScheduled(text, decisions);
    ASSERT_TRUE(k.ok()) << text << ": " << k.status();
    EXPECT_EQ((*k)->source(), KernelSource::kSchedule);
    EXPECT_EQ((*k)->impl().cost, (*searched)->impl().cost) << text;
    EXPECT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec())) << text;
  }
  absl::Status bad = rt.GetScheduled("matmul 8x8x8 f32", "tile q 4").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  bad = rt.GetScheduled("matmul 8x8x8 f32", "tile m 3;tile m 3").status();
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("tile m 3"), absl::string_view::npos) << bad;
  bad = rt.GetScheduled("matmul 0x8x8 f32", "tile m 4").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
}

// `b=any`: the runtime lays B out as the cheapest candidate wants (its
// kernel's Spec says how); each kernel matches the reference with B in that
// layout, on odd shapes, with each ISA the host has. A second request is a
// hit.
TEST(RuntimeTest, AnyBGetsTheCheapestLayout) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!testing::HasIsa(isa)) continue;
    Runtime& rt = testing::Rt(isa, 1);
    for (int64_t m : {1, 3, 16})
      for (int64_t k : {1, 7, 100})
        for (int64_t n : {7, 100}) {
          const std::string text =
              absl::StrCat("matmul ", m, "x", k, "x", n, " bf16*bf16->f32");
          absl::StatusOr<KernelPtr> got = rt.Get(text + " b=any");
          ASSERT_TRUE(got.ok()) << text << ": " << got.status();
          const Spec& chosen = (*got)->spec();
          EXPECT_TRUE(testing::KernelMatchesReference(*got, chosen));
          // No candidate is cheaper.
          for (const Spec& c :
               WeightLayoutCandidates(*ParseSpec(text), *rt.target())) {
            absl::StatusOr<KernelPtr> other = rt.Get(c);
            ASSERT_TRUE(other.ok()) << other.status();
            EXPECT_LE((*got)->impl().cost.main, (*other)->impl().cost.main)
                << PrintSpec(chosen) << " vs " << PrintSpec(c);
          }
          const int64_t made = rt.generated();
          EXPECT_EQ(rt.Get(text + " b=any")->get(), got->get());
          EXPECT_EQ(rt.generated(), made);
        }
  }
  // Layouts the target cannot read (k-pair panels wider than 32 beside a
  // column-major A) are passed over, not an error.
  if (testing::HasIsa(Isa::kAvx512)) {
    absl::StatusOr<KernelPtr> k = testing::Rt(Isa::kAvx512, 1)
                                      .Get(
                                          "matmul 3x64x300 bf16*bf16->f32 "
                                          "a=col b=any");
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec()));
  }
  Runtime rt(HostTarget());
  // One layout for M from 1 to 16: the kernel is for M = 1, and the layout
  // it names serves M = 16 too.
  absl::StatusOr<KernelPtr> decode = rt.Get("matmul 1x64x96 f32 b=any m=1..16");
  ASSERT_TRUE(decode.ok()) << decode.status();
  EXPECT_EQ((*decode)->spec().m, 1);
  EXPECT_TRUE(testing::KernelMatchesReference(*decode, (*decode)->spec()));
  Spec prefill = (*decode)->spec();
  prefill.m = 16;
  prefill.budget.reset();
  absl::StatusOr<KernelPtr> k16 = rt.Get(prefill);
  ASSERT_TRUE(k16.ok()) << k16.status();
  EXPECT_EQ((*k16)->spec().aux[1], (*decode)->spec().aux[1]);
  EXPECT_TRUE(testing::KernelMatchesReference(*k16, (*k16)->spec()));
  EXPECT_EQ(rt.Get("matmul 4x4x4 f32 b=any b=col").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rt.GetWithWeightLayout(*ParseSpec("matmul 4x4x4 f32 b=col"))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// Every pre-packed B a user may name either makes a kernel that matches the
// reference or is refused up front as not implemented, naming the panels:
// never a search that finds no tree.
TEST(RuntimeTest, PrePackedPanelsWorkOrAreRefusedClearly) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!testing::HasIsa(isa)) continue;
    Runtime& rt = testing::Rt(isa, 1);
    for (int64_t p : {1, 8, 12, 16, 24, 32, 48, 64, 128})
      for (const char* pairs : {"", "x2"})
        for (const char* a : {"", " a=col"})
          for (const char* dims : {"1x7x100", "3x64x64", "2x1x130"}) {
            const std::string text = absl::StrCat(
                "matmul ", dims, " bf16*bf16->f32", a, " b=p", p, pairs);
            absl::StatusOr<KernelPtr> k = rt.Get(text);
            if (k.ok()) {
              EXPECT_TRUE(testing::KernelMatchesReference(*k, (*k)->spec()))
                  << text;
            } else {
              EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented)
                  << text << ": " << k.status();
              EXPECT_NE(k.status().message().find("panels of"),
                        absl::string_view::npos)
                  << k.status();
            }
          }
  }
}

TEST(RuntimeTest, InternalLevelsAreRejected) {
  Runtime rt(HostTarget());
  EXPECT_EQ(rt.Get("matmul 4x4x4 f32 c=l1").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RuntimeTest, CpuWithoutAvx2OrFmaIsFailedPrecondition) {
  CpuFeatures old_cpu;  // nothing detected
  old_cpu.brand = "test CPU";
  absl::StatusOr<Target> t = TargetFor(old_cpu);
  ASSERT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(t.status().message().find("must include avx2 and fma"),
            absl::string_view::npos);
  Runtime rt(t);
  EXPECT_EQ(rt.Get("matmul 4x4x4 f32").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace amarena

namespace amarena {
namespace {

TEST(RuntimeTest, CacheIsLeastRecentlyUsedAndCounts) {
  Runtime rt(TargetFor(DetectCpu()));
  rt.SetCacheCapacity(2);
  auto get = [&](const char* text) {
    absl::StatusOr<KernelPtr> k = rt.Get(text);
    EXPECT_TRUE(k.ok()) << k.status();
    return k.ok() ? *k : nullptr;
  };
  KernelPtr a = get("matmul 8x8x8 f32");
  get("matmul 9x9x9 f32");
  get("matmul 8x8x8 f32");     // hit: 8^3 is now the most recent
  get("matmul 10x10x10 f32");  // evicts 9^3
  get("matmul 8x8x8 f32");     // still cached
  CacheStats s = rt.cache_stats();
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.misses, 3);
  EXPECT_EQ(s.evictions, 1);
  EXPECT_EQ(s.entries, 2);
  EXPECT_GT(s.search_ms, 0);
  EXPECT_GT(s.jit_us, 0);
  get("matmul 9x9x9 f32");  // evicted: generated again
  EXPECT_EQ(rt.generated(), 4);
  EXPECT_EQ(rt.cache_stats().evictions, 2);  // the least recent, 10^3
  // A kernel held by the caller outlives its eviction.
  rt.SetCacheCapacity(1);
  Operands ops(a->spec());
  FillRandom(a->spec(), ops, 1);
  std::vector<uint8_t> before = ops.Snapshot(2);
  ASSERT_TRUE(a->Run(ops.ptrs()).ok());
  EXPECT_TRUE(CheckAgainstReference(a->spec(), ops, before).ok);
}

}  // namespace
}  // namespace amarena
