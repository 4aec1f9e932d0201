// The C API (runtime/amarena.h) over the C++ Runtime: status codes for
// absl::Status, a thread-local message, and no exception across the boundary.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "runtime/amarena.h"
#include "runtime/host.h"
#include "runtime/runtime.h"

struct amarena_runtime {
  std::unique_ptr<amarena::Runtime> rt;
};

struct amarena_kernel {
  amarena::KernelPtr kernel;
  std::string spec_text;
};

namespace {

thread_local std::string last_error;

amarena_status Fail(amarena_status code, std::string message) {
  last_error = std::move(message);
  return code;
}

amarena_status FromStatus(const absl::Status& s) {
  if (s.ok()) return AMARENA_OK;
  amarena_status code = AMARENA_INTERNAL;
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
      code = AMARENA_INVALID_ARGUMENT;
      break;
    case absl::StatusCode::kUnimplemented:
      code = AMARENA_UNIMPLEMENTED;
      break;
    case absl::StatusCode::kFailedPrecondition:
      code = AMARENA_FAILED_PRECONDITION;
      break;
    case absl::StatusCode::kResourceExhausted:
      code = AMARENA_RESOURCE_EXHAUSTED;
      break;
    default:
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
    *out = new amarena_kernel{*k, amarena::PrintSpec((*k)->spec())};
    return AMARENA_OK;
  });
}

}  // namespace

extern "C" {

const char* amarena_last_error(void) { return last_error.c_str(); }

amarena_status amarena_runtime_create(int threads, amarena_runtime** out) {
  return Guard("amarena_runtime_create", [&]() -> amarena_status {
    if (out == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  "amarena_runtime_create: out is null, must point at a "
                  "runtime*");
    *out = nullptr;
    if (threads < 0 || threads > 1024)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat("amarena_runtime_create: threads is ", threads,
                               ", must be 0 (default) to 1024"));
    absl::StatusOr<amarena::Target> target = amarena::HostTarget();
    if (!target.ok()) return FromStatus(target.status());
    if (threads > 0) target->workers = threads;
    *out = new amarena_runtime{std::make_unique<amarena::Runtime>(*target)};
    return AMARENA_OK;
  });
}

void amarena_runtime_destroy(amarena_runtime* rt) { delete rt; }

amarena_status amarena_kernel_get(amarena_runtime* rt, const char* spec,
                                  amarena_kernel** out) {
  return GetKernel("amarena_kernel_get", rt, spec, {}, out);
}

amarena_status amarena_kernel_get_within(amarena_runtime* rt, const char* spec,
                                         int64_t search_us,
                                         amarena_kernel** out) {
  if (search_us < 0) {
    if (out != nullptr) *out = nullptr;
    return Fail(AMARENA_INVALID_ARGUMENT,
                absl::StrCat("amarena_kernel_get_within: search_us is ",
                             search_us, ", must be at least 0"));
  }
  amarena::GetOptions options;
  // Far deadlines are as good as none (and must not overflow the clock).
  options.deadline =
      std::chrono::steady_clock::now() +
      std::chrono::microseconds(std::min<int64_t>(search_us, int64_t{1} << 40));
  return GetKernel("amarena_kernel_get_within", rt, spec, options, out);
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

amarena_status amarena_kernel_run(const amarena_kernel* k,
                                  void* const* operands) {
  return Guard("amarena_kernel_run", [&]() -> amarena_status {
    if (k == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  "amarena_kernel_run: kernel is null");
    if (operands == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  "amarena_kernel_run: operands is null, must point at one "
                  "pointer per operand");
    const amarena::Spec& s = k->kernel->spec();
    static const char* const kNames[] = {"a", "b", "c"};
    for (int i = 0; i < s.NumOperands(); ++i) {
      const char* name = s.IsMatmul() ? kNames[i] : "out";
      uintptr_t p = reinterpret_cast<uintptr_t>(operands[i]);
      if (p == 0)
        return Fail(AMARENA_INVALID_ARGUMENT,
                    absl::StrCat("amarena_kernel_run: operand ", i, " (", name,
                                 ") is null"));
      if (p % amarena::SizeOf(s.aux[i].dtype) != 0)
        return Fail(
            AMARENA_INVALID_ARGUMENT,
            absl::StrCat("amarena_kernel_run: operand ", i, " (", name,
                         ") is at 0x", absl::Hex(p), ", must be ",
                         amarena::SizeOf(s.aux[i].dtype), "-byte aligned"));
    }
    k->kernel->Run(operands);
    return AMARENA_OK;
  });
}

size_t amarena_kernel_b_bytes(const amarena_kernel* k) {
  if (k == nullptr || !k->kernel->spec().IsMatmul()) return 0;
  const amarena::TensorSpec b = k->kernel->spec().Operand(1);
  return static_cast<size_t>(amarena::StoredElements(b) *
                             amarena::SizeOf(b.aux.dtype));
}

amarena_status amarena_kernel_pack_b(const amarena_kernel* k, const void* b,
                                     void* out, size_t out_bytes) {
  return Guard("amarena_kernel_pack_b", [&]() -> amarena_status {
    if (k == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  "amarena_kernel_pack_b: kernel is null");
    if (!k->kernel->spec().IsMatmul())
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat("amarena_kernel_pack_b: kernel for ",
                               k->spec_text, " has no B, must be a matmul"));
    if (b == nullptr || out == nullptr)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat("amarena_kernel_pack_b: ",
                               b == nullptr ? "b" : "out", " is null"));
    const size_t need = amarena_kernel_b_bytes(k);
    if (out_bytes < need)
      return Fail(AMARENA_INVALID_ARGUMENT,
                  absl::StrCat("amarena_kernel_pack_b: out has ", out_bytes,
                               " bytes, must have at least ", need));
    const amarena::TensorSpec to = k->kernel->spec().Operand(1);
    amarena::TensorSpec from = to;
    from.aux = amarena::TensorAux{.dtype = to.aux.dtype};  // plain row-major
    amarena::Relayout(from, b, to, out);
    return AMARENA_OK;
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
