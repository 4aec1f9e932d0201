// DRAM runs and bands in the cost model (core/cost_model.cc, CutRows;
// CostParams::RunLine and BandLine): the price of a line read as part of runs
// of a given length down many rows, or in pieces of a few rows side by side,
// which loops pay for their runs and bands, and the tree it leads a
// vector-matrix product to (B read by whole rows under a y held in L2, a few
// rows at a time in short pieces, not in narrow strips down k).
#include <algorithm>

#include "core/cost_model.h"
#include "core/price_table.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"
#include "search/search.h"
#include "tests/testing/cost_probe.h"
#include "tests/testing/impl_walk.h"

namespace amarena {
namespace {

constexpr int kGL = static_cast<int>(Level::kGL);

// The Zen 4 host's table: the one whose calibration these rules came from.
Target Zen4Avx2() { return testing::Zen4Target(Isa::kAvx2); }

TEST(CostRunsTest, RunLineFollowsTheMeasuredRunsToTheDensePrice) {
  for (const PriceTable& table : ShippedPriceTables()) {
    const CostParams& c = table.cost;
    for (int i = 0; i < CostParams::kDramRunSteps; ++i)
      EXPECT_EQ(c.RunLine(CostParams::kDramRunBytes[i]), c.line_gl_run[i])
          << table.label;
    EXPECT_EQ(c.RunLine(1), c.line_gl_run[0]);
    EXPECT_EQ(c.RunLine(CostParams::kDramRowBytes), c.line_dense[kGL]);
    EXPECT_EQ(c.RunLine(int64_t{1} << 30), c.line_dense[kGL]);
    // Never cheaper than dense, never dearer for a longer run.
    int64_t last = c.RunLine(1);
    for (int64_t bytes = 1; bytes <= 70000; bytes += 37) {
      const int64_t p = c.RunLine(bytes);
      EXPECT_GE(p, c.line_dense[kGL]) << bytes;
      EXPECT_LE(p, last) << bytes;
      last = p;
    }
  }
}

TEST(CostRunsTest, BandLineFollowsTheMeasuredBandsAndNeverUndercutsDense) {
  for (const PriceTable& table : ShippedPriceTables()) {
    const CostParams& c = table.cost;
    const int64_t dense = c.line_dense[kGL];
    for (int i = 0; i < CostParams::kDramBandSteps; ++i)
      EXPECT_EQ(c.BandLine(CostParams::kDramBandBytes[i]),
                std::max(c.line_gl_band[i], dense))
          << table.label;
    EXPECT_EQ(c.BandLine(1), c.BandLine(CostParams::kDramBandBytes[0]));
    EXPECT_EQ(c.BandLine(int64_t{1} << 30),
              c.BandLine(CostParams::kDramBandBytes.back()));
    for (int64_t bytes = 1; bytes <= 70000; bytes += 37)
      EXPECT_GE(c.BandLine(bytes), dense) << bytes;
  }
  // Where nothing was measured, a band is read at the dense price.
  EXPECT_EQ(CostParams{}.BandLine(4096), CostParams{}.line_dense[kGL]);
  // Between two measured lengths, in log2: 724 B is halfway from 512 to 1024.
  CostParams c;
  c.line_gl_band = {0, 60, 80, 0, 0, 0, 0};
  EXPECT_EQ(c.BandLine(724), 70);
  // A measured price under dense counts as dense.
  EXPECT_EQ(c.BandLine(2048), c.line_dense[kGL]);
  EXPECT_EQ(ClampPrices(c).line_gl_band[3], 0);
  EXPECT_EQ(ClampPrices(c).line_gl_band[2], 80);
}

// The cost a loop adds on top of its children (all free here): back-edges
// and, for a loop that cuts tall rows of a GL operand, their runs.
int64_t LoopOnly(const Spec& s, const Target& t, absl::string_view action) {
  return testing::AloneCost(s, t, action);
}

TEST(CostRunsTest, ALoopThatCutsTallRowsPaysForTheirRuns) {
  const Target t = Zen4Avx2();
  const int64_t dense = t.cost.Line(Level::kGL, true);
  // Strips of 64 columns of a 2048-row B: runs of 256 bytes.
  const Spec tall = t.Bind(*ParseSpec("matmul 1x2048x16384 f32"));
  // Along the rows of 8 rows: the same eight streams go on.
  const Spec flat = t.Bind(*ParseSpec("matmul 1x8x16384 f32"));
  const int64_t iters = 16384 / 64;
  const int64_t back_edges = LoopOnly(flat, t, "tile n 64");
  EXPECT_EQ(back_edges, iters * t.cost.loop_iteration);
  const int64_t strip_lines = TensorSpec{2048, 64, tall.aux[1]}.Lines();
  EXPECT_EQ(LoopOnly(tall, t, "tile n 64") - back_edges,
            iters * strip_lines * (t.cost.RunLine(256) - dense));
  // Strips of whole 32 KiB rows stream: nothing more.
  EXPECT_EQ(LoopOnly(tall, t, "tile n 8192"), 2 * t.cost.loop_iteration);
  // Strips of 256 columns of those 8 rows: a band in pieces of 1 KiB.
  const int64_t band = LoopOnly(flat, t, "tile n 256");
  const int64_t band_lines = TensorSpec{8, 256, flat.aux[1]}.Lines();
  EXPECT_GT(t.cost.BandLine(1024), dense);
  EXPECT_EQ(band, 64 * (t.cost.loop_iteration +
                        band_lines * (t.cost.BandLine(1024) - dense)));
  // Under prices that measured no band, only the back-edges.
  Target unbanded = t;
  CostParams no_bands = t.cost;
  no_bands.line_gl_band = {};
  unbanded.SetPrices(no_bands);
  EXPECT_EQ(LoopOnly(flat, unbanded, "tile n 256"), 64 * t.cost.loop_iteration);
  // A root whose operands fit in L3 reads them from the caches: no bands.
  Target warm = t;
  warm.dram_operands = false;
  EXPECT_EQ(LoopOnly(flat, warm, "tile n 256"), 64 * t.cost.loop_iteration);
  // One row is one stream, whatever its pieces.
  const Spec row = t.Bind(*ParseSpec("matmul 1x1x16384 f32"));
  EXPECT_EQ(LoopOnly(row, t, "tile n 256"), 64 * t.cost.loop_iteration);
  // Along k, B's rows stay whole.
  const Spec accum = t.Bind(*ParseSpec("matmul 1x2048x16384 f32 accum"));
  EXPECT_EQ(LoopOnly(accum, t, "split k 8"), 256 * t.cost.loop_iteration);
}

// A parallel loop whose tasks all run at once reads a cut operand's rows
// side by side, together whole: its runs are the rows'. More tasks than
// workers run in rounds, each round's pieces apart: those pay as a serial
// loop's tiles do.
TEST(CostRunsTest, ParallelTilesInOneRoundReadWholeRows) {
  Target t = Zen4Avx2();
  t.workers = 2;
  const int64_t dense = t.cost.Line(Level::kGL, true);
  // 4096 rows of 16 KiB: two 8 KiB halves together are runs of 16 KiB (one
  // round: the slower task's price).
  const Spec s = t.Bind(*ParseSpec("matmul 1x4096x4096 f32"));
  const int64_t half_lines = TensorSpec{4096, 2048, s.aux[1]}.Lines();
  EXPECT_LT(t.cost.RunLine(16384), t.cost.RunLine(8192));
  EXPECT_EQ(LoopOnly(s, t, "parallel tile n 2048"),
            t.cost.parallel_setup +
                half_lines * (t.cost.RunLine(16384) - dense));
  // Four quarters on two workers: two rounds of 4 KiB runs.
  const int64_t four = LoopOnly(s, t, "parallel tile n 1024");
  const int64_t quarter_lines = TensorSpec{4096, 1024, s.aux[1]}.Lines();
  EXPECT_GT(t.cost.RunLine(4096), dense);
  EXPECT_EQ(four, t.cost.parallel_setup +
                      2 * quarter_lines * (t.cost.RunLine(4096) - dense));
  // The same halves in a serial loop are 8 KiB runs, one after the other.
  EXPECT_EQ(LoopOnly(s, t, "tile n 2048"),
            2 * (t.cost.loop_iteration +
                 half_lines * (t.cost.RunLine(8192) - dense)));
}

TEST(CostRunsTest, AVectorMatrixProductReadsWholeRowsUnderAYInL2) {
  const Target t = Zen4Avx2();
  const Spec root = t.Bind(*ParseSpec("matmul 1x2048x16384 f32"));
  bool y_in_l2 = false;
  for (const Candidate& c : EnumerateCandidates(root, t))
    y_in_l2 |= Describe(c.action) == "view 2 l2";
  EXPECT_TRUE(y_in_l2);

  Searcher searcher(t);
  absl::StatusOr<ImplPtr> best = searcher.Solve(root);
  ASSERT_TRUE(best.ok()) << best.status();
  int cuts = 0;
  testing::ForEachNode(**best, [&](const ImplNode& n) {
    if (n.how.type != NodeType::kLoop || n.how.loop.dim != Dim::kN) return;
    const TensorSpec b = n.spec.Operand(1);
    if (b.aux.level != Level::kGL || b.rows <= Layout::kDenseRows) return;
    const TensorSpec strip = n.children[0]->spec.Operand(1);
    cuts += strip.RunBytes() < CostParams::kDramRowBytes;
  });
  EXPECT_EQ(cuts, 0) << PrintImpl(**best);
}

// A view of a few whole rows from DRAM costs what a band of pieces that long
// does: it cannot hide the band from the loops below it.
TEST(CostRunsTest, AViewOfAFewRowsPaysTheirBand) {
  const Target t = Zen4Avx2();
  const Spec s = t.Bind(*ParseSpec("matmul 1x2x4096 f32 accum"));
  const int64_t dense = t.cost.Line(Level::kGL, true);
  ASSERT_GT(t.cost.BandLine(16384), dense);
  Target warm = t;
  warm.dram_operands = false;
  const int64_t lines = s.Operand(1).Lines();
  for (const Target* target : {&t, static_cast<const Target*>(&warm)})
    EXPECT_EQ(testing::AloneCost(s, *target, "view 1 l2"),
              lines * (target->dram_operands ? t.cost.BandLine(16384) : dense));
}

// With the Zen 4 guest's bands, the blocks of B's rows under y are swept in
// pieces no longer than its shortest measured band (where a 1 KiB piece
// reads 1.16x slower); with no bands priced, the search takes a wider strip
// of y (fewer loop iterations), as it did.
TEST(CostRunsTest, AVectorMatrixProductSweepsItsBandsInShortPieces) {
  const Spec spec = *ParseSpec("matmul 1x2048x16384 f32");
  // AVX-512, whose 16 zmm of y reach 1 KiB pieces.
  Target zen4 =
      Target::Avx512({.l1d = 32 << 10, .l2 = 1 << 20, .l3 = 16 << 20});
  zen4.SetPrices(Zen4Avx2().cost);
  for (bool bands : {true, false}) {
    Target t = zen4;
    CostParams c = zen4.cost;
    if (!bands) c.line_gl_band = {};
    t.SetPrices(c);
    Searcher searcher(t);
    absl::StatusOr<ImplPtr> best = searcher.Solve(t.Bind(spec));
    ASSERT_TRUE(best.ok()) << best.status();
    int64_t widest = 0;
    testing::ForEachNode(**best, [&](const ImplNode& n) {
      if (n.how.type != NodeType::kLoop || n.how.loop.dim != Dim::kN) return;
      const TensorSpec b = n.spec.Operand(1);
      if (b.aux.level != Level::kGL || b.rows < 2 ||
          b.rows > Layout::kDenseRows)
        return;
      widest = std::max(widest, n.children[0]->spec.Operand(1).RunBytes());
    });
    if (bands) {
      EXPECT_GT(widest, 0) << PrintImpl(**best);
      EXPECT_LE(widest, CostParams::kDramBandBytes[0]) << PrintImpl(**best);
    } else {
      EXPECT_GT(widest, CostParams::kDramBandBytes[0]) << PrintImpl(**best);
    }
  }
}

}  // namespace
}  // namespace amarena
