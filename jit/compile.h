// Compile: an Impl tree in, callable machine code out.
//
//   absl::StatusOr<std::unique_ptr<CompiledKernel>> k =
//       Compile(*impl, target, "amarena_matmul_64x64x64_f32");
//   void* ops[] = {a, b, c};
//   absl::Status run = (**k)(ops);  // ResourceExhausted: no scratch memory
//
// Code is emitted into a growing heap buffer (never executable), then copied
// into the process's code arena (jit/code_arena.h), which makes it read+execute
// (never both writable and executable). Xbyak errors stop here and become
// absl::Status.
#ifndef AMARENA_JIT_COMPILE_H_
#define AMARENA_JIT_COMPILE_H_

#include <pthreadpool.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/impl.h"
#include "core/target.h"
#include "jit/code_arena.h"

namespace amarena {

struct CompileOptions;

// An engine's own way to run a parallel loop: parallel_for(ctx, task,
// task_ctx, n) calls task(task_ctx, i) once for every i < n, on whatever
// threads it likes, and returns when all have returned (the C API's
// amarena_runtime_options.parallel_for).
struct ParallelRunner {
  void (*parallel_for)(void* ctx, void (*task)(void* task_ctx, size_t i),
                       void* task_ctx, size_t n) = nullptr;
  void* ctx = nullptr;
};

class CompiledKernel {
 public:
  using Fn = void (*)(void* const* operands);
  ~CompiledKernel();

  // Runs the kernel on the calling thread (a parallel kernel runs its tiles
  // one after another). Kernels with packing buffers get a per-thread scratch
  // area appended to the operand list; ResourceExhausted when it cannot be
  // allocated (the output is then partly written).
  absl::Status operator()(void* const* operands) const {
    return Run(operands, nullptr);
  }
  // Runs it with `pool` for its parallel loop (nullptr: the calling thread).
  // Every tile runs with the caller's MXCSR (rounding, FTZ and DAZ), set on
  // each pool thread for the tile and restored after it, so the pool and its
  // thread count do not change the arithmetic; exception flags raised on
  // other threads are not reported back. A scratch allocation failing on any
  // thread skips the tiles not yet started and returns ResourceExhausted.
  absl::Status Run(void* const* operands, pthreadpool_t pool) const;
  // The same on an engine's parallel-for (`runner.parallel_for` null: the
  // calling thread).
  absl::Status Run(void* const* operands, const ParallelRunner& runner) const;
  // Bytes of scratch the kernel needs (0 if it packs nothing).
  int64_t scratch_bytes() const { return scratch_bytes_; }
  // A parallel kernel's code is its tasks' (code() of a task kernel).
  const void* code() const;
  size_t code_size() const;
  // All the code: a parallel kernel's tasks together (full tile and
  // remainder tile).
  size_t total_code_size() const;
  const std::string& name() const { return name_; }
  bool parallel() const { return !tasks_.empty(); }

 private:
  friend absl::StatusOr<std::unique_ptr<CompiledKernel>> Compile(
      const ImplNode&, const Target&, std::string, const CompileOptions&);
  friend absl::StatusOr<std::unique_ptr<CompiledKernel>> CompileUnchecked(
      const ImplNode&, const Target&, std::string, const CompileOptions&);
  CompiledKernel() = default;
  jit::CodeBlock code_;
  Fn fn_ = nullptr;
  std::string name_;
  int num_operands_ = 0;
  int64_t scratch_bytes_ = 0;

  // A serial kernel on the calling thread: false when its scratch cannot be
  // allocated (nothing ran).
  bool RunSerial(void* const* operands) const;
  // A parallel root loop: tasks_[0] runs one full tile, tasks_[1] (if any)
  // the remainder tile; operand i moves step_[i] bytes per tile. Returns the
  // scratch bytes it failed to allocate (0: it ran).
  int64_t RunTile(void* const* operands, size_t tile) const;
  std::vector<std::unique_ptr<CompiledKernel>> tasks_;
  std::array<int64_t, 3> step_{};
  int64_t full_tiles_ = 0;
};

struct CompileOptions {
  // General-purpose registers the emitter may use for operand bases and loop
  // counters (14 = all but rsp). Loop counters that find none free live on the
  // stack; tests lower this to exercise that path.
  size_t max_gprs = 14;
  // Elements between consecutive rows (row-major) or columns (column-major)
  // of each operand; 0 = dense (the Spec's own extent). A parallel loop's
  // tiles are compiled with their parent's.
  std::array<int64_t, 3> leading{};
  // Fill a packed B buffer in L1 or L2 as the first tile of its body reads B,
  // where the tree allows (jit/emitter.h, Emitter::FillsOnFirstUse), rather
  // than with a copy ahead of the body. Tests turn it off to compare.
  bool fill_on_first_use = true;
};

absl::StatusOr<std::unique_ptr<CompiledKernel>> Compile(
    const ImplNode& root, const Target& target, std::string name,
    const CompileOptions& options = {});

// A symbol-safe kernel name derived from the Spec text:
// "amarena_matmul_64x64x64_f32".
std::string KernelName(const Spec& s);

}  // namespace amarena

#endif  // AMARENA_JIT_COMPILE_H_
