#include "jit/compile.h"

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "jit/emitter.h"

namespace amarena {

CompiledKernel::~CompiledKernel() = default;

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
  k->name_ = std::move(name);
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
