// The scalar reference: what a Spec means, computed slowly and in double
// precision. Every JIT kernel is checked against it (tests, `amarena run`,
// benchmarks).
//
//   Operands ops = AllocateOperands(spec);  FillRandom(spec, ops, /*seed=*/1);
//   kernel(ops.ptrs());                      // the code under test
//   Verdict v = CheckAgainstReference(spec, ops);   // v.ok, v.max_rel_err
//
// Operands are the user-level kind: dense matrices in memory with the layouts
// the Spec names, addressed as core/layout.h says (Layout::Offset); a batched
// matmul's operand holds its b matrices Spec::BatchStride elements apart
// (Spec::BatchedElements in all).
#ifndef AMARENA_CORE_REFERENCE_H_
#define AMARENA_CORE_REFERENCE_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/spec.h"

namespace amarena {

// Relayout (core/layout.h) of a matrix between two operands' layouts of the
// same shape and dtype (e.g. row-major B into the panels a Spec with
// `b=p32x2` reads: pre-packed weights).
void Relayout(const TensorSpec& from, const void* src, const TensorSpec& to,
              void* dst);

// Owned buffers for every operand of a Spec: on a page from 4 KiB up (as
// engines keep tensors, and as the peers' operands are in the benchmarks),
// else on 64 bytes. Where the heap happened to put them would otherwise move
// how an operand's lines share L1 sets with another's: the same code timed
// 0.9-1.1x from one binary to another.
class Operands {
 public:
  explicit Operands(const Spec& s);
  void* const* ptrs() const { return ptrs_.data(); }
  void* ptr(int i) const { return ptrs_[i]; }
  // Copy of operand i's bytes (e.g. the output before the kernel runs).
  std::vector<uint8_t> Snapshot(int i) const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::vector<std::unique_ptr<void, Free>> bufs_;
  std::vector<void*> ptrs_;
  std::vector<size_t> bytes_;
};

// Inputs uniform in [-1, 1); the output is filled too (accumulating Specs read
// it).
void FillRandom(const Spec& s, Operands& ops, uint64_t seed);

float ReadElement(const void* base, DType t, int64_t offset);

// Comparison of a computed output with the reference. The error of element
// (i,j) is |got - exact| / (sum_k |a_ik * b_kj| + |c0_ij| + tiny): rounding
// error relative to the magnitudes that were summed, so it does not blow up on
// cancellation. A correct f32 kernel stays below about k * 2^-24; `ok` allows
// (k + 4) * 2^-23, (k + 6) * 2^-23 with alpha (the products and their scale
// are both multiplied by |alpha|), and at least 2^-8 for a bf16 output (one
// rounding to bf16's 8 bits).
struct Verdict {
  bool ok = false;
  double max_rel_err = 0;
  double tolerance = 0;
};

// `output_before` is the output operand's bytes before the kernel ran
// (accumulating Specs add to it); `ops` holds the inputs and the computed
// output.
Verdict CheckAgainstReference(const Spec& s, const Operands& ops,
                              const std::vector<uint8_t>& output_before);

// The reference's output for one set of inputs and starting output, computed
// once, to check many kernels run on them (`amarena fidelity` checks a
// hundred trees of one Spec; at 1024^3 the reference takes seconds). Holds
// two doubles per output element. Check(ops) is CheckAgainstReference(spec,
// ops, output_before) for ops holding the same inputs.
class ExpectedOutput {
 public:
  ExpectedOutput(const Spec& s, const Operands& inputs,
                 const std::vector<uint8_t>& output_before);
  Verdict Check(const Operands& ops) const;

 private:
  Spec spec_;
  std::vector<std::pair<double, double>> exact_;  // value, scale
};

// Runs the reference in place (the output operand is overwritten), for tests
// that want reference outputs directly.
absl::Status RunReference(const Spec& s, void* const* operands);

}  // namespace amarena

#endif  // AMARENA_CORE_REFERENCE_H_
