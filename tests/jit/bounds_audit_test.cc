// The emitter's bounds audit (jit/emitter.h, Touched): every kernel the search
// makes for a random Spec compiles, for AVX2 and for AVX-512 with BF16 whether
// or not the host can run them, and Compile refuses code that would start an
// access outside an operand or the scratch area. Creating kernels never runs
// them, so this checks the AVX-512 generator on any x86 host; the guard-page
// sweep (guard_page_test.cc) runs the code where the host can.
#include <string>

#include "gtest/gtest.h"
#include "runtime/runtime.h"
#include "tests/testing/fixed_target.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

// Runtimes that create (never run) kernels for a target, database off.
Runtime& AuditRuntime(Isa isa, int workers) {
  static Runtime* rts[2][2] = {};
  Runtime*& rt = rts[static_cast<int>(isa)][workers - 1];
  if (rt == nullptr) {
    RuntimeOptions options;
    options.db = "off";
    rt = new Runtime(testing::FixedTarget(isa, workers), options);
  }
  return *rt;
}

// Kernels for every SweepStride-th text, alternately on one and two
// workers, each expected to be created (no refusal); how many were.
int AllCreated(Isa isa, const std::vector<std::string>& texts) {
  int made = 0;
  for (size_t i = 0; i < texts.size(); i += testing::SweepStride()) {
    const int workers = 1 + static_cast<int>(i % 2);
    absl::StatusOr<KernelPtr> k = AuditRuntime(isa, workers).Get(texts[i]);
    EXPECT_TRUE(k.ok()) << texts[i] << " (" << workers
                        << " workers): " << k.status();
    made += k.ok();
  }
  return made;
}

class BoundsAudit : public ::testing::TestWithParam<Isa> {};

// The Specs that once went wrong on AVX-512 compile within bounds.
TEST_P(BoundsAudit, KnownCases) {
  for (const std::string& text : testing::OnceFaultingSpecs()) {
    for (int workers : {1, 2}) {
      absl::StatusOr<KernelPtr> k = AuditRuntime(GetParam(), workers).Get(text);
      EXPECT_TRUE(k.ok()) << text << ": " << k.status();
    }
  }
}

TEST_P(BoundsAudit, RandomSpecsCompileWithinBounds) {
  const Isa isa = GetParam();
  const std::vector<std::string> texts =
      testing::RandomSpecTexts(testing::SweepCount(120), /*max_dim=*/200,
                               /*seed=*/1700 + static_cast<int>(isa));
  int made = 0, unimplemented = 0;
  for (size_t i = 0; i < texts.size(); i += testing::SweepStride()) {
    const int workers = 1 + static_cast<int>(i % 2);
    absl::StatusOr<KernelPtr> k = AuditRuntime(isa, workers).Get(texts[i]);
    if (absl::IsUnimplemented(k.status()) &&
        k.status().message().find("a bug in amarena") == std::string::npos) {
      ++unimplemented;
      continue;
    }
    EXPECT_TRUE(k.ok()) << texts[i] << " (" << workers
                        << " workers): " << k.status();
    made += k.ok();
  }
  std::printf(
      "%s: %d kernels created within bounds, %d refused as not "
      "implemented\n",
      std::string(Name(isa)).c_str(), made, unimplemented);
  EXPECT_GT(made, 0);
}

// f32 activations times bf16 weights (f32*bf16->f32), every layout of B:
// only k-pair panels too wide to unpack are refused.
TEST_P(BoundsAudit, RandomF32TimesBf16SpecsCompileWithinBounds) {
  const Isa isa = GetParam();
  const std::vector<std::string> texts = testing::RandomSpecTexts(
      testing::SweepCount(120), /*max_dim=*/200,
      /*seed=*/2700 + static_cast<int>(isa), "f32*bf16->f32");
  int made = 0;
  for (size_t i = 0; i < texts.size(); i += testing::SweepStride()) {
    std::string text = texts[i];
    if (i % 4 == 0 && text.find(" b=") == std::string::npos) text += " b=any";
    const int workers = 1 + static_cast<int>(i % 2);
    absl::StatusOr<KernelPtr> k = AuditRuntime(isa, workers).Get(text);
    if (absl::IsUnimplemented(k.status()) &&
        k.status().message().find("k-pair panels") != std::string::npos)
      continue;
    EXPECT_TRUE(k.ok()) << text << " (" << workers
                        << " workers): " << k.status();
    made += k.ok();
  }
  std::printf("%s: %d f32*bf16->f32 kernels created within bounds\n",
              std::string(Name(isa)).c_str(), made);
  EXPECT_GT(made, 0);
}

// Operands with leading dimensions: the audit compares each operand's
// accesses with its pitched size, which ends with the last row's own
// elements.
TEST_P(BoundsAudit, RandomLdSpecsCompileWithinBounds) {
  const Isa isa = GetParam();
  const std::vector<std::string> texts =
      testing::RandomLdSpecTexts(testing::SweepCount(120), /*max_dim=*/200,
                                 /*seed=*/1800 + static_cast<int>(isa));
  const int made = AllCreated(isa, texts);
  std::printf("%s: %d kernels with leading dimensions created within bounds\n",
              std::string(Name(isa)).c_str(), made);
  EXPECT_GT(made, 0);
}

// Batched matmuls: the audit compares each operand's accesses with its
// whole batch's extent ((B - 1) strides and one matrix).
TEST_P(BoundsAudit, RandomBatchSpecsCompileWithinBounds) {
  const Isa isa = GetParam();
  const std::vector<std::string> texts =
      testing::RandomBatchSpecTexts(testing::SweepCount(120), /*max_dim=*/200,
                                    /*seed=*/2800 + static_cast<int>(isa));
  const int made = AllCreated(isa, texts);
  std::printf("%s: %d batched kernels created within bounds\n",
              std::string(Name(isa)).c_str(), made);
  EXPECT_GT(made, 0);
}

INSTANTIATE_TEST_SUITE_P(Isa, BoundsAudit,
                         ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) {
                           return std::string(Name(info.param));
                         });

}  // namespace
}  // namespace amarena
