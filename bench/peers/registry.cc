// The list of implementations, and the deliberately wrong one.
#include <memory>
#include <string>
#include <vector>

#include "bench/peers/peer.h"

namespace amarena::bench {
namespace {

// A plain triple loop that forgets the last term of every dot product: the
// kind of off-by-one a real kernel can have. It exists so a test can show
// that a wrong result stops its row instead of being timed.
class WrongRun : public PreparedGemm {
 public:
  WrongRun(Problem p, const float* a, const float* b, float* c)
      : p_(p), a_(a), b_(b), c_(c) {}
  void Run() override {
    for (int64_t i = 0; i < p_.m; ++i) {
      float* ci = c_ + i * p_.n;
      for (int64_t j = 0; j < p_.n; ++j) ci[j] = 0;
      for (int64_t kk = 0; kk + 1 < p_.k; ++kk) {  // the bug: k - 1 terms
        const float aik = a_[i * p_.k + kk];
        const float* bk = b_ + kk * p_.n;
        for (int64_t j = 0; j < p_.n; ++j) ci[j] += aik * bk[j];
      }
    }
  }

 private:
  Problem p_;
  const float *a_, *b_;
  float* c_;
};

class WrongPeer : public Peer {
 public:
  std::string name() const override { return "wrong"; }
  absl::Status Init(IsaCap) override { return absl::OkStatus(); }
  std::string CpuChoice() const override {
    return "scalar C++, deliberately wrong (drops the last k term)";
  }
  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem& p, int,
                                                        const float* a,
                                                        const float* b,
                                                        float* c) override {
    return std::make_unique<WrongRun>(p, a, b, c);
  }
};

}  // namespace

absl::string_view Name(IsaCap cap) {
  return cap == IsaCap::kAvx2 ? "avx2" : "best";
}

const std::vector<std::string>& PeerNames() {
  static const auto* names = new std::vector<std::string>{
      "amarena",       "openblas", "blis",  "onednn_sgemm",
      "onednn_matmul", "libxsmm",  "eigen", "xnnpack"};
  return *names;
}

std::unique_ptr<Peer> MakePeer(absl::string_view name) {
  if (name == "amarena") return MakeAmarenaPeer();
  if (name == "openblas") return MakeOpenBlasPeer();
  if (name == "blis") return MakeBlisPeer();
  if (name == "onednn_sgemm") return MakeOneDnnSgemmPeer();
  if (name == "onednn_matmul") return MakeOneDnnMatmulPeer();
  if (name == "libxsmm") return MakeLibxsmmPeer();
  if (name == "eigen") return MakeEigenPeer();
  if (name == "xnnpack") return MakeXnnpackPeer();
  if (name == "wrong") return MakeWrongPeer();
  return nullptr;
}

std::unique_ptr<Peer> MakeWrongPeer() { return std::make_unique<WrongPeer>(); }

}  // namespace amarena::bench
