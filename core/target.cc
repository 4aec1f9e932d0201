#include "core/target.h"

#include "absl/strings/str_cat.h"
#include "core/price_table.h"

namespace amarena {

absl::string_view Name(Isa isa) {
  return isa == Isa::kAvx2 ? "avx2" : "avx512";
}

Target Target::Avx2(const CacheSizes& caches) {
  Target t;
  t.isa = Isa::kAvx2;
  t.vector_registers = 16;
  t.f32_lanes = 8;
  t.l1_lines = FloorPow2(caches.l1d / kLineBytes);
  t.l2_lines = FloorPow2(caches.l2 / kLineBytes);
  t.l3_lines = FloorPow2(caches.l3 / kLineBytes);
  return t;
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

std::string Target::Fingerprint() const {
  return absl::StrCat(Name(isa), "-w", workers, "-vr", vector_registers, "-gpr",
                      gprs, "-l1:", l1_lines, "-l2:", l2_lines,
                      "-l3:", l3_lines, bf16_dot ? "-bf16dp" : "", "-cm",
                      kCostModelVersion, "-p", PricesHash(cost));
}

}  // namespace amarena
