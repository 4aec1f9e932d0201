// Runs a kernel from a Runtime on random inputs and compares with the
// reference.
//
//   EXPECT_TRUE(KernelMatchesReference(runtime, spec));
#ifndef AMARENA_TESTS_TESTING_CHECK_KERNEL_H_
#define AMARENA_TESTS_TESTING_CHECK_KERNEL_H_

#include <cstring>

#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "jit/scratch.h"
#include "runtime/runtime.h"
#include "tests/testing/guarded_operands.h"

namespace amarena::testing {

// Runs `k` (a kernel for `s`) on random inputs against the reference, twice:
// with every operand and its scratch area flush against the guard page after
// it, then before it (tests/testing/guarded_operands.h). A stray access
// faults; the second run must give the first run's bits.
inline ::testing::AssertionResult KernelMatchesReference(const KernelPtr& k,
                                                         const Spec& s,
                                                         uint64_t seed = 1) {
  Operands ops(s);
  FillRandom(s, ops, seed);
  std::vector<uint8_t> before = ops.Snapshot(s.OutputIndex());
  GuardedOperands back(s, ops, Placement::kBack);
  GuardedOperands front(s, ops, Placement::kFront);
  jit::SetScratchPlacementForTesting(jit::ScratchPlacement::kBack);
  if (absl::Status run = k->Run(back.ptrs()); !run.ok())
    return ::testing::AssertionFailure() << PrintSpec(s) << ": " << run;
  back.CopyOutputTo(s, ops);
  Verdict v = CheckAgainstReference(s, ops, before);
  if (!v.ok)
    return ::testing::AssertionFailure()
           << PrintSpec(s) << ": max relative error " << v.max_rel_err << " > "
           << v.tolerance << "\n"
           << PrintImpl(k->impl());
  jit::SetScratchPlacementForTesting(jit::ScratchPlacement::kFront);
  absl::Status run = k->Run(front.ptrs());
  jit::SetScratchPlacementForTesting(jit::ScratchPlacement::kBack);
  if (!run.ok())
    return ::testing::AssertionFailure() << PrintSpec(s) << ": " << run;
  const int o = s.OutputIndex();
  if (std::memcmp(front.ptrs()[o], ops.ptr(o), OperandBytes(s, o)) != 0)
    return ::testing::AssertionFailure()
           << PrintSpec(s)
           << ": operands placed at the front of their pages give other bits "
              "than at the back\n"
           << PrintImpl(k->impl());
  return ::testing::AssertionSuccess();
}

// Options for a runtime whose search database is the file at `path`.
inline RuntimeOptions WithDb(const std::string& path) {
  RuntimeOptions o;
  o.db = path;
  return o;
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
