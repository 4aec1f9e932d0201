// libxsmm: one JIT kernel per shape from libxsmm_smmdispatch, called directly.
// libxsmm is column-major, so the row-major C = A.B is computed as the
// column-major C^T = B^T . A^T: m' = n, n' = m, k' = k, with B as the first
// operand (ld n) and A as the second (ld k). Debian ships libxsmm only as a
// static archive, so this file is compiled in when CMake finds it
// (AMARENA_HAVE_LIBXSMM); it is linked with libxsmmnoblas, so no call can fall
// back to a BLAS behind our back.
//
// CPU choice: libxsmm_set_target_arch("hsw") for the AVX2 column; for the best
// column the CPUID-detected target; libxsmm_get_target_arch() is printed.
// Threads: a dispatched kernel runs on the calling thread, so two-thread rows
// are skipped (libxsmm's threaded GEMM is an OpenMP layer over BLAS-sized
// problems, not this kernel).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/peers/dl.h"
#include "bench/peers/peer.h"

#if AMARENA_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

namespace amarena::bench {
namespace {

#if AMARENA_HAVE_LIBXSMM

class XsmmRun : public PreparedGemm {
 public:
  XsmmRun(libxsmm_smmfunction f, const float* a, const float* b, float* c)
      : f_(f), a_(a), b_(b), c_(c) {}
  void Run() override { f_(b_, a_, c_); }  // C^T = B^T . A^T, column-major

 private:
  libxsmm_smmfunction f_;
  const float *a_, *b_;
  float* c_;
};

class LibxsmmPeer : public Peer {
 public:
  std::string name() const override { return "libxsmm"; }
  absl::Status Init(IsaCap cap) override {
    std::string note = SetEnvNoting("LIBXSMM_TARGET", "");
    libxsmm_init();
    if (cap == IsaCap::kAvx2) libxsmm_set_target_arch("hsw");
    choice_ = absl::StrCat(
        "libxsmm ", LIBXSMM_VERSION, ", target ", libxsmm_get_target_arch(),
        cap == IsaCap::kAvx2 ? " (libxsmm_set_target_arch(\"hsw\"))"
                             : " (CPUID: detected)",
        note.empty() ? "" : "; ", note, note.empty() ? "" : " (cleared)");
    return absl::OkStatus();
  }
  std::string CpuChoice() const override { return choice_; }

  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem& p,
                                                        int threads,
                                                        const float* a,
                                                        const float* b,
                                                        float* c) override {
    if (threads != 1)
      return absl::UnimplementedError(
          "a libxsmm kernel runs on the calling thread only");
    const libxsmm_blasint m = p.n, n = p.m, k = p.k;
    const libxsmm_blasint lda = p.n, ldb = p.k, ldc = p.n;
    const float alpha = 1, beta = 0;
    const int flags = LIBXSMM_GEMM_FLAG_NONE,
              prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    libxsmm_smmfunction f = libxsmm_smmdispatch(
        m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch);
    if (f == nullptr)
      return absl::UnimplementedError(
          "libxsmm_smmdispatch returns no kernel for this shape");
    return std::make_unique<XsmmRun>(f, a, b, c);
  }

 private:
  std::string choice_;
};

#else

class LibxsmmPeer : public Peer {
 public:
  std::string name() const override { return "libxsmm"; }
  absl::Status Init(IsaCap) override {
    return absl::UnavailableError("built without libxsmm (libxsmm-dev)");
  }
  std::string CpuChoice() const override { return ""; }
  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem&, int,
                                                        const float*,
                                                        const float*,
                                                        float*) override {
    return absl::UnavailableError("built without libxsmm");
  }
};

#endif

}  // namespace

std::unique_ptr<Peer> MakeLibxsmmPeer() {
  return std::make_unique<LibxsmmPeer>();
}

}  // namespace amarena::bench
