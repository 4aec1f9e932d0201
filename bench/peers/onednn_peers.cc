// oneDNN, two ways: dnnl_sgemm (the BLAS-like call, row-major) and the matmul
// primitive, created once per shape and thread count with plain row-major
// memory (format tag ab for A, B and C) and then only executed. libdnnl is
// dlopened from its exact path; dnnl.h supplies the types only.
//
// CPU choice: dnnl_set_max_cpu_isa(avx2) for the AVX2 column (it must come
// before anything is generated, hence Init), nothing for the best column;
// dnnl_get_effective_cpu_isa() is printed either way, and each primitive's
// implementation name (e.g. "brg:avx512_core") is the row's detail.
// Threads: Debian builds oneDNN with the OpenMP runtime, so the thread count is
// omp_set_num_threads on the one libgomp of the process (shared with Eigen),
// set before a primitive is created (oneDNN blocks for the threads it sees).
#include <omp.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/peers/dl.h"
#include "bench/peers/peer.h"

#if __has_include(<oneapi/dnnl/dnnl.h>)
#include <oneapi/dnnl/dnnl.h>
#define AMARENA_HAVE_DNNL_H 1
#else
#define AMARENA_HAVE_DNNL_H 0
#endif

namespace amarena::bench {
namespace {

#if AMARENA_HAVE_DNNL_H

// The entry points used, resolved from the dlopened library.
struct Dnnl {
  Library lib;
  decltype(&dnnl_sgemm) sgemm = nullptr;
  decltype(&dnnl_set_max_cpu_isa) set_max_cpu_isa = nullptr;
  decltype(&dnnl_get_effective_cpu_isa) effective_isa = nullptr;
  decltype(&dnnl_version) version = nullptr;
  decltype(&dnnl_engine_create) engine_create = nullptr;
  decltype(&dnnl_stream_create) stream_create = nullptr;
  decltype(&dnnl_stream_wait) stream_wait = nullptr;
  decltype(&dnnl_memory_desc_init_by_tag) md_init = nullptr;
  decltype(&dnnl_matmul_desc_init) matmul_desc_init = nullptr;
  decltype(&dnnl_primitive_desc_create) pd_create = nullptr;
  decltype(&dnnl_primitive_desc_query) pd_query = nullptr;
  decltype(&dnnl_primitive_desc_destroy) pd_destroy = nullptr;
  decltype(&dnnl_primitive_create) prim_create = nullptr;
  decltype(&dnnl_primitive_destroy) prim_destroy = nullptr;
  decltype(&dnnl_primitive_execute) execute = nullptr;
  decltype(&dnnl_memory_create) mem_create = nullptr;
  decltype(&dnnl_memory_destroy) mem_destroy = nullptr;
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  std::string choice;

  absl::Status Load(IsaCap cap) {
    absl::StatusOr<Library> l = Library::Open(kOneDnnPath);
    if (!l.ok()) return l.status();
    lib = *std::move(l);
#define AMARENA_NEED(field, sym) \
  if (absl::Status s = lib.Need(#sym, &field); !s.ok()) return s
    AMARENA_NEED(sgemm, dnnl_sgemm);
    AMARENA_NEED(set_max_cpu_isa, dnnl_set_max_cpu_isa);
    AMARENA_NEED(effective_isa, dnnl_get_effective_cpu_isa);
    AMARENA_NEED(version, dnnl_version);
    AMARENA_NEED(engine_create, dnnl_engine_create);
    AMARENA_NEED(stream_create, dnnl_stream_create);
    AMARENA_NEED(stream_wait, dnnl_stream_wait);
    AMARENA_NEED(md_init, dnnl_memory_desc_init_by_tag);
    AMARENA_NEED(matmul_desc_init, dnnl_matmul_desc_init);
    AMARENA_NEED(pd_create, dnnl_primitive_desc_create);
    AMARENA_NEED(pd_query, dnnl_primitive_desc_query);
    AMARENA_NEED(pd_destroy, dnnl_primitive_desc_destroy);
    AMARENA_NEED(prim_create, dnnl_primitive_create);
    AMARENA_NEED(prim_destroy, dnnl_primitive_destroy);
    AMARENA_NEED(execute, dnnl_primitive_execute);
    AMARENA_NEED(mem_create, dnnl_memory_create);
    AMARENA_NEED(mem_destroy, dnnl_memory_destroy);
#undef AMARENA_NEED
    std::string note = SetEnvNoting("DNNL_MAX_CPU_ISA", "");
    if (cap == IsaCap::kAvx2 &&
        set_max_cpu_isa(dnnl_cpu_isa_avx2) != dnnl_success)
      return absl::InternalError("dnnl_set_max_cpu_isa(avx2) failed");
    if (engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
        stream_create(&stream, engine, dnnl_stream_default_flags) !=
            dnnl_success)
      return absl::InternalError("cannot create a oneDNN CPU engine/stream");
    const dnnl_version_t* v = version();
    choice = absl::StrCat(
        "oneDNN ", v->major, ".", v->minor, ".", v->patch, " (",
        v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other",
        " runtime), effective ISA ", IsaName(effective_isa()),
        cap == IsaCap::kAvx2 ? " (dnnl_set_max_cpu_isa(avx2))"
                             : " (no cap: detected)",
        note.empty() ? "" : "; ", note, note.empty() ? "" : " (cleared)");
    return absl::OkStatus();
  }

  static std::string IsaName(dnnl_cpu_isa_t isa) {
    switch (isa) {
      case dnnl_cpu_isa_avx2:
        return "avx2";
      case dnnl_cpu_isa_avx2_vnni:
        return "avx2_vnni";
      case dnnl_cpu_isa_avx512_core:
        return "avx512_core";
      case dnnl_cpu_isa_avx512_core_vnni:
        return "avx512_core_vnni";
      case dnnl_cpu_isa_avx512_core_bf16:
        return "avx512_core_bf16";
      case dnnl_cpu_isa_avx512_core_amx:
        return "avx512_core_amx";
      default:
        return absl::StrCat("0x", absl::Hex(static_cast<int>(isa)));
    }
  }
};

class SgemmRun : public PreparedGemm {
 public:
  SgemmRun(const Dnnl& d, Problem p, const float* a, const float* b, float* c)
      : d_(d), p_(p), a_(a), b_(b), c_(c) {}
  void Run() override {
    d_.sgemm('N', 'N', p_.m, p_.n, p_.k, 1.0f, a_, p_.k, b_, p_.n, 0.0f, c_,
             p_.n);
  }

 private:
  const Dnnl& d_;
  Problem p_;
  const float *a_, *b_;
  float* c_;
};

class MatmulRun : public PreparedGemm {
 public:
  explicit MatmulRun(const Dnnl& d) : d_(d) {}
  ~MatmulRun() override {
    if (prim_ != nullptr) d_.prim_destroy(prim_);
    for (dnnl_memory_t m : mem_)
      if (m != nullptr) d_.mem_destroy(m);
  }

  absl::Status Create(const Problem& p, const float* a, const float* b,
                      float* c) {
    dnnl_memory_desc_t md[3];
    const dnnl_dims_t dims[3] = {{p.m, p.k}, {p.k, p.n}, {p.m, p.n}};
    for (int i = 0; i < 3; ++i)
      if (d_.md_init(&md[i], 2, dims[i], dnnl_f32, dnnl_ab) != dnnl_success)
        return absl::InternalError("dnnl_memory_desc_init_by_tag failed");
    dnnl_matmul_desc_t desc;
    if (d_.matmul_desc_init(&desc, &md[0], &md[1], nullptr, &md[2]) !=
        dnnl_success)
      return absl::InternalError("dnnl_matmul_desc_init failed");
    dnnl_primitive_desc_t pd = nullptr;
    if (d_.pd_create(&pd, &desc, nullptr, d_.engine, nullptr) != dnnl_success)
      return absl::UnimplementedError("oneDNN has no matmul for this shape");
    const char* impl = nullptr;
    d_.pd_query(pd, dnnl_query_impl_info_str, 0, &impl);
    detail_ = impl != nullptr ? impl : "";
    dnnl_status_t st = d_.prim_create(&prim_, pd);
    d_.pd_destroy(pd);
    if (st != dnnl_success)
      return absl::InternalError("dnnl_primitive_create failed");
    void* ptrs[3] = {const_cast<float*>(a), const_cast<float*>(b), c};
    for (int i = 0; i < 3; ++i)
      if (d_.mem_create(&mem_[i], &md[i], d_.engine, ptrs[i]) != dnnl_success)
        return absl::InternalError("dnnl_memory_create failed");
    args_[0] = {DNNL_ARG_SRC, mem_[0]};
    args_[1] = {DNNL_ARG_WEIGHTS, mem_[1]};
    args_[2] = {DNNL_ARG_DST, mem_[2]};
    return absl::OkStatus();
  }

  void Run() override {
    d_.execute(prim_, d_.stream, 3, args_);
    d_.stream_wait(d_.stream);
  }
  std::string Detail() const override { return detail_; }

 private:
  const Dnnl& d_;
  dnnl_primitive_t prim_ = nullptr;
  dnnl_memory_t mem_[3] = {nullptr, nullptr, nullptr};
  dnnl_exec_arg_t args_[3];
  std::string detail_;
};

// Both peers share one loaded library: the ISA cap can be set only once per
// process.
absl::StatusOr<const Dnnl*> SharedDnnl(IsaCap cap) {
  static Dnnl* d = nullptr;
  static absl::Status status;
  static IsaCap loaded_cap;
  if (d == nullptr && status.ok()) {
    d = new Dnnl;
    status = d->Load(cap);
    loaded_cap = cap;
  }
  if (!status.ok()) return status;
  if (cap != loaded_cap)
    return absl::FailedPreconditionError(
        "oneDNN's ISA cap is set once per process");
  return d;
}

class OneDnnPeer : public Peer {
 public:
  explicit OneDnnPeer(bool primitive) : primitive_(primitive) {}
  std::string name() const override {
    return primitive_ ? "onednn_matmul" : "onednn_sgemm";
  }
  absl::Status Init(IsaCap cap) override {
    absl::StatusOr<const Dnnl*> d = SharedDnnl(cap);
    if (!d.ok()) return d.status();
    d_ = *d;
    return absl::OkStatus();
  }
  std::string CpuChoice() const override { return d_->choice; }

  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem& p,
                                                        int threads,
                                                        const float* a,
                                                        const float* b,
                                                        float* c) override {
    omp_set_num_threads(threads);
    if (!primitive_) return std::make_unique<SgemmRun>(*d_, p, a, b, c);
    auto run = std::make_unique<MatmulRun>(*d_);
    if (absl::Status s = run->Create(p, a, b, c); !s.ok()) return s;
    return run;
  }

 private:
  bool primitive_;
  const Dnnl* d_ = nullptr;
};

#else  // !AMARENA_HAVE_DNNL_H

class OneDnnPeer : public Peer {
 public:
  explicit OneDnnPeer(bool primitive) : primitive_(primitive) {}
  std::string name() const override {
    return primitive_ ? "onednn_matmul" : "onednn_sgemm";
  }
  absl::Status Init(IsaCap) override {
    return absl::UnavailableError(
        "built without oneDNN's header (libdnnl-dev)");
  }
  std::string CpuChoice() const override { return ""; }
  absl::StatusOr<std::unique_ptr<PreparedGemm>> Prepare(const Problem&, int,
                                                        const float*,
                                                        const float*,
                                                        float*) override {
    return absl::UnavailableError("built without libdnnl-dev");
  }

 private:
  bool primitive_;
};

#endif

}  // namespace

std::unique_ptr<Peer> MakeOneDnnSgemmPeer() {
  return std::make_unique<OneDnnPeer>(false);
}
std::unique_ptr<Peer> MakeOneDnnMatmulPeer() {
  return std::make_unique<OneDnnPeer>(true);
}

}  // namespace amarena::bench
