#include "core/dtype.h"

#include <cstdio>
#include <cstdlib>

#include "core/status_macros.h"

namespace amarena {
namespace internal {
void CheckFailed(const char* file, int line, const char* cond) {
  std::fprintf(stderr, "amarena internal error: %s:%d: CHECK(%s) failed\n",
               file, line, cond);
  std::abort();
}
void CheckOkFailed(const char* file, int line, const char* expr,
                   const absl::Status& s) {
  std::fprintf(stderr, "amarena: %s:%d: %s failed: %s\n", file, line, expr,
               s.ToString().c_str());
  std::abort();
}
}  // namespace internal

absl::string_view Name(DType t) { return t == DType::kF32 ? "f32" : "bf16"; }

std::optional<DType> ParseDType(absl::string_view s) {
  if (s == "f32") return DType::kF32;
  if (s == "bf16") return DType::kBF16;
  return std::nullopt;
}

absl::string_view Name(Level l) {
  switch (l) {
    case Level::kGL:
      return "gl";
    case Level::kL3:
      return "l3";
    case Level::kL2:
      return "l2";
    case Level::kL1:
      return "l1";
    case Level::kVRF:
      return "vrf";
  }
  return "?";
}

std::optional<Level> ParseLevel(absl::string_view s) {
  if (s == "gl") return Level::kGL;
  if (s == "l3") return Level::kL3;
  if (s == "l2") return Level::kL2;
  if (s == "l1") return Level::kL1;
  if (s == "vrf") return Level::kVRF;
  return std::nullopt;
}

}  // namespace amarena
