// OpenBLAS and BLIS through their cblas_sgemm, each dlopened from its exact
// path (both export the symbol). Row-major, no transposes, beta = 0.
//
// CPU choice. OpenBLAS (DYNAMIC_ARCH) picks its kernels once, when the
// library loads, from OPENBLAS_CORETYPE or its own CPUID detection; an
// environment may preset OPENBLAS_CORETYPE, so it is always set here: Haswell
// (AVX2) for the AVX2 column, and for the best column it is cleared so the
// library detects the CPU (0.3.21 reports Cooperlake, its AVX-512 target, on
// Zen 5). BLIS reads BLIS_ARCH_TYPE (a numeric sub-configuration id) at
// initialisation; it is always set, to the id of `zen3` (AVX2, AMD-tuned) or,
// for the best column on a CPU with AVX-512, `skx`, found by name, and the id
// BLIS reports afterwards is checked against it.
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "bench/peers/dl.h"
#include "bench/peers/peer.h"

namespace amarena::bench {
namespace {

// The CBLAS interface, from its specification (enum values fixed by it).
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
using CblasSgemm = void (*)(int order, int transa, int transb, int m, int n,
                            int k, float alpha, const float* a, int lda,
                            const float* b, int ldb, float beta, float* c,
                            int ldc);

class CblasGemm : public PreparedGemm {
 public:
  CblasGemm(CblasSgemm f, Problem p, const float* a, const float* b, float* c)
      : f_(f), p_(p), a_(a), b_(b), c_(c) {}
  void Run() override {
    const int m = static_cast<int>(p_.m), n = static_cast<int>(p_.n),
              k = static_cast<int>(p_.k);
    f_(kCblasRowMajor, kCblasNoTrans, kCblasNoTrans, m, n, k, 1.0f, a_, k, b_,
       n, 0.0f, c_, n);
  }

 private:
  CblasSgemm f_;
  Problem p_;
  const float *a_, *b_;
  float* c_;
};

absl::Status CheckInt(const Problem& p) {
  if (p.m > (1 << 30) || p.n > (1 << 30) || p.k > (1 << 30) ||
      p.m * p.k > (int64_t{1} << 31) || p.k * p.n > (int64_t{1} << 31) ||
      p.m * p.n > (int64_t{1} << 31))
    return absl::UnimplementedError("CBLAS takes 32-bit int dimensions");
  return absl::OkStatus();
}

class OpenBlasPeer : public Peer {
 public:
  std::string name() const override { return "openblas"; }

  absl::Status Init(IsaCap cap) override {
    std::string notes = SetEnvNoting("OPENBLAS_CORETYPE",
                                     cap == IsaCap::kAvx2 ? "Haswell" : "");
    std::string l2 = SetEnvNoting("OPENBLAS_L2_SIZE", "");
    if (!l2.empty()) absl::StrAppend(&notes, notes.empty() ? "" : "; ", l2);
    absl::StatusOr<Library> lib = Library::Open(kOpenBlasPath);
    if (!lib.ok()) return lib.status();
    lib_ = *std::move(lib);
    if (absl::Status s = lib_.Need("cblas_sgemm", &sgemm_); !s.ok()) return s;
    if (absl::Status s = lib_.Need("openblas_set_num_threads", &set_threads_);
        !s.ok())
      return s;
    auto corename = lib_.Sym<char* (*)()>("openblas_get_corename");
    auto config = lib_.Sym<char* (*)()>("openblas_get_config");
    const std::string core = corename != nullptr ? corename() : "?";
    if (cap == IsaCap::kAvx2 && absl::AsciiStrToLower(core) != "haswell")
      return absl::InternalError(absl::StrCat(
          "OpenBLAS chose core ", core, " after OPENBLAS_CORETYPE=Haswell"));
    choice_ = absl::StrCat(
        "core ", core,
        cap == IsaCap::kAvx2 ? " (OPENBLAS_CORETYPE=Haswell)"
                             : " (OPENBLAS_CORETYPE cleared: detected)",
        "; ", config != nullptr ? config() : "", notes.empty() ? "" : "; ",
        notes, notes.empty() ? "" : " (cleared)");
    return absl::OkStatus();
  }
  std::string CpuChoice() const override { return choice_; }

  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem& p,
                                                        int threads,
                                                        const float* a,
                                                        const float* b,
                                                        float* c) override {
    if (absl::Status s = CheckInt(p); !s.ok()) return s;
    set_threads_(threads);
    return std::make_unique<CblasGemm>(sgemm_, p, a, b, c);
  }

 private:
  Library lib_;
  CblasSgemm sgemm_ = nullptr;
  void (*set_threads_)(int) = nullptr;
  std::string choice_;
};

class BlisPeer : public Peer {
 public:
  std::string name() const override { return "blis"; }

  absl::Status Init(IsaCap cap) override {
    absl::StatusOr<Library> lib = Library::Open(kBlisPath);
    if (!lib.ok()) return lib.status();
    lib_ = *std::move(lib);
    const char* (*arch_string)(int) = nullptr;
    int (*query_id)() = nullptr;
    void (*init)() = nullptr;
    if (absl::Status s = lib_.Need("cblas_sgemm", &sgemm_); !s.ok()) return s;
    if (absl::Status s = lib_.Need("bli_thread_set_num_threads", &set_threads_);
        !s.ok())
      return s;
    if (absl::Status s = lib_.Need("bli_arch_string", &arch_string); !s.ok())
      return s;
    if (absl::Status s = lib_.Need("bli_arch_query_id", &query_id); !s.ok())
      return s;
    if (absl::Status s = lib_.Need("bli_init", &init); !s.ok()) return s;
    // bli_arch_string reads a static table: safe before bli_init. The ids
    // are the order of BLIS's arch_t enum, which differs between versions,
    // hence the lookup by name.
    // The best column takes skx only where the CPU runs AVX-512: forced on
    // an AVX2-only CPU, BLIS dies of an illegal instruction.
    const bool avx512 = __builtin_cpu_supports("avx512f");
    const std::string want = cap == IsaCap::kBest && avx512 ? "skx" : "zen3";
    int id = -1;
    for (int i = 0; i < 64; ++i) {
      const char* s = arch_string(i);
      if (s == nullptr) break;
      if (want == s) {
        id = i;
        break;
      }
    }
    if (id < 0)
      return absl::UnimplementedError(
          absl::StrCat("this BLIS has no '", want, "' sub-configuration"));
    std::string note = SetEnvNoting("BLIS_ARCH_TYPE", absl::StrCat(id));
    init();
    const int got = query_id();
    if (got != id)
      return absl::InternalError(absl::StrCat("BLIS chose ", arch_string(got),
                                              " after BLIS_ARCH_TYPE=", id));
    choice_ = absl::StrCat("sub-configuration ", arch_string(got),
                           " (BLIS_ARCH_TYPE=", id, ")",
                           note.empty() ? "" : "; ", note);
    return absl::OkStatus();
  }
  std::string CpuChoice() const override { return choice_; }

  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem& p,
                                                        int threads,
                                                        const float* a,
                                                        const float* b,
                                                        float* c) override {
    if (absl::Status s = CheckInt(p); !s.ok()) return s;
    set_threads_(threads);
    return std::make_unique<CblasGemm>(sgemm_, p, a, b, c);
  }

 private:
  Library lib_;
  CblasSgemm sgemm_ = nullptr;
  void (*set_threads_)(long) = nullptr;  // BLIS's dim_t
  std::string choice_;
};

}  // namespace

std::unique_ptr<Peer> MakeOpenBlasPeer() {
  return std::make_unique<OpenBlasPeer>();
}
std::unique_ptr<Peer> MakeBlisPeer() { return std::make_unique<BlisPeer>(); }

}  // namespace amarena::bench
