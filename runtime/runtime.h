// The public C++ API: ask for a Spec, get a callable kernel.
//
//   amarena::Runtime& rt = amarena::Runtime::Default();
//   absl::StatusOr<amarena::KernelPtr> k = rt.Get("matmul 64x64x64 f32");
//   if (!k.ok()) { /* k.status().message() names the problem */ }
//   void* ops[] = {a, b, c};  // C = A . B, row-major
//   absl::Status run = (*k)->Run(ops);  // ResourceExhausted: no scratch
//
// Kernels are cached in memory by canonical Spec (the runtime's target and
// the generator version are fixed per runtime); concurrent requests for a new
// key search and compile it once. On a miss the runtime looks in the on-disk
// search database (runtime/search_db.h) before it searches, and stores what
// it searched, so a Spec searched by any process on the machine is a lookup
// plus a JIT afterwards. Thread-safe. With more than one worker
// (AMARENA_NUM_THREADS, or an engine's own pthreadpool), the search may choose
// one parallel loop at the root, which Run hands to the pool.
//
// Rules for running a kernel (docs/api.md):
// - Floating point: every thread of a run uses the caller's MXCSR (rounding,
//   FTZ, DAZ), so the thread count does not change how subnormals are
//   treated: they are flushed only if the caller's MXCSR flushes them.
// - Aliasing: the output must not overlap an input (inputs may overlap each
//   other). Run does not check it; Check does.
// - Lifetime: a kernel keeps the pool it runs on, so it runs correctly after
//   its Runtime is destroyed; an engine's own pool (the constructor taking a
//   pthreadpool_t) must outlive every kernel of the runtime.
// - Sizes: operand i spans OperandBytes(i) bytes from its pointer.
#ifndef AMARENA_RUNTIME_RUNTIME_H_
#define AMARENA_RUNTIME_RUNTIME_H_

#include <pthreadpool.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/impl.h"
#include "core/log.h"
#include "core/target.h"
#include "jit/compile.h"
#include "runtime/pack.h"
#include "search/search.h"

namespace amarena {

class CompiledKernel;
class SearchDb;
struct StoredResult;

// Where a kernel's tree came from.
enum class KernelSource : uint8_t {
  kSearch,       // the exact search, in this process
  kDatabase,     // the search database (searched earlier, replayed and checked)
  kProvisional,  // a quick search, because the request's deadline came first
  kSchedule,     // a tree the caller gave as decisions (GetScheduled)
};
absl::string_view Name(KernelSource s);

// A thread pool shared by a runtime and its kernels: the last of them to go
// destroys it (unless the engine owns it).
using SharedPool = std::shared_ptr<std::remove_pointer_t<pthreadpool_t>>;

class Kernel {
 public:
  Kernel(Spec spec, Target target, ImplPtr impl,
         std::unique_ptr<CompiledKernel> code, double synth_ms, double jit_ms,
         int64_t specs_solved, KernelSource source, SharedPool pool = nullptr,
         ParallelRunner runner = {});
  ~Kernel();

  // operands[i] points at operand i (matmul: A, B, C), dense, in the Spec's
  // layouts, spanning OperandBytes(i) bytes; the output must not overlap an
  // input. Nothing is checked here (see Check). ResourceExhausted when a
  // thread's scratch cannot be allocated; the output is then partly written.
  absl::Status Run(void* const* operands) const;
  // InvalidArgument naming the operand when Run would be given a null or
  // misaligned pointer, an output overlapping an input, or (with
  // `operand_bytes`, one size per operand) a buffer smaller than
  // OperandBytes. O(operands): for callers that want the check before Run.
  absl::Status Check(void* const* operands,
                     const size_t* operand_bytes = nullptr) const;
  // Bytes operand i spans (panel padding included); 0 if there is no
  // operand i.
  int64_t OperandBytes(int i) const;
  // Lays a matmul's B (K x N) out from `src` into `out` (`out_bytes` of
  // room, at least OperandBytes(1)) as this kernel reads it, padding zeroed:
  // pre-packed weights, made once. `source` kSame: src is B, K x N
  // row-major; kTransposed: src is N x K row-major (B transposed, as
  // checkpoints store weights). `src_ld`: elements between source rows, at
  // least N (kSame) or K (kTransposed). Tiles of the work run on the
  // kernel's threads. InvalidArgument naming the problem for a kernel that is
  // not a matmul, a null pointer, src_ld too small, out too small, or out
  // overlapping src.
  absl::Status PackB(const void* src, PackSource source, int64_t src_ld,
                     void* out, size_t out_bytes) const;

  const Spec& spec() const {
    return spec_;
  }  // bound: carries the budget searched
  Isa isa() const { return target_.isa; }
  // Threads its parallel loop may use (1: serial code).
  int threads() const { return target_.workers; }
  const std::string& name() const;
  const ImplNode& impl() const { return *impl_; }
  size_t code_size() const;
  // Time to find the tree (search, or database lookup and replay) and to
  // JIT it.
  double synth_ms() const { return synth_ms_; }
  double jit_ms() const { return jit_ms_; }
  int64_t specs_solved() const { return specs_solved_; }
  KernelSource source() const { return source_; }

 private:
  Spec spec_;
  Target target_;
  ImplPtr impl_;
  std::unique_ptr<CompiledKernel> code_;
  double synth_ms_, jit_ms_;
  int64_t specs_solved_;
  KernelSource source_;
  SharedPool pool_;
  ParallelRunner runner_;  // the engine's, when it gave one: used over pool_
  // Runs task(i) for i < n on the runner, the pool or the calling thread.
  void ForEach(size_t n, absl::FunctionRef<void(size_t)> task) const;
};
using KernelPtr = std::shared_ptr<const Kernel>;

// What a runtime's kernel cache has done (Runtime::cache_stats()).
struct CacheStats {
  int64_t hits = 0;    // Get calls answered by a cached (or in-flight) kernel
  int64_t misses = 0;  // Get calls that searched and compiled
  int64_t evictions = 0;      // kernels dropped to stay within the capacity
  int64_t entries = 0;        // kernels cached now
  int64_t from_database = 0;  // misses answered by the search database
  int64_t provisional = 0;    // misses answered quickly for a deadline
  double search_ms = 0;       // total time the misses spent finding their trees
  double jit_us = 0;          // total JIT time of the misses
  // Searched results the search database did not take: skipped because
  // another process held its write lock too long (SearchDb::kStoreWait), or
  // failed (a full disk, say). The kernels themselves are unaffected.
  int64_t db_store_skipped = 0;
  int64_t db_store_failed = 0;
};

struct RuntimeOptions {
  // The search database: a file path, "off" for none, or "" for the default
  // (DefaultDbPath(): AMARENA_DB, else the XDG cache directory).
  std::string db;
  // The database's size cap in bytes (0: none). Unset: AMARENA_DB_MAX_MB,
  // else kDefaultDbMaxBytes (64 MiB).
  std::optional<int64_t> db_max_bytes;
  size_t cache_capacity = 1024;
  // Where warnings and info lines go (core/log.h): at verbosity 2, one line
  // per kernel created (Spec, ISA, search ms, JIT us, source). Unset:
  // DefaultLogger(), stderr at AMARENA_VERBOSE's verbosity.
  std::optional<Logger> log;
  // An engine's parallel-for: the kernels' parallel loops and weight packing
  // run on it rather than on a pool of the runtime's own, and the target's
  // workers say how many threads it runs tasks on. It must stay usable as
  // long as any kernel of the runtime.
  ParallelRunner parallel;
};

struct GetOptions {
  // When set, a miss that the database cannot answer gets the exact search's
  // kernel only if it finishes by then; otherwise a quick search's valid (but
  // usually slower) kernel, KernelSource::kProvisional. The exact search goes
  // on in the background; when it ends its result is stored in the database
  // and replaces the provisional kernel in the cache (kernels already handed
  // out stay valid). A request that finds its Spec being created by another
  // thread waits for it until the deadline, then gets a provisional kernel of
  // its own.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

class Runtime {
 public:
  // The process-wide runtime for this CPU. Never fails to exist; Get() reports
  // a CPU without AVX2+FMA as FailedPrecondition.
  static Runtime& Default();

  // A runtime for an explicit target (tests, tools).
  // Uses `target.workers` threads: a pool of its own when more than one.
  explicit Runtime(absl::StatusOr<Target> target, RuntimeOptions options = {});
  // Runs parallel loops on the engine's `pool` (not owned; must outlive the
  // runtime and every kernel it made, since kernels run on it); the target's
  // workers become the pool's thread count.
  Runtime(absl::StatusOr<Target> target, pthreadpool_t pool,
          RuntimeOptions options = {});
  // Waits for background searches (deadline misses) to stop.
  ~Runtime();

  absl::StatusOr<KernelPtr> Get(absl::string_view spec_text,
                                const GetOptions& options = {});
  absl::StatusOr<KernelPtr> Get(const Spec& spec,
                                const GetOptions& options = {});

  // A kernel for `spec` (a matmul with B plain row-major in GL) with B in
  // the layout that makes the cheapest kernel (search/weight_layout.h): what
  // the option `b=any` in Spec text asks Get for. The kernel's spec() names
  // the layout: lay the weights out in it once (core/reference.h, Relayout)
  // and pass them to every call. Each candidate layout is created as Get
  // creates it (cached, stored in the database), so asking again, here or
  // in another process, costs cache or database lookups, not searches.
  absl::StatusOr<KernelPtr> GetWithWeightLayout(const Spec& spec,
                                                const GetOptions& options = {});
  // The same with one layout for every M in [m_lo, m_hi] (`b=any m=LO..HI`,
  // search/weight_layout.h ChooseWeightLayoutOverM): the kernel is for
  // `spec`'s M; kernels for other M of the range ask for the layout its
  // spec() names. Costs a kernel per candidate per M sampled, each cached
  // and stored like any other.
  absl::StatusOr<KernelPtr> GetWithWeightLayout(const Spec& spec, int64_t m_lo,
                                                int64_t m_hi,
                                                const GetOptions& options = {});

  // A kernel for the tree that `decisions` (EncodeDecisions' text, as
  // `amarena explain` prints it after "schedule:") describes for `spec`,
  // replayed and re-costed on this runtime's target: for trying a schedule
  // by hand against the one the search chose. Neither cached nor stored.
  // InvalidArgument / NotFound when the decisions do not fit the Spec.
  absl::StatusOr<KernelPtr> GetScheduled(absl::string_view spec_text,
                                         absl::string_view decisions);

  // The search database in use (nullptr: none, or it could not be opened).
  // Opened when the runtime is made.
  SearchDb* db();

  // Times a kernel was searched and compiled (cache misses that did the work).
  int64_t generated() const { return generated_.load(); }

  // The kernel cache is least-recently-used, bounded to `capacity` kernels
  // (default kDefaultCacheCapacity). Kernels a caller still holds stay valid
  // after eviction.
  static constexpr size_t kDefaultCacheCapacity = 1024;  // RuntimeOptions
  void SetCacheCapacity(size_t capacity);
  CacheStats cache_stats() const;
  const absl::StatusOr<Target>& target() const { return target_; }

 private:
  using Result = absl::StatusOr<KernelPtr>;
  Result Create(const Spec& bound, const GetOptions& options);
  // The exact search under `root_target` (target_->ForRoot(bound)); stores
  // its result in the database, in place of `stale` (a stored row that did
  // not replay) if given.
  absl::StatusOr<ImplPtr> SearchExact(const Spec& bound,
                                      const Target& root_target,
                                      int64_t& solved,
                                      const StoredResult* stale);
  Result Finish(const Spec& bound, ImplPtr impl, double synth_ms,
                int64_t solved, KernelSource source);
  // Stops background searches (deadline misses) and joins their threads.
  void StopBackground();
  void Log(const Kernel& k) const;
  const Logger& log() const { return options_.log.value(); }

  absl::StatusOr<Target> target_;
  SharedPool pool_;  // null: serial
  // The cache, keyed by the bound Spec (the target and generator version are
  // fixed per runtime; they are in the fingerprint for the on-disk store).
  // Most recently used at the front of lru_.
  struct Slot {
    std::shared_future<Result> future;  // for requests while it is created
    KernelPtr kernel;                   // once it is: the fast path
    std::list<Spec>::iterator lru;
    KernelPtr upgrade;  // an exact kernel that beat its provisional one here
  };
  void Evict();  // mu_ held
  mutable std::mutex mu_;
  absl::flat_hash_map<Spec, Slot> cache_;
  std::list<Spec> lru_;
  size_t capacity_ = kDefaultCacheCapacity;
  CacheStats stats_;
  std::atomic<int64_t> generated_{0};
  // Search memos shared by every kernel this runtime creates (shapes of one
  // model share most sub-problems): one for roots whose operands stream from
  // DRAM and one for those that fit in L3 (Target::ForRoot), whose sub-Specs
  // are priced apart. The one about to be used is dropped when the two
  // together have grown past kSearchMemoBytes. Searches take turns on them.
  static constexpr int64_t kSearchMemoBytes = int64_t{256} << 20;
  std::mutex search_mu_;
  std::array<std::unique_ptr<Searcher>, 2> searchers_;
  std::atomic<bool> stopping_{false};  // cancels searches (destruction)

  RuntimeOptions options_;  // log always set
  std::once_flag db_once_;
  std::unique_ptr<SearchDb> db_;

  struct BackgroundThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex bg_mu_;
  std::vector<BackgroundThread> background_;
};

}  // namespace amarena

#endif  // AMARENA_RUNTIME_RUNTIME_H_
