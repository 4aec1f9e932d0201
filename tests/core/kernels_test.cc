// The catalogue's least cost of writing a row of outputs (core/kernels.h,
// LeastRowStoreCost), which the lower bound charges per row of an f32 C: it
// must never exceed what a store kernel pays for the row, nor what the row
// pays when tiles cut it in two.
#include "core/kernels.h"

#include "gtest/gtest.h"

namespace amarena {
namespace {

std::vector<Target> Targets() {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  return {Target::Avx2(caches), Target::Avx512(caches)};
}

// The vector_store kernel's cost for one row of `cols` held in registers of
// `vw` lanes, or nullopt when it does not apply.
std::optional<int64_t> StoreKernelCost(int64_t cols, int vw, const Target& t) {
  const TensorAux regs{DType::kF32, Level::kVRF, Order::kRowMajor,
                       static_cast<uint8_t>(vw)};
  const TensorAux mem{DType::kF32, Level::kL1, Order::kRowMajor, 0};
  const Spec move = Spec::Move(1, cols, regs, mem);
  const KernelInfo& k = Info(KernelId::kVectorStore);
  if (!k.applies(move, t)) return std::nullopt;
  return k.cost(move, t);
}

TEST(LeastRowStoreCostTest, NeverExceedsTheStoreKernel) {
  for (const Target& t : Targets()) {
    int tried = 0;
    for (int64_t cols = 1; cols <= 100; ++cols)
      for (int vw : {1, 8, t.f32_lanes}) {
        std::optional<int64_t> cost = StoreKernelCost(cols, vw, t);
        if (!cost) continue;
        ++tried;
        EXPECT_LE(LeastRowStoreCost(cols, t), *cost)
            << Name(t.isa) << " cols " << cols << " vw " << vw;
      }
    EXPECT_GT(tried, 150) << Name(t.isa);
    // Whole vectors cost a store each, and a tail costs something.
    EXPECT_EQ(LeastRowStoreCost(4 * t.f32_lanes, t), 4 * t.cost.store);
    EXPECT_GT(LeastRowStoreCost(4 * t.f32_lanes + 1, t),
              LeastRowStoreCost(4 * t.f32_lanes, t));
  }
}

TEST(LeastRowStoreCostTest, CuttingARowNeverCostsLess) {
  for (const Target& t : Targets())
    for (int64_t a = 1; a <= 80; ++a)
      for (int64_t b = 1; b <= 80; ++b) {
        EXPECT_GE(LeastRowStoreCost(a, t) + LeastRowStoreCost(b, t),
                  LeastRowStoreCost(a + b, t))
            << Name(t.isa) << " " << a << " + " << b;
        EXPECT_GE(LeastRowLoadCost(a, t) + LeastRowLoadCost(b, t),
                  LeastRowLoadCost(a + b, t))
            << Name(t.isa) << " " << a << " + " << b;
      }
}

}  // namespace
}  // namespace amarena
