#include "jit/compile.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/spec_text.h"
#include "jit/emitter.h"
#include "jit/publish.h"

namespace amarena {

CompiledKernel::~CompiledKernel() = default;

namespace {

// One growing, 64-byte aligned scratch area per thread, shared by every kernel
// that thread runs (a kernel's buffers are dead once it returns).
void* ThreadScratch(int64_t bytes) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> area;
  thread_local int64_t size = 0;
  if (size < bytes) {
    size_t rounded = (static_cast<size_t>(bytes) + 4095) / 4096 * 4096;
    area.reset(std::aligned_alloc(4096, rounded));
    AMARENA_CHECK(area != nullptr);
    size = static_cast<int64_t>(rounded);
  }
  return area.get();
}

}  // namespace

void CompiledKernel::operator()(void* const* operands) const {
  if (scratch_bytes_ == 0) return fn_(operands);
  void* with_scratch[4];
  AMARENA_CHECK(num_operands_ < 4);
  for (int i = 0; i < num_operands_; ++i) with_scratch[i] = operands[i];
  with_scratch[num_operands_] = ThreadScratch(scratch_bytes_);
  fn_(with_scratch);
}

const void* CompiledKernel::code() const { return gen_->getCode(); }
size_t CompiledKernel::code_size() const { return gen_->getSize(); }

absl::StatusOr<std::unique_ptr<CompiledKernel>> Compile(
    const ImplNode& root, const Target& target, std::string name,
    const CompileOptions& options) {
  for (int i = 0; i < root.spec.NumOperands(); ++i)
    if (root.spec.aux[i].level != Level::kGL)
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot compile ", PrintSpec(root.spec), ": operand ", i, " is in ",
          Name(root.spec.aux[i].level), ", must be in gl"));
  std::unique_ptr<CompiledKernel> k(new CompiledKernel);
  try {
    k->gen_ = std::make_unique<jit::Emitter>(target);
    k->gen_->LimitGprs(options.max_gprs);
    k->gen_->EmitFunction(root);
    k->gen_->readyRE();  // resolve labels, then flip the pages from RW to RX
  } catch (const Xbyak::Error& e) {
    int code = static_cast<int>(e);
    std::string what =
        absl::StrCat("cannot compile ", PrintSpec(root.spec), ": Xbyak error ",
                     code, " (", e.what(), ")");
    if (code == Xbyak::ERR_CANT_ALLOC || code == Xbyak::ERR_CODE_IS_TOO_BIG)
      return absl::ResourceExhaustedError(what);
    return absl::InternalError(what);
  }
  k->fn_ = k->gen_->getCode<CompiledKernel::Fn>();
  k->num_operands_ = root.spec.NumOperands();
  k->scratch_bytes_ = k->gen_->scratch_bytes();
  k->name_ = std::move(name);
  jit::PublishCode(k->name_, k->gen_->getCode(), k->gen_->getSize());
  return k;
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
