// The scratch vector registers a kernel's emitter actually takes, for tests
// that hold the catalogue (core/kernels.h) to its emitters.
//
//   absl::StatusOr<int> used = jit::EmittedScratchVregs(leaf, id, target);
//   EXPECT_LE(*used, Info(id).scratch_vregs(leaf, target));
#ifndef AMARENA_JIT_KERNEL_SCRATCH_H_
#define AMARENA_JIT_KERNEL_SCRATCH_H_

#include "absl/status/statusor.h"
#include "core/kernels.h"
#include "core/spec.h"
#include "core/target.h"

namespace amarena::jit {

// Emits kernel `id` alone for `s`, a Spec it applies to: each memory operand
// laid out as MemoryView lays out its own tile, at a base register of its
// own; each register operand bound to registers of its own. Returns the most
// vector registers the emitter held at once beyond the operands' (the code
// is thrown away), or the emitter's error as a Status.
absl::StatusOr<int> EmittedScratchVregs(const Spec& s, KernelId id,
                                        const Target& t);

}  // namespace amarena::jit

#endif  // AMARENA_JIT_KERNEL_SCRATCH_H_
