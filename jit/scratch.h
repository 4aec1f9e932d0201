// The scratch area a kernel's packing buffers live in: one per thread, shared
// by every kernel the thread runs (a kernel's buffers are dead once it
// returns), between two PROT_NONE guard pages.
//
//   void* s = ThreadScratch(kernel_scratch_bytes);   // nullptr: out of memory
//
// The area handed out ends flush against the guard page after it (or, for
// tests, starts flush against the one before it), so generated code that
// writes past its buffers faults at once instead of corrupting the heap.
#ifndef AMARENA_JIT_SCRATCH_H_
#define AMARENA_JIT_SCRATCH_H_

#include <cstdint>

namespace amarena::jit {

// `bytes` (a multiple of 64) of scratch for the calling thread, 64-byte
// aligned; nullptr if it cannot be mapped.
void* ThreadScratch(int64_t bytes);

// Where ThreadScratch places the bytes it hands out: ending at the guard page
// after them (the default) or starting at the guard page before them. Tests
// run kernels both ways; process-wide, set before kernels run.
enum class ScratchPlacement { kBack, kFront };
void SetScratchPlacementForTesting(ScratchPlacement p);

}  // namespace amarena::jit

#endif  // AMARENA_JIT_SCRATCH_H_
