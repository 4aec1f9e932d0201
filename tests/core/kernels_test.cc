// What the lower bound takes from the kernel catalogue (core/kernels.h): the
// least cost of writing a row of outputs (LeastRowStoreCost), charged per row
// of an f32 C, must never exceed what a store kernel pays for the row, nor
// what the row pays when tiles cut it in two; and a kernel that claims
// loads_rows_and_vectors must cost at least LeastLoads wherever it applies.
#include "core/kernels.h"

#include "gtest/gtest.h"

namespace amarena {
namespace {

std::vector<Target> Targets() {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  return {Target::Avx2(caches), Target::Avx512(caches)};
}

// The vector_store kernel's cost for one row of `cols` held in registers of
// `vw` lanes (a row of a matrix whose rows start off 32-byte boundaries, when
// `unaligned`), or nullopt when it does not apply.
std::optional<int64_t> StoreKernelCost(int64_t cols, int vw, const Target& t,
                                       bool unaligned) {
  const TensorAux regs{DType::kF32, Level::kVRF, Order::kRowMajor,
                       static_cast<uint8_t>(vw)};
  TensorAux mem{DType::kF32, Level::kL1, Order::kRowMajor, 0};
  if (unaligned) mem.layout = mem.layout.WithUnalignedRows(true);
  const Spec move = Spec::Move(1, cols, regs, mem);
  const KernelInfo& k = Info(KernelId::kVectorStore);
  if (!k.applies(move, t)) return std::nullopt;
  return k.cost(move, t);
}

TEST(LeastRowStoreCostTest, NeverExceedsTheStoreKernel) {
  for (const Target& t : Targets())
    for (bool unaligned : {false, true}) {
      int tried = 0;
      for (int64_t cols = 1; cols <= 100; ++cols)
        for (int vw : {1, 8, t.f32_lanes}) {
          std::optional<int64_t> cost = StoreKernelCost(cols, vw, t, unaligned);
          if (!cost) continue;
          ++tried;
          EXPECT_LE(LeastRowStoreCost(cols, t, unaligned), *cost)
              << Name(t.isa) << " cols " << cols << " vw " << vw
              << (unaligned ? " unaligned" : "");
        }
      EXPECT_GT(tried, 150) << Name(t.isa);
      // Whole vectors cost a store each (and half a store more each when
      // unaligned), and a tail costs something.
      EXPECT_EQ(LeastRowStoreCost(4 * t.f32_lanes, t, unaligned),
                4 * (t.StorePrice() + (unaligned ? (t.StorePrice() + 1) / 2
                                                 : 0)));
      EXPECT_GT(LeastRowStoreCost(4 * t.f32_lanes + 1, t, unaligned),
                LeastRowStoreCost(4 * t.f32_lanes, t, unaligned));
    }
}

TEST(LeastRowStoreCostTest, CuttingARowNeverCostsLess) {
  for (const Target& t : Targets())
    for (bool u : {false, true})
      for (int64_t a = 1; a <= 80; ++a)
        for (int64_t b = 1; b <= 80; ++b) {
          EXPECT_GE(LeastRowStoreCost(a, t, u) + LeastRowStoreCost(b, t, u),
                    LeastRowStoreCost(a + b, t, u))
              << Name(t.isa) << " " << a << " + " << b << " " << u;
          EXPECT_GE(LeastRowLoadCost(a, t, u) + LeastRowLoadCost(b, t, u),
                    LeastRowLoadCost(a + b, t, u))
              << Name(t.isa) << " " << a << " + " << b << " " << u;
        }
}

// Every kernel whose peak rate claims the broadcast form's loads costs at
// least LeastLoads load prices (and LeastCost) at every f32 Spec it
// applies to, over register tiles of every width the targets allow.
TEST(PeakRateTest, KernelsThatClaimLoadsPayThem) {
  for (const Target& t : Targets()) {
    int checked = 0;
    for (int64_t m = 1; m <= 12; ++m)
      for (int64_t n = 1; n <= 40; ++n)
        for (int vw : {1, 8, t.f32_lanes}) {
          const TensorAux mem{DType::kF32, Level::kL1, Order::kRowMajor, 0};
          const TensorAux regs{DType::kF32, Level::kVRF, Order::kRowMajor,
                               static_cast<uint8_t>(vw)};
          const Spec s = Spec::Matmul(m, 1, n, mem, mem, regs, true);
          for (KernelId id : AllKernels()) {
            const KernelInfo& k = Info(id);
            const std::optional<PeakRate> r = k.peak_rate(s, t);
            if (!r || !r->loads_rows_and_vectors || !k.applies(s, t)) continue;
            ++checked;
            EXPECT_GE(k.cost(s, t), LeastLoads(*r, s) * t.LoadPrice())
                << k.name << " " << Name(t.isa) << " m " << m << " n " << n
                << " vw " << vw;
            EXPECT_GE(k.cost(s, t), LeastCost(*r, s))
                << k.name << " " << Name(t.isa) << " m " << m << " n " << n
                << " vw " << vw;
          }
        }
    EXPECT_GT(checked, 500) << Name(t.isa);
  }
}

// B vectors straddling lines (rows unaligned): half a load slot each on top
// of the broadcast kernel's max(FMAs, loads), or, where the prices say
// they are loads beside the FMAs (CostParams::split_beside_fma), on its
// load side: nothing more for a tile the FMAs bound, as much for one its
// loads bound.
TEST(BroadcastFmaTest, StraddlingBVectorsJoinTheLoadsWherePricedSo) {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  for (int beside : {0, 1}) {
    Target t = Target::Avx512(caches);
    CostParams c = t.cost;
    c.split_beside_fma = beside;
    t.SetPrices(c);
    const TensorAux regs{DType::kF32, Level::kVRF, Order::kRowMajor, 16};
    TensorAux mem{DType::kF32, Level::kL1, Order::kRowMajor, 0};
    TensorAux odd = mem;
    odd.layout = odd.layout.WithUnalignedRows(true);
    const KernelInfo& k = Info(KernelId::kBroadcastFma);
    for (int64_t m : {12, 1}) {
      const int64_t n = m == 12 ? 32 : 64;
      const Spec aligned = Spec::Matmul(m, 1, n, mem, mem, regs, true);
      const Spec split = Spec::Matmul(m, 1, n, mem, odd, regs, true);
      ASSERT_TRUE(k.applies(aligned, t) && k.applies(split, t));
      const int64_t extra = k.cost(split, t) - k.cost(aligned, t);
      const int64_t each = (t.LoadPrice() + 1) / 2;
      const int64_t vectors = n / 16;
      if (!beside || m == 1) {
        EXPECT_EQ(extra, vectors * each) << "m " << m << " beside " << beside;
      } else {
        EXPECT_EQ(extra, 0) << "m " << m;  // 24 FMAs over 14 loads + 2 splits
      }
    }
  }
}

}  // namespace
}  // namespace amarena
