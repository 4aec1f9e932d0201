// A C++17, header-only wrapper over amarena's C API (amarena/amarena.h):
// owning handles for runtimes and kernels, and status values instead of codes
// plus a thread-local message. No exceptions are thrown; nothing beyond the C
// API and the standard library is needed.
//
//   amarena::Kernel k;
//   amarena::Status s = amarena::Kernel::Get("matmul 64x64x64 f32", &k);
//   if (!s.ok()) { std::fprintf(stderr, "%s\n", s.message().c_str()); ... }
//   s = k.Run({a, b, c});  // C = A.B, row-major
//
// The classes live in an inline namespace, so their symbols never meet
// amarena's internal C++ classes (amarena::Runtime in runtime/runtime.h is a
// different class, not part of the installed interface).
#ifndef AMARENA_AMARENA_HPP_
#define AMARENA_AMARENA_HPP_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "amarena/amarena.h"

namespace amarena {
inline namespace v0 {

// A C API status code and, when it is not AMARENA_OK, the message of the
// failed call (copied: it stays valid).
class Status {
 public:
  Status() = default;
  Status(amarena_status code, std::string message)
      : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == AMARENA_OK; }
  amarena_status code() const { return code_; }
  const std::string& message() const { return message_; }

  // The status of a C API call that just returned `code` on this thread.
  static Status FromCode(amarena_status code) {
    if (code == AMARENA_OK) return Status();
    return Status(code, amarena_last_error());
  }

 private:
  amarena_status code_ = AMARENA_OK;
  std::string message_;
};

// The version of the library linked ("MAJOR.MINOR.PATCH").
inline const char* Version() { return amarena_version(); }

// A kernel for one Spec: move-only, released on destruction. Runs are
// thread-safe. An empty Kernel (default-constructed or moved from) is false
// and its runs fail with AMARENA_INVALID_ARGUMENT.
class Kernel {
 public:
  Kernel() = default;
  ~Kernel() { Reset(); }
  Kernel(Kernel&& other) noexcept : k_(std::exchange(other.k_, nullptr)) {}
  Kernel& operator=(Kernel&& other) noexcept {
    if (this != &other) {
      Reset();
      k_ = std::exchange(other.k_, nullptr);
    }
    return *this;
  }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // A kernel for `spec` (e.g. "matmul 64x64x64 f32", or "matmul 64x64x64
  // f32*bf16->bf16 alpha=0.5": C = 0.5*A.B in bf16) from the process-wide
  // runtime. On failure *out is left empty.
  static Status Get(const char* spec, Kernel* out) {
    return Get(nullptr, spec, out);
  }
  static Status Get(const std::string& spec, Kernel* out) {
    return Get(nullptr, spec.c_str(), out);
  }

  // Runs the kernel: operands[i] points at operand i (matmul: A, B, C).
  Status Run(void* const* operands) const {
    return Status::FromCode(amarena_kernel_run(k_, operands));
  }
  Status Run(std::initializer_list<void*> operands) const {
    return Run(operands.begin());
  }
  // As Run, checking each buffer's size in bytes against operand_bytes(i).
  Status RunSized(void* const* operands, const size_t* operand_bytes) const {
    return Status::FromCode(
        amarena_kernel_run_sized(k_, operands, operand_bytes));
  }

  // Bytes operand i spans (panel padding included, a batch's strides too);
  // 0 for one it lacks.
  size_t operand_bytes(int i) const {
    return amarena_kernel_operand_bytes(k_, i);
  }
  // A matmul's batch (1 unbatched), and the bytes from operand i's matrix for
  // one batch element to the next's (0 for one the batch shares, sb=0).
  int64_t batch() const { return amarena_kernel_batch(k_); }
  size_t batch_stride_bytes(int i) const {
    return amarena_kernel_batch_stride_bytes(k_, i);
  }

  // Packing a matmul's B (weights) once into the kernel's layout of B, for a
  // Spec asking "b=any" or "b=pP": `b` is the plain row-major K x N matrix,
  // `out` has `out_bytes` (at least b_bytes()) of room.
  size_t b_bytes() const { return amarena_kernel_b_bytes(k_); }
  Status PackB(const void* b, void* out, size_t out_bytes) const {
    return Status::FromCode(amarena_kernel_pack_b(k_, b, out, out_bytes));
  }
  // As PackB, from `src` holding B as K x N (AMARENA_B_KXN) or transposed as
  // N x K (AMARENA_B_NXK, how checkpoints store weights), `src_ld` elements
  // between its rows.
  Status PackBFrom(const void* src, amarena_b_source source, size_t src_ld,
                   void* out, size_t out_bytes) const {
    return Status::FromCode(amarena_kernel_pack_b_from(k_, src, source, src_ld,
                                                       out, out_bytes));
  }

  // The kernel's name, ISA ("avx2", "avx512"), canonical Spec and source
  // ("search", "database", "provisional"); "" for an empty Kernel.
  std::string name() const { return Str(amarena_kernel_name(k_)); }
  std::string isa() const { return Str(amarena_kernel_isa(k_)); }
  std::string spec() const { return Str(amarena_kernel_spec(k_)); }
  std::string source() const { return Str(amarena_kernel_source(k_)); }

  explicit operator bool() const { return k_ != nullptr; }
  const amarena_kernel* get() const { return k_; }
  void Reset() { amarena_kernel_release(std::exchange(k_, nullptr)); }

 private:
  friend class Runtime;

  static Status Get(amarena_runtime* rt, const char* spec, Kernel* out) {
    amarena_kernel* k = nullptr;
    Status s = Status::FromCode(amarena_kernel_get(rt, spec, &k));
    *out = Kernel(k);
    return s;
  }
  static Status GetWithin(amarena_runtime* rt, const char* spec,
                          int64_t search_us, Kernel* out) {
    amarena_kernel* k = nullptr;
    Status s =
        Status::FromCode(amarena_kernel_get_within(rt, spec, search_us, &k));
    *out = Kernel(k);
    return s;
  }
  static std::string Str(const char* s) { return s ? s : ""; }

  explicit Kernel(amarena_kernel* k) : k_(k) {}

  amarena_kernel* k_ = nullptr;
};

// A runtime of its own (kernel cache, search memo, thread pool): move-only,
// destroyed on destruction. Its kernels should be released first (a kernel
// run after that fails with AMARENA_FAILED_PRECONDITION).
class Runtime {
 public:
  Runtime() = default;
  ~Runtime() { Reset(); }
  Runtime(Runtime&& other) noexcept : rt_(std::exchange(other.rt_, nullptr)) {}
  Runtime& operator=(Runtime&& other) noexcept {
    if (this != &other) {
      Reset();
      rt_ = std::exchange(other.rt_, nullptr);
    }
    return *this;
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // A runtime with `threads` threads (0: AMARENA_NUM_THREADS or every CPU).
  static Status Create(int threads, Runtime* out) {
    amarena_runtime* rt = nullptr;
    Status s = Status::FromCode(amarena_runtime_create(threads, &rt));
    out->Reset();
    out->rt_ = rt;
    return s;
  }

  // A runtime as `options` say (start from amarena_runtime_options_init):
  // database path, threads or the engine's own parallel_for, ISA cap, log
  // callback and verbosity.
  static Status Create(const amarena_runtime_options& options, Runtime* out) {
    amarena_runtime* rt = nullptr;
    Status s = Status::FromCode(
        amarena_runtime_create_with_options(&options, &rt));
    out->Reset();
    out->rt_ = rt;
    return s;
  }

  // A kernel for `spec` from this runtime (an empty Runtime: the
  // process-wide one).
  Status GetKernel(const char* spec, Kernel* out) const {
    return Kernel::Get(rt_, spec, out);
  }
  Status GetKernel(const std::string& spec, Kernel* out) const {
    return Kernel::Get(rt_, spec.c_str(), out);
  }
  // As GetKernel, searching for at most `search_us` microseconds before
  // settling for a provisional kernel (the full search goes on behind).
  Status GetKernelWithin(const char* spec, int64_t search_us,
                         Kernel* out) const {
    return Kernel::GetWithin(rt_, spec, search_us, out);
  }

  // The kernel cache's counters.
  Status GetCacheStats(amarena_cache_stats* out) const {
    return Status::FromCode(amarena_get_cache_stats(rt_, out));
  }

  explicit operator bool() const { return rt_ != nullptr; }
  amarena_runtime* get() const { return rt_; }
  void Reset() { amarena_runtime_destroy(std::exchange(rt_, nullptr)); }

 private:
  amarena_runtime* rt_ = nullptr;
};

}  // namespace v0
}  // namespace amarena

#endif  // AMARENA_AMARENA_HPP_
