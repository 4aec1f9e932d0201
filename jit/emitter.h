// The Emitter lowers an Impl tree to x86-64 with Xbyak. Internal to jit/.
//
// Each operand of the Spec being lowered has a View:
//   - in memory: a base GPR plus a constant displacement, and constant
//   row/column
//     strides in bytes (every shape is known when the kernel is generated);
//   - in registers: the vector registers bound to the tile, row-major, `vw`
//   lanes each.
// Loops bump base registers in place and restore them afterwards, so after any
// node is emitted every base register holds what it held before. Register tiles
// are bound when their Alloc is entered and freed on exit (a stack discipline),
// and loops that move a register tile are unrolled, so the VRF budget the
// search respected is exactly the number of registers the emitter hands out.
#ifndef AMARENA_JIT_EMITTER_H_
#define AMARENA_JIT_EMITTER_H_

#include <span>
#include <vector>

#include "core/impl.h"
#include "core/target.h"
#include "xbyak/xbyak.h"

namespace amarena::jit {

struct View {
  bool in_regs = false;
  // Memory.
  Xbyak::Reg64 base;
  int64_t disp = 0;
  int64_t row_stride = 0;  // bytes
  int64_t col_stride = 0;  // bytes
  // Registers: regs[i * RegsPerRow() + j / vw] holds row i, columns j..j+vw-1.
  std::vector<int> regs;
  int64_t rows = 0, cols = 0;
  int vw = 0;

  int64_t RegsPerRow() const { return (cols + vw - 1) / vw; }
  int Reg(int64_t i, int64_t j) const {
    return regs[i * RegsPerRow() + j / vw];
  }
  Xbyak::Address At(int64_t i, int64_t j) const;  // memory view only
  // Sub-tile starting at (r0, c0) with the given extent.
  View Slice(int64_t r0, int64_t c0, int64_t nrows, int64_t ncols) const;
};

class Emitter : public Xbyak::CodeGenerator {
 public:
  explicit Emitter(const Target& target);

  // Emits `void fn(void* const* operands)` for a root Impl whose operands are
  // in GL.
  void EmitFunction(const ImplNode& root);

  // Pools. The budget the search checked guarantees these never run dry; if
  // they do, it is our bug (a CHECK).
  int AllocVreg();
  void FreeVreg(int r);
  Xbyak::Reg64 AllocGpr();
  bool HasFreeGpr() const { return !free_gprs_.empty(); }
  // Hand out at most `n` GPRs (tests use it to exercise stack-slot loop
  // counters).
  void LimitGprs(size_t n);
  void FreeGpr(const Xbyak::Reg64& r);

  const Target& target() const { return target_; }

 private:
  void Lower(const ImplNode& node, std::span<const View> views);
  void LowerLoop(const ImplNode& node, std::span<const View> views);
  void LowerAlloc(const ImplNode& node, std::span<const View> views);
  void LowerBlock(const ImplNode& node, std::span<const View> views);

  Target target_;
  std::vector<int> free_vregs_;
  std::vector<int> free_gprs_;
};

// The per-kernel emitters (emit_kernels.cc), one per KernelId.
void EmitKernel(Emitter& e, const Spec& spec, KernelId id,
                std::span<const View> views);

}  // namespace amarena::jit

#endif  // AMARENA_JIT_EMITTER_H_
