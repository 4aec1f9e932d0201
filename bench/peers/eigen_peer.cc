// Eigen (3.4, header-only) as a peer: the product comes from one of two
// shared libraries built from eigen_gemm.cc, one per instruction set (Eigen's
// ISA is fixed at compile time, so capping it means choosing the build).
// Compiled in when CMake finds Eigen (AMARENA_HAVE_EIGEN).
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/peers/peer.h"
#include "jit/cpu_features.h"

#if AMARENA_HAVE_EIGEN
extern "C" {
void amarena_eigen_avx2_sgemm(int64_t m, int64_t k, int64_t n, const float* a,
                              const float* b, float* c, int threads);
const char* amarena_eigen_avx2_simd();
void amarena_eigen_avx512_sgemm(int64_t m, int64_t k, int64_t n, const float* a,
                                const float* b, float* c, int threads);
const char* amarena_eigen_avx512_simd();
}
#endif

namespace amarena::bench {
namespace {

#if AMARENA_HAVE_EIGEN
using Sgemm = void (*)(int64_t, int64_t, int64_t, const float*, const float*,
                       float*, int);

class EigenRun : public PreparedGemm {
 public:
  EigenRun(Sgemm f, Problem p, int threads, const float* a, const float* b,
           float* c)
      : f_(f), p_(p), threads_(threads), a_(a), b_(b), c_(c) {}
  void Run() override { f_(p_.m, p_.k, p_.n, a_, b_, c_, threads_); }

 private:
  Sgemm f_;
  Problem p_;
  int threads_;
  const float *a_, *b_;
  float* c_;
};
#endif

class EigenPeer : public Peer {
 public:
  std::string name() const override { return "eigen"; }
  absl::Status Init(IsaCap cap) override {
#if AMARENA_HAVE_EIGEN
    if (cap == IsaCap::kBest && DetectCpu().avx512f) {
      f_ = amarena_eigen_avx512_sgemm;
      choice_ = absl::StrCat("Eigen 3.4 built with AVX-512 flags; in use: ",
                             amarena_eigen_avx512_simd());
    } else {
      f_ = amarena_eigen_avx2_sgemm;
      choice_ = absl::StrCat("Eigen 3.4 built with -mavx2 -mfma; in use: ",
                             amarena_eigen_avx2_simd());
    }
    return absl::OkStatus();
#else
    (void)cap;
    return absl::UnavailableError("built without Eigen (libeigen3-dev)");
#endif
  }
  std::string CpuChoice() const override { return choice_; }

  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem& p,
                                                        int threads,
                                                        const float* a,
                                                        const float* b,
                                                        float* c) override {
#if AMARENA_HAVE_EIGEN
    return std::make_unique<EigenRun>(f_, p, threads, a, b, c);
#else
    (void)p, (void)threads, (void)a, (void)b, (void)c;
    return absl::UnavailableError("built without Eigen");
#endif
  }

 private:
#if AMARENA_HAVE_EIGEN
  Sgemm f_ = nullptr;
#endif
  std::string choice_;
};

}  // namespace

std::unique_ptr<Peer> MakeEigenPeer() { return std::make_unique<EigenPeer>(); }

}  // namespace amarena::bench
