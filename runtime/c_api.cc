// The C API (amarena/amarena.h) over the C++ Runtime: status codes for
// absl::Status, a thread-local message, and no exception across the boundary.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "amarena/amarena.h"
#include "core/log.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "runtime/host.h"
#include "runtime/search_db.h"
#include "runtime/runtime.h"

struct amarena_runtime {
  std::unique_ptr<amarena::Runtime> rt;
  // False once amarena_runtime_destroy has run; its kernels hold it so that
  // running one afterwards is an error rather than a use of what was freed.
  std::shared_ptr<std::atomic<bool>> alive =
      std::make_shared<std::atomic<bool>>(true);
};

struct amarena_kernel {
  amarena::KernelPtr kernel;
  std::string spec_text;
  // The runtime's liveness; null for the process-wide runtime, which lives
  // to the end.
  std::shared_ptr<const std::atomic<bool>> runtime_alive;
};

namespace {

thread_local std::string last_error;

amarena_status Fail(amarena_status code, std::string message) {
  last_error = std::move(message);
  return code;
}

// Every absl code onto the few C codes, by what the caller can do about it.
amarena_status FromStatus(const absl::Status& s) {
  if (s.ok()) return AMARENA_OK;
  amarena_status code = AMARENA_INTERNAL;
  switch (s.code()) {
    // The request names something that does not fit or does not exist.
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kAlreadyExists:
      code = AMARENA_INVALID_ARGUMENT;
      break;
    case absl::StatusCode::kUnimplemented:
      code = AMARENA_UNIMPLEMENTED;
      break;
    // The request is fine, the state of the process or machine is not
    // (a CPU without AVX2+FMA, a search cancelled by its runtime's
    // destruction, a file that may not be opened).
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      code = AMARENA_FAILED_PRECONDITION;
      break;
    case absl::StatusCode::kResourceExhausted:
      code = AMARENA_RESOURCE_EXHAUSTED;
      break;
    // Ours to fix.
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
    default:
      code = AMARENA_INTERNAL;
      break;
  }
  return Fail(code, std::string(s.message()));
}

// Runs `f`, turning any exception into a status: none may cross into C.
template <typename F>
amarena_status Guard(const char* what, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return Fail(AMARENA_RESOURCE_EXHAUSTED,
                absl::StrCat(what, ": out of memory"));
  } catch (const std::exception& e) {
    return Fail(AMARENA_INTERNAL, absl::StrCat(what, ": ", e.what()));
  } catch (...) {
    return Fail(AMARENA_INTERNAL, absl::StrCat(what, ": unknown exception"));
  }
}

}  // namespace

namespace {

amarena_status GetKernel(const char* fn, amarena_runtime* rt, const char* spec,
                         const amarena::GetOptions& options,
                         amarena_kernel** out) {
  return Guard(fn, [&]() -> amarena_status {
    if (out == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat(fn, ": out is null, must point at a kernel*"));
    *out = nullptr;
    if (spec == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat(fn,
                               ": spec is null, must be Spec text such as "
                               "\"matmul 64x64x64 f32\""));
    amarena::Runtime& runtime =
        rt != nullptr ? *rt->rt : amarena::Runtime::Default();
    absl::StatusOr<amarena::KernelPtr> k = runtime.Get(spec, options);
    if (!k.ok()) return FromStatus(k.status());
    *out = new amarena_kernel{*k, amarena::PrintSpec((*k)->spec()),
                              rt != nullptr ? rt->alive : nullptr};
    return AMARENA_OK;
  });
}

}  // namespace

namespace {

// amarena_runtime_create and _with_options.
amarena_status CreateRuntime(const char* fn,
                             const amarena_runtime_options* given,
                             amarena_runtime** out) {
  auto bad = [&](auto&&... what) {
    return Fail(AMARENA_INVALID_ARGUMENT, absl::StrCat(fn, ": ", what...));
  };
  if (out == nullptr) return bad("out is null, must point at a runtime*");
  *out = nullptr;
  if (given == nullptr)
    return bad("options is null, must point at amarena_runtime_options");
  if (given->struct_size < sizeof(amarena_runtime_options))
    return bad("options->struct_size is ", given->struct_size,
               ", must be at least ", sizeof(amarena_runtime_options),
               " (fill it with amarena_runtime_options_init)");
  // A newer caller's struct is longer: the fields this library knows are
  // its first ones.
  const amarena_runtime_options& o = *given;
  if (o.threads < 0 || o.threads > 1024)
    return bad("threads is ", o.threads, ", must be 0 (default) to 1024");
  if (o.parallel_for != nullptr && o.threads == 0)
    return bad(
        "threads is 0 with a parallel_for, must be how many threads it runs "
        "tasks on (1 to 1024)");
  if (o.verbosity < -1 || o.verbosity > 2)
    return bad("verbosity is ", o.verbosity,
               ", must be -1 (AMARENA_VERBOSE), 0, 1 or 2");
  std::optional<amarena::Isa> max_isa;
  const absl::string_view isa = o.max_isa != nullptr ? o.max_isa : "";
  if (isa == "avx2") {
    max_isa = amarena::Isa::kAvx2;
  } else if (isa == "avx512") {
    max_isa = amarena::Isa::kAvx512;
  } else if (!isa.empty()) {
    return bad("max_isa is '", isa, "', must be \"avx2\", \"avx512\" or NULL");
  } else {
    absl::StatusOr<std::optional<amarena::Isa>> env = amarena::MaxIsaFromEnv();
    if (!env.ok()) return FromStatus(env.status());
    max_isa = *env;
  }
  amarena::Logger log = amarena::DefaultLogger();
  if (o.verbosity >= 0) log.verbosity = o.verbosity;
  log.sink = o.log;
  log.ctx = o.log_ctx;
  // The prices stored for this CPU in the runtime's own database, else the
  // shipped table for it (runtime/prices.h).
  absl::StatusOr<amarena::Target> target = amarena::HostTargetFor(
      amarena::DetectCpu(), max_isa,
      amarena::DbPathFor(o.db != nullptr ? o.db : ""), log);
  if (!target.ok()) return FromStatus(target.status());
  if (o.threads > 0) {
    target->workers = o.threads;
  } else {
    absl::StatusOr<int> threads = amarena::ThreadsFromEnv();
    if (!threads.ok()) return FromStatus(threads.status());
    target->workers = *threads;
  }
  amarena::RuntimeOptions ro;
  if (o.db != nullptr) ro.db = o.db;
  ro.log = log;
  ro.parallel = {.parallel_for = o.parallel_for, .ctx = o.parallel_for_ctx};
  *out = new amarena_runtime{
      std::make_unique<amarena::Runtime>(*target, std::move(ro))};
  return AMARENA_OK;
}

}  // namespace

extern "C" {

const char* amarena_last_error(void) { return last_error.c_str(); }

void amarena_runtime_options_init(amarena_runtime_options* options) {
  if (options == nullptr) return;
  *options = amarena_runtime_options{};
  options->struct_size = sizeof(amarena_runtime_options);
  options->verbosity = -1;
}

amarena_status amarena_runtime_create_with_options(
    const amarena_runtime_options* options, amarena_runtime** out) {
  return Guard("amarena_runtime_create_with_options", [&]() -> amarena_status {
    return CreateRuntime("amarena_runtime_create_with_options", options, out);
  });
}

amarena_status amarena_runtime_create(int threads, amarena_runtime** out) {
  return Guard("amarena_runtime_create", [&]() -> amarena_status {
    amarena_runtime_options o;
    amarena_runtime_options_init(&o);
    o.threads = threads;
    return CreateRuntime("amarena_runtime_create", &o, out);
  });
}

void amarena_runtime_destroy(amarena_runtime* rt) {
  if (rt == nullptr) return;
  rt->alive->store(false);
  // No try: ~Runtime is noexcept (it joins background searches), so nothing
  // it does can reach a catch here.
  delete rt;
}

amarena_status amarena_kernel_get(amarena_runtime* rt, const char* spec,
                                  amarena_kernel** out) {
  return GetKernel("amarena_kernel_get", rt, spec, {}, out);
}

amarena_status amarena_kernel_get_within(amarena_runtime* rt, const char* spec,
                                         int64_t search_us,
                                         amarena_kernel** out) {
  return Guard("amarena_kernel_get_within", [&]() -> amarena_status {
    if (search_us < 0) {
      if (out != nullptr) *out = nullptr;
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat("amarena_kernel_get_within: search_us is ",
                               search_us, ", must be at least 0"));
    }
    amarena::GetOptions options;
    // Far deadlines are as good as none (and must not overflow the clock).
    options.deadline = std::chrono::steady_clock::now() +
                       std::chrono::microseconds(
                           std::min<int64_t>(search_us, int64_t{1} << 40));
    return GetKernel("amarena_kernel_get_within", rt, spec, options, out);
  });
}

const char* amarena_kernel_source(const amarena_kernel* k) {
  return k == nullptr ? nullptr : amarena::Name(k->kernel->source()).data();
}

amarena_status amarena_get_cache_stats(amarena_runtime* rt,
                                       amarena_cache_stats* out) {
  return Guard("amarena_get_cache_stats", [&]() -> amarena_status {
    if (out == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  "amarena_get_cache_stats: out is null, must point at an "
                  "amarena_cache_stats");
    amarena::Runtime& runtime =
        rt != nullptr ? *rt->rt : amarena::Runtime::Default();
    amarena::CacheStats s = runtime.cache_stats();
    *out = amarena_cache_stats{s.hits,      s.misses,        s.evictions,
                               s.entries,   s.from_database, s.provisional,
                               s.search_ms, s.jit_us};
    return AMARENA_OK;
  });
}

namespace {

// amarena_kernel_run and amarena_kernel_run_sized: `operand_bytes` may be
// null (the unsized run).
amarena_status RunKernel(const char* fn, const amarena_kernel* k,
                         void* const* operands, const size_t* operand_bytes,
                         bool sized) {
  return Guard(fn, [&]() -> amarena_status {
    if (k == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat(fn, ": kernel is null"));
    if (k->runtime_alive != nullptr && !k->runtime_alive->load())
      return Fail(AMARENA_FAILED_PRECONDITION,
                  absl::StrCat("cannot run ", k->kernel->name(),
                               ": its amarena_runtime is destroyed, must "
                               "outlive the kernel (release kernels first)"));
    if (sized && operand_bytes == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat(fn,
                               ": operand_bytes is null, must point at one "
                               "size per operand"));
    absl::Status s = k->kernel->Check(operands, operand_bytes);
    if (s.ok()) s = k->kernel->Run(operands);
    return FromStatus(s);
  });
}

}  // namespace

amarena_status amarena_kernel_run(const amarena_kernel* k,
                                  void* const* operands) {
  return RunKernel("amarena_kernel_run", k, operands, nullptr, false);
}

amarena_status amarena_kernel_run_sized(const amarena_kernel* k,
                                        void* const* operands,
                                        const size_t* operand_bytes) {
  return RunKernel("amarena_kernel_run_sized", k, operands, operand_bytes,
                   true);
}

size_t amarena_kernel_operand_bytes(const amarena_kernel* k, int i) {
  if (k == nullptr) return 0;
  return static_cast<size_t>(k->kernel->OperandBytes(i));
}

int64_t amarena_kernel_batch(const amarena_kernel* k) {
  return k == nullptr ? 0 : k->kernel->spec().b;
}

size_t amarena_kernel_batch_stride_bytes(const amarena_kernel* k, int i) {
  if (k == nullptr) return 0;
  const amarena::Spec& s = k->kernel->spec();
  if (i < 0 || i >= s.NumOperands()) return 0;
  return static_cast<size_t>(
      amarena::BatchStep(s, i, 1) *
      amarena::SizeOf(s.aux[static_cast<size_t>(i)].dtype));
}

size_t amarena_kernel_b_bytes(const amarena_kernel* k) {
  if (k == nullptr || !k->kernel->spec().IsMatmul()) return 0;
  return amarena_kernel_operand_bytes(k, 1);
}

amarena_status amarena_kernel_pack_b_from(const amarena_kernel* k,
                                          const void* src,
                                          amarena_b_source source,
                                          size_t src_ld, void* out,
                                          size_t out_bytes) {
  return Guard("amarena_kernel_pack_b_from", [&]() -> amarena_status {
    if (k == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  "amarena_kernel_pack_b_from: kernel is null");
    // A C caller may pass any integer: read it as one (loading an enum
    // object that holds no enumerator is undefined behaviour in C++).
    static_assert(sizeof(amarena_b_source) == sizeof(int));
    int source_value = 0;
    std::memcpy(&source_value, &source, sizeof source_value);
    if (source_value != AMARENA_B_KXN && source_value != AMARENA_B_NXK)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat("amarena_kernel_pack_b_from: source is ",
                               source_value,
                               ", must be AMARENA_B_KXN or AMARENA_B_NXK"));
    const int64_t ld =
        static_cast<int64_t>(std::min<size_t>(src_ld, size_t{INT64_MAX}));
    return FromStatus(k->kernel->PackB(src,
                                       source == AMARENA_B_KXN
                                           ? amarena::PackSource::kSame
                                           : amarena::PackSource::kTransposed,
                                       ld, out, out_bytes));
  });
}

amarena_status amarena_kernel_pack_b(const amarena_kernel* k, const void* b,
                                     void* out, size_t out_bytes) {
  return Guard("amarena_kernel_pack_b", [&]() -> amarena_status {
    if (k == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  "amarena_kernel_pack_b: kernel is null");
    const int64_t n =
        k->kernel->spec().IsMatmul() ? k->kernel->spec().Operand(1).cols : 0;
    return FromStatus(
        k->kernel->PackB(b, amarena::PackSource::kSame, n, out, out_bytes));
  });
}

const char* amarena_kernel_name(const amarena_kernel* k) {
  return k == nullptr ? nullptr : k->kernel->name().c_str();
}

const char* amarena_kernel_isa(const amarena_kernel* k) {
  return k == nullptr ? nullptr : amarena::Name(k->kernel->isa()).data();
}

const char* amarena_kernel_spec(const amarena_kernel* k) {
  return k == nullptr ? nullptr : k->spec_text.c_str();
}

void amarena_kernel_release(amarena_kernel* k) { delete k; }

}  // extern "C"
