// Runs a kernel from a Runtime on random inputs and compares with the
// reference.
//
//   EXPECT_TRUE(KernelMatchesReference(runtime, spec));
#ifndef AMARENA_TESTS_TESTING_CHECK_KERNEL_H_
#define AMARENA_TESTS_TESTING_CHECK_KERNEL_H_

#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "runtime/runtime.h"

namespace amarena::testing {

// Runs `k` (a kernel for `s`) on random inputs against the reference.
inline ::testing::AssertionResult KernelMatchesReference(const KernelPtr& k,
                                                         const Spec& s,
                                                         uint64_t seed = 1) {
  Operands ops(s);
  FillRandom(s, ops, seed);
  std::vector<uint8_t> before = ops.Snapshot(s.OutputIndex());
  if (absl::Status run = k->Run(ops.ptrs()); !run.ok())
    return ::testing::AssertionFailure() << PrintSpec(s) << ": " << run;
  Verdict v = CheckAgainstReference(s, ops, before);
  if (!v.ok)
    return ::testing::AssertionFailure()
           << PrintSpec(s) << ": max relative error " << v.max_rel_err << " > "
           << v.tolerance << "\n"
           << PrintImpl(k->impl());
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult KernelMatchesReference(Runtime& rt,
                                                         const Spec& s,
                                                         uint64_t seed = 1) {
  absl::StatusOr<KernelPtr> k = rt.Get(s);
  if (!k.ok())
    return ::testing::AssertionFailure()
           << PrintSpec(s) << ": " << k.status().message();
  return KernelMatchesReference(*k, s, seed);
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_CHECK_KERNEL_H_
