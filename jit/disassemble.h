// Text for generated code, one instruction per line (Intel syntax, Zydis):
//
//   std::string text = Disassemble(kernel.code(), kernel.code_size());
//   // "  0000  push rbx\n  0001  push rbp\n ..."
#ifndef AMARENA_JIT_DISASSEMBLE_H_
#define AMARENA_JIT_DISASSEMBLE_H_

#include <cstddef>
#include <string>

namespace amarena::jit {

std::string Disassemble(const void* code, size_t size);

}  // namespace amarena::jit

#endif  // AMARENA_JIT_DISASSEMBLE_H_
