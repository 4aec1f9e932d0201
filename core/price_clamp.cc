// ClampPrices (core/price_table.h): the orders between prices the search
// relies on, restored where a measurement broke them.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/price_table.h"

namespace amarena {

namespace {

constexpr int kGL = static_cast<int>(Level::kGL);
constexpr int kL3 = static_cast<int>(Level::kL3);
constexpr int kL2 = static_cast<int>(Level::kL2);

}  // namespace

CostParams ClampPrices(CostParams c) {
  for (int64_t* p : {&c.fma, &c.load, &c.store, &c.loop_iteration})
    *p = std::max<int64_t>(*p, 1);
  c.loop_iteration_stack = std::max(c.loop_iteration_stack, c.loop_iteration);
  c.parallel_setup = std::max<int64_t>(c.parallel_setup, 0);
  for (auto* prices : {&c.line_dense, &c.line_strided}) {
    auto& p = *prices;
    p[kL2] = std::max<int64_t>(p[kL2], 1);
    p[kL3] = std::max(p[kL3], p[kL2]);
    p[kGL] = std::max(p[kGL], p[kL3]);
  }
  // Raising a strided price to its dense one keeps the level order, since
  // both orders held before.
  for (int l : {kL2, kL3, kGL})
    c.line_strided[l] = std::max(c.line_strided[l], c.line_dense[l]);
  c.line_gl_adjacent_panels =
      std::clamp(c.line_gl_adjacent_panels, c.line_dense[kGL],
                 c.line_strided[kGL]);
  c.line_gl_far_panels = std::clamp(c.line_gl_far_panels, c.line_dense[kL3],
                                    c.line_strided[kGL]);
  // Runs: never cheaper than the dense price, and a longer run never
  // dearer than a shorter one (from the longest down).
  int64_t longer = c.line_dense[kGL];
  for (int i = CostParams::kDramRunSteps - 1; i >= 0; --i)
    longer = c.line_gl_run[i] = std::max(c.line_gl_run[i], longer);
  // A band's line: 0 (the dense price) or dearer than dense.
  for (int64_t& p : c.line_gl_band)
    if (p <= c.line_dense[kGL]) p = 0;
  c.dram_run_bytes = std::max<int64_t>(c.dram_run_bytes, kLineBytes);
  c.dram_streams = std::max<int64_t>(c.dram_streams, 1);
  c.l2_share_pct = std::clamp<int64_t>(c.l2_share_pct, 1, 100);
  c.l3_share_pct = std::clamp<int64_t>(c.l3_share_pct, 1, 100);
  c.stream_prefetch =
      std::clamp<int64_t>(c.stream_prefetch, 0, kStreamPrefetchL2);
  for (int64_t* f : {&c.stream_prefetch_zmm, &c.stream_prefetch_bf16,
                     &c.stream_prefetch_bf16_zmm})
    *f = std::clamp<int64_t>(*f, 0, kStreamPrefetchInherit);
  c.split_beside_fma = std::clamp<int64_t>(c.split_beside_fma, 0, 1);
  // Whole lines, at most a page ahead.
  c.panel_prefetch_bytes =
      std::clamp<int64_t>(c.panel_prefetch_bytes, 0, 4096) / kLineBytes *
      kLineBytes;
  c.l2_overlap_pct_zmm = std::clamp<int64_t>(c.l2_overlap_pct_zmm, 10, 100);
  c.line_shared_set_zmm = std::max<int64_t>(c.line_shared_set_zmm, 0);
  // A zmm price is at least its ymm price (0: the same).
  for (auto [zmm, ymm] : {std::pair{&c.fma_zmm, c.fma},
                          std::pair{&c.load_zmm, c.load},
                          std::pair{&c.store_zmm, c.store}})
    if (*zmm != 0) *zmm = *zmm <= ymm ? 0 : *zmm;
  // A load beside FMAs is at least a load (0: the same).
  if (c.load_beside_fma <= c.load) c.load_beside_fma = 0;
  return c;
}

}  // namespace amarena
