// The inputs and the exact answer of one problem, made once and shared by
// every implementation checked on it, and the check that runs before any
// timing: a wrong result stops the row.
//
//   Reference ref({m, k, n});                  // A, B random in [-1, 1)
//   float* c = ref.c();                         // an output buffer to bind
//   absl::Status s = VerifyOnce(gemm, ref);     // runs gemm once, compares
//
// The comparison is core/reference.h's (CheckAgainstReference), computed
// faster: the inputs are amarena's FillRandom operands of `matmul MxKxN f32`,
// the exact value of each output element is its dot product in double
// precision, its error is divided by the sum of the magnitudes it accumulated
// (sum_k |a_ik b_kj|), and the tolerance is (k + 4) * 2^-23. The loop runs
// i-k-j over whole rows (unit stride, vectorisable) instead of one dot product
// down a column of B per element, so the 2048^3 reference does not dominate
// the run; tests/bench/peers/check_test checks that it and
// CheckAgainstReference agree.
#ifndef AMARENA_BENCH_PEERS_CHECK_H_
#define AMARENA_BENCH_PEERS_CHECK_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "bench/peers/peer.h"
#include "core/reference.h"
#include "core/spec.h"

namespace amarena::bench {

class Reference {
 public:
  explicit Reference(const Problem& p, uint64_t seed = 1);
  const Problem& problem() const { return p_; }
  const Spec& spec() const { return spec_; }
  const float* a() const { return static_cast<const float*>(ops_->ptr(0)); }
  const float* b() const { return static_cast<const float*>(ops_->ptr(1)); }
  float* c() const { return static_cast<float*>(ops_->ptr(2)); }
  const Operands& operands() const { return *ops_; }

  // `c` against the exact product.
  Verdict Check(const float* c) const;

 private:
  Problem p_;
  Spec spec_;
  std::unique_ptr<Operands> ops_;
  std::vector<double> value_, scale_;  // m x n, row-major
};

// Fills ref.c() with a sentinel (so unwritten elements are caught), runs `g`
// once, and compares. An error status names the largest error and the
// tolerance; the row must then not be timed.
absl::Status VerifyOnce(PreparedGemm& g, const Reference& ref);

}  // namespace amarena::bench

#endif  // AMARENA_BENCH_PEERS_CHECK_H_
