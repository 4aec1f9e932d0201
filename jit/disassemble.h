// Text for generated code, one instruction per line (Intel syntax, Zydis):
//
//   absl::StatusOr<std::string> text =
//       Disassemble(kernel.code(), kernel.code_size());
//   // "  0000  push rbx\n  0001  push rbp\n ..."
//
// Zydis is optional at build time: without it every call is
// FailedPrecondition ("amarena was built without Zydis"), and the rest of the
// library is unaffected.
#ifndef AMARENA_JIT_DISASSEMBLE_H_
#define AMARENA_JIT_DISASSEMBLE_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace amarena::jit {

absl::StatusOr<std::string> Disassemble(const void* code, size_t size);

}  // namespace amarena::jit

#endif  // AMARENA_JIT_DISASSEMBLE_H_
