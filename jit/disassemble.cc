#include "jit/disassemble.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

#if AMARENA_HAVE_ZYDIS
#include <Zydis/Zydis.h>
#endif

namespace amarena::jit {

absl::StatusOr<std::string> Disassemble(const void* code, size_t size) {
#if AMARENA_HAVE_ZYDIS
  std::string out;
  const auto* bytes = static_cast<const uint8_t*>(code);
  size_t offset = 0;
  ZydisDisassembledInstruction insn;
  while (offset < size) {
    if (!ZYAN_SUCCESS(ZydisDisassembleIntel(ZYDIS_MACHINE_MODE_LONG_64, offset,
                                            bytes + offset, size - offset,
                                            &insn))) {
      absl::StrAppendFormat(&out, "  %04x  (undecodable byte %02x)\n", offset,
                            bytes[offset]);
      ++offset;
      continue;
    }
    absl::StrAppendFormat(&out, "  %04x  %s\n", offset, insn.text);
    offset += insn.info.length;
  }
  return out;
#else
  (void)code;
  (void)size;
  return absl::FailedPreconditionError(
      "cannot disassemble: amarena was built without Zydis (install it, e.g. "
      "libzydis-dev, and reconfigure)");
#endif
}

}  // namespace amarena::jit
