#include "core/layout.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"

namespace amarena {

absl::string_view Name(Order o) {
  return o == Order::kRowMajor ? "row" : "col";
}

std::optional<Order> ParseOrder(absl::string_view s) {
  if (s == "row") return Order::kRowMajor;
  if (s == "col") return Order::kColMajor;
  return std::nullopt;
}

// --- AffineView --------------------------------------------------------------

int64_t AffineView::Offset(int64_t i, int64_t j) const {
  int64_t off = disp + j * col_stride;
  // Pairs are row-major panels only (Layout::Paired), so never row panels.
  if (pair_offset != 0) {
    off += (i / 2) * row_stride + (i % 2) * pair_offset;
  } else {
    off += i * row_stride;
  }
  if (panel_axis == Axis::kCols) {
    const int64_t q = j / panel;
    off += (j % panel - j) * col_stride;
    off += section_count > 1 ? (q / section_count) * panel_stride +
                                   (q % section_count) * section_stride
                             : q * panel_stride;
  } else if (panel_axis == Axis::kRows) {
    off += (i / panel) * panel_stride + (i % panel - i) * row_stride;
  }
  return off;
}

std::optional<AffineView> AffineView::Slice(int64_t r0, int64_t c0,
                                            int64_t nrows,
                                            int64_t ncols) const {
  if (pair_offset != 0 && r0 % 2 != 0) return std::nullopt;
  AffineView v = *this;
  v.disp = Offset(r0, c0);
  if (panel_axis != Axis::kNone) {
    const int64_t start = panel_axis == Axis::kCols ? c0 : r0;
    const int64_t len = panel_axis == Axis::kCols ? ncols : nrows;
    if (section_count > 1) {
      const int64_t group = section_count * panel;
      if (start / group == (start + len - 1) / group) {
        // Within one group: its panels are a section apart.
        v.panel_stride = section_stride;
        v.section_count = v.section_stride = 0;
      } else if (start % group != 0) {
        return std::nullopt;
      }
    }
    if (start % panel != 0 || len <= panel) {
      // Within one panel: plain strides from here on.
      if (start % panel + len > panel) return std::nullopt;
      v.panel_axis = Axis::kNone;
      v.panel = v.panel_stride = 0;
      v.section_count = v.section_stride = 0;
    }
  }
  if (pair_offset != 0 && nrows == 1 && ncols == 1) {
    // One element is plain, as Canonical makes its Spec (no longer paired):
    // element-sized strides.
    v.col_stride = v.row_stride = pair_offset;
    v.pair_offset = 0;
  }
  return v;
}

std::optional<int64_t> AffineView::Step(Axis axis, int64_t tile) const {
  if (axis == Axis::kNone) return std::nullopt;
  if (axis == panel_axis) {
    const int64_t group = panel * std::max<int64_t>(section_count, 1);
    if (tile % group != 0) return std::nullopt;
    return tile / group * panel_stride;
  }
  if (axis == Axis::kRows && pair_offset != 0) {
    if (tile % 2 != 0) return std::nullopt;
    return tile / 2 * row_stride;
  }
  return tile * (axis == Axis::kRows ? row_stride : col_stride);
}

// --- Factories and text ------------------------------------------------------

Layout Layout::Panels(Order order, int64_t width) {
  AMARENA_CHECK(width >= 1 && width <= kMaxPack);
  Layout l(order);
  l.panel_ = static_cast<uint16_t>(width);
  return l;
}

Layout Layout::Paired() const {
  AMARENA_CHECK(packed() && row_major());
  Layout l = *this;
  l.pairs_ = 2;
  return l;
}

Layout Layout::InSections(int64_t count) const {
  AMARENA_CHECK(packed() && row_major() && count >= 2 &&
                count <= kMaxSections && (count & (count - 1)) == 0);
  Layout l = *this;
  l.sections_ = static_cast<uint8_t>(count);
  return l;
}

Layout Layout::WithOrder(Order order) const {
  AMARENA_CHECK(order == order_ || (!paired() && !in_sections()));
  Layout l = *this;
  l.order_ = order;
  return l;
}

Layout Layout::WithLd(int64_t ld) const {
  AMARENA_CHECK(ld >= 0 && ld <= INT32_MAX && (ld == 0 || !packed()));
  Layout l = *this;
  l.ld_ = static_cast<uint32_t>(ld);
  return l;
}

namespace {

// A count in layout text; `what` names it in the error.
absl::StatusOr<int64_t> Count(absl::string_view tok, absl::string_view what) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (tok.empty() || ec == std::errc::invalid_argument ||
      ptr != tok.data() + tok.size())
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is '", tok, "', must be a positive integer"));
  if (ec == std::errc::result_out_of_range)
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is ", tok, ", must be at most ", INT32_MAX));
  return v;
}

}  // namespace

absl::StatusOr<Layout> Layout::ParsePanels(absl::string_view p) {
  if (p.size() < 2 || p[0] != 'p')
    return absl::InvalidArgumentError(
        absl::StrCat("panels are '", p, "', must be pN, pNx2, pNsS or pNx2sS"));
  // pP[xG][sS]: panels of P, rows interleaved in groups of G, panels dealt
  // round S sections.
  const size_t sec = p.find('s', 2);
  absl::string_view head = p.substr(0, sec);
  const size_t x = head.find('x', 2);
  AMARENA_ASSIGN_OR_RETURN(int64_t w,
                           Count(head.substr(1, x - 1), "panel width"));
  if (w < 1 || w > kMaxPack)
    return absl::InvalidArgumentError(
        absl::StrCat("panel width is ", w, ", must be 1 to ", kMaxPack));
  Layout l = Panels(Order::kRowMajor, w);
  if (x != absl::string_view::npos) {
    AMARENA_ASSIGN_OR_RETURN(int64_t g,
                             Count(head.substr(x + 1), "interleave"));
    if (g != 2)
      return absl::InvalidArgumentError(absl::StrCat(
          "interleave is ", g, ", must be 2 (k-pairs, as in p32x2)"));
    l = l.Paired();
  }
  if (sec != absl::string_view::npos) {
    AMARENA_ASSIGN_OR_RETURN(int64_t n, Count(p.substr(sec + 1), "sections"));
    // Powers of two: loops along n take tiles of powers of two, and a tile
    // spanning groups takes whole ones.
    if (n < 2 || n > kMaxSections || (n & (n - 1)) != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "sections are ", n, ", must be 2, 4 or 8 (as in p32s2)"));
    l = l.InSections(n);
  }
  return l;
}

std::string Layout::PanelText() const {
  if (!packed()) return "";
  return absl::StrCat("p", panel_, pairs_ ? absl::StrCat("x", pairs_) : "",
                      sections_ ? absl::StrCat("s", sections_) : "");
}

std::string Layout::Text() const {
  std::string t = row_major() ? PanelText()
                  : packed()  ? absl::StrCat(Name(order_), ",", PanelText())
                              : std::string(Name(order_));
  if (way_ != 0)
    absl::StrAppend(&t, t.empty() ? "" : ",", "way", 2 * (way_ - 1));
  if (align_ != 0)
    absl::StrAppend(&t, t.empty() ? "" : ",",
                    align_ == 2 ? "unaligned" : "aligned");
  return t;
}

absl::StatusOr<int64_t> Layout::ParseWayOffset(absl::string_view p) {
  if (p.size() < 4 || p.substr(0, 3) != "way")
    return absl::InvalidArgumentError(
        absl::StrCat("way offset is '", p, "', must be wayN"));
  int64_t n = 0;
  if (!absl::SimpleAtoi(p.substr(3), &n) || n < 0 || n >= kWayBytes ||
      n % 2 != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "way offset is '", p.substr(3), "', must be an even number of bytes "
        "from 0 to ", kWayBytes - 2));
  return n;
}

namespace {

// What a plain (rows x cols) matrix's own pitch says of its rows: where
// each starts in a way, and whether they are unaligned.
int64_t OwnWayOffset(const Layout& l, int64_t rows, int64_t cols,
                     int64_t es) {
  return l.Pitch(rows, cols) * es % Layout::kWayBytes;
}
bool OwnPitchUnaligned(const Layout& l, int64_t rows, int64_t cols,
                       int64_t es) {
  return l.OuterExtent(rows, cols) > 1 &&
         l.Pitch(rows, cols) * es % Layout::kAlignBytes != 0;
}

}  // namespace

int64_t Layout::WayOffset(int64_t rows, int64_t cols, int64_t es) const {
  if (way_ != 0) return 2 * (way_ - 1);
  return OwnWayOffset(*this, rows, cols, es);
}

Layout Layout::AsTileOf(int64_t rows, int64_t cols, int64_t es) const {
  if (packed()) return *this;
  Layout l = WithLd(0);
  l.way_ = static_cast<uint16_t>(WayOffset(rows, cols, es) / 2 + 1);
  l.align_ = UnalignedRows(rows, cols, es) ? 2 : 1;
  return l;
}

bool Layout::UnalignedRows(int64_t rows, int64_t cols, int64_t es) const {
  if (packed()) return false;
  if (align_ != 0) return align_ == 2;
  return OwnPitchUnaligned(*this, rows, cols, es);
}

Layout Layout::WithUnalignedRows(bool unaligned) const {
  AMARENA_CHECK(!packed());
  Layout l = *this;
  l.align_ = unaligned ? 2 : 1;
  return l;
}

Layout Layout::WithWayOffset(int64_t bytes) const {
  AMARENA_CHECK(!packed() && bytes >= 0 && bytes < kWayBytes && bytes % 2 == 0);
  Layout l = *this;
  l.way_ = static_cast<uint16_t>(bytes / 2 + 1);
  return l;
}

bool Layout::Dense(int64_t rows, int64_t cols, int64_t es) const {
  const int64_t outer = OuterExtent(rows, cols);
  if (packed() || outer <= kDenseRows) return true;
  constexpr int64_t kSets = kWayBytes / kLineBytes;
  const int64_t lines =
      (InnerExtent(rows, cols) * es + kLineBytes - 1) / kLineBytes;
  // More lines than kDenseRows for every set: some set has more.
  if (outer * lines > kDenseRows * kSets) return false;
  const int64_t offset = WayOffset(rows, cols, es);
  // All on one set: more than kDenseRows rows overflow it by far.
  if (offset == 0) return false;
  // The count below, once per shape: a search asks the same few shapes
  // (outer <= 512, lines <= 64, offset / 2 < 2048) again and again.
  struct Memo {
    uint32_t key = 0;  // 0: empty (outer > 8 in every key)
    bool dense = false;
  };
  thread_local std::array<Memo, 1024> memo;
  const uint32_t key = static_cast<uint32_t>(outer | lines << 10 |
                                             (offset / 2) << 17);
  Memo& slot = memo[(key * 0x9E3779B1u) >> 22];
  if (slot.key == key) return slot.dense;
  // Row r starts r * offset bytes into the way, on the set of the line that
  // holds its start, and covers its lines from there (as Lines counts them:
  // not the line an unaligned row spills into). Past the check above, a row
  // is shorter than a way.
  std::array<int16_t, kSets> on_set{};
  for (int64_t r = 0, start = 0; r < outer;
       ++r, start = (start + offset) % kWayBytes)
    for (int64_t j = 0, first = start / kLineBytes; j < lines; ++j)
      ++on_set[static_cast<size_t>((first + j) % kSets)];
  // Lines beyond the ways of their set miss on every pass over the tile: a
  // few, as the uneven starts of a pitch that spreads the rows leave, are
  // priced as the lines that fit (kOverflowShare); more are not.
  int64_t over = 0;
  for (int16_t n : on_set) over += std::max<int64_t>(0, n - kDenseRows);
  slot = {key, over * kOverflowShare <= outer * lines};
  return slot.dense;
}

int64_t Layout::RowsOnOneSet(int64_t rows, int64_t cols, int64_t es) const {
  const int64_t outer = OuterExtent(rows, cols);
  if (packed() || outer < 2 || WayOffset(rows, cols, es) != 0) return 0;
  return outer;
}

void Layout::Canonicalize(int64_t rows, int64_t cols, int64_t es,
                          bool one_set) {
  if (rows == 1 && cols == 1) {
    *this = Layout();
    return;
  }
  const int64_t inner = InnerExtent(rows, cols);
  const int64_t outer = OuterExtent(rows, cols);
  // Sections order panels: a tile of at most one panel has no order.
  if (inner <= panel_) sections_ = 0;
  // One row of a paired tile is not plain (its elements are a pair apart),
  // so it keeps its layout.
  if (packed() && !paired() && outer == 1 && inner <= panel_) {
    *this = Layout(order_);
    return;
  }
  // A pitch between outer rows means nothing to one row, nor when it is the
  // dense one.
  if (ld_ != 0 && (outer <= 1 || ld_ == inner)) ld_ = 0;
  // A way offset means nothing to panels. A tile of few enough rows that
  // any pitch leaves it dense needs at most whether all its rows start on
  // one set (offset 0: the cost model's SharedSets, for A and C), so it
  // keeps a stored offset only where asked to and that differs from what
  // its own pitch says, as 0 or one line (any other offset but 0 says the
  // same of it).
  if (packed()) way_ = 0;
  if (way_ != 0 && outer <= kDenseRows) {
    const bool stored_one_set = way_ == 1;
    const bool own_one_set = OwnWayOffset(*this, rows, cols, es) == 0;
    if (!one_set || outer < 2 || stored_one_set == own_one_set)
      way_ = 0;
    else if (!stored_one_set)
      way_ = kLineBytes / 2 + 1;
  }
  // A stored alignment only where the own pitch would say otherwise (tiles
  // only shrink, and each AsTileOf stores what its parent says); none for
  // panels.
  if (packed() || (align_ == 2) == OwnPitchUnaligned(*this, rows, cols, es))
    align_ = 0;
}

// --- Addressing --------------------------------------------------------------

int64_t Layout::Offset(int64_t rows, int64_t cols, int64_t i, int64_t j) const {
  const int64_t p = panel_;
  if (p == 0) {
    const int64_t ld = Pitch(rows, cols);
    return row_major() ? i * ld + j : j * ld + i;
  }
  if (const int64_t g = pairs_) {  // row-major, rows in groups of g
    const int64_t stored_rows = (rows + g - 1) / g * g;
    return PanelSlot(rows, cols, j / p) * stored_rows * p + (i / g) * g * p +
           (j % p) * g + i % g;
  }
  if (row_major())
    return PanelSlot(rows, cols, j / p) * rows * p + i * p + j % p;
  return (i / p) * cols * p + j * p + i % p;
}

int64_t Layout::StoredElements(int64_t rows, int64_t cols) const {
  if (!packed()) {
    const int64_t outer = OuterExtent(rows, cols);
    return outer == 0 ? 0
                      : (outer - 1) * Pitch(rows, cols) + InnerExtent(rows, cols);
  }
  const int64_t g = row_group();
  return PanelSlots(rows, cols) * panel_ *
         ((OuterExtent(rows, cols) + g - 1) / g * g);
}

// --- Contiguity --------------------------------------------------------------

int64_t Layout::Lines(int64_t rows, int64_t cols, int64_t elem_bytes) const {
  const int64_t g = row_group();
  const int64_t es = g * elem_bytes, inner = InnerExtent(rows, cols);
  const int64_t outer = (OuterExtent(rows, cols) + g - 1) / g;
  auto rows_of = [&](int64_t width) {
    return outer * ((width * es + kLineBytes - 1) / kLineBytes);
  };
  if (!packed()) return rows_of(inner);
  const int64_t p = panel_;
  auto panel = [&](int64_t width) {
    int64_t run = (outer * p * es + kLineBytes - 1) / kLineBytes;
    return std::min(rows_of(width), run);
  };
  int64_t lines = (inner / p) * panel(p);
  if (inner % p) lines += panel(inner % p);
  return lines;
}

int64_t Layout::Panels(int64_t rows, int64_t cols) const {
  return packed() ? (InnerExtent(rows, cols) + panel_ - 1) / panel_ : 0;
}

int64_t Layout::SectionSlots(int64_t rows, int64_t cols) const {
  const int64_t sec = std::max<int64_t>(sections_, 1);
  return (Panels(rows, cols) + sec - 1) / sec;
}

int64_t Layout::PanelSlots(int64_t rows, int64_t cols) const {
  return SectionSlots(rows, cols) * std::max<int64_t>(sections_, 1);
}

int64_t Layout::PanelSlot(int64_t rows, int64_t cols, int64_t q) const {
  const int64_t sec = sections_;
  return sec > 1 ? (q % sec) * SectionSlots(rows, cols) + q / sec : q;
}

bool Layout::AdjacentPanels(int64_t rows, int64_t cols) const {
  const int64_t n = Panels(rows, cols);
  return n >= 2 && n > std::max<int64_t>(sections_, 1);
}

int64_t Layout::PanelsBeside(int64_t rows, int64_t cols) const {
  return SectionSlots(rows, cols) - 1;
}

// --- Tiling ------------------------------------------------------------------

int64_t Layout::TileMultiple(Axis axis, int64_t extent) const {
  if (!packed() || axis == Axis::kNone) return 1;
  const bool inner = (axis == Axis::kCols) == row_major();
  // In sections, a tile spanning groups takes whole groups of panels.
  if (inner)
    return in_sections() && extent > sections_ * panel_ ? sections_ * panel_
                                                        : panel_;
  // Rows in pairs: a tile starts on a pair's first row.
  return row_group();
}

int64_t Layout::TilePitch(int64_t rows, int64_t cols) const {
  if (!packed()) return Pitch(rows, cols);
  return in_sections() ? SectionSlots(rows, cols) : 0;
}

// --- The JIT's view ----------------------------------------------------------

AffineView Layout::Affine(int64_t rows, int64_t cols, int64_t es,
                          int64_t pitch) const {
  const int64_t p = panel_;
  // Packed: `pitch` only says how far apart sections are (a tile of one
  // panel, or one not in sections, ignores it).
  const int64_t section_slots = pitch ? pitch : SectionSlots(rows, cols);
  const int64_t stride = p ? p : pitch ? pitch : Pitch(rows, cols);
  AffineView v;
  v.row_stride = row_major() ? stride * es : es;
  v.col_stride = row_major() ? es : stride * es;
  if (!packed()) return v;
  v.panel_axis = row_major() ? Axis::kCols : Axis::kRows;
  v.panel = p;
  v.panel_stride = v.panel_run = OuterExtent(rows, cols) * p * es;
  if (paired()) {
    const int64_t g = pairs_;
    v.row_stride = g * p * es;
    v.col_stride = g * es;
    v.pair_offset = es;
    v.panel_stride = v.panel_run = (rows + g - 1) / g * g * p * es;
  }
  if (in_sections()) {
    v.section_count = sections_;
    v.section_stride = section_slots * v.panel_run;
  }
  // One panel, or one group: plainer.
  std::optional<AffineView> whole = v.Slice(0, 0, rows, cols);
  AMARENA_CHECK(whole.has_value());  // a slice at the origin always is
  return *whole;
}

// --- Relayout ----------------------------------------------------------------

void Relayout(int64_t rows, int64_t cols, int64_t es, const Layout& from,
              const void* src, const Layout& to, void* dst) {
  const size_t bytes = static_cast<size_t>(es);
  if (to.packed())
    std::memset(dst, 0,
                static_cast<size_t>(to.StoredElements(rows, cols)) * bytes);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(
          static_cast<char*>(dst) + to.Offset(rows, cols, i, j) * es,
          static_cast<const char*>(src) + from.Offset(rows, cols, i, j) * es,
          bytes);
}

}  // namespace amarena
