// Runs a kernel from a Runtime on random inputs and compares with the
// reference.
//
//   EXPECT_TRUE(KernelMatchesReference(runtime, spec));
#ifndef AMARENA_TESTS_TESTING_CHECK_KERNEL_H_
#define AMARENA_TESTS_TESTING_CHECK_KERNEL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "jit/scratch.h"
#include "runtime/runtime.h"
#include "tests/testing/guarded_operands.h"
#include "tests/testing/isa_runtime.h"
#include "tests/testing/random_specs.h"

namespace amarena::testing {

// Which elements of operand i's storage, over the whole batch, a kernel may
// read: those of its matrices (a plain operand's rows, not the gaps of a
// leading dimension) and all of a packed one's stored elements (padding
// included). The rest (between rows, between a batch's matrices) is not the
// operand's.
inline std::vector<bool> InMatrices(const Spec& s, int i) {
  const TensorSpec t = s.Operand(i);
  std::vector<bool> in(static_cast<size_t>(s.BatchedElements(i)), false);
  for (int64_t q = 0; q < s.b; ++q) {
    const int64_t base = q * s.BatchStride(i);
    if (t.layout().packed()) {
      for (int64_t e = 0; e < t.StoredElements(); ++e)
        in[static_cast<size_t>(base + e)] = true;
      continue;
    }
    for (int64_t r = 0; r < t.rows; ++r)
      for (int64_t c = 0; c < t.cols; ++c)
        in[static_cast<size_t>(base + t.Offset(r, c))] = true;
  }
  return in;
}

// Fills every operand's gaps (a leading dimension's, a batch stride's) with
// quiet NaNs: a kernel that computes with one gives NaNs the reference does
// not.
inline void FillLdGaps(const Spec& s, Operands& ops) {
  for (int i = 0; i < s.NumOperands(); ++i) {
    const TensorSpec t = s.Operand(i);
    const std::vector<bool> in = InMatrices(s, i);
    for (size_t e = 0; e < in.size(); ++e) {
      if (in[e]) continue;
      if (t.aux.dtype == DType::kF32) {
        const uint32_t nan = 0x7fe5a5a5u;
        std::memcpy(static_cast<char*>(ops.ptr(i)) + 4 * e, &nan, 4);
      } else {
        const uint16_t nan = 0x7fe5u;
        std::memcpy(static_cast<char*>(ops.ptr(i)) + 2 * e, &nan, 2);
      }
    }
  }
}

// The first element of the output's gaps whose bytes differ from `before`
// (-1: none): a kernel must not write between the rows of a view, nor
// between a batch's matrices.
inline int64_t ChangedLdGap(const Spec& s, const Operands& ops,
                            const std::vector<uint8_t>& before) {
  const int o = s.OutputIndex();
  const int64_t es = SizeOf(s.aux[static_cast<size_t>(o)].dtype);
  const char* now = static_cast<const char*>(ops.ptr(o));
  const std::vector<bool> in = InMatrices(s, o);
  for (size_t e = 0; e < in.size(); ++e)
    if (!in[e] && std::memcmp(now + e * es, before.data() + e * es,
                              static_cast<size_t>(es)) != 0)
      return static_cast<int64_t>(e);
  return -1;
}

// Runs `k` (a kernel for `s`) on random inputs against the reference, twice:
// with every operand and its scratch area flush against the guard page after
// it, then before it (tests/testing/guarded_operands.h). A stray access
// faults; the second run must give the first run's bits. An operand with a
// leading dimension has NaNs between its rows: the output must match the
// reference all the same, and the output's gaps must stay untouched.
inline ::testing::AssertionResult KernelMatchesReference(const KernelPtr& k,
                                                         const Spec& s,
                                                         uint64_t seed = 1) {
  Operands ops(s);
  FillRandom(s, ops, seed);
  FillLdGaps(s, ops);
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
  if (const int64_t e = ChangedLdGap(s, ops, before); e >= 0)
    return ::testing::AssertionFailure()
           << PrintSpec(s) << ": the kernel wrote element " << e
           << " of the output, between its rows or its batch's matrices\n"
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

// One request (a Spec text; `b=any` allowed) with `threads` threads: the
// kernel runs against the reference in the layout it was made for.
inline ::testing::AssertionResult TextMatchesReference(Isa isa, int threads,
                                                       const std::string& text,
                                                       uint64_t seed = 1) {
  absl::StatusOr<KernelPtr> k = Rt(isa, threads).Get(text);
  if (!k.ok())
    return ::testing::AssertionFailure()
           << text << " (" << threads << " threads): " << k.status();
  return KernelMatchesReference(*k, (*k)->spec(), seed)
         << " (" << text << ", " << threads << " threads)";
}

// A sweep of user-level Spec texts: every SweepStride-th one (first passed
// through `edit`, which may add options), alternately serial and on two
// threads, made and checked against the reference. The only refusal
// accepted is Unimplemented naming k-pair panels no kernel can read; any
// other failure is a test failure.
struct SweepCounts {
  int checked = 0, refused = 0;
};
template <typename Edit>
SweepCounts CheckTextSweep(Isa isa, const std::vector<std::string>& texts,
                           Edit edit) {
  SweepCounts n;
  for (size_t i = 0; i < texts.size(); i += SweepStride()) {
    const std::string text = edit(texts[i], i);
    const int threads = 1 + static_cast<int>(i % 2);
    absl::StatusOr<KernelPtr> k = Rt(isa, threads).Get(text);
    if (absl::IsUnimplemented(k.status())) {
      EXPECT_NE(k.status().message().find("k-pair panels"), std::string::npos)
          << text << ": " << k.status();
      ++n.refused;
      continue;
    }
    EXPECT_TRUE(k.ok()) << text << ": " << k.status();
    if (!k.ok()) continue;
    EXPECT_TRUE(KernelMatchesReference(*k, (*k)->spec(), /*seed=*/i))
        << text << ", " << threads << " threads";
    ++n.checked;
  }
  return n;
}
inline SweepCounts CheckTextSweep(Isa isa,
                                  const std::vector<std::string>& texts) {
  return CheckTextSweep(isa, texts,
                        [](const std::string& t, size_t) { return t; });
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_CHECK_KERNEL_H_
