#include "jit/kernel_scratch.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "jit/emit_check.h"
#include "jit/emitter.h"

namespace amarena::jit {
namespace {

int Measure(Emitter& e, const Spec& s, KernelId id) {
  std::vector<View> views;
  for (int i = 0; i < s.NumOperands(); ++i) {
    const TensorSpec t = s.Operand(i);
    View v;
    if (t.aux.level == Level::kVRF) {
      v.in_regs = true;
      v.rows = t.rows;
      v.cols = t.cols;
      v.vw = t.aux.vector_width;
      for (int64_t r = 0; r < v.rows * v.RegsPerRow(); ++r)
        v.regs.push_back(e.AllocVreg());
    } else {
      v = MemoryView(t);
      v.base = e.AllocGpr();
    }
    views.push_back(std::move(v));
  }
  e.ResetVregPeak();
  const int operands = e.VregsHeld();
  EmitKernel(e, s, id, views);
  AMARENA_JIT_CHECK(e.VregsHeld() == operands);  // every scratch returned
  return e.VregPeak() - operands;
}

}  // namespace

absl::StatusOr<int> EmittedScratchVregs(const Spec& s, KernelId id,
                                        const Target& t) {
  auto failed = [&](absl::string_view what) {
    return absl::InternalError(absl::StrCat("cannot emit ", Info(id).name,
                                            " for ", PrintSpec(s), ": ", what));
  };
  try {
    Emitter e(t);
    return Measure(e, s, id);
  } catch (const EmitError& err) {
    return failed(err.what());
  } catch (const Xbyak::Error& err) {
    return failed(absl::StrCat("Xbyak error ", static_cast<int>(err), " (",
                               err.what(), ")"));
  }
}

}  // namespace amarena::jit
