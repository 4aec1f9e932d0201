// The public C++ API: ask for a Spec, get a callable kernel.
//
//   amarena::Runtime& rt = amarena::Runtime::Default();
//   absl::StatusOr<amarena::KernelPtr> k = rt.Get("matmul 64x64x64 f32");
//   if (!k.ok()) { /* k.status().message() names the problem */ }
//   void* ops[] = {a, b, c};  // C = A . B, row-major
//   (*k)->Run(ops);
//
// Kernels are cached by canonical Spec + target fingerprint (ISA, threads,
// registers, caches, cost model) + generator version; concurrent requests for
// a new key search and compile it once. Thread-safe. With more than one
// worker (AMARENA_NUM_THREADS, or an engine's own pthreadpool), the search may
// choose one parallel loop at the root, which Run hands to the pool.
#ifndef AMARENA_RUNTIME_RUNTIME_H_
#define AMARENA_RUNTIME_RUNTIME_H_

#include <pthreadpool.h>

#include <atomic>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/impl.h"
#include "core/target.h"
#include "search/search.h"

namespace amarena {

inline constexpr int kGeneratorVersion = 1;

class CompiledKernel;

class Kernel {
 public:
  Kernel(Spec spec, Target target, ImplPtr impl,
         std::unique_ptr<CompiledKernel> code, double synth_ms, double jit_ms,
         int64_t specs_solved, pthreadpool_t pool = nullptr);
  ~Kernel();

  // operands[i] points at operand i (matmul: A, B, C), dense, in the Spec's
  // layouts.
  void Run(void* const* operands) const;

  const Spec& spec() const {
    return spec_;
  }  // bound: carries the budget searched
  Isa isa() const { return target_.isa; }
  // Threads its parallel loop may use (1: serial code).
  int threads() const { return target_.workers; }
  const std::string& name() const;
  const ImplNode& impl() const { return *impl_; }
  size_t code_size() const;
  double synth_ms() const { return synth_ms_; }
  double jit_ms() const { return jit_ms_; }
  int64_t specs_solved() const { return specs_solved_; }

 private:
  Spec spec_;
  Target target_;
  ImplPtr impl_;
  std::unique_ptr<CompiledKernel> code_;
  double synth_ms_, jit_ms_;
  int64_t specs_solved_;
  pthreadpool_t pool_;
};
using KernelPtr = std::shared_ptr<const Kernel>;

// What a runtime's kernel cache has done (Runtime::cache_stats()).
struct CacheStats {
  int64_t hits = 0;    // Get calls answered by a cached (or in-flight) kernel
  int64_t misses = 0;  // Get calls that searched and compiled
  int64_t evictions = 0;  // kernels dropped to stay within the capacity
  int64_t entries = 0;    // kernels cached now
  double search_ms = 0;   // total search time of the misses
  double jit_us = 0;      // total JIT time of the misses
};

class Runtime {
 public:
  // The process-wide runtime for this CPU. Never fails to exist; Get() reports
  // a CPU without AVX2+FMA as FailedPrecondition.
  static Runtime& Default();

  // A runtime for an explicit target (tests, tools).
  // Uses `target.workers` threads: a pool of its own when more than one.
  explicit Runtime(absl::StatusOr<Target> target);
  // Runs parallel loops on the engine's `pool` (not owned; must outlive the
  // runtime); the target's workers become the pool's thread count.
  Runtime(absl::StatusOr<Target> target, pthreadpool_t pool);
  ~Runtime();

  absl::StatusOr<KernelPtr> Get(absl::string_view spec_text);
  absl::StatusOr<KernelPtr> Get(const Spec& spec);

  // Times a kernel was searched and compiled (cache misses that did the work).
  int64_t generated() const { return generated_.load(); }

  // The kernel cache is least-recently-used, bounded to `capacity` kernels
  // (default kDefaultCacheCapacity). Kernels a caller still holds stay valid
  // after eviction.
  static constexpr size_t kDefaultCacheCapacity = 1024;
  void SetCacheCapacity(size_t capacity);
  CacheStats cache_stats() const;
  const absl::StatusOr<Target>& target() const { return target_; }

 private:
  using Result = absl::StatusOr<KernelPtr>;
  Result Create(const Spec& bound);

  absl::StatusOr<Target> target_;
  pthreadpool_t pool_ = nullptr;
  bool owns_pool_ = false;
  // The cache, keyed by the bound Spec (the target and generator version are
  // fixed per runtime; they are in the fingerprint for the on-disk store).
  // Most recently used at the front of lru_.
  struct Slot {
    std::shared_future<Result> future;  // for requests while it is created
    KernelPtr kernel;                   // once it is: the fast path
    std::list<Spec>::iterator lru;
  };
  void Evict();  // mu_ held
  mutable std::mutex mu_;
  absl::flat_hash_map<Spec, Slot> cache_;
  std::list<Spec> lru_;
  size_t capacity_ = kDefaultCacheCapacity;
  CacheStats stats_;
  std::atomic<int64_t> generated_{0};
  // One search memo shared by every kernel this runtime creates (shapes of
  // one model share most sub-problems), dropped when it grows past
  // kSearchMemoBytes. Searches take turns on it.
  static constexpr int64_t kSearchMemoBytes = int64_t{256} << 20;
  std::mutex search_mu_;
  std::unique_ptr<Searcher> searcher_;
};

}  // namespace amarena

#endif  // AMARENA_RUNTIME_RUNTIME_H_
