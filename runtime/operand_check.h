// What a kernel's operands must be, checked in O(operands) before a run: each
// pointer non-null and aligned to its element, each buffer as large as the
// kernel reads or writes, and the output overlapping no input (the kernels
// read inputs after writing parts of the output, so an overlap gives wrong
// numbers, never an error of its own).
//
//   absl::Status ok = CheckOperands(spec, kernel_name, ops, sizes_or_null);
//
// Kernel::Check and the C API (amarena_kernel_run, amarena_kernel_run_sized)
// use it; Kernel::Run does not, so a caller that knows its buffers pays
// nothing.
#ifndef AMARENA_RUNTIME_OPERAND_CHECK_H_
#define AMARENA_RUNTIME_OPERAND_CHECK_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/spec.h"

namespace amarena {

// Bytes operand i of `s` spans (panel padding included), over the whole
// batch: from its first matrix to the end of its last (one matrix when the
// batch shares it); 0 if `s` has no operand i.
int64_t OperandBytes(const Spec& s, int i);

// "a", "b", "c" for a matmul; "out" for zero; "src", "dst" for move.
absl::string_view OperandName(const Spec& s, int i);

// InvalidArgument "cannot run <name>: operand ..." for the first operand that
// is null, misaligned, smaller than OperandBytes (only when `operand_bytes`,
// one size per operand, is given), or (the output) overlapping an input.
absl::Status CheckOperands(const Spec& s, absl::string_view name,
                           void* const* operands, const size_t* operand_bytes);

}  // namespace amarena

#endif  // AMARENA_RUNTIME_OPERAND_CHECK_H_
