#include "jit/compile.h"

#include <immintrin.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "core/tensor_spec.h"
#include "jit/emit_check.h"
#include "jit/emitter.h"
#include "jit/publish.h"
#include "jit/scratch.h"

namespace amarena {

CompiledKernel::~CompiledKernel() = default;

namespace {

absl::Status ScratchExhausted(const std::string& name, int64_t bytes) {
  return absl::ResourceExhaustedError(
      absl::StrCat("cannot run ", name, ": scratch of ", bytes,
                   " bytes could not be allocated"));
}

// MXCSR's exception flags (bits 0-5): sticky status, not control.
constexpr uint32_t kMxcsrFlags = 0x3f;

}  // namespace

bool CompiledKernel::RunSerial(void* const* operands) const {
  if (scratch_bytes_ == 0) {
    fn_(operands);
    return true;
  }
  void* with_scratch[4];
  AMARENA_CHECK(num_operands_ < 4);
  for (int i = 0; i < num_operands_; ++i) with_scratch[i] = operands[i];
  with_scratch[num_operands_] = jit::ThreadScratch(scratch_bytes_);
  if (with_scratch[num_operands_] == nullptr) return false;
  fn_(with_scratch);
  return true;
}

int64_t CompiledKernel::RunTile(void* const* operands, size_t tile) const {
  void* moved[3];
  const bool rem = static_cast<int64_t>(tile) == full_tiles_;
  for (int i = 0; i < num_operands_; ++i)
    moved[i] = static_cast<char*>(operands[i]) +
               static_cast<int64_t>(tile) * step_[static_cast<size_t>(i)];
  const CompiledKernel& task = *tasks_[rem ? 1 : 0];
  AMARENA_CHECK(!task.parallel());  // only the root loop is parallel
  return task.RunSerial(moved) ? 0 : task.scratch_bytes_;
}

absl::Status CompiledKernel::Run(void* const* operands,
                                 pthreadpool_t pool) const {
  if (pool == nullptr) return Run(operands, ParallelRunner{});
  // No pthreadpool flags: PTHREADPOOL_FLAG_DISABLE_DENORMALS would flush
  // subnormals on every thread, and only the caller's MXCSR decides that.
  return Run(operands,
             ParallelRunner{.parallel_for =
                                [](void* p, void (*task)(void*, size_t),
                                   void* task_ctx, size_t n) {
                                  pthreadpool_parallelize_1d(
                                      static_cast<pthreadpool_t>(p), task,
                                      task_ctx, n, /*flags=*/0);
                                },
                            .ctx = pool});
}

absl::Status CompiledKernel::Run(void* const* operands,
                                 const ParallelRunner& runner) const {
  if (tasks_.empty()) {
    if (RunSerial(operands)) return absl::OkStatus();
    return ScratchExhausted(name_, scratch_bytes_);
  }
  struct Ctx {
    const CompiledKernel* k;
    void* const* operands;
    // The caller's floating-point environment, which every tile runs in.
    uint32_t mxcsr;
    // Scratch bytes a tile could not allocate (0: none failed yet).
    std::atomic<int64_t> failed{0};
  } ctx{this, operands, _mm_getcsr()};
  size_t tiles = static_cast<size_t>(full_tiles_) + (tasks_.size() - 1);
  void (*tile)(void*, size_t) = [](void* c, size_t i) {
    auto* ctx = static_cast<Ctx*>(c);
    // The run has failed: its output is not worth finishing.
    if (ctx->failed.load(std::memory_order_relaxed) != 0) return;
    const uint32_t own = _mm_getcsr();
    const bool switch_csr = ((own ^ ctx->mxcsr) & ~kMxcsrFlags) != 0;
    if (switch_csr) _mm_setcsr(ctx->mxcsr);
    int64_t failed = ctx->k->RunTile(ctx->operands, i);
    if (switch_csr) _mm_setcsr(own);
    if (failed != 0) ctx->failed.store(failed, std::memory_order_relaxed);
  };
  if (runner.parallel_for != nullptr) {
    runner.parallel_for(runner.ctx, tile, &ctx, tiles);
  } else {
    for (size_t i = 0; i < tiles; ++i) tile(&ctx, i);
  }
  // The parallel-for returns after every task has: `failed` is final.
  if (int64_t failed = ctx.failed.load(std::memory_order_relaxed))
    return ScratchExhausted(name_, failed);
  return absl::OkStatus();
}

const void* CompiledKernel::code() const {
  return tasks_.empty() ? code_.data() : tasks_[0]->code();
}
size_t CompiledKernel::code_size() const {
  return tasks_.empty() ? code_.size() : tasks_[0]->code_size();
}
size_t CompiledKernel::total_code_size() const {
  size_t bytes = code_.size();
  for (const std::unique_ptr<CompiledKernel>& task : tasks_)
    bytes += task->total_code_size();
  return bytes;
}

namespace {

// The emitter's bounds audit against what each region holds: an operand's
// stored bytes over its whole batch (when it is the whole operand, not a tile
// of a larger one at a pitch), the scratch area's size.
absl::Status CheckBounds(const jit::Emitter& gen, const Spec& s,
                         const CompileOptions& options) {
  for (int r = 0; r <= jit::Emitter::kScratchRegion; ++r) {
    const jit::Emitter::Range& t = gen.Touched(r);
    if (t.min > t.max) continue;  // nothing accessed
    int64_t bytes = 0;
    if (r == jit::Emitter::kScratchRegion) {
      bytes = gen.scratch_bytes();
    } else if (r < s.NumOperands() &&
               options.leading[static_cast<size_t>(r)] == 0) {
      bytes = s.BatchedElements(r) * SizeOf(s.aux[r].dtype);
    } else {
      continue;
    }
    if (t.min < 0 || t.max >= bytes)
      return absl::InternalError(absl::StrCat(
          "cannot compile ", PrintSpec(s), ": the code would access ",
          r == jit::Emitter::kScratchRegion ? "its scratch area"
                                            : absl::StrCat("operand ", r),
          " at byte offsets ", t.min, " to ", t.max, ", must stay within 0 to ",
          bytes - 1, " (a bug in amarena)"));
  }
  return absl::OkStatus();
}

}  // namespace

// Compile without the net for exceptions (the parallel root compiles its
// tiles through it too).
absl::StatusOr<std::unique_ptr<CompiledKernel>> CompileUnchecked(
    const ImplNode& root, const Target& target, std::string name,
    const CompileOptions& options) {
  for (int i = 0; i < root.spec.NumOperands(); ++i)
    if (root.spec.aux[i].level != Level::kGL)
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot compile ", PrintSpec(root.spec), ": operand ", i, " is in ",
          Name(root.spec.aux[i].level), ", must be in gl"));
  std::unique_ptr<CompiledKernel> k(new CompiledKernel);
  if (root.how.type == NodeType::kLoop && root.how.loop.parallel) {
    // Each tile is a whole kernel over GL operands: compile body and
    // remainder as their own functions, and step the operand pointers here.
    const Spec& s = root.spec;
    const LoopInfo& loop = root.how.loop;
    CompileOptions tile_options = options;
    for (int i = 0; i < s.NumOperands(); ++i) {
      TensorSpec t = s.Operand(i);
      int64_t& pitch = tile_options.leading[static_cast<size_t>(i)];
      if (pitch == 0) pitch = t.layout().TilePitch(t.rows, t.cols);
    }
    for (size_t c = 0; c < root.children.size(); ++c) {
      AMARENA_ASSIGN_OR_RETURN(
          std::unique_ptr<CompiledKernel> task,
          CompileUnchecked(*root.children[c], target,
                           absl::StrCat(name, c == 0 ? "_tile" : "_rem"),
                           tile_options));
      k->tasks_.push_back(std::move(task));
    }
    for (int i = 0; i < s.NumOperands(); ++i) {
      if (loop.dim == Dim::kB) {  // whole matrices; a shared one stays
        k->step_[static_cast<size_t>(i)] =
            BatchStep(s, i, loop.tile) * SizeOf(s.aux[i].dtype);
        continue;
      }
      Axis axis = OperandAxis(s, i, loop.dim);
      if (axis == Axis::kNone) continue;
      jit::View v = jit::MemoryView(
          s.Operand(i), tile_options.leading[static_cast<size_t>(i)]);
      k->step_[static_cast<size_t>(i)] = v.Step(axis, loop.tile);
    }
    k->full_tiles_ = loop.full_iters;
    k->num_operands_ = s.NumOperands();
    k->name_ = std::move(name);
    return k;
  }
  jit::Emitter gen(target);
  gen.LimitGprs(options.max_gprs);
  gen.set_fill_on_first_use(options.fill_on_first_use);
  gen.EmitFunction(root, options.leading);
  AMARENA_RETURN_IF_ERROR(CheckBounds(gen, root.spec, options));
  gen.ready();  // resolve labels (the buffer stays plain heap memory)
  AMARENA_ASSIGN_OR_RETURN(
      k->code_, jit::CodeArena::Global().Publish(gen.getCode(), gen.getSize()));
  const int64_t scratch_bytes = gen.scratch_bytes();
  k->fn_ =
      reinterpret_cast<CompiledKernel::Fn>(const_cast<void*>(k->code_.data()));
  k->num_operands_ = root.spec.NumOperands();
  k->scratch_bytes_ = scratch_bytes;
  k->name_ = std::move(name);
  jit::PublishCode(k->name_, k->code_.data(), k->code_.size());
  return k;
}

// Whatever the generator throws stops here: its own checks (EmitError, with
// the status code they chose), Xbyak's errors and running out of memory.
absl::StatusOr<std::unique_ptr<CompiledKernel>> Compile(
    const ImplNode& root, const Target& target, std::string name,
    const CompileOptions& options) {
  auto failed = [&](absl::StatusCode code, absl::string_view what) {
    return absl::Status(code, absl::StrCat("cannot compile ",
                                           PrintSpec(root.spec), ": ", what));
  };
  try {
    return CompileUnchecked(root, target, std::move(name), options);
  } catch (const jit::EmitError& e) {
    return failed(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return failed(absl::StatusCode::kResourceExhausted,
                  "out of memory for the code being generated");
  } catch (const Xbyak::Error& e) {
    const int code = static_cast<int>(e);
    const bool full =
        code == Xbyak::ERR_CANT_ALLOC || code == Xbyak::ERR_CODE_IS_TOO_BIG;
    return failed(full ? absl::StatusCode::kResourceExhausted
                       : absl::StatusCode::kInternal,
                  absl::StrCat("Xbyak error ", code, " (", e.what(), ")"));
  }
}

std::string KernelName(const Spec& s) {
  std::string out = "amarena_";
  for (char c : PrintSpec(s)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9');
    out.push_back(ok ? c : '_');
  }
  return out;
}

}  // namespace amarena
