#include "jit/emit_check.h"

#include "absl/strings/str_cat.h"

namespace amarena::jit {

void EmitCheckFailed(const char* file, int line, const char* cond) {
  throw EmitError(absl::StatusCode::kInternal,
                  absl::StrCat("generator check failed at ", file, ":", line,
                               ": ", cond, " (a bug in amarena)"));
}

int32_t Disp32(int64_t offset) {
  if (offset != static_cast<int32_t>(offset))
    throw EmitError(absl::StatusCode::kUnimplemented,
                    absl::StrCat("a byte offset is ", offset,
                                 ", must fit in 32 bits (operands of at most "
                                 "2 GiB)"));
  return static_cast<int32_t>(offset);
}

}  // namespace amarena::jit
