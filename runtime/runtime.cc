#include "runtime/runtime.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "jit/compile.h"
#include "runtime/host.h"
#include "search/search.h"

namespace amarena {

Kernel::Kernel(Spec spec, Target target, ImplPtr impl,
               std::unique_ptr<CompiledKernel> code, double synth_ms,
               double jit_ms, int64_t specs_solved, pthreadpool_t pool)
    : spec_(std::move(spec)),
      target_(target),
      impl_(std::move(impl)),
      code_(std::move(code)),
      synth_ms_(synth_ms),
      jit_ms_(jit_ms),
      specs_solved_(specs_solved),
      pool_(pool) {}

Kernel::~Kernel() = default;

void Kernel::Run(void* const* operands) const { code_->Run(operands, pool_); }
const std::string& Kernel::name() const { return code_->name(); }
size_t Kernel::code_size() const { return code_->code_size(); }

Runtime& Runtime::Default() {
  static Runtime* rt = new Runtime(HostTarget());
  return *rt;
}

Runtime::Runtime(absl::StatusOr<Target> target) : target_(std::move(target)) {
  if (target_.ok() && target_->workers > 1) {
    pool_ = pthreadpool_create(static_cast<size_t>(target_->workers));
    owns_pool_ = pool_ != nullptr;
    if (pool_ == nullptr) target_->workers = 1;  // no threads: run serially
  }
}

Runtime::Runtime(absl::StatusOr<Target> target, pthreadpool_t pool)
    : target_(std::move(target)), pool_(pool) {
  if (target_.ok())
    target_->workers =
        pool == nullptr ? 1
                        : static_cast<int>(pthreadpool_get_threads_count(pool));
}

Runtime::~Runtime() {
  if (owns_pool_) pthreadpool_destroy(pool_);
}

absl::StatusOr<KernelPtr> Runtime::Get(absl::string_view spec_text) {
  AMARENA_ASSIGN_OR_RETURN(Spec s, ParseSpec(spec_text));
  return Get(s);
}

namespace {

std::string DTypesText(const Spec& s) {
  std::string out;
  for (int i = 0; i < s.NumOperands(); ++i)
    absl::StrAppend(&out,
                    i == 0                 ? ""
                    : i == s.OutputIndex() ? "->"
                                           : "*",
                    Name(s.aux[i].dtype));
  return out;
}

// What the generator accepts from a user; the parser accepts more (the whole
// notation).
absl::Status CheckSupported(const Spec& s, const Target& t) {
  if (s.kind == Kind::kMove)
    return absl::UnimplementedError(
        absl::StrCat("cannot create kernel for ", PrintSpec(s),
                     ": operation is move, must be matmul or zero (moves only "
                     "occur inside programs)"));
  absl::string_view names[] = {"a", "b", "c"};
  for (int i = 0; i < s.NumOperands(); ++i) {
    if (s.aux[i].level != Level::kGL)
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot create kernel for ", PrintSpec(s), ": operand ", names[i],
          " is in ", Name(s.aux[i].level), ", must be in gl"));
    // A matmul's B may come pre-packed in row-major panels (weights packed
    // once, read by many calls); other packed operands occur only inside
    // programs.
    const bool prepacked_b =
        s.IsMatmul() && i == 1 && s.aux[i].layout == Layout::kRowMajor;
    if (s.aux[i].pack != 0 && !prepacked_b)
      return absl::UnimplementedError(absl::StrCat(
          "cannot create kernel for ", PrintSpec(s), ": operand ", names[i],
          " is packed, must be plain row- or column-major (only a matmul's b "
          "may be pre-packed, in row panels)"));
  }
  // f32 throughout, or bf16 inputs accumulated into an f32 output.
  const DType in = s.aux[0].dtype;
  bool dtypes_ok = s.aux[s.OutputIndex()].dtype == DType::kF32;
  for (int i = 0; i < s.OutputIndex(); ++i) dtypes_ok &= s.aux[i].dtype == in;
  if (!dtypes_ok)
    return absl::UnimplementedError(absl::StrCat(
        "cannot create kernel for ", PrintSpec(s), ": dtypes are ",
        DTypesText(s),
        ", must be f32 or bf16*bf16->f32 (other combinations are not "
        "implemented)"));
  if (s.b != 1)
    return absl::UnimplementedError(
        absl::StrCat("cannot create kernel for ", PrintSpec(s), ": batch is ",
                     s.b, ", must be 1 (batch is not implemented yet)"));
  if (s.budget) {
    Budget max = t.MaxBudget();
    if (!s.budget->FitsIn(max))
      return absl::InvalidArgumentError(
          absl::StrCat("cannot create kernel for ", PrintSpec(s),
                       ": budget exceeds the target's ", PrintPeak(max)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KernelPtr> Runtime::Get(const Spec& spec) {
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
      cache_.emplace(bound, Slot{future, nullptr, lru_.begin()});
      creator = true;
      Evict();
    }
  }
  if (!creator)
    return future.get();  // a hit, or wait for the thread creating it

  Result r = Create(bound);
  promise->set_value(r);
  std::lock_guard<std::mutex> lock(mu_);
  if (r.ok()) {
    stats_.search_ms += (*r)->synth_ms();
    stats_.jit_us += (*r)->jit_ms() * 1000;
    if (auto it = cache_.find(bound); it != cache_.end())
      it->second.kernel = *r;
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
  return s;
}

Runtime::Result Runtime::Create(const Spec& bound) {
  ++generated_;
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  absl::StatusOr<ImplPtr> solved;
  int64_t specs_solved = 0;
  {
    std::lock_guard<std::mutex> lock(search_mu_);
    if (!searcher_ || searcher_->memo_bytes() > kSearchMemoBytes)
      searcher_ = std::make_unique<Searcher>(*target_);
    int64_t before = searcher_->stats().specs_solved;
    solved = searcher_->Solve(bound);
    specs_solved = searcher_->stats().specs_solved - before;
  }
  AMARENA_ASSIGN_OR_RETURN(ImplPtr impl, std::move(solved));
  auto t1 = Clock::now();
  AMARENA_ASSIGN_OR_RETURN(std::unique_ptr<CompiledKernel> code,
                           Compile(*impl, *target_, KernelName(bound)));
  auto t2 = Clock::now();
  auto ms = [](auto d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  return std::make_shared<const Kernel>(bound, *target_, std::move(impl),
                                        std::move(code), ms(t1 - t0),
                                        ms(t2 - t1), specs_solved, pool_);
}

}  // namespace amarena
