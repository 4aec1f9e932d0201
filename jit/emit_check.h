// Checks inside the generator that become a Status at creation, never an
// abort: the host process asked for a kernel, and a Spec the generator cannot
// emit (or an invariant of ours that does not hold for it) must come back as
// an error from Compile, as oneDNN's JIT_ASSERT does.
//
//   AMARENA_JIT_CHECK(view.col_stride == 4);        // our invariant
//   int32_t d = jit::Disp32(offset);                 // or Unimplemented
//
// Internal to jit/: Compile catches EmitError and returns its status.
#ifndef AMARENA_JIT_EMIT_CHECK_H_
#define AMARENA_JIT_EMIT_CHECK_H_

#include <cstdint>
#include <stdexcept>
#include <string>

#include "absl/status/status.h"

namespace amarena::jit {

class EmitError : public std::runtime_error {
 public:
  EmitError(absl::StatusCode code, const std::string& what)
      : std::runtime_error(what), code_(code) {}
  absl::StatusCode code() const { return code_; }

 private:
  absl::StatusCode code_;
};

[[noreturn]] void EmitCheckFailed(const char* file, int line, const char* cond);

// A displacement for an x86 address: byte offsets up to 2^31 - 1 either way.
// Operands are limited to kMaxOperandBytes (core/spec_text.h), so an offset
// that does not fit means a Spec the checks above let through: Unimplemented
// rather than a silently wrapped address.
int32_t Disp32(int64_t offset);

}  // namespace amarena::jit

#define AMARENA_JIT_CHECK(cond)                                              \
  do {                                                                       \
    if (!(cond)) ::amarena::jit::EmitCheckFailed(__FILE__, __LINE__, #cond); \
  } while (0)

#endif  // AMARENA_JIT_EMIT_CHECK_H_
