// amarena itself, through the public C++ API: one Runtime per thread count
// (its target's workers), capped at AVX2 (HostTargetFor) for the AVX2
// column, and the kernel for `matmul MxKxN f32` from Runtime::Get.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/peers/peer.h"
#include "core/status_macros.h"
#include "runtime/host.h"
#include "runtime/runtime.h"

namespace amarena::bench {
namespace {

class AmarenaRun : public PreparedGemm {
 public:
  AmarenaRun(KernelPtr k, const float* a, const float* b, float* c)
      : k_(std::move(k)),
        ops_{const_cast<float*>(a), const_cast<float*>(b), c} {}
  void Run() override { AMARENA_CHECK_OK(k_->Run(ops_)); }
  std::string Detail() const override { return k_->name(); }
  std::vector<std::pair<std::string, double>> Extra() const override {
    return {{"search_ms", k_->synth_ms()}, {"jit_ms", k_->jit_ms()}};
  }

 private:
  KernelPtr k_;
  void* ops_[3];
};

class AmarenaPeer : public Peer {
 public:
  std::string name() const override { return "amarena"; }
  absl::Status Init(IsaCap cap) override {
    std::optional<Isa> max;
    if (cap == IsaCap::kAvx2) max = Isa::kAvx2;
    absl::StatusOr<Target> t = HostTargetFor(DetectCpu(), max);
    if (!t.ok()) return t.status();
    target_ = *t;
    choice_ = absl::StrCat("target ", Name(target_.isa),
                           cap == IsaCap::kAvx2
                               ? " (capped at avx2, host prices)"
                               : " (best the CPU has, host prices)");
    return absl::OkStatus();
  }
  std::string CpuChoice() const override { return choice_; }

  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem& p,
                                                        int threads,
                                                        const float* a,
                                                        const float* b,
                                                        float* c) override {
    std::unique_ptr<Runtime>& rt = runtimes_[threads];
    if (rt == nullptr) {
      Target t = target_;
      t.workers = threads;
      rt = std::make_unique<Runtime>(t);
    }
    absl::StatusOr<KernelPtr> k =
        rt->Get(absl::StrCat("matmul ", p.m, "x", p.k, "x", p.n, " f32"));
    if (!k.ok()) return k.status();
    return std::make_unique<AmarenaRun>(*std::move(k), a, b, c);
  }

 private:
  Target target_;
  std::string choice_;
  std::map<int, std::unique_ptr<Runtime>> runtimes_;
};

}  // namespace

std::unique_ptr<Peer> MakeAmarenaPeer() {
  return std::make_unique<AmarenaPeer>();
}

}  // namespace amarena::bench
