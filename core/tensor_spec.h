// TensorSpec: one operand of a Spec — its shape, element type, memory level,
// layout and, when it lives in vector registers, how many lanes each register
// holds.
//
//   TensorSpec t{.rows = 4, .cols = 16,
//                .aux = {DType::kF32, Level::kVRF, Layout::kRowMajor, 8}};
//   t.Registers() == 8;   // 4 rows x 2 ymm of 8 lanes
#ifndef AMARENA_CORE_TENSOR_SPEC_H_
#define AMARENA_CORE_TENSOR_SPEC_H_

#include <algorithm>
#include <cstdint>

#include "core/dtype.h"

namespace amarena {

inline constexpr int kLineBytes = 64;

// Everything about an operand except its shape (the shape follows from the
// Spec's dims).
//
// Packed layouts: with `pack` = P > 0 the contiguous dimension is cut into
// panels of P elements and each panel is stored whole, one after the other.
// Row-major with P is B as K x NR panels (NR = P): element (i, j) lives at
// (j / P) * rows * P + i * P + j % P. Column-major with P is A as MR x K panels
// (MR = P). The last panel is padded to P.
//
// Interleaved ("VNNI", spelled `pPx2`): with `interleave` = 2 as well
// (row-major and packed only), each panel is stored as ceil(rows / 2) rows of
// P pairs: element (i, j) at (j / P) * R * P + (i / 2) * 2 * P + (j % P) * 2 +
// i % 2, where R = rows rounded up to even. Rows 2r and 2r + 1 of a column are
// adjacent, which is what vdpbf16ps multiplies (a k-pair of B per f32 lane).
// An odd last row's partner is zero, and so is the padding of the last panel.
//
// In sections (spelled `pPsS`, `pPx2sS`; row-major and packed only): with
// `sections` = S (2, 4 or 8) the panels are stored in S sections of G = ceil(NP
// / S) panel slots each (NP panels in all), panel q in slot (q % S) * G + q /
// S. Panels side by side in a tile then lie a section apart in memory rather
// than one panel: S panels read together are S DRAM streams megabytes apart,
// which the prefetchers serve faster than adjacent ones (README, "bf16").
// A tile along the columns is a whole number of groups of S panels, or lies
// within one group. Unused slots (NP not a multiple of S) are zero.
struct TensorAux {
  DType dtype = DType::kF32;
  Level level = Level::kGL;
  Layout layout = Layout::kRowMajor;
  // Lanes per register when level == kVRF (1 = one scalar per xmm register,
  // 8 = f32 ymm); 0 for every memory level.
  uint8_t vector_width = 0;
  uint16_t pack = 0;       // panel width; 0 = plain row- or column-major
  uint8_t interleave = 0;  // 2: rows in pairs within each panel; 0: not
  uint8_t sections = 0;    // S > 1: panels dealt round S sections; 0: not

  friend auto operator<=>(const TensorAux&, const TensorAux&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const TensorAux& a) {
    return H::combine(std::move(h), a.dtype, a.level, a.layout, a.vector_width,
                      a.pack, a.interleave, a.sections);
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
  // 64-byte lines touched by this tile when it is a view of a larger matrix.
  // Plain layouts: each outer row starts a new line (alignment is not
  // modelled). Packed: each panel's rows are adjacent, so a panel is one run.
  // Interleaved: a stored row holds `g` rows of the tile, so rows count in
  // groups of g and each element takes g times its bytes.
  int64_t Lines() const {
    const int64_t g = aux.interleave ? aux.interleave : 1;
    const int64_t es = g * SizeOf(aux.dtype), inner = InnerExtent();
    const int64_t outer = (OuterExtent() + g - 1) / g;
    auto rows_of = [&](int64_t width) {
      return outer * ((width * es + kLineBytes - 1) / kLineBytes);
    };
    if (aux.pack == 0) return rows_of(inner);
    const int64_t p = aux.pack;
    auto panel = [&](int64_t width) {
      int64_t run = (outer * p * es + kLineBytes - 1) / kLineBytes;
      return std::min(rows_of(width), run);
    };
    int64_t lines = (inner / p) * panel(p);
    if (inner % p) lines += panel(inner % p);
    return lines;
  }
  // Whether the tile streams from memory well: packed panels (long runs), or
  // at most kDenseRows rows, which stay within L1's associativity even at a
  // 4 KiB pitch and within what the prefetchers track. A taller tile of a
  // plain matrix is one short run per row: its lines alias in the cache sets
  // and each row opens a stream. The cost model prices the two apart.
  static constexpr int64_t kDenseRows = 8;
  bool Dense() const { return aux.pack != 0 || OuterExtent() <= kDenseRows; }
  // Panels a packed tile's rows span (0 when plain).
  int64_t Panels() const {
    return aux.pack ? (InnerExtent() + aux.pack - 1) / aux.pack : 0;
  }
  // Panel slots in each section (all panels when not in sections), slots a
  // packed tensor stores (its panels, and in sections the unused slots of
  // the last group), and the slot panel q is stored in.
  int64_t SectionSlots() const {
    const int64_t sec = std::max<int64_t>(aux.sections, 1);
    return (Panels() + sec - 1) / sec;
  }
  int64_t PanelSlots() const {
    return SectionSlots() * std::max<int64_t>(aux.sections, 1);
  }
  int64_t PanelSlot(int64_t q) const {
    const int64_t sec = aux.sections;
    return sec > 1 ? (q % sec) * SectionSlots() + q / sec : q;
  }
  // Whether two panels this packed tile reads lie next to each other in
  // memory: it spans two or more panels, more than its sections.
  bool AdjacentPanels() const {
    return Panels() >= 2 && Panels() > std::max<int64_t>(aux.sections, 1);
  }
  // Bytes of each contiguous run of a plain tile (one row, or one column when
  // column-major).
  int64_t RunBytes() const { return InnerExtent() * SizeOf(aux.dtype); }
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
