// XNNPACK's f32 fully-connected operator: out[M,N] = in[M,K] . W, with the
// weights given as [K, N] (XNN_FLAG_TRANSPOSE_WEIGHTS), no bias, no clamping.
// As in inference, the operator is created once per shape: that packs the
// weights (B), which is not timed. Every other library here reads B as given
// on every call, so XNNPACK's rows exclude work the others include; the
// table says so. libXNNPACK is dlopened from its exact path.
//
// CPU choice: XNNPACK picks its microkernels from cpuinfo at xnn_initialize and
// has no API to cap or report them, so its AVX2 rows are skipped ("not
// cappable") and its best rows use whatever it chose.
// Threads: a pthreadpool of that many threads (none for one: the caller runs).
#include <pthreadpool.h>

#include <limits>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/peers/dl.h"
#include "bench/peers/peer.h"

#if __has_include(<xnnpack.h>)
#include <xnnpack.h>
#define AMARENA_HAVE_XNNPACK_H 1
#else
#define AMARENA_HAVE_XNNPACK_H 0
#endif

namespace amarena::bench {
namespace {

#if AMARENA_HAVE_XNNPACK_H

struct Xnn {
  Library lib;
  decltype(&xnn_initialize) initialize = nullptr;
  decltype(&xnn_create_fully_connected_nc_f32) create = nullptr;
  decltype(&xnn_setup_fully_connected_nc_f32) setup = nullptr;
  decltype(&xnn_run_operator) run = nullptr;
  decltype(&xnn_delete_operator) destroy = nullptr;
};

class XnnRun : public PreparedGemm {
 public:
  explicit XnnRun(const Xnn& x) : x_(x) {}
  ~XnnRun() override {
    if (op_ != nullptr) x_.destroy(op_);
    if (pool_ != nullptr) pthreadpool_destroy(pool_);
  }
  absl::Status Create(const Problem& p, int threads, const float* a,
                      const float* b, float* c) {
    if (threads > 1) pool_ = pthreadpool_create(threads);
    const float inf = std::numeric_limits<float>::infinity();
    if (x_.create(p.k, p.n, p.k, p.n, b, nullptr, -inf, inf,
                  XNN_FLAG_TRANSPOSE_WEIGHTS, &op_) != xnn_status_success)
      return absl::InternalError("xnn_create_fully_connected_nc_f32 failed");
    if (x_.setup(op_, p.m, a, c, pool_) != xnn_status_success)
      return absl::InternalError("xnn_setup_fully_connected_nc_f32 failed");
    return absl::OkStatus();
  }
  void Run() override { x_.run(op_, pool_); }

 private:
  const Xnn& x_;
  xnn_operator_t op_ = nullptr;
  pthreadpool_t pool_ = nullptr;
};

class XnnpackPeer : public Peer {
 public:
  std::string name() const override { return "xnnpack"; }
  absl::Status Init(IsaCap cap) override {
    if (cap == IsaCap::kAvx2)
      return absl::UnimplementedError(
          "XNNPACK cannot be capped to AVX2 (not cappable)");
    absl::StatusOr<Library> lib = Library::Open(kXnnpackPath);
    if (!lib.ok()) return lib.status();
    x_.lib = *std::move(lib);
#define AMARENA_NEED(field, sym) \
  if (absl::Status s = x_.lib.Need(#sym, &x_.field); !s.ok()) return s
    AMARENA_NEED(initialize, xnn_initialize);
    AMARENA_NEED(create, xnn_create_fully_connected_nc_f32);
    AMARENA_NEED(setup, xnn_setup_fully_connected_nc_f32);
    AMARENA_NEED(run, xnn_run_operator);
    AMARENA_NEED(destroy, xnn_delete_operator);
#undef AMARENA_NEED
    if (x_.initialize(nullptr) != xnn_status_success)
      return absl::InternalError("xnn_initialize failed");
    return absl::OkStatus();
  }
  std::string CpuChoice() const override {
    return "XNNPACK git 2022-02-16: microkernels chosen internally from "
           "cpuinfo (not cappable, not reported); weights packed at operator "
           "creation, untimed";
  }
  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem& p,
                                                        int threads,
                                                        const float* a,
                                                        const float* b,
                                                        float* c) override {
    auto run = std::make_unique<XnnRun>(x_);
    if (absl::Status s = run->Create(p, threads, a, b, c); !s.ok()) return s;
    return run;
  }

 private:
  Xnn x_;
};

#else

class XnnpackPeer : public Peer {
 public:
  std::string name() const override { return "xnnpack"; }
  absl::Status Init(IsaCap) override {
    return absl::UnavailableError("built without xnnpack.h (libxnnpack-dev)");
  }
  std::string CpuChoice() const override { return ""; }
  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem&, int,
                                                        const float*,
                                                        const float*,
                                                        float*) override {
    return absl::UnavailableError("built without libxnnpack-dev");
  }
};

#endif

}  // namespace

std::unique_ptr<Peer> MakeXnnpackPeer() {
  return std::make_unique<XnnpackPeer>();
}

}  // namespace amarena::bench
