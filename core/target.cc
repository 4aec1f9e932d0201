#include "core/target.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/price_table.h"

namespace amarena {

int64_t CostParams::RunLine(int64_t bytes) const {
  const int64_t dense = line_dense[static_cast<int>(Level::kGL)];
  if (bytes <= kDramRunBytes[0]) return line_gl_run[0];
  if (bytes >= kDramRowBytes) return dense;
  // Between the measured lengths around `bytes` (the whole row: dense),
  // linear in log2 of the length.
  int i = 1;
  while (i < kDramRunSteps && kDramRunBytes[i] < bytes) ++i;
  const int64_t r0 = kDramRunBytes[i - 1], p0 = line_gl_run[i - 1];
  const int64_t r1 = i < kDramRunSteps ? kDramRunBytes[i] : kDramRowBytes;
  const int64_t p1 = i < kDramRunSteps ? line_gl_run[i] : dense;
  const double f = std::log2(static_cast<double>(bytes) / r0) /
                   std::log2(static_cast<double>(r1) / r0);
  return p0 + std::llround(f * static_cast<double>(p1 - p0));
}

int64_t CostParams::BandLine(int64_t bytes) const {
  const int64_t dense = line_dense[static_cast<int>(Level::kGL)];
  auto at = [&](int i) { return std::max(line_gl_band[i], dense); };
  if (bytes <= kDramBandBytes[0]) return at(0);
  if (bytes >= kDramBandBytes[kDramBandSteps - 1])
    return at(kDramBandSteps - 1);
  int i = 1;
  while (kDramBandBytes[i] < bytes) ++i;
  const int64_t r0 = kDramBandBytes[i - 1], p0 = at(i - 1), p1 = at(i);
  const double f = std::log2(static_cast<double>(bytes) / r0) /
                   std::log2(static_cast<double>(kDramBandBytes[i]) / r0);
  return p0 + std::llround(f * static_cast<double>(p1 - p0));
}

int64_t StreamPrefetchFor(const CostParams& c, Isa isa, int elem_bytes) {
  auto as = [](int64_t field, int64_t refined) {
    return field == kStreamPrefetchInherit ? refined : field;
  };
  if (elem_bytes == 2) {
    const int64_t bf16 = as(c.stream_prefetch_bf16, c.stream_prefetch);
    return isa == Isa::kAvx512 ? as(c.stream_prefetch_bf16_zmm, bf16) : bf16;
  }
  return isa == Isa::kAvx512 ? as(c.stream_prefetch_zmm, c.stream_prefetch)
                             : c.stream_prefetch;
}

absl::string_view Name(Isa isa) {
  return isa == Isa::kAvx2 ? "avx2" : "avx512";
}

Target Target::Avx2(const CacheSizes& caches) {
  Target t;
  t.isa = Isa::kAvx2;
  t.vector_registers = 16;
  t.f32_lanes = 8;
  t.l1_lines = FloorPow2(caches.l1d / kLineBytes);
  // A part of L2, set by the prices (CostParams::l2_share_pct): what the
  // search places there shares it with the lines streaming through (B panels
  // from L3, the C blocks going back and forth) and with conflict misses.
  t.l2_bytes = caches.l2;
  // L3 likewise (CostParams::l3_share_pct):
  // with all of its per-core share, a model that hid L3's views under the
  // work packed the whole of 2048^3's B (16 MiB) there and streamed it for
  // every strip of rows (0.81x the tree found under three quarters on the
  // Zen 4 host).
  t.l3_bytes = caches.l3;
  t.SetPrices(t.cost);
  return t;
}

void Target::SetPrices(const CostParams& c) {
  cost = c;
  l2_lines = FloorBudgetLines(l2_bytes / kLineBytes * cost.l2_share_pct / 100);
  l3_lines = FloorBudgetLines(l3_bytes / kLineBytes * cost.l3_share_pct / 100);
}

Target Target::Avx512(const CacheSizes& caches) {
  Target t = Avx2(caches);
  t.isa = Isa::kAvx512;
  t.vector_registers = 32;
  t.f32_lanes = 16;
  return t;
}

Spec Target::Bind(Spec s) const {
  if (!s.budget) s.budget = MaxBudget();
  return Canonical(s);
}

Target Target::ForRoot(const Spec& bound) const {
  Target t = *this;
  t.dram_operands = !bound.OperandsFitL3();
  return t;
}

std::string Target::Fingerprint() const {
  return absl::StrCat(Name(isa), "-w", workers, "-vr", vector_registers, "-gpr",
                      gprs, "-l1:", l1_lines, "-l2:", l2_lines,
                      "-l3:", l3_lines, bf16_dot ? "-bf16dp" : "",
                      dram_operands ? "" : "-warm", "-cm", kCostModelVersion,
                      "-p", PricesHash(cost));
}

}  // namespace amarena
