// One runtime per (ISA, threads) for a whole test binary, made on first use
// for the host's CPU capped at that ISA, and whether the host has the ISA.
//
//   if (!HasIsa(Isa::kAvx512)) GTEST_SKIP();
//   EXPECT_TRUE(KernelMatchesReference(Rt(Isa::kAvx512, 2), spec));
#ifndef AMARENA_TESTS_TESTING_ISA_RUNTIME_H_
#define AMARENA_TESTS_TESTING_ISA_RUNTIME_H_

#include <mutex>

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

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_ISA_RUNTIME_H_
