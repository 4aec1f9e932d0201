// Kernel: a compiled program for one Spec, run, checked and fed packed
// weights (the class is declared in runtime/runtime.h beside the Runtime that
// makes it).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "jit/compile.h"
#include "runtime/operand_check.h"
#include "runtime/pack.h"
#include "runtime/runtime.h"

namespace amarena {

absl::string_view Name(KernelSource s) {
  switch (s) {
    case KernelSource::kSearch:
      return "search";
    case KernelSource::kDatabase:
      return "database";
    case KernelSource::kProvisional:
      return "provisional";
    case KernelSource::kSchedule:
      return "schedule";
  }
  return "?";
}

Kernel::Kernel(Spec spec, Target target, ImplPtr impl,
               std::unique_ptr<CompiledKernel> code, double synth_ms,
               double jit_ms, int64_t specs_solved, KernelSource source,
               SharedPool pool, ParallelRunner runner)
    : spec_(std::move(spec)),
      target_(target),
      impl_(std::move(impl)),
      code_(std::move(code)),
      synth_ms_(synth_ms),
      jit_ms_(jit_ms),
      specs_solved_(specs_solved),
      source_(source),
      pool_(std::move(pool)),
      runner_(runner) {}

Kernel::~Kernel() = default;

absl::Status Kernel::Run(void* const* operands) const {
  if (runner_.parallel_for != nullptr) return code_->Run(operands, runner_);
  return code_->Run(operands, pool_.get());
}

void Kernel::ForEach(size_t n, absl::FunctionRef<void(size_t)> task) const {
  void (*call)(void*, size_t) = [](void* t, size_t i) {
    (*static_cast<absl::FunctionRef<void(size_t)>*>(t))(i);
  };
  if (runner_.parallel_for != nullptr) {
    runner_.parallel_for(runner_.ctx, call, &task, n);
  } else {
    // A null pool runs the tasks on the calling thread.
    pthreadpool_parallelize_1d(pool_.get(), call, &task, n, /*flags=*/0);
  }
}
absl::Status Kernel::Check(void* const* operands,
                           const size_t* operand_bytes) const {
  return CheckOperands(spec_, name(), operands, operand_bytes);
}
int64_t Kernel::OperandBytes(int i) const {
  return amarena::OperandBytes(spec_, i);
}

absl::Status Kernel::PackB(const void* src, PackSource source, int64_t src_ld,
                           void* out, size_t out_bytes) const {
  auto bad = [&](auto&&... what) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot pack B for ", PrintSpec(spec_), ": ", what...));
  };
  if (!spec_.IsMatmul()) return bad("the kernel has no B, must be a matmul");
  if (src == nullptr) return bad("src is null");
  if (out == nullptr) return bad("out is null");
  if (spec_.b > 1 && !spec_.SharedB())
    return bad("the kernel reads a B per batch element (", spec_.b,
               "), must share one B (sb=0): packing a batch of B is not "
               "implemented");
  const TensorSpec b = spec_.Operand(1);
  const bool same = source == PackSource::kSame;
  if (!same && source != PackSource::kTransposed)
    return bad("source is ", static_cast<int>(source),
               ", must be K x N or N x K");
  const int64_t row = same ? b.cols : b.rows;  // elements a source row holds
  if (src_ld < row)
    return bad("src_ld is ", src_ld, ", must be at least ", row, " (",
               same ? "N, for a K x N source" : "K, for an N x K source", ")");
  const int64_t es = SizeOf(b.aux.dtype);
  const int64_t need = OperandBytes(1);
  if (out_bytes < static_cast<size_t>(need))
    return bad("out has ", out_bytes, " bytes, must have at least ", need);
  const int64_t src_bytes =
      ((same ? b.rows : b.cols) - 1) * src_ld * es + row * es;
  const auto* s0 = static_cast<const char*>(src);
  const auto* o0 = static_cast<const char*>(out);
  if (s0 < o0 + need && o0 < s0 + src_bytes)
    return bad("out overlaps src, must not");
  auto spread = [&](size_t n, absl::FunctionRef<void(size_t)> task) {
    ForEach(n, task);
  };
  const ParallelFor parallel = spread;
  PackMatrix({.rows = b.rows,
              .cols = b.cols,
              .es = es,
              .src = src,
              .source = source,
              .src_ld = src_ld},
             b.aux.layout, out,
             pool_ != nullptr || runner_.parallel_for != nullptr ? &parallel
                                                                 : nullptr);
  return absl::OkStatus();
}
const std::string& Kernel::name() const { return code_->name(); }
size_t Kernel::code_size() const { return code_->code_size(); }

}  // namespace amarena
