// Tests for core/spec.h: operand shapes and roles, FloorPow2, and Canonical() —
// its rules hold and applying it twice changes nothing.
#include "core/spec.h"

#include <cstdint>
#include <random>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/hash/hash_testing.h"
#include "gtest/gtest.h"

namespace amarena {
namespace {

constexpr TensorAux kL1Col{DType::kF32, Level::kL1, Order::kColMajor, 0};
constexpr TensorAux kVrf8{DType::kF32, Level::kVRF, Order::kRowMajor, 8};

// Any Spec at all, canonical or not: junk in unused operand slots, vector
// widths on memory operands, column-major VRF operands, k != 1 for Zero and
// Move, budgets that are not powers of two.
Spec RandomRawSpec(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto dim = [&] { return pick(0, 2) == 0 ? 1 : pick(1, 300); };
  Spec s;
  s.kind = static_cast<Kind>(pick(0, 3));
  s.b = pick(1, 3);
  s.m = dim();
  s.k = dim();
  s.n = dim();
  for (TensorAux& a : s.aux) {
    a.dtype = static_cast<DType>(pick(0, 1));
    a.level = static_cast<Level>(pick(0, kNumLevels - 1));
    const Order order = static_cast<Order>(pick(0, 1));
    a.layout = order;
    a.vector_width = static_cast<uint8_t>(pick(0, 16));
    if (pick(0, 1)) a.layout = Layout::Panels(order, pick(1, 40));
    if (a.layout.packed() && a.layout.row_major() && pick(0, 3) == 0)
      a.layout = a.layout.Paired();
    if (a.layout.packed() && a.layout.row_major() && pick(0, 3) == 0)
      a.layout = a.layout.InSections(2 << pick(0, 2));
  }
  s.serial = pick(0, 1) == 1;
  if (pick(0, 1) == 1)
    s.budget = Budget{static_cast<int32_t>(pick(0, 64)),
                      static_cast<int32_t>(pick(0, 16)), pick(0, 5000),
                      pick(0, 50000), pick(0, 500000)};
  return s;
}

TEST(FloorPow2Test, RoundsDownToAPowerOfTwo) {
  EXPECT_EQ(FloorPow2(-7), 0);
  EXPECT_EQ(FloorPow2(0), 0);
  EXPECT_EQ(FloorPow2(1), 1);
  EXPECT_EQ(FloorPow2(2), 2);
  EXPECT_EQ(FloorPow2(3), 2);
  EXPECT_EQ(FloorPow2(511), 256);
  EXPECT_EQ(FloorPow2(512), 512);
  EXPECT_EQ(FloorPow2(513), 512);
  EXPECT_EQ(FloorPow2(INT64_MAX), int64_t{1} << 62);
}

// The budget grid: at most two significant bits; rounding down then up is
// the identity on it, and each rounds onto it from either side.
TEST(BudgetGridTest, RoundsOntoTwoSignificantBits) {
  for (int64_t x = -3; x <= 0; ++x) {
    EXPECT_EQ(FloorBudgetLines(x), 0) << x;
    EXPECT_EQ(CeilBudgetLines(x), 0) << x;
  }
  const std::vector<int64_t> grid = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
  for (int64_t x = 1; x <= 32; ++x) {
    int64_t down = 0, up = 0;
    for (int64_t g : grid) {
      if (g <= x) down = g;
      if (g >= x && up == 0) up = g;
    }
    EXPECT_EQ(FloorBudgetLines(x), down) << x;
    EXPECT_EQ(CeilBudgetLines(x), up) << x;
  }
  EXPECT_EQ(FloorBudgetLines(506), 384);
  EXPECT_EQ(FloorBudgetLines(767), 512);
  EXPECT_EQ(FloorBudgetLines(768), 768);
  EXPECT_EQ(CeilBudgetLines(385), 512);
  EXPECT_EQ(CeilBudgetLines(513), 768);
  EXPECT_EQ(FloorBudgetLines(16384 * 3 / 4), 12288);
}

TEST(SpecTest, MatmulOperandsHaveMatmulShapes) {
  Spec s = Spec::Matmul(3, 5, 7);
  ASSERT_EQ(s.NumOperands(), 3);
  EXPECT_EQ(s.Operand(0).rows, 3);
  EXPECT_EQ(s.Operand(0).cols, 5);
  EXPECT_EQ(s.Operand(1).rows, 5);
  EXPECT_EQ(s.Operand(1).cols, 7);
  EXPECT_EQ(s.Operand(2).rows, 3);
  EXPECT_EQ(s.Operand(2).cols, 7);
  EXPECT_EQ(s.OutputIndex(), 2);
  EXPECT_EQ(s.OperandAccess(0), Access::kIn);
  EXPECT_EQ(s.OperandAccess(1), Access::kIn);
  EXPECT_EQ(s.OperandAccess(2), Access::kOut);
  EXPECT_EQ(s.Macs(), 3 * 5 * 7);
}

TEST(SpecTest, AccumulatingMatmulReadsItsOutput) {
  Spec s = Spec::Matmul(3, 5, 7, {}, {}, {}, /*accum=*/true);
  EXPECT_EQ(s.kind, Kind::kMatmulAccum);
  EXPECT_TRUE(s.IsMatmul());
  EXPECT_EQ(s.OperandAccess(2), Access::kInOut);
  EXPECT_EQ(s.Macs(), 3 * 5 * 7);
}

TEST(SpecTest, BatchCountsInMacs) {
  Spec s = Spec::Matmul(3, 5, 7);
  s.b = 4;
  EXPECT_EQ(s.Macs(), 4 * 3 * 5 * 7);
}

TEST(SpecTest, ZeroAndMoveOperands) {
  Spec z = Spec::Zero(4, 16, kVrf8);
  ASSERT_EQ(z.NumOperands(), 1);
  EXPECT_EQ(z.OutputIndex(), 0);
  EXPECT_EQ(z.OperandAccess(0), Access::kOut);
  EXPECT_EQ(z.Operand(0).rows, 4);
  EXPECT_EQ(z.Operand(0).cols, 16);
  EXPECT_EQ(z.Operand(0).aux, kVrf8);
  EXPECT_EQ(z.Macs(), 0);

  Spec m = Spec::Move(4, 16, kL1Col, kVrf8);
  ASSERT_EQ(m.NumOperands(), 2);
  EXPECT_EQ(m.OutputIndex(), 1);
  EXPECT_EQ(m.OperandAccess(0), Access::kIn);
  EXPECT_EQ(m.OperandAccess(1), Access::kOut);
  EXPECT_EQ(m.Operand(0).aux, kL1Col);
  EXPECT_EQ(m.Operand(1).aux, kVrf8);
  EXPECT_EQ(m.Operand(1).Registers(), 8);  // 4 rows x 2 ymm of 8 lanes
}

TEST(CanonicalTest, OneByOneOperandIsRowMajor) {
  Spec s = Spec::Matmul(1, 1, 1, kL1Col, kL1Col, kL1Col);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(s.aux[i].layout, Layout(Order::kRowMajor)) << i;

  // Only the 1x1 operand changes: A (1x5) and B (5x1) keep saying how they are
  // stored.
  s = Spec::Matmul(1, 5, 1, kL1Col, kL1Col, kL1Col);
  EXPECT_EQ(s.aux[0].layout, Layout(Order::kColMajor));
  EXPECT_EQ(s.aux[1].layout, Layout(Order::kColMajor));
  EXPECT_EQ(s.aux[2].layout, Layout(Order::kRowMajor));

  EXPECT_EQ(Spec::Zero(1, 1, kL1Col).aux[0].layout, Layout(Order::kRowMajor));
  EXPECT_EQ(Spec::Zero(7, 1, kL1Col).aux[0].layout, Layout(Order::kColMajor));
}

TEST(CanonicalTest, VrfOperandIsRowMajor) {
  TensorAux vrf_col = kVrf8;
  vrf_col.layout = Order::kColMajor;
  EXPECT_EQ(Spec::Zero(4, 16, vrf_col).aux[0], kVrf8);
}

TEST(CanonicalTest, OnlyVrfOperandsHaveAVectorWidth) {
  TensorAux l1_v8 = kL1Col;
  l1_v8.vector_width = 8;
  Spec s = Spec::Move(4, 16, l1_v8, kVrf8);
  EXPECT_EQ(s.aux[0].vector_width, 0);
  EXPECT_EQ(s.aux[1].vector_width, 8);

  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 1000; ++trial) {
    Spec c = Canonical(RandomRawSpec(rng));
    for (int i = 0; i < c.NumOperands(); ++i) {
      if (c.aux[i].level != Level::kVRF) {
        EXPECT_EQ(c.aux[i].vector_width, 0);
      }
    }
  }
}

TEST(CanonicalTest, ClearsWhatTheKindDoesNotUse) {
  Spec s;
  s.kind = Kind::kZero;
  s.m = 4;
  s.k = 9;
  s.n = 16;
  s.aux = {kVrf8, kL1Col, kVrf8};
  Spec c = Canonical(s);
  EXPECT_EQ(c.k, 1);
  EXPECT_EQ(c.aux[0], kVrf8);
  EXPECT_EQ(c.aux[1], TensorAux{});
  EXPECT_EQ(c.aux[2], TensorAux{});
  EXPECT_EQ(c, Spec::Zero(4, 16, kVrf8));
}

TEST(CanonicalTest, CacheBudgetsArePowersOfTwo) {
  Spec s = Spec::Matmul(8, 8, 8);
  s.budget = Budget{5, 3, 700, 5000, 70000};
  EXPECT_EQ(Canonical(s).budget, (Budget{5, 3, 512, 4096, 65536}));
}

TEST(CanonicalTest, CacheBudgetIsZeroWhereNothingIsFartherOut) {
  const TensorAux l2{.level = Level::kL2};
  Spec s = Spec::Matmul(8, 8, 8, l2, {.level = Level::kL1}, l2);
  s.budget = Budget{5, 3, 512, 4096, 65536};
  EXPECT_EQ(Canonical(s).budget, (Budget{5, 3, 512, 0, 0}));
}

TEST(CanonicalTest, SingleRunOfAPanelIsPlain) {
  const TensorAux p16{.level = Level::kL2,
                      .layout = Layout::Panels(Order::kRowMajor, 16)};
  EXPECT_EQ(Spec::Matmul(1, 1, 16, {}, p16).aux[1].layout.panel_width(), 0);
  EXPECT_EQ(Spec::Matmul(1, 2, 16, {}, p16).aux[1].layout.panel_width(), 16);
  EXPECT_EQ(Spec::Matmul(1, 1, 32, {}, p16).aux[1].layout.panel_width(), 16);
  EXPECT_FALSE(Spec::Zero(1, 1, {.layout = Layout::Panels(Order::kRowMajor, 4)})
                   .aux[0]
                   .layout.packed());
}

TEST(TensorSpecTest, PackedLinesCountWholePanels) {
  auto lines = [](int64_t rows, int64_t cols, Order order, int64_t pack) {
    const Layout l = pack ? Layout::Panels(order, pack) : Layout(order);
    TensorSpec t{rows, cols, {.level = Level::kL2, .layout = l}};
    return t.Lines();
  };
  EXPECT_EQ(lines(256, 32, Order::kRowMajor, 16), 512);  // 2 panels x 256
  EXPECT_EQ(lines(256, 24, Order::kRowMajor, 16), 512);  // padded panel
  EXPECT_EQ(lines(4, 16, Order::kRowMajor, 8), 4);       // 2 runs of 2 lines
  EXPECT_EQ(lines(4, 16, Order::kRowMajor, 0), 4);       // 4 rows, 1 line each
  EXPECT_EQ(lines(3, 100, Order::kColMajor, 6), 38);     // inside one panel run
  EXPECT_EQ(lines(6, 100, Order::kColMajor, 6), 38);     // one 2400-byte run
}

// Rows interleaved in pairs only within row-major panels; one row of pairs
// keeps its layout (its elements are a pair apart), one element does not.
TEST(CanonicalTest, InterleavedOnlyInRowPanels) {
  const TensorAux pairs{
      .level = Level::kL1,
      .layout = Layout::Panels(Order::kRowMajor, 32).Paired()};
  EXPECT_EQ(Spec::Matmul(4, 1, 20, {}, pairs).aux[1], pairs);
  EXPECT_EQ(Spec::Matmul(4, 7, 20, {}, pairs).aux[1], pairs);
  EXPECT_EQ(Spec::Matmul(4, 1, 1, {}, pairs).aux[1],
            (TensorAux{.level = Level::kL1}));
  // Column-major or plain pairs cannot be made (Layout::Paired checks).
  // Interleaving is part of the problem's identity.
  TensorAux plain = pairs;
  plain.layout = Layout::Panels(Order::kRowMajor, 32);
  EXPECT_NE(Spec::Matmul(4, 7, 20, {}, pairs),
            Spec::Matmul(4, 7, 20, {}, plain));
  EXPECT_NE(PackProblem(Spec::Matmul(4, 7, 20, {}, pairs)),
            PackProblem(Spec::Matmul(4, 7, 20, {}, plain)));
}

// Panels in sections only in row-major panels and only in a tile of two
// panels or more (one panel has no order); sections are part of the
// problem's identity.
TEST(CanonicalTest, SectionsOnlyOrderTwoPanelsOrMore) {
  const TensorAux s2{
      .level = Level::kL1,
      .layout = Layout::Panels(Order::kRowMajor, 32).InSections(2)};
  EXPECT_EQ(Spec::Matmul(4, 7, 64, {}, s2).aux[1], s2);
  EXPECT_EQ(Spec::Matmul(4, 7, 33, {}, s2).aux[1], s2);
  EXPECT_EQ(Spec::Matmul(4, 7, 32, {}, s2).aux[1].layout.section_count(), 0);
  EXPECT_EQ(Spec::Matmul(4, 7, 32, {}, s2).aux[1].layout.panel_width(), 32);
  // Column-major sections, or one section, cannot be made
  // (Layout::InSections checks).
  TensorAux plain = s2;
  plain.layout = Layout::Panels(Order::kRowMajor, 32);
  EXPECT_NE(Spec::Matmul(4, 7, 64, {}, s2), Spec::Matmul(4, 7, 64, {}, plain));
  EXPECT_NE(PackProblem(Spec::Matmul(4, 7, 64, {}, s2)),
            PackProblem(Spec::Matmul(4, 7, 64, {}, plain)));
}

// A leading dimension is part of the problem's identity (and its packed
// words), except where it is the dense one.
TEST(CanonicalTest, LeadingDimensionIsPartOfTheProblem) {
  const TensorAux ld100{.layout = Layout(Order::kRowMajor).WithLd(100)};
  const TensorAux ld64{.layout = Layout(Order::kRowMajor).WithLd(64)};
  const Spec dense = Spec::Matmul(64, 64, 64);
  for (int i = 0; i < 3; ++i) {
    TensorAux a[3] = {{}, {}, {}};
    a[i] = ld100;
    const Spec s = Spec::Matmul(64, 64, 64, a[0], a[1], a[2]);
    EXPECT_EQ(s.aux[i].layout.ld(), 100);
    EXPECT_NE(s, dense);
    EXPECT_NE(PackProblem(s), PackProblem(dense));
    EXPECT_NE(absl::HashOf(s), absl::HashOf(dense));
    // Without it, the tiles keep where its rows start in an L1 way: 400
    // bytes on, unlike the dense 256 bytes, and 4352 bytes apart like them.
    const Spec tiles = WithoutLds(s);
    EXPECT_EQ(tiles.aux[i].layout.ld(), 0);
    EXPECT_EQ(tiles.aux[i].layout.WayOffset(64, 64, 4), 400);
    EXPECT_NE(tiles, WithoutLds(dense));
    a[i].layout = Layout(Order::kRowMajor).WithLd(1088);
    EXPECT_EQ(WithoutLds(Spec::Matmul(64, 64, 64, a[0], a[1], a[2])),
              WithoutLds(dense));
    a[i] = ld64;
    EXPECT_EQ(Spec::Matmul(64, 64, 64, a[0], a[1], a[2]), dense);
  }
  const Spec a100 = Spec::Matmul(64, 64, 64, ld100);
  const Spec c100 = Spec::Matmul(64, 64, 64, {}, {}, ld100);
  EXPECT_NE(PackProblem(a100), PackProblem(c100));
  // One row: no pitch to speak of.
  EXPECT_EQ(Spec::Matmul(1, 64, 64, ld100), Spec::Matmul(1, 64, 64));
}

TEST(CanonicalTest, IsIdempotent) {
  std::mt19937_64 rng(20240521);
  for (int trial = 0; trial < 5000; ++trial) {
    Spec once = Canonical(RandomRawSpec(rng));
    ASSERT_EQ(Canonical(once), once) << "trial " << trial;
  }
}

TEST(CanonicalTest, EqualProblemsHashEqual) {
  Spec a = Spec::Matmul(1, 1, 1, kL1Col, kL1Col, kL1Col);
  Spec b = Spec::Matmul(1, 1, 1, {.level = Level::kL1}, {.level = Level::kL1},
                        {.level = Level::kL1});
  EXPECT_EQ(a, b);
  EXPECT_EQ(absl::Hash<Spec>{}(a), absl::Hash<Spec>{}(b));
}

TEST(SpecTest, HashIsConsistentWithEquality) {
  std::vector<Spec> specs = {
      Spec::Matmul(4, 4, 4),
      Spec::Matmul(4, 4, 4, {}, {}, {}, /*accum=*/true),
      Spec::Matmul(4, 4, 5),
      Spec::Matmul(4, 4, 4, kL1Col),
      Spec::Zero(4, 4, kVrf8),
      Spec::Zero(4, 4, kL1Col),
      Spec::Move(4, 4, kL1Col, kVrf8),
  };
  Spec serial = specs[0];
  serial.serial = true;
  specs.push_back(serial);
  Spec budgeted = specs[0];
  budgeted.budget = Budget{16, 10, 512, 16384, 524288};
  specs.push_back(budgeted);
  budgeted.budget = Budget{16, 10, 256, 16384, 524288};
  specs.push_back(budgeted);
  budgeted.budget = Budget{16, 9, 256, 16384, 524288};
  specs.push_back(budgeted);
  Spec batched = specs[0];
  batched.b = 2;
  specs.push_back(batched);
  const Layout p32 = Layout::Panels(Order::kRowMajor, 32);
  specs.push_back(Spec::Matmul(4, 4, 64, {}, {.layout = p32}));
  specs.push_back(Spec::Matmul(4, 4, 64, {}, {.layout = p32.Paired()}));
  EXPECT_TRUE(absl::VerifyTypeImplementsAbslHashCorrectly(specs));
}

}  // namespace
}  // namespace amarena
