// TensorSpec: one operand of a Spec — its shape, element type, memory level,
// layout and, when it lives in vector registers, how many lanes each register
// holds.
//
//   TensorSpec t{.rows = 4, .cols = 16,
//                .aux = {DType::kF32, Level::kVRF, Layout::kRowMajor, 8}};
//   t.Registers() == 8;   // 4 rows x 2 ymm of 8 lanes
#ifndef AMARENA_CORE_TENSOR_SPEC_H_
#define AMARENA_CORE_TENSOR_SPEC_H_

#include <cstdint>

#include "core/dtype.h"

namespace amarena {

inline constexpr int kLineBytes = 64;

// Everything about an operand except its shape (the shape follows from the
// Spec's dims).
struct TensorAux {
  DType dtype = DType::kF32;
  Level level = Level::kGL;
  Layout layout = Layout::kRowMajor;
  // Lanes per register when level == kVRF (1 = one scalar per xmm register,
  // 8 = f32 ymm); 0 for every memory level.
  uint8_t vector_width = 0;

  friend bool operator==(const TensorAux&, const TensorAux&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const TensorAux& a) {
    return H::combine(std::move(h), a.dtype, a.level, a.layout, a.vector_width);
  }
};

struct TensorSpec {
  int64_t rows = 1;
  int64_t cols = 1;
  TensorAux aux;

  int64_t Elements() const { return rows * cols; }
  // Extent of the dimension that is contiguous in memory, and of the other one.
  int64_t InnerExtent() const {
    return aux.layout == Layout::kRowMajor ? cols : rows;
  }
  int64_t OuterExtent() const {
    return aux.layout == Layout::kRowMajor ? rows : cols;
  }
  // 64-byte lines touched by this tile when it is a view of a larger matrix:
  // each outer row starts a new line (alignment is not modelled).
  int64_t Lines() const {
    int64_t inner_bytes = InnerExtent() * SizeOf(aux.dtype);
    return OuterExtent() * ((inner_bytes + kLineBytes - 1) / kLineBytes);
  }
  // Registers a VRF tensor occupies: row-major, each row padded to whole
  // registers.
  int Registers() const {
    int vw = aux.vector_width;
    return static_cast<int>(rows * ((cols + vw - 1) / vw));
  }
  // Units this tensor costs in its level's budget: registers or lines.
  int64_t BudgetUnits() const {
    return aux.level == Level::kVRF ? Registers() : Lines();
  }
};

}  // namespace amarena

#endif  // AMARENA_CORE_TENSOR_SPEC_H_
