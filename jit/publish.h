// Making generated code visible to tools, as the environment asks:
//   AMARENA_JIT_PROFILE=perf  append "<start> <size> <name>" to
//                             /tmp/perf-<pid>.map, so `perf report` names
//                             each kernel;
//   AMARENA_JIT_DUMP=DIR      write each kernel's bytes to DIR/<name>.bin
//                             (disassemble with `objdump -D -b binary -mi386
//                             -Mx86-64 FILE`).
// Failures to write are reported once on stderr and never stop a kernel.
//
//   PublishCode("amarena_matmul_64x64x64_f32", code, size);
#ifndef AMARENA_JIT_PUBLISH_H_
#define AMARENA_JIT_PUBLISH_H_

#include <cstddef>
#include <string>

namespace amarena::jit {

void PublishCode(const std::string& name, const void* code, size_t size);

}  // namespace amarena::jit

#endif  // AMARENA_JIT_PUBLISH_H_
