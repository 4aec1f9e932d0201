// One runtime per (ISA, threads) for a whole test binary, made on first use
// for the host's CPU capped at that ISA, and whether the host has the ISA;
// a fixture for tests run once per ISA (TextMatchesReference, in
// check_kernel.h, checks a Spec text's kernel on one of these runtimes).
//
//   if (!HasIsa(Isa::kAvx512)) GTEST_SKIP();
//   EXPECT_TRUE(KernelMatchesReference(Rt(Isa::kAvx512, 2), spec));
//   class AlphaTest : public testing::IsaTest {};  // skips a missing ISA
//   EXPECT_TRUE(TextMatchesReference(GetParam(), 2, "matmul 7x7x7 f32"));
#ifndef AMARENA_TESTS_TESTING_ISA_RUNTIME_H_
#define AMARENA_TESTS_TESTING_ISA_RUNTIME_H_

#include <mutex>
#include <string>

#include "gtest/gtest.h"
#include "runtime/host.h"
#include "runtime/runtime.h"

namespace amarena::testing {

// threads: 1 or 2. Never destroyed (tests share it to the end).
inline Runtime& Rt(Isa isa, int threads) {
  static Runtime* rts[2][2] = {};
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  Runtime*& rt = rts[static_cast<int>(isa)][threads - 1];
  if (rt == nullptr) {
    absl::StatusOr<Target> t = TargetFor(DetectCpu(), isa);
    if (t.ok()) t->workers = threads;
    rt = new Runtime(t);
  }
  return *rt;
}

inline bool HasIsa(Isa isa) {
  absl::StatusOr<Target> t = TargetFor(DetectCpu(), isa);
  return t.ok() && t->isa == isa;
}

// Tests parameterised by ISA; skipped where the host lacks it. Instantiate
// with AMARENA_INSTANTIATE_PER_ISA(Suite).
class IsaTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!HasIsa(GetParam())) GTEST_SKIP() << "CPU lacks " << Name(GetParam());
  }
};

}  // namespace amarena::testing

#define AMARENA_INSTANTIATE_PER_ISA(suite)                      \
  INSTANTIATE_TEST_SUITE_P(                                     \
      Isa, suite, ::testing::Values(Isa::kAvx2, Isa::kAvx512),  \
      [](const auto& info) { return std::string(Name(info.param)); })

#endif  // AMARENA_TESTS_TESTING_ISA_RUNTIME_H_
