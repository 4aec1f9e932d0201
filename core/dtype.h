// Element types and memory levels: the small enums every Spec is made of
// (layouts are core/layout.h's).
//
//   DType::kF32, SizeOf(DType::kBF16) == 2, ParseDType("f32")
//   Level::kGL (DRAM, "global") < kL3 < kL2 < kL1 < kVRF (vector registers)
#ifndef AMARENA_CORE_DTYPE_H_
#define AMARENA_CORE_DTYPE_H_

#include <bit>
#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace amarena {

enum class DType : uint8_t { kF32, kBF16 };

inline int SizeOf(DType t) { return t == DType::kF32 ? 4 : 2; }
absl::string_view Name(DType t);
std::optional<DType> ParseDType(absl::string_view s);

// A bf16 is the top half of the f32 of the same value: widening is exact;
// narrowing rounds to nearest even, as the kernels do (NaN payloads aside).
inline float F32FromBf16(uint16_t v) {
  return std::bit_cast<float>(static_cast<uint32_t>(v) << 16);
}
inline uint16_t Bf16FromF32(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

// Memory levels from slowest to fastest. A cache level (L3, L2, L1) holds
// either "views" of data that lives farther out (moving there costs traffic but
// emits no code) or buffers the kernel allocates and fills (packing copies).
// VRF is the vector register file, counted in registers; the caches and GL are
// counted in 64-byte lines.
enum class Level : uint8_t { kGL, kL3, kL2, kL1, kVRF };
inline constexpr int kNumLevels = 5;
inline constexpr Level kCacheLevels[] = {Level::kL3, Level::kL2, Level::kL1};

inline bool IsCache(Level l) {
  return l == Level::kL3 || l == Level::kL2 || l == Level::kL1;
}
// Whether `a` is strictly closer to the core than `b`.
inline bool Faster(Level a, Level b) {
  return static_cast<int>(a) > static_cast<int>(b);
}

absl::string_view Name(Level l);
std::optional<Level> ParseLevel(absl::string_view s);

}  // namespace amarena

#endif  // AMARENA_CORE_DTYPE_H_
