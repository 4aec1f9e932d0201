#include "runtime/operand_check.h"

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/spec.h"

namespace amarena {

int64_t OperandBytes(const Spec& s, int i) {
  if (i < 0 || i >= s.NumOperands()) return 0;
  return s.BatchedElements(i) * SizeOf(s.aux[i].dtype);
}

absl::string_view OperandName(const Spec& s, int i) {
  if (s.IsMatmul()) return i == 0 ? "a" : i == 1 ? "b" : "c";
  if (s.NumOperands() == 1) return "out";
  return i == 0 ? "src" : "dst";
}

namespace {

std::string Range(uintptr_t p, int64_t bytes) {
  return absl::StrCat("[0x", absl::Hex(p), ", 0x",
                      absl::Hex(p + static_cast<uintptr_t>(bytes)), ")");
}

// [p, p + pn) and [q, q + qn) share a byte (no overflow near the top of the
// address space: only differences are formed).
bool Overlap(uintptr_t p, int64_t pn, uintptr_t q, int64_t qn) {
  return p >= q ? p - q < static_cast<uintptr_t>(qn)
                : q - p < static_cast<uintptr_t>(pn);
}

}  // namespace

absl::Status CheckOperands(const Spec& s, absl::string_view name,
                           void* const* operands, const size_t* operand_bytes) {
  auto fail = [&](int i, auto&&... what) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot run ", name, ": operand ", i, " (",
                     OperandName(s, i), ") ", what...));
  };
  if (operands == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot run ", name, ": operands is null, must point at ",
                     s.NumOperands(), " operand pointers"));
  for (int i = 0; i < s.NumOperands(); ++i) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(operands[i]);
    const int64_t need = OperandBytes(s, i);
    const int64_t align = SizeOf(s.aux[i].dtype);
    if (p == 0) return fail(i, "is null, must point at ", need, " bytes");
    if (p % static_cast<uintptr_t>(align) != 0)
      return fail(i, "is at 0x", absl::Hex(p), ", must be ", align,
                  "-byte aligned");
    if (operand_bytes != nullptr &&
        operand_bytes[i] < static_cast<size_t>(need))
      return fail(i, "is ", operand_bytes[i], " bytes, must be at least ",
                  need);
  }
  const int out = s.OutputIndex();
  const uintptr_t o = reinterpret_cast<uintptr_t>(operands[out]);
  const int64_t on = OperandBytes(s, out);
  for (int i = 0; i < s.NumOperands(); ++i) {
    if (i == out) continue;
    const uintptr_t p = reinterpret_cast<uintptr_t>(operands[i]);
    const int64_t pn = OperandBytes(s, i);
    if (Overlap(o, on, p, pn))
      return fail(out, "at ", Range(o, on), " overlaps operand ", i, " (",
                  OperandName(s, i), ") at ", Range(p, pn),
                  ", must not overlap an input");
  }
  return absl::OkStatus();
}

}  // namespace amarena
