#include "core/layout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace amarena {
namespace {

constexpr Order kRow = Order::kRowMajor;
constexpr Order kCol = Order::kColMajor;

// Every kind of layout, with panel widths that divide the test shapes and
// ones that do not.
std::vector<Layout> AllKinds() {
  std::vector<Layout> out = {Layout(kRow), Layout(kCol)};
  for (int64_t p : {1, 3, 4, 16}) {
    out.push_back(Layout::Panels(kRow, p));
    out.push_back(Layout::Panels(kCol, p));
    out.push_back(Layout::Panels(kRow, p).Paired());
    for (int64_t s : {2, 4, 8}) {
      out.push_back(Layout::Panels(kRow, p).InSections(s));
      out.push_back(Layout::Panels(kRow, p).Paired().InSections(s));
    }
  }
  return out;
}

const int64_t kExtents[] = {1, 2, 7, 13, 31, 100};

// The storage of a (rows x cols) matrix written out element by element, in
// memory order, from the layout's definition (core/layout.h) rather than its
// formulas: each entry is the element stored there, or (-1, -1) for padding.
struct Cell {
  int64_t i, j;
};
std::vector<Cell> Storage(const Layout& l, int64_t rows, int64_t cols) {
  std::vector<Cell> out;
  auto put = [&](int64_t i, int64_t j) {
    out.push_back(i < rows && j < cols ? Cell{i, j} : Cell{-1, -1});
  };
  const int64_t p = l.panel_width();
  if (p == 0) {
    for (int64_t o = 0; o < (l.row_major() ? rows : cols); ++o)
      for (int64_t n = 0; n < (l.row_major() ? cols : rows); ++n)
        l.row_major() ? put(o, n) : put(n, o);
    return out;
  }
  if (!l.row_major()) {  // A panels: P rows each, column after column
    for (int64_t q = 0; q < (rows + p - 1) / p; ++q)
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t c = 0; c < p; ++c) put(q * p + c, j);
    return out;
  }
  const int64_t g = l.paired() ? 2 : 1;
  const int64_t s = l.in_sections() ? l.section_count() : 1;
  const int64_t panels = (cols + p - 1) / p;
  const int64_t per_section = (panels + s - 1) / s;
  const int64_t stored_rows = (rows + g - 1) / g * g;
  // Section after section; slot k of a section holds panel k * S + section.
  for (int64_t sec = 0; sec < s; ++sec)
    for (int64_t k = 0; k < per_section; ++k) {
      const int64_t q = k * s + sec;
      for (int64_t r = 0; r < stored_rows / g; ++r)
        for (int64_t c = 0; c < p; ++c)
          for (int64_t h = 0; h < g; ++h)
            put(q < panels ? r * g + h : rows, q * p + c);
    }
  return out;
}

TEST(LayoutTest, OffsetsMatchTheStorageWrittenOut) {
  for (const Layout& l : AllKinds())
    for (int64_t rows : kExtents)
      for (int64_t cols : kExtents) {
        const std::vector<Cell> cells = Storage(l, rows, cols);
        SCOPED_TRACE(::testing::Message()
                     << "'" << l.Text() << "' " << rows << "x" << cols);
        ASSERT_EQ(l.StoredElements(rows, cols),
                  static_cast<int64_t>(cells.size()));
        int64_t elements = 0;
        for (size_t at = 0; at < cells.size(); ++at) {
          if (cells[at].i < 0) continue;  // padding: no element lives there
          ++elements;
          ASSERT_EQ(l.Offset(rows, cols, cells[at].i, cells[at].j),
                    static_cast<int64_t>(at))
              << "(" << cells[at].i << ", " << cells[at].j << ")";
        }
        EXPECT_EQ(elements, rows * cols);  // each element stored once
      }
}

TEST(LayoutTest, StoredElementsCountPadding) {
  EXPECT_EQ(Layout(kCol).StoredElements(7, 13), 91);
  EXPECT_EQ(Layout::Panels(kRow, 4).StoredElements(3, 10), 3 * 12);
  EXPECT_EQ(Layout::Panels(kCol, 4).StoredElements(10, 3), 3 * 12);
  // Rows padded to whole pairs.
  EXPECT_EQ(Layout::Panels(kRow, 4).Paired().StoredElements(5, 10), 6 * 12);
  // 3 panels in 2 sections of 2 slots: one slot unused.
  EXPECT_EQ(Layout::Panels(kRow, 4).InSections(2).StoredElements(3, 10),
            4 * 12);
  // 13 panels in 8 sections of 2 slots: 3 unused.
  EXPECT_EQ(Layout::Panels(kRow, 1).InSections(8).StoredElements(7, 13),
            16 * 7);
}

// Panel q of NP in S sections lies in slot (q % S) * ceil(NP / S) + q / S;
// which panels of a tile lie next to each other.
TEST(LayoutTest, PanelSlotsInSections) {
  const Layout s2 = Layout::Panels(kRow, 16).InSections(2);
  EXPECT_EQ(s2.PanelSlots(8, 80), 6);  // 5 panels, groups of 2: one unused
  const int64_t want[] = {0, 3, 1, 4, 2};
  for (int64_t q = 0; q < 5; ++q) EXPECT_EQ(s2.PanelSlot(8, 80, q), want[q]);
  EXPECT_TRUE(s2.AdjacentPanels(8, 80));   // 0 and 2 are in one section
  EXPECT_EQ(s2.PanelsBeside(8, 80), 2);    // 0, 2, 4 in the first
  EXPECT_FALSE(s2.AdjacentPanels(8, 32));  // a section apart
  const Layout p16 = Layout::Panels(kRow, 16);
  EXPECT_TRUE(p16.AdjacentPanels(8, 32));
  EXPECT_EQ(p16.PanelSlot(8, 32, 1), 1);
  EXPECT_FALSE(p16.AdjacentPanels(8, 16));  // one panel
}

TEST(LayoutTest, TileMultiples) {
  const Layout p16 = Layout::Panels(kRow, 16);
  EXPECT_EQ(Layout(kRow).TileMultiple(Axis::kCols, 100), 1);
  EXPECT_EQ(p16.TileMultiple(Axis::kCols, 100), 16);
  EXPECT_EQ(p16.TileMultiple(Axis::kRows, 100), 1);
  EXPECT_EQ(p16.Paired().TileMultiple(Axis::kRows, 100), 2);
  EXPECT_EQ(Layout::Panels(kCol, 8).TileMultiple(Axis::kRows, 100), 8);
  EXPECT_EQ(Layout::Panels(kCol, 8).TileMultiple(Axis::kCols, 100), 1);
  // In sections, a tile that may span groups takes whole groups.
  EXPECT_EQ(p16.InSections(4).TileMultiple(Axis::kCols, 100), 64);
  EXPECT_EQ(p16.InSections(4).TileMultiple(Axis::kCols, 64), 16);
}

TEST(LayoutTest, LinesAndRuns) {
  // Plain: a line per short row; panels: a panel's rows are one run.
  EXPECT_EQ(Layout(kRow).Lines(4, 16, 4), 4);
  EXPECT_EQ(Layout::Panels(kRow, 16).Lines(256, 32, 4), 512);
  EXPECT_EQ(Layout::Panels(kCol, 6).Lines(6, 100, 4), 38);
  // Pairs: 3 stored rows of a panel of 4 pairs of bf16 are one line.
  EXPECT_EQ(Layout::Panels(kRow, 4).Paired().Lines(5, 4, 2), 1);
  EXPECT_TRUE(Layout::Panels(kRow, 16).Dense(1000, 1000, 4));
  EXPECT_EQ(Layout(kCol).RunBytes(7, 13, 4), 28);
}

TEST(LayoutTest, RowsAreUnalignedWhenThePitchIsNotAMultipleOf32Bytes) {
  // A matrix's own pitch: its row, or its leading dimension.
  EXPECT_FALSE(Layout(kRow).UnalignedRows(64, 64, 4));             // 256 B
  EXPECT_TRUE(Layout(kRow).UnalignedRows(100, 100, 4));            // 400 B
  EXPECT_FALSE(Layout(kRow).WithLd(72).UnalignedRows(64, 64, 4));  // 288 B
  EXPECT_TRUE(Layout(kRow).WithLd(71).UnalignedRows(64, 64, 4));
  EXPECT_TRUE(Layout(kRow).WithLd(68).UnalignedRows(64, 64, 4));  // 272 B
  EXPECT_FALSE(Layout(kRow).UnalignedRows(64, 16, 2));  // bf16, 32 B
  EXPECT_TRUE(Layout(kCol).UnalignedRows(7, 64, 4));    // columns 28 B
  // One row starts where the matrix does; panels are aligned; rows of one
  // element are 4 bytes apart, and a (masked) vector read along each
  // straddles lines as one along a longer row does.
  EXPECT_FALSE(Layout(kRow).UnalignedRows(1, 7, 4));
  EXPECT_FALSE(Layout::Panels(kRow, 7).UnalignedRows(64, 64, 4));
  EXPECT_TRUE(Layout(kRow).UnalignedRows(64, 1, 4));
  // A tile keeps its matrix's fact, down to one row: a 6x64 tile of a
  // matrix 71 floats wide, and a row of it; a 6x7 tile of an aligned one.
  const Layout odd = Layout(kRow).WithLd(71).AsTileOf(64, 64, 4);
  EXPECT_TRUE(odd.UnalignedRows(6, 64, 4));
  EXPECT_TRUE(odd.Canonical(1, 64, 4).UnalignedRows(1, 64, 4));
  EXPECT_EQ(odd.Canonical(1, 64, 4).Text(), "unaligned");
  const Layout even = Layout(kRow).AsTileOf(64, 64, 4);
  EXPECT_FALSE(even.Canonical(6, 7, 4).UnalignedRows(6, 7, 4));
  EXPECT_EQ(even.Canonical(6, 7, 4).Text(), "aligned");
  // Stored only where the own pitch would say otherwise, so a tile whose
  // own pitch agrees is the plain layout.
  EXPECT_EQ(even.Canonical(6, 64, 4), Layout(kRow));
  EXPECT_EQ(Layout(kRow).AsTileOf(100, 100, 4).Canonical(6, 100, 4),
            Layout(kRow));
  EXPECT_EQ(odd.Canonical(6, 1, 4), Layout(kRow));
  EXPECT_EQ(even.Canonical(6, 1, 4).Text(), "aligned");
  // A tile of a tile: the fact is kept whatever the sizes.
  EXPECT_TRUE(odd.Canonical(6, 64, 4)
                  .AsTileOf(6, 64, 4)
                  .Canonical(6, 16, 4)
                  .UnalignedRows(6, 16, 4));
  EXPECT_FALSE(even.Canonical(6, 7, 4)
                   .AsTileOf(6, 7, 4)
                   .Canonical(3, 5, 4)
                   .UnalignedRows(3, 5, 4));
  // What an action says of a layout leaves the tile's facts out.
  EXPECT_EQ(odd.WithoutTileFacts(), Layout(kRow));
}

TEST(LayoutTest, Canonical) {
  const Layout p16 = Layout::Panels(kRow, 16);
  EXPECT_EQ(p16.Canonical(1, 1, 4), Layout());
  EXPECT_EQ(Layout(kCol).Canonical(1, 1, 4), Layout());
  EXPECT_EQ(Layout(kCol).Canonical(7, 1, 4), Layout(kCol));
  EXPECT_EQ(p16.Canonical(1, 16, 4), Layout());  // one run of one panel
  EXPECT_EQ(p16.Canonical(2, 16, 4), p16);
  EXPECT_EQ(p16.Paired().Canonical(1, 16, 4), p16.Paired());  // pairs apart
  EXPECT_EQ(p16.InSections(2).Canonical(4, 16, 4), p16);      // one panel
  EXPECT_EQ(p16.InSections(2).Canonical(4, 17, 4), p16.InSections(2));
}

TEST(LayoutTest, TextRoundTrips) {
  for (const Layout& l : AllKinds()) {
    if (!l.packed()) continue;
    absl::StatusOr<Layout> back = Layout::ParsePanels(l.PanelText());
    ASSERT_TRUE(back.ok()) << l.PanelText() << ": " << back.status();
    EXPECT_EQ(back->WithOrder(l.order()), l) << l.Text();
  }
  EXPECT_EQ(Layout().Text(), "");
  EXPECT_EQ(Layout(kCol).Text(), "col");
  EXPECT_EQ(Layout::Panels(kCol, 16).Text(), "col,p16");
  EXPECT_EQ(Layout::Panels(kRow, 128).Paired().InSections(2).Text(),
            "p128x2s2");
  // Through Spec text, either order of the properties.
  for (const char* text : {"matmul 8x8x64 f32 a=col,p4 b=p16s2",
                           "matmul 8x8x64 bf16*bf16->f32 b=p32x2s4"}) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(PrintSpec(*s), text);
  }
  absl::StatusOr<Spec> swapped = ParseSpec("matmul 8x8x64 f32 a=p4,col");
  ASSERT_TRUE(swapped.ok());
  EXPECT_EQ(swapped->aux[0].layout, Layout::Panels(kCol, 4));
}

TEST(LayoutTest, ParsePanelsSaysWhatIsWrong) {
  using ::testing::HasSubstr;
  auto error = [](absl::string_view text) {
    return std::string(Layout::ParsePanels(text).status().message());
  };
  EXPECT_THAT(error("p0"), HasSubstr("panel width is 0, must be 1 to 1024"));
  EXPECT_THAT(error("px"), HasSubstr("panel width is 'x'"));
  EXPECT_THAT(error("p32x3"), HasSubstr("interleave is 3, must be 2"));
  EXPECT_THAT(error("p32s3"), HasSubstr("sections are 3"));
  EXPECT_THAT(error("p32s16"), HasSubstr("sections are 16"));
}

TEST(LayoutTest, RelayoutRoundTripsAndZeroesPadding) {
  const int64_t rows = 13, cols = 31;
  std::vector<uint32_t> src(rows * cols);
  for (size_t e = 0; e < src.size(); ++e) src[e] = static_cast<uint32_t>(e + 1);
  const Layout plain;
  for (const Layout& l : AllKinds()) {
    SCOPED_TRACE(l.Text());
    const size_t stored = static_cast<size_t>(l.StoredElements(rows, cols));
    std::vector<uint32_t> mid(stored, 0xdeadbeef), back(src.size());
    Relayout(rows, cols, 4, plain, src.data(), l, mid.data());
    const std::vector<Cell> cells = Storage(l, rows, cols);
    for (size_t at = 0; at < stored; ++at)
      EXPECT_EQ(
          mid[at],
          cells[at].i < 0
              ? 0u
              : src[static_cast<size_t>(cells[at].i * cols + cells[at].j)]);
    // Through a second layout and back to plain.
    const Layout other = Layout::Panels(kCol, 5);
    std::vector<uint32_t> mid2(
        static_cast<size_t>(other.StoredElements(rows, cols)));
    Relayout(rows, cols, 4, l, mid.data(), other, mid2.data());
    Relayout(rows, cols, 4, other, mid2.data(), plain, back.data());
    EXPECT_EQ(back, src);
  }
}

// The affine view of the whole matrix and of every slice a tiling may take
// (starting on the tile multiples) addresses what Offset does, and steps are
// differences of offsets.
TEST(LayoutTest, AffineSlicesAddressLikeOffset) {
  for (const Layout& l : AllKinds())
    for (int64_t rows : {1, 2, 7, 13})
      for (int64_t cols : {1, 7, 13, 32, 100}) {
        SCOPED_TRACE(::testing::Message()
                     << "'" << l.Text() << "' " << rows << "x" << cols);
        const AffineView whole = l.Affine(rows, cols, 1);
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j)
            ASSERT_EQ(whole.Offset(i, j), l.Offset(rows, cols, i, j));
        const int64_t mr = l.TileMultiple(Axis::kRows, rows);
        const int64_t mc = l.TileMultiple(Axis::kCols, cols);
        for (int64_t tr = mr; tr <= rows; tr += mr)
          for (int64_t tc = mc; tc <= cols; tc += mc)
            for (int64_t r0 = 0; r0 < rows; r0 += tr)
              for (int64_t c0 = 0; c0 < cols; c0 += tc) {
                const int64_t nr = std::min(tr, rows - r0);
                const int64_t nc = std::min(tc, cols - c0);
                std::optional<AffineView> v = whole.Slice(r0, c0, nr, nc);
                ASSERT_TRUE(v.has_value()) << r0 << "," << c0;
                for (int64_t i = 0; i < nr; ++i)
                  for (int64_t j = 0; j < nc; ++j)
                    ASSERT_EQ(v->Offset(i, j),
                              l.Offset(rows, cols, r0 + i, c0 + j))
                        << "slice at " << r0 << "," << c0 << " of " << nr << "x"
                        << nc << ", element " << i << "," << j;
              }
        if (rows > mr) {
          std::optional<int64_t> step = whole.Step(Axis::kRows, mr);
          ASSERT_TRUE(step.has_value());
          EXPECT_EQ(*step,
                    l.Offset(rows, cols, mr, 0) - l.Offset(rows, cols, 0, 0));
        }
        if (cols > mc) {
          std::optional<int64_t> step = whole.Step(Axis::kCols, mc);
          ASSERT_TRUE(step.has_value());
          EXPECT_EQ(*step,
                    l.Offset(rows, cols, 0, mc) - l.Offset(rows, cols, 0, 0));
        }
      }
}

// A tile of a larger matrix, given the whole's pitch, addresses like the
// whole: the view a parallel loop's tile gets.
TEST(LayoutTest, AffineTileWithPitchAddressesLikeTheWhole) {
  for (const Layout& l :
       {Layout(kRow), Layout(kCol), Layout::Panels(kRow, 4).InSections(2),
        Layout::Panels(kRow, 4).Paired().InSections(4)}) {
    const int64_t rows = 6, cols = 64, tile = 32;  // two groups of 4 x 4
    const int64_t pitch = l.TilePitch(rows, cols);
    const AffineView t = l.Affine(rows, tile, 1, pitch);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < tile; ++j)
        EXPECT_EQ(t.Offset(i, j), l.Offset(rows, cols, i, j)) << l.Text();
  }
}

// A leading dimension: outer rows ld apart, the last one ending the matrix.
TEST(LayoutTest, LeadingDimensionPlacesOuterRowsApart) {
  const Layout row = Layout(kRow).WithLd(17), col = Layout(kCol).WithLd(10);
  EXPECT_EQ(row.ld(), 17);
  EXPECT_EQ(row.Offset(3, 13, 2, 5), 2 * 17 + 5);
  EXPECT_EQ(col.Offset(7, 4, 6, 3), 3 * 10 + 6);
  EXPECT_EQ(row.StoredElements(3, 13), 2 * 17 + 13);
  EXPECT_EQ(col.StoredElements(7, 4), 3 * 10 + 7);
  EXPECT_EQ(row.TilePitch(3, 13), 17);
  EXPECT_EQ(Layout(kRow).TilePitch(3, 13), 13);
  // Traffic is priced per outer row with or without one (Lines, Dense).
  EXPECT_EQ(row.Lines(3, 13, 4), Layout(kRow).Lines(3, 13, 4));
  EXPECT_EQ(row.RunBytes(3, 13, 4), 52);
  // Canonical: the dense pitch, or one outer row, is no leading dimension.
  EXPECT_EQ(row.Canonical(3, 13, 4), row);
  EXPECT_EQ(Layout(kRow).WithLd(13).Canonical(3, 13, 4), Layout(kRow));
  EXPECT_EQ(row.Canonical(1, 13, 4), Layout(kRow));
  EXPECT_EQ(col.Canonical(7, 1, 4), Layout(kCol));
  EXPECT_EQ(col.Canonical(1, 1, 4), Layout(kRow));
  EXPECT_NE(row, Layout(kRow));
  EXPECT_EQ(row.WithLd(0), Layout(kRow));
  EXPECT_EQ(col.WithOrder(kRow).ld(), 10);
}

// Offset, the affine view (whole, slices, steps) and a tile given the pitch
// all agree, over row- and column-major, odd and prime extra pitches.
TEST(LayoutTest, LeadingDimensionAffineAddressesLikeOffset) {
  for (Order o : {kRow, kCol})
    for (int64_t rows : {1, 2, 7, 13})
      for (int64_t cols : {1, 7, 13, 100})
        for (int64_t extra : {1, 13, 61}) {
          const Layout plain(o);
          const Layout l = plain.WithLd(plain.InnerExtent(rows, cols) + extra);
          SCOPED_TRACE(::testing::Message() << Name(o) << " " << rows << "x"
                                            << cols << " ld " << l.ld());
          const AffineView whole = l.Affine(rows, cols, 4);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
              const int64_t off = l.Offset(rows, cols, i, j);
              ASSERT_EQ(whole.Offset(i, j), 4 * off);
              ASSERT_LT(off, l.StoredElements(rows, cols));
            }
          EXPECT_EQ(l.Offset(rows, cols, rows - 1, cols - 1) + 1,
                    l.StoredElements(rows, cols));
          const AffineView tile =
              l.Affine(rows, (cols + 1) / 2, 4, l.TilePitch(rows, cols));
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < (cols + 1) / 2; ++j)
              ASSERT_EQ(tile.Offset(i, j), 4 * l.Offset(rows, cols, i, j));
          if (rows > 1) {
            EXPECT_EQ(*whole.Step(Axis::kRows, 1),
                      4 * l.Offset(rows, cols, 1, 0));
          }
          if (cols > 1) {
            EXPECT_EQ(*whole.Step(Axis::kCols, 1),
                      4 * l.Offset(rows, cols, 0, 1));
          }
        }
}

// Relayout into a view writes its elements and leaves the gaps between its
// rows alone; out of it, reads only its elements.
TEST(LayoutTest, RelayoutWithLeadingDimensionLeavesGapsAlone) {
  const int64_t rows = 5, cols = 7;
  for (Order o : {kRow, kCol}) {
    const Layout view = Layout(o).WithLd(Layout(o).InnerExtent(rows, cols) + 3);
    std::vector<float> src(static_cast<size_t>(rows * cols));
    for (size_t e = 0; e < src.size(); ++e) src[e] = static_cast<float>(e);
    std::vector<float> mid(static_cast<size_t>(view.StoredElements(rows, cols)),
                           -1.0f);
    Relayout(rows, cols, 4, Layout(kRow), src.data(), view, mid.data());
    int64_t gaps = 0;
    for (float v : mid) gaps += v == -1.0f;
    EXPECT_EQ(gaps, view.StoredElements(rows, cols) - rows * cols);
    std::vector<float> back(src.size());
    Relayout(rows, cols, 4, view, mid.data(), Layout(kRow), back.data());
    EXPECT_EQ(back, src);
  }
}

TEST(LayoutTest, SlicesThatAreNotAffineAreRefused) {
  const AffineView p4 = Layout::Panels(kRow, 4).Affine(4, 16, 1);
  EXPECT_FALSE(p4.Slice(0, 2, 4, 4).has_value());  // straddles two panels
  EXPECT_TRUE(p4.Slice(0, 2, 4, 2).has_value());   // within one
  const AffineView pairs = Layout::Panels(kRow, 4).Paired().Affine(4, 16, 1);
  EXPECT_FALSE(pairs.Slice(1, 0, 2, 4).has_value());  // odd row
  EXPECT_FALSE(pairs.Step(Axis::kRows, 1).has_value());
  EXPECT_FALSE(p4.Step(Axis::kCols, 2).has_value());
}

TEST(LayoutDeathTest, FactoriesCheckTheirInvariants) {
  EXPECT_DEATH(Layout::Panels(kRow, 4).WithLd(8), "");
  EXPECT_DEATH(Layout(kRow).WithLd(-1), "");
  EXPECT_DEATH(Layout::Panels(kCol, 4).Paired(), "");
  EXPECT_DEATH(Layout::Panels(kRow, 4).InSections(3), "");
  EXPECT_DEATH(Layout(kRow).InSections(2), "");
  EXPECT_DEATH(Layout::Panels(kRow, 0), "");
}

}  // namespace
}  // namespace amarena
