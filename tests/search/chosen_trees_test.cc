// What the search chooses for particular Specs: which kernels, register
// tiles, packing and loops the best trees hold, and how equal costs are
// broken. (search_test.cc: that the DP is exact and consistent.)
#include <algorithm>

#include "absl/strings/match.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/search.h"
#include "tests/testing/impl_walk.h"

namespace amarena {
namespace {

using testing::ForEachNode;
using testing::UsesKernel;

Target Avx2() {
  return Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
}

TEST(ChosenTreeTest, VectorisableMatmulUsesTheBroadcastFmaKernel) {
  Target t = Avx2();
  Searcher s(t);
  auto impl = s.Solve(t.Bind(Spec::Matmul(64, 64, 64)));
  ASSERT_TRUE(impl.ok());
  EXPECT_TRUE(UsesKernel(**impl, KernelId::kBroadcastFma)) << PrintImpl(**impl);
}

TEST(ChosenTreeTest, Avx512TargetUsesZmmRegisterTiles) {
  const Target t =
      Target::Avx512({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  Searcher s(t);
  auto impl = s.Solve(t.Bind(Spec::Matmul(256, 256, 256)));
  ASSERT_TRUE(impl.ok());
  bool zmm_tile = false;
  ForEachNode(**impl, [&](const ImplNode& node) {
    const ImplNode* n = &node;
    if (n->how.type == NodeType::kKernel &&
        n->how.kernel == KernelId::kBroadcastFma)
      zmm_tile |= n->spec.aux[2].vector_width == 16;
  });
  EXPECT_TRUE(zmm_tile) << PrintImpl(**impl);
  EXPECT_LE(impl->get()->cost.peak.vrf, 32);
}

// The shape of a large matmul's tree: B packed, A viewed in L1, and C held in
// register tiles (where the kernels run).
TEST(ChosenTreeTest, PackedBAndRegisterTilesFor512And1024) {
  const Target t = Avx2();
  for (int64_t size : {512, 1024}) {
    Searcher s(t);
    auto impl = s.Solve(t.Bind(Spec::Matmul(size, size, size)));
    ASSERT_TRUE(impl.ok());
    bool packed_b = false, a_l1 = false, c_regs = false;
    ForEachNode(**impl, [&](const ImplNode& node) {
      const ImplNode* n = &node;
      if (n->how.type == NodeType::kAlloc) {
        const AllocInfo& a = n->how.alloc;
        packed_b |= a.kind == AllocKind::kBuffer && a.operand == 1 &&
                    a.to.layout.packed();
        a_l1 |= a.operand == 0 && a.to.level == Level::kL1;
        c_regs |= a.operand == 2 && a.to.level == Level::kVRF;
      }
    });
    EXPECT_TRUE(packed_b && a_l1 && c_regs) << PrintImpl(**impl);
  }
}

// Equal costs go to the shallower tree before the smaller peak: the AVX-512
// 6x64 register tiles of 1024^3 and 2048^3 are one broadcast kernel per k
// step (four B loads, six broadcasts), not six 2x32 kernels that need two
// fewer scratch registers at the same modelled cost.
TEST(ChosenTreeTest, EqualCostsGoToTheShallowerTree) {
  Cost shallow{.main = 10, .peak = {}, .depth = 3};
  Cost deep{.main = 10, .peak = {}, .depth = 5};
  shallow.peak.vrf = 5;
  deep.peak.vrf = 3;
  EXPECT_LT(shallow, deep);
  const Cost dearer{.main = 11, .peak = {}, .depth = 1};
  EXPECT_LT(deep, dearer);

  const Target t =
      Target::Avx512({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  for (int64_t size : {1024, 2048}) {
    Searcher s(t);
    auto impl = s.Solve(t.Bind(Spec::Matmul(size, size, size)));
    ASSERT_TRUE(impl.ok());
    int64_t widest = 0;
    ForEachNode(**impl, [&](const ImplNode& node) {
      if (node.how.type == NodeType::kKernel &&
          node.how.kernel == KernelId::kBroadcastFma)
        widest = std::max(widest, node.spec.m * node.spec.n);
    });
    EXPECT_EQ(widest, 6 * 64) << PrintImpl(**impl);
  }
}

// A pre-packed bf16 B streamed from DRAM is read a few panels at a time
// (CostParams::dram_streams): no view of B from DRAM, and no loop along k
// over B still in DRAM, spans more panels, on either ISA.
TEST(ChosenTreeTest, PrePackedBIsStreamedAFewPanelsAtATime) {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  for (const Target& t : {Target::Avx2(caches), Target::Avx512(caches)}) {
    for (const char* text : {"matmul 1x2048x16384 bf16*bf16->f32 b=p32",
                             "matmul 1x2048x16384 bf16*bf16->f32 b=p64",
                             "matmul 1x2048x16384 bf16*bf16->f32 b=p32s2",
                             "matmul 16x300x100 bf16*bf16->f32 b=p16s2"}) {
      Searcher s(t);
      auto impl = s.Solve(t.Bind(*ParseSpec(text)));
      ASSERT_TRUE(impl.ok()) << impl.status();
      ForEachNode(**impl, [&](const ImplNode& node) {
        const ImplNode* n = &node;
        const TensorSpec b = n->spec.Operand(1);
        if (n->how.type == NodeType::kLoop && n->how.loop.dim == Dim::kK &&
            b.aux.level == Level::kGL) {
          EXPECT_LE(b.Panels(), t.cost.dram_streams) << PrintImpl(**impl);
        }
        if (n->how.type == NodeType::kAlloc && n->how.alloc.operand == 1 &&
            b.aux.level == Level::kGL) {
          EXPECT_LE(b.Panels(), t.cost.dram_streams) << PrintImpl(**impl);
        }
      });
    }
  }
}

// Panels in sections: a loop along n over more than one group of S panels
// takes whole groups (the emitter steps a group at a time), a tile within a
// group any whole panels; and the vector-matrix multiply reads two panels
// side by side a section apart, not one after the other.
TEST(ChosenTreeTest, PanelsInSectionsAreTiledByWholeGroups) {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  for (const Target& t : {Target::Avx2(caches), Target::Avx512(caches)}) {
    for (const char* text : {"matmul 1x2048x16384 bf16*bf16->f32 b=p32s2",
                             "matmul 16x300x1000 bf16*bf16->f32 b=p16s4",
                             "matmul 5x64x200 f32 b=p8s4"}) {
      Searcher s(t);
      auto impl = s.Solve(t.Bind(*ParseSpec(text)));
      ASSERT_TRUE(impl.ok()) << impl.status();
      bool far_pair = false;
      ForEachNode(**impl, [&](const ImplNode& node) {
        const TensorSpec b = node.spec.Operand(1);
        if (node.how.type == NodeType::kLoop && node.how.loop.dim == Dim::kN &&
            b.layout().in_sections()) {
          const int64_t p = b.layout().panel_width();
          const int64_t group = b.layout().section_count() * p;
          EXPECT_EQ(node.how.loop.tile % (b.cols > group ? group : p), 0)
              << PrintImpl(**impl);
        }
        far_pair |= node.how.type == NodeType::kAlloc &&
                    node.how.alloc.operand == 1 && b.aux.level == Level::kGL &&
                    b.Panels() == 2 && !b.AdjacentPanels();
      });
      if (absl::StrContains(text, "1x2048x16384")) {
        EXPECT_TRUE(far_pair) << PrintImpl(**impl);
      }
    }
  }
}

// A column-major bf16 B in DRAM is read one column after another: no loop
// along k cuts the columns of a B still in DRAM while spanning more than
// dram_streams of them (which would read every column in pieces, far apart
// in time), on either ISA.
TEST(ChosenTreeTest, ColumnMajorBIsReadColumnAfterColumn) {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  Target avx512 = Target::Avx512(caches);
  avx512.bf16_dot = true;
  for (const Target& t : {Target::Avx2(caches), avx512}) {
    Searcher s(t);
    auto impl =
        s.Solve(t.Bind(*ParseSpec("matmul 1x2048x16384 bf16*bf16->f32 b=col")));
    ASSERT_TRUE(impl.ok()) << impl.status();
    ForEachNode(**impl, [&](const ImplNode& node) {
      const ImplNode* n = &node;
      const TensorSpec b = n->spec.Operand(1);
      if (n->how.type == NodeType::kLoop && n->how.loop.dim == Dim::kK &&
          b.aux.level == Level::kGL && n->how.loop.tile < n->spec.k) {
        EXPECT_LE(b.cols, t.cost.dram_streams) << PrintImpl(**impl);
      }
    });
  }
}

// The pitch decides whether B is viewed in L1 as it is or copied into
// panels first. B of matmul 64x64x64 f32 has rows 256 bytes apart, on 16 of
// L1's 64 sets, and the whole of it is viewed; at 288 bytes (ldb=72) its
// rows start on 32-byte boundaries, as good as aligned, and it is viewed
// too. 16 KiB apart (ldb=4096) every row starts on one set (the view is not
// dense, core/layout.h Dense); 284 bytes apart (ldb=71) nearly every vector
// of a row straddles two lines (Layout::UnalignedRows), read again for every
// row tile of A: both are packed, on both ISAs.
TEST(ChosenTreeTest, ThePitchDecidesWhetherBIsViewedOrPacked) {
  const CacheSizes caches{.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20};
  for (const Target& t : {Target::Avx512(caches), Target::Avx2(caches)}) {
    for (const auto& [text, packs] :
         {std::pair{"matmul 64x64x64 f32", false},
          std::pair{"matmul 64x64x64 f32 ldb=72", false},
          std::pair{"matmul 64x64x64 f32 ldb=4096", true},
          std::pair{"matmul 64x64x64 f32 ldb=71", true},
          std::pair{"matmul 64x64x64 f32 lda=67 ldb=71 ldc=73", true}}) {
      Searcher s(t);
      auto impl = s.Solve(t.Bind(*ParseSpec(text)));
      ASSERT_TRUE(impl.ok()) << impl.status();
      bool viewed_whole = false, packed = false;
      ForEachNode(**impl, [&](const ImplNode& node) {
        if (node.how.type != NodeType::kAlloc || node.how.alloc.operand != 1)
          return;
        packed |= node.how.alloc.kind == AllocKind::kBuffer;
        viewed_whole |= node.how.alloc.kind == AllocKind::kView &&
                        node.spec.k == 64 && node.spec.n == 64;
      });
      EXPECT_EQ(viewed_whole, !packs) << text << "\n" << PrintImpl(**impl);
      EXPECT_EQ(packed, packs) << text << "\n" << PrintImpl(**impl);
    }
  }
}

// Where loads issued among FMAs cost more than alone (CostParams::
// load_beside_fma; the Intel guest: 3.0 ymm loads a cycle alone, 1.8-2.3
// beside FMAs), an AVX2 register tile is not run as narrow broadcast
// kernels that broadcast A once per B vector: 64³ takes 6x16 tiles, each
// k step one kernel (two B vectors, six broadcasts, twelve FMAs), not a
// 3x32 tile as four 3x8 kernels (four B vectors, twelve broadcasts), which
// ran 0.8x as fast there while the model priced the two alike.
TEST(ChosenTreeTest, DearLoadsBesideFmasKeepBroadcastKernelsWide) {
  Target t = Avx2();
  CostParams beside = t.cost;
  beside.load = 2;
  beside.load_beside_fma = 3;
  t.SetPrices(beside);
  Searcher s(t);
  auto impl = s.Solve(t.Bind(Spec::Matmul(64, 64, 64)));
  ASSERT_TRUE(impl.ok()) << impl.status();
  int kernels = 0;
  ForEachNode(**impl, [&](const ImplNode& n) {
    if (n.how.type != NodeType::kKernel ||
        n.how.kernel != KernelId::kBroadcastFma)
      return;
    ++kernels;
    EXPECT_GE(n.spec.n, 16) << PrintImpl(**impl);
  });
  EXPECT_GT(kernels, 0) << PrintImpl(**impl);
}

// At the Intel guest's price of 4 (a 3x32 tile's k step as two 3x16
// kernels, 10 loads, took 6.5 cycles where a 6x16 kernel's took 6.0), 100^3
// with AVX2 runs no 3-row kernels (3x32 register tiles as two 3x16 kernels a
// step, which ran 1.02x slower there); at 3 the model priced the two alike
// and took the 3-row ones.
int ThreeRowKernels(int64_t load_beside_fma) {
  Target t = Avx2();
  CostParams beside = t.cost;
  beside.load = 2;
  beside.load_beside_fma = load_beside_fma;
  t.SetPrices(beside);
  Searcher s(t);
  auto impl = s.Solve(t.Bind(Spec::Matmul(100, 100, 100)));
  EXPECT_TRUE(impl.ok()) << impl.status();
  if (!impl.ok()) return -1;
  int three = 0, kernels = 0;
  ForEachNode(**impl, [&](const ImplNode& n) {
    if (n.how.type != NodeType::kKernel ||
        n.how.kernel != KernelId::kBroadcastFma)
      return;
    ++kernels;
    three += n.spec.m == 3;
  });
  EXPECT_GT(kernels, 0) << PrintImpl(**impl);
  return three;
}

TEST(ChosenTreeTest, LoadsBesideFmasAtFourTakeNoThreeRowKernels) {
  EXPECT_EQ(ThreeRowKernels(4), 0);
  EXPECT_GT(ThreeRowKernels(3), 0);
}

}  // namespace
}  // namespace amarena
