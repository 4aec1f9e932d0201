// TensorSpec: one operand of a Spec — its shape, element type, memory level,
// layout and, when it lives in vector registers, how many lanes each register
// holds.
//
//   TensorSpec t{.rows = 4, .cols = 16,
//                .aux = {DType::kF32, Level::kVRF, Order::kRowMajor, 8}};
//   t.Registers() == 8;   // 4 rows x 2 ymm of 8 lanes
#ifndef AMARENA_CORE_TENSOR_SPEC_H_
#define AMARENA_CORE_TENSOR_SPEC_H_

#include <cstdint>
#include <tuple>

#include "core/dtype.h"
#include "core/layout.h"

namespace amarena {

// Everything about an operand except its shape (the shape follows from the
// Spec's dims). The layout's rules are core/layout.h's.
struct TensorAux {
  DType dtype = DType::kF32;
  Level level = Level::kGL;
  Layout layout = Layout();
  // Lanes per register when level == kVRF (1 = one scalar per xmm register,
  // 8 = f32 ymm); 0 for every memory level.
  uint8_t vector_width = 0;

  friend bool operator==(const TensorAux&, const TensorAux&) = default;
  // The total order that breaks exact ties in cost (search/action.h), so the
  // chosen trees depend on it: dtype, level, the layout's order, the vector
  // width, then the layout's panel width, pairs, sections, leading
  // dimension and way offset.
  friend auto operator<=>(const TensorAux& a, const TensorAux& b) {
    return a.Key() <=> b.Key();
  }
  template <typename H>
  friend H AbslHashValue(H h, const TensorAux& a) {
    return H::combine(std::move(h), a.Key());
  }

 private:
  std::tuple<DType, Level, Order, uint8_t, int64_t, int64_t, int64_t,
             int64_t, int>
  Key() const {
    return std::make_tuple(dtype, level, layout.order(), vector_width,
                           layout.panel_width(), layout.row_group(),
                           layout.section_count(), layout.ld(),
                           layout.way_code());
  }
};

struct TensorSpec {
  int64_t rows = 1;
  int64_t cols = 1;
  TensorAux aux;

  int64_t Elements() const { return rows * cols; }
  // The layout's rules for this shape (core/layout.h).
  const Layout& layout() const { return aux.layout; }
  int64_t InnerExtent() const { return layout().InnerExtent(rows, cols); }
  int64_t OuterExtent() const { return layout().OuterExtent(rows, cols); }
  int64_t Offset(int64_t i, int64_t j) const {
    return layout().Offset(rows, cols, i, j);
  }
  int64_t StoredElements() const { return layout().StoredElements(rows, cols); }
  int64_t StoredBytes() const { return StoredElements() * SizeOf(aux.dtype); }
  int64_t Lines() const {
    return layout().Lines(rows, cols, SizeOf(aux.dtype));
  }
  bool Dense() const { return layout().Dense(rows, cols, SizeOf(aux.dtype)); }
  int64_t RowsOnOneSet() const {
    return layout().RowsOnOneSet(rows, cols, SizeOf(aux.dtype));
  }
  int64_t Panels() const { return layout().Panels(rows, cols); }
  bool AdjacentPanels() const { return layout().AdjacentPanels(rows, cols); }
  int64_t RunBytes() const {
    return layout().RunBytes(rows, cols, SizeOf(aux.dtype));
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
