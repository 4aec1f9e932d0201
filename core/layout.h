// Layout: how a matrix's elements are placed in memory, as one value. It owns
// every rule that follows from the placement: the address of element (i, j),
// the elements a matrix stores, the lines and runs a tile touches, the tile
// multiples a tiling must respect, the affine description the JIT addresses a
// tile with, the text form, and the copy from one layout into another. A new
// layout (A panels, leading dimensions, a batch stride) is added here.
//
//   Layout b = Layout::Panels(Order::kRowMajor, 32).Paired();   // "p32x2"
//   b.Offset(/*rows=*/7, /*cols=*/40, 3, 33);   // where B[3][33] lives
//   b.StoredElements(7, 40);                    // 2 panels of 8 x 32
//   b.TileMultiple(Axis::kCols, 40);            // 32: whole panels
//
// The kinds (P = panel width):
//   row-major, column-major (plain): (i, j) at i * cols + j, or j * rows + i;
//     with a leading dimension ld (WithLd), at i * ld + j, or j * ld + i: the
//     matrix is a view of a wider one (a weight slice, a KV cache), its outer
//     rows ld elements apart. The elements between them are not the
//     matrix's: nothing reads or writes them.
//   `pP`: the contiguous dimension cut into panels of P elements, each stored
//     whole, one after the other, the last padded to P. Row-major is B as
//     K x NR panels: (i, j) at (j / P) * rows * P + i * P + j % P; column-major
//     is A as MR x K panels: at (i / P) * cols * P + j * P + i % P.
//   `pPx2` (row-major only): each panel stored as ceil(rows / 2) rows of P
//     k-pairs: (i, j) at (j / P) * R * P + (i / 2) * 2P + (j % P) * 2 + i % 2,
//     R = rows rounded up to even. Rows 2r and 2r + 1 of a column are
//     adjacent, which is what vdpbf16ps multiplies (a k-pair of B per f32
//     lane). An odd last row's partner is zero, and so is the last panel's
//     padding.
//   `pPsS`, `pPx2sS` (row-major only; S = 2, 4 or 8): the NP panels dealt
//     round S sections of G = ceil(NP / S) panel slots each, panel q in slot
//     (q % S) * G + q / S. Panels side by side in a tile then lie a section
//     apart rather than one panel: S panels read together are S DRAM streams
//     megabytes apart, which the prefetchers serve faster than adjacent ones
//     (README, "bf16"). A tile along the columns is a whole number of groups
//     of S panels, or lies within one group. Unused slots are zero.
//
// Functions taking (rows, cols) describe a matrix, or a tile of a larger one,
// of that shape in this layout.
#ifndef AMARENA_CORE_LAYOUT_H_
#define AMARENA_CORE_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace amarena {

inline constexpr int kLineBytes = 64;
// Widest panel a packed layout may name, and most sections (a power of two).
inline constexpr int64_t kMaxPack = 1024;
inline constexpr int64_t kMaxSections = 8;

// Which dimension is contiguous: the columns of a row (row-major) or the rows
// of a column.
enum class Order : uint8_t { kRowMajor, kColMajor };
absl::string_view Name(Order o);                       // "row", "col"
std::optional<Order> ParseOrder(absl::string_view s);  // inverse of Name

// The axes of a matrix (kNone: neither).
enum class Axis : uint8_t { kNone, kRows, kCols };

// A tile's addressing as the JIT emits it: the offset of (i, j) is affine
// within a panel, with constant strides, and panels (and sections of panels)
// add constant strides of their own. Units are whatever Layout::Affine was
// given as the element size (bytes for the JIT).
struct AffineView {
  int64_t disp = 0;  // offset of (0, 0)
  int64_t row_stride = 0;
  int64_t col_stride = 0;
  // Packed: the axis cut into panels, the panel width and the panel stride.
  Axis panel_axis = Axis::kNone;
  int64_t panel = 0;
  int64_t panel_stride = 0;
  // Rows in k-pairs: rows 2r and 2r + 1 lie pair_offset apart and row_stride
  // is the stride of pairs; 0 = rows not paired. Slices and steps along the
  // rows then start on even rows.
  int64_t pair_offset = 0;
  // Panels in sections when the view spans more than one group of S panels:
  // panel q lies at (q / S) * panel_stride + (q % S) * section_stride. A view
  // within one group has panel_stride = section_stride and section_count =
  // 0. Slices and steps along the panels then take whole groups.
  int64_t section_count = 0;
  int64_t section_stride = 0;
  // Packed: one whole panel, the contiguous run its rows form; kept when a
  // slice within one panel turns to plain strides (prefetching keys on it).
  int64_t panel_run = 0;

  int64_t Offset(int64_t i, int64_t j) const;
  // The sub-tile at (r0, c0) of nrows x ncols; nullopt when it is not
  // addressable affinely: it straddles a panel (or a group of sections)
  // boundary without starting on one, or starts on an odd row of pairs.
  std::optional<AffineView> Slice(int64_t r0, int64_t c0, int64_t nrows,
                                  int64_t ncols) const;
  // What to add to the origin to move `tile` rows (Axis::kRows) or columns;
  // nullopt when `tile` is not a multiple the layout allows.
  std::optional<int64_t> Step(Axis axis, int64_t tile) const;

  friend bool operator==(const AffineView&, const AffineView&) = default;
};

class Layout {
 public:
  // Plain row- or column-major (implicit: an Order is a plain layout).
  constexpr Layout(Order order = Order::kRowMajor) : order_(order) {}
  // Panels of `width` (1 to kMaxPack) elements along the contiguous dimension.
  static Layout Panels(Order order, int64_t width);
  // The same panels with rows in k-pairs (row-major panels only).
  Layout Paired() const;
  // The same panels dealt round `count` sections (row-major panels; 2, 4, 8).
  Layout InSections(int64_t count) const;
  // The same panels with the other order (panels only, not paired nor in
  // sections), or plain in `order` (with the same leading dimension).
  Layout WithOrder(Order order) const;
  // Plain with outer rows `ld` elements apart (0: dense, inner-extent
  // apart); ld is at most INT32_MAX. Only plain layouts have one.
  Layout WithLd(int64_t ld) const;

  // Parses the panel part of the text, "p32", "p32x2", "p32s2", "p32x2s4",
  // into row-major panels. Errors are InvalidArgument, their message saying
  // what is wrong ("panel width is 0, must be 1 to 1024").
  static absl::StatusOr<Layout> ParsePanels(absl::string_view text);
  // "wayN", N an even number of bytes below 4096: a tile's way offset.
  static absl::StatusOr<int64_t> ParseWayOffset(absl::string_view text);
  // The panel part of the text ("" when plain), and the whole layout as Spec
  // text writes it, comma-separated, row-major unsaid: "", "col", "p32",
  // "col,p16", "p32x2s2"; a tile's way offset follows as "way12" (each outer
  // row starts 12 bytes further into a 4 KiB way than the one before;
  // ParseWayOffset reads it back).
  std::string PanelText() const;
  std::string Text() const;

  Order order() const { return order_; }
  bool row_major() const { return order_ == Order::kRowMajor; }
  bool packed() const { return panel_ != 0; }
  bool paired() const { return pairs_ != 0; }
  bool in_sections() const { return sections_ > 1; }
  // Panel width (0 when plain), rows per stored row (2 when paired, else 1),
  // and sections (0 when not in sections).
  int64_t panel_width() const { return panel_; }
  int64_t row_group() const { return pairs_ ? pairs_ : 1; }
  int64_t section_count() const { return sections_; }
  // Leading dimension: elements from one outer row to the next (0: dense).
  int64_t ld() const { return ld_; }
  // Elements from one outer row of a plain (rows x cols) matrix to the next.
  int64_t Pitch(int64_t rows, int64_t cols) const {
    return ld_ ? ld_ : InnerExtent(rows, cols);
  }
  // Whether vectors of `lanes` consecutive elements along the contiguous
  // dimension never straddle two panels (always, when plain).
  bool WholeVectors(int64_t lanes) const { return panel_ % lanes == 0; }
  // Whether an elementwise walk visits both layouts' elements in the same
  // direction: same order, pairs alike.
  bool SameWalk(const Layout& o) const {
    return order_ == o.order_ && pairs_ == o.pairs_;
  }

  // The canonical layout of a (rows x cols) matrix of `es`-byte elements in
  // memory: 1 x 1 is plain row-major; sections need two panels or more; a
  // packed matrix that is a single run of at most one panel (one outer row,
  // not paired) is plain; a leading dimension equal to the inner extent, or
  // of one outer row, is none (dense); a stored way offset only above
  // kDenseRows outer rows, a stored alignment only where it differs from
  // the own pitch's (UnalignedRows).
  // `one_set`: a tile of at most kDenseRows outer rows keeps whether they
  // all start on one set (RowsOnOneSet), where its own pitch says otherwise;
  // without it, such a tile keeps no way offset.
  Layout Canonical(int64_t rows, int64_t cols, int64_t es,
                   bool one_set = false) const {
    Layout l = *this;
    l.Canonicalize(rows, cols, es, one_set);
    return l;
  }
  // The same, in place (Spec's Canonical: a cold search makes millions).
  void Canonicalize(int64_t rows, int64_t cols, int64_t es,
                    bool one_set = false);

  // --- Addressing ----------------------------------------------------------
  // Element offset of (i, j) in a (rows x cols) matrix.
  int64_t Offset(int64_t rows, int64_t cols, int64_t i, int64_t j) const;
  // Elements a (rows x cols) matrix occupies: panel padding, rows padded to
  // whole pairs and unused section slots included. With a leading dimension,
  // from the first element to the last: (outer - 1) * ld + inner (the last
  // outer row ends the matrix; nothing after it is needed).
  int64_t StoredElements(int64_t rows, int64_t cols) const;

  // --- Contiguity ----------------------------------------------------------
  // Extent of the contiguous dimension, and of the other one.
  int64_t InnerExtent(int64_t rows, int64_t cols) const {
    return row_major() ? cols : rows;
  }
  int64_t OuterExtent(int64_t rows, int64_t cols) const {
    return row_major() ? rows : cols;
  }
  // 64-byte lines touched by a tile of `es`-byte elements when it is a view
  // of a larger matrix. Plain: each outer row starts a new line (the line an
  // unaligned row spills into is not counted), so a leading dimension
  // changes nothing here. Packed: each panel's rows are adjacent, so a panel
  // is one run. Paired: a stored row holds 2 rows of the tile, so rows count in
  // pairs and each element takes twice its bytes.
  int64_t Lines(int64_t rows, int64_t cols, int64_t es) const;
  // Whether the tile streams from memory well: packed panels (long runs), or
  // a plain tile whose lines fall on no L1 set more than kDenseRows times
  // (the ways every x86 L1 this project meets has at least). The outer rows
  // of a plain tile start a pitch apart, so which sets they fall on depends
  // on that pitch modulo a 4 KiB way (WayOffset), and is counted line by
  // line: at a multiple of 4 KiB every row starts on the same set and at
  // most kDenseRows rows fit; at 512 B rows start on 8 sets, 8 apart, and
  // 64 rows of up to 8 lines do; at 4 KiB + 12 B (2051 floats) the rows
  // drift a line every 5 or 6 rows, so 12 rows of 1 KiB put 12 lines on a
  // set, although the pitch's powers of two would have them spread over
  // all 64. A tile with more than 1 / kOverflowShare of its lines beyond
  // kDenseRows on their sets does not fit: it aliases in the sets and opens
  // a stream per row, and is priced strided. (Fewer are what the uneven
  // starts of a pitch that spreads the rows leave: 128 rows of 256 B at
  // 1329 floats leave 14 of their 512 lines beyond 8 on their sets, and
  // price as at 1040 floats, where every set holds 8.)
  static constexpr int64_t kDenseRows = 8;
  static constexpr int64_t kOverflowShare = 16;
  bool Dense(int64_t rows, int64_t cols, int64_t es) const;
  // The outer rows of a plain tile whose rows all start on one L1 set (way
  // offset 0: a pitch that is a multiple of 4 KiB), 2 or more; 0 otherwise.
  // Each of its lines shares its set with the same line of every other row.
  int64_t RowsOnOneSet(int64_t rows, int64_t cols, int64_t es) const;

  // --- Pitch, as the cache sets see it -------------------------------------
  // A tile of a plain matrix keeps the matrix's pitch (the JIT addresses it
  // through its parent's view), but its Spec forgets the pitch so that
  // problems with and without a leading dimension share sub-problems. What
  // the cost model needs of the pitch is kept instead: its *way offset*, the
  // pitch in bytes modulo a 4 KiB L1 way (every L1 this project meets has
  // 64 sets of 64-byte lines), where each outer row starts relative to the
  // one before. A matrix that is not a tile (a Spec's own operand, a
  // buffer) has none stored and uses its own pitch.
  static constexpr int kWayBytes = 4096;
  int64_t WayOffset(int64_t rows, int64_t cols, int64_t es) const;
  // 1 + the stored way offset in 2-byte units (up to 2048: 12 bits); 0 when
  // none is stored.
  int way_code() const { return way_; }
  // This layout as a tile of a (rows x cols) matrix in it sees it: no leading
  // dimension, and the matrix's way offset and rows' alignment (a plain
  // layout only).
  Layout AsTileOf(int64_t rows, int64_t cols, int64_t es) const;
  // Plain with the given way offset (an even number of bytes below
  // kWayBytes) stored.
  Layout WithWayOffset(int64_t bytes) const;
  // Without what a tile stores of its matrix's pitch (way offset, rows'
  // alignment): what an action says of a layout it moves an operand to.
  Layout WithoutTileFacts() const {
    Layout l = *this;
    l.way_ = 0;
    l.align_ = 0;
    return l;
  }

  // --- Rows' alignment ------------------------------------------------------
  // A vector access that straddles two lines costs more than one within a
  // line (core/kernels.cc, SplitVectorCost). The rows of a plain matrix whose
  // pitch is not a multiple of kAlignBytes start at other offsets within a
  // line than its first row does (assumed aligned), so most vectors read
  // along them straddle two: its rows are *unaligned*. A 64-byte load
  // 32 bytes into a line (a pitch of 72 floats) ran as fast as an aligned
  // one on the Intel guest; 4-, 8- and 16-byte offsets did not (64³, B's
  // pitch 71, 66, 68 floats: 1.05-1.07x, 1.03x, 1.025x the dense time).
  // Like the way offset, a tile stores its matrix's fact (AsTileOf) where
  // it differs from what the tile's own dense pitch would say, and keeps it
  // down to one row (a row of an unaligned matrix is, but for one in
  // kLineBytes / gcd, unaligned) and to one column (a masked vector read
  // along it straddles lines too). Panels are aligned (buffers start on a
  // line, panels are whole vectors).
  static constexpr int kAlignBytes = 32;
  bool UnalignedRows(int64_t rows, int64_t cols, int64_t es) const;
  // Plain with the rows' alignment stored (true: unaligned).
  Layout WithUnalignedRows(bool unaligned) const;
  // 0 when none is stored, 1 aligned, 2 unaligned.
  int align_code() const { return align_; }
  // Bytes of each contiguous run of a plain tile (one row, or one column).
  int64_t RunBytes(int64_t rows, int64_t cols, int64_t es) const {
    return InnerExtent(rows, cols) * es;
  }
  // Bytes a tile of `outer` outer rows reads from each panel, contiguous.
  int64_t PanelRunBytes(int64_t outer, int64_t es) const {
    return outer * panel_ * es;
  }
  // Panels a packed tile's rows span (0 when plain).
  int64_t Panels(int64_t rows, int64_t cols) const;
  // Panel slots in each section (all panels when not in sections), slots a
  // packed matrix stores (its panels, and in sections the unused slots of
  // the last group), and the slot panel q is stored in.
  int64_t SectionSlots(int64_t rows, int64_t cols) const;
  int64_t PanelSlots(int64_t rows, int64_t cols) const;
  int64_t PanelSlot(int64_t rows, int64_t cols, int64_t q) const;
  // Panels a packed tile reads that lie next to each other in memory, per
  // run of adjacent ones: it spans two or more panels, more than its
  // sections (AdjacentPanels), and ceil(panels / sections) - 1 neighbours in
  // each section (PanelsBeside).
  bool AdjacentPanels(int64_t rows, int64_t cols) const;
  int64_t PanelsBeside(int64_t rows, int64_t cols) const;

  // --- Tiling --------------------------------------------------------------
  // The multiple a tile along `axis` of a matrix `extent` long on that axis
  // must be: a panel (or a group of panels, when in sections and the tile
  // may span groups) along the contiguous dimension, a pair of rows across
  // a paired one; 1 when any tile will do.
  int64_t TileMultiple(Axis axis, int64_t extent) const;
  // What a tile of this (rows x cols) matrix must be told about the whole to
  // be addressed on its own: plain, the pitch between its outer rows (the
  // leading dimension, or the inner extent); in
  // sections, the panel slots per section; else 0 (its panels say it all).
  int64_t TilePitch(int64_t rows, int64_t cols) const;

  // --- The JIT's view ------------------------------------------------------
  // The affine description of a (rows x cols) tile of `es`-unit elements at
  // the origin, as stored in this layout. `pitch` is what TilePitch said of
  // the whole matrix the tile is part of (0: the tile is the whole matrix,
  // its own leading dimension applying).
  // A packed tile of at most one panel (or one group) gets plainer strides.
  AffineView Affine(int64_t rows, int64_t cols, int64_t es,
                    int64_t pitch = 0) const;

  // Field by field (TensorAux orders operands by the fields one by one,
  // core/tensor_spec.h).
  friend bool operator==(const Layout&, const Layout&) = default;
  // An Order is not a layout to compare with: say row_major() or order().
  friend bool operator==(const Layout&, Order) = delete;
  template <typename H>
  friend H AbslHashValue(H h, const Layout& l) {
    return H::combine(std::move(h), l.order_, l.panel_, l.pairs_, l.sections_,
                      l.ld_, l.way_, l.align_);
  }

 private:
  Order order_ = Order::kRowMajor;
  uint16_t panel_ = 0;    // panel width; 0 = plain
  uint8_t pairs_ = 0;     // 2: rows in pairs within each panel; 0: not
  uint8_t sections_ = 0;  // S > 1: panels dealt round S sections; 0: not
  uint32_t ld_ = 0;       // plain: outer rows ld_ apart; 0: dense
  uint16_t way_ = 0;      // plain tile: 1 + way offset / 2; 0: own pitch
  uint8_t align_ = 0;     // plain tile: 1 rows aligned, 2 not; 0: own pitch
};

// Copies a (rows x cols) matrix of `es`-byte elements from one layout into
// another (e.g. row-major B into the panels a Spec with `b=p64` or `b=p32x2`
// reads: pre-packed weights). Padding in `dst` (whole panels, an odd last
// row's partner, unused section slots) is set to zero; the elements between
// the outer rows of a plain `dst` with a leading dimension are left alone.
void Relayout(int64_t rows, int64_t cols, int64_t es, const Layout& from,
              const void* src, const Layout& to, void* dst);

}  // namespace amarena

#endif  // AMARENA_CORE_LAYOUT_H_
