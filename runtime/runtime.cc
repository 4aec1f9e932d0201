#include "runtime/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "jit/compile.h"
#include "runtime/host.h"
#include "runtime/operand_check.h"
#include "runtime/search_db.h"
#include "runtime/supported.h"
#include "search/greedy.h"
#include "search/replay.h"
#include "search/search.h"
#include "search/weight_layout.h"

namespace amarena {

Runtime& Runtime::Default() {
  static Runtime* rt = [] {
    auto* r = new Runtime(HostTarget());
    // Never destroyed (kernels may be used until exit), but its background
    // searches must stop before static destruction.
    std::atexit([] { Default().StopBackground(); });
    return r;
  }();
  return *rt;
}

namespace {

RuntimeOptions WithLog(RuntimeOptions o) {
  if (!o.log) o.log = DefaultLogger();
  return o;
}

}  // namespace

Runtime::Runtime(absl::StatusOr<Target> target, RuntimeOptions options)
    : target_(std::move(target)),
      capacity_(std::max<size_t>(options.cache_capacity, 1)),
      options_(WithLog(std::move(options))) {
  if (target_.ok() && target_->workers > 1 &&
      options_.parallel.parallel_for == nullptr) {
    // Shared with every kernel made here, which may outlive the runtime.
    if (pthreadpool_t pool =
            pthreadpool_create(static_cast<size_t>(target_->workers)))
      pool_ = SharedPool(pool, pthreadpool_destroy);
    else
      target_->workers = 1;  // no threads: run serially
  }
  // Opening the database costs a first request about 0.1-0.2 ms (WAL
  // recovery); pay it here, at load time, rather than on the first kernel.
  if (target_.ok()) db();
}

Runtime::Runtime(absl::StatusOr<Target> target, pthreadpool_t pool,
                 RuntimeOptions options)
    : target_(std::move(target)),
      // The engine's: never destroyed here.
      pool_(pool, [](pthreadpool_t) {}),
      capacity_(std::max<size_t>(options.cache_capacity, 1)),
      options_(WithLog(std::move(options))) {
  options_.parallel = {};  // the engine's pool is the runner here
  if (target_.ok())
    target_->workers =
        pool == nullptr ? 1
                        : static_cast<int>(pthreadpool_get_threads_count(pool));
  if (target_.ok()) db();
}

Runtime::~Runtime() { StopBackground(); }

void Runtime::StopBackground() {
  stopping_ = true;
  std::vector<BackgroundThread> threads;
  {
    std::lock_guard<std::mutex> lock(bg_mu_);
    threads.swap(background_);
  }
  for (BackgroundThread& b : threads) b.thread.join();
}

SearchDb* Runtime::db() {
  std::call_once(db_once_, [&] {
    const std::string path = DbPathFor(options_.db);
    if (path.empty()) return;
    DbOptions db_options;
    db_options.max_bytes =
        options_.db_max_bytes.value_or(DbMaxBytesFromEnv(log()));
    db_options.log = log();
    absl::StatusOr<std::unique_ptr<SearchDb>> db =
        SearchDb::Open(path, db_options);
    if (db.ok()) {
      db_ = std::move(*db);
    } else {
      log().Log(LogLevel::kWarning,
                absl::StrCat(db.status().message(),
                             "; kernels will be searched, not stored"));
    }
  });
  return db_.get();
}

absl::StatusOr<KernelPtr> Runtime::Get(absl::string_view spec_text,
                                       const GetOptions& options) {
  AMARENA_ASSIGN_OR_RETURN(SpecRequest r, ParseRequest(spec_text));
  if (r.b_any && r.m_lo != 0)
    return GetWithWeightLayout(r.spec, r.m_lo, r.m_hi, options);
  return r.b_any ? GetWithWeightLayout(r.spec, options) : Get(r.spec, options);
}

namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

absl::StatusOr<KernelPtr> Runtime::GetWithWeightLayout(
    const Spec& spec, const GetOptions& options) {
  if (!target_.ok()) return target_.status();
  AMARENA_RETURN_IF_ERROR(CheckSupported(spec, *target_));
  std::vector<std::pair<Spec, KernelPtr>> made;
  AMARENA_ASSIGN_OR_RETURN(
      WeightLayoutChoice choice,
      ChooseWeightLayout(spec, *target_,
                         [&](const Spec& s) -> absl::StatusOr<int64_t> {
                           // Unimplemented (a layout this target cannot
                           // read, or no tree) makes it no choice.
                           absl::StatusOr<KernelPtr> k = Get(s, options);
                           AMARENA_RETURN_IF_ERROR(k.status());
                           made.emplace_back(s, *k);
                           return (*k)->impl().cost.main;
                         }));
  for (auto& [s, k] : made)
    if (s == choice.spec) return k;
  return absl::InternalError("the chosen layout's kernel is missing");
}

absl::StatusOr<KernelPtr> Runtime::GetWithWeightLayout(
    const Spec& spec, int64_t m_lo, int64_t m_hi, const GetOptions& options) {
  if (!target_.ok()) return target_.status();
  AMARENA_RETURN_IF_ERROR(CheckSupported(spec, *target_));
  AMARENA_ASSIGN_OR_RETURN(
      WeightLayoutRangeChoice choice,
      ChooseWeightLayoutOverM(spec, *target_, m_lo, m_hi,
                              [&](const Spec& s) -> absl::StatusOr<int64_t> {
                                absl::StatusOr<KernelPtr> k = Get(s, options);
                                AMARENA_RETURN_IF_ERROR(k.status());
                                return (*k)->impl().cost.main;
                              }));
  return Get(choice.at_m.spec, options);  // made above: a cache hit
}

absl::StatusOr<KernelPtr> Runtime::GetScheduled(absl::string_view spec_text,
                                                absl::string_view decisions) {
  if (!target_.ok()) return target_.status();
  AMARENA_ASSIGN_OR_RETURN(Spec spec, ParseSpec(spec_text));
  AMARENA_RETURN_IF_ERROR(CheckSupported(spec, *target_));
  const Spec bound = target_->Bind(spec);
  auto t0 = Clock::now();
  // "*" in the decisions: the search's best for that sub-Spec (not stored).
  const Target root_target = target_->ForRoot(bound);
  Searcher searcher(root_target, SearchOptions{.cancel = &stopping_});
  AMARENA_ASSIGN_OR_RETURN(
      ImplPtr impl,
      Replay(bound, decisions, root_target,
             [&](const Spec& s) { return searcher.Solve(s); }));
  return Finish(bound, std::move(impl), Ms(Clock::now() - t0), 0,
                KernelSource::kSchedule);
}

absl::StatusOr<KernelPtr> Runtime::Get(const Spec& spec,
                                       const GetOptions& options) {
  if (!target_.ok()) return target_.status();
  Spec bound = target_->Bind(spec);
  // A hit: only supported Specs are ever cached, so no check is needed.
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(bound);
    if (it != cache_.end() && it->second.kernel) {
      ++stats_.hits;
      if (it->second.lru != lru_.begin())
        lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.kernel;
    }
  }
  AMARENA_RETURN_IF_ERROR(CheckSupported(spec, *target_));
  std::unique_ptr<std::promise<Result>> promise;  // only on a miss
  std::shared_future<Result> future;
  bool creator = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(bound);
    if (it != cache_.end()) {  // ready now, or in flight in another thread
      ++stats_.hits;
      if (it->second.lru != lru_.begin())
        lru_.splice(lru_.begin(), lru_, it->second.lru);
      if (it->second.kernel) return it->second.kernel;
      future = it->second.future;
    } else {
      ++stats_.misses;
      promise = std::make_unique<std::promise<Result>>();
      future = promise->get_future().share();
      lru_.push_front(bound);
      cache_.emplace(bound, Slot{future, nullptr, lru_.begin(), nullptr});
      creator = true;
      Evict();
    }
  }
  if (!creator) {
    // Another thread is creating it. With a deadline that passes first, this
    // request gets a quick kernel of its own (not cached).
    if (options.deadline &&
        future.wait_until(*options.deadline) != std::future_status::ready) {
      auto t0 = Clock::now();
      AMARENA_ASSIGN_OR_RETURN(ImplPtr quick,
                               SolveGreedy(bound, target_->ForRoot(bound)));
      return Finish(bound, std::move(quick), Ms(Clock::now() - t0), 0,
                    KernelSource::kProvisional);
    }
    return future.get();  // a hit, or wait for the thread creating it
  }

  Result r = Create(bound, options);
  promise->set_value(r);
  std::lock_guard<std::mutex> lock(mu_);
  if (r.ok()) {
    stats_.search_ms += (*r)->synth_ms();
    stats_.jit_us += (*r)->jit_ms() * 1000;
    stats_.from_database += (*r)->source() == KernelSource::kDatabase;
    stats_.provisional += (*r)->source() == KernelSource::kProvisional;
    if (auto it = cache_.find(bound); it != cache_.end())
      it->second.kernel = it->second.upgrade ? it->second.upgrade : *r;
  } else if (auto it = cache_.find(bound); it != cache_.end()) {
    // Do not cache failures: a later request may retry.
    lru_.erase(it->second.lru);
    cache_.erase(it);
  }
  return r;
}

void Runtime::Evict() {
  while (cache_.size() > capacity_) {
    // Waiters on an evicted in-flight kernel hold their own future copy.
    cache_.erase(lru_.back());
    lru_.pop_back();
    ++stats_.evictions;
  }
}

void Runtime::SetCacheCapacity(size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = std::max<size_t>(capacity, 1);
  Evict();
}

CacheStats Runtime::cache_stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  CacheStats s = stats_;
  s.entries = static_cast<int64_t>(cache_.size());
  if (db_ != nullptr) {
    s.db_store_skipped = db_->stores_skipped();
    s.db_store_failed = db_->stores_failed();
  }
  return s;
}

Runtime::Result Runtime::Create(const Spec& bound, const GetOptions& options) {
  ++generated_;
  auto t0 = Clock::now();
  // What an earlier search (in any process) found, if it still replays to
  // the cost it was stored with. One that does not is replaced by the
  // search's result.
  const Target root_target = target_->ForRoot(bound);
  std::optional<StoredResult> stale;
  if (SearchDb* store = db()) {
    Spec clamped = ClampBudget(bound, root_target);
    if (std::optional<StoredResult> f = store->Find(root_target, clamped)) {
      absl::StatusOr<ImplPtr> tree = Replay(bound, f->decisions, root_target);
      if (tree.ok() && (*tree)->cost.main == f->cost)
        return Finish(bound, *std::move(tree), Ms(Clock::now() - t0), 0,
                      KernelSource::kDatabase);
      log().Log(
          LogLevel::kInfo,
          absl::StrCat("stored result for ", PrintSpec(bound),
                       " does not replay (",
                       tree.ok() ? "its cost differs" : tree.status().message(),
                       "); searching again"));
      stale = std::move(f);
    }
  }
  if (!options.deadline) {
    int64_t solved = 0;
    AMARENA_ASSIGN_OR_RETURN(
        ImplPtr impl,
        SearchExact(bound, root_target, solved, stale ? &*stale : nullptr));
    return Finish(bound, std::move(impl), Ms(Clock::now() - t0), solved,
                  KernelSource::kSearch);
  }
  // A deadline: the exact search runs on a thread of its own; if it is not
  // done in time, a quick search answers now and the exact one carries on.
  auto task = std::make_shared<std::packaged_task<Result()>>(
      [this, bound, root_target, stale]() -> Result {
        auto start = Clock::now();
        int64_t solved = 0;
        AMARENA_ASSIGN_OR_RETURN(
            ImplPtr impl, SearchExact(bound, root_target, solved,
                                      stale ? &*stale : nullptr));
        return Finish(bound, std::move(impl), Ms(Clock::now() - start), solved,
                      KernelSource::kSearch);
      });
  std::future<Result> exact = task->get_future();
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([this, task, done, bound] {
    (*task)();
    done->store(true);
  });
  {
    std::lock_guard<std::mutex> lock(bg_mu_);
    // Join the threads that have finished since the last deadline miss.
    std::erase_if(background_, [](BackgroundThread& b) {
      if (!b.done->load()) return false;
      b.thread.join();
      return true;
    });
    background_.push_back(BackgroundThread{std::move(thread), done});
  }
  if (exact.wait_until(*options.deadline) == std::future_status::ready)
    return exact.get();
  // The exact search's kernel replaces the provisional one when it is ready
  // (by a watcher, since `exact` can only be waited for once).
  auto watcher = [this, bound,
                  e = std::make_shared<std::future<Result>>(std::move(exact))] {
    Result r = e->get();
    if (!r.ok()) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(bound);
    if (it == cache_.end()) return;
    if (it->second.kernel) {
      it->second.kernel = *r;
    } else {
      it->second.upgrade = *r;  // the provisional kernel is not stored yet
    }
  };
  auto watcher_done = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard<std::mutex> lock(bg_mu_);
    background_.push_back(BackgroundThread{std::thread([watcher, watcher_done] {
                                             watcher();
                                             watcher_done->store(true);
                                           }),
                                           watcher_done});
  }
  absl::StatusOr<ImplPtr> quick = SolveGreedy(bound, root_target);
  AMARENA_RETURN_IF_ERROR(quick.status());
  return Finish(bound, *std::move(quick), Ms(Clock::now() - t0), 0,
                KernelSource::kProvisional);
}

absl::StatusOr<ImplPtr> Runtime::SearchExact(const Spec& bound,
                                             const Target& root_target,
                                             int64_t& solved,
                                             const StoredResult* stale) {
  absl::StatusOr<ImplPtr> impl;
  {
    std::lock_guard<std::mutex> lock(search_mu_);
    const size_t i = root_target.dram_operands ? 0 : 1;
    std::unique_ptr<Searcher>& searcher = searchers_[i];
    const std::unique_ptr<Searcher>& other = searchers_[1 - i];
    if (!searcher || searcher->memo_bytes() +
                             (other ? other->memo_bytes() : 0) >
                         kSearchMemoBytes)
      searcher = std::make_unique<Searcher>(
          root_target, SearchOptions{.cancel = &stopping_});
    int64_t before = searcher->stats().specs_solved;
    impl = searcher->Solve(bound);
    solved = searcher->stats().specs_solved - before;
    if (stopping_) searcher.reset();  // its memo is no longer exact
  }
  // A store the database cannot take (its lock held elsewhere, a full disk)
  // changes nothing for this kernel: SearchDb counts it and reports the
  // first one.
  if (impl.ok() && db() != nullptr && !db()->read_only()) {
    absl::Status stored = db()->Store(root_target, **impl, stale);
    if (!stored.ok()) log().Log(LogLevel::kInfo, stored.message());
  }
  return impl;
}

Runtime::Result Runtime::Finish(const Spec& bound, ImplPtr impl,
                                double synth_ms, int64_t solved,
                                KernelSource source) {
  auto t0 = Clock::now();
  AMARENA_ASSIGN_OR_RETURN(std::unique_ptr<CompiledKernel> code,
                           Compile(*impl, *target_, KernelName(bound)));
  auto k = std::make_shared<const Kernel>(
      bound, *target_, std::move(impl), std::move(code), synth_ms,
      Ms(Clock::now() - t0), solved, source, pool_, options_.parallel);
  if (log().On(LogLevel::kInfo)) Log(*k);
  return k;
}

void Runtime::Log(const Kernel& k) const {
  log().Log(LogLevel::kInfo,
            absl::StrFormat("kernel %s isa=%s threads=%d search_ms=%.3f "
                            "jit_us=%.0f source=%s",
                            PrintSpec(k.spec()), Name(k.isa()), k.threads(),
                            k.synth_ms(), k.jit_ms() * 1000, Name(k.source())));
}

}  // namespace amarena
