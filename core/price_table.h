// A price table: the cost model's prices (CostParams) together with the CPU
// they were measured on. Tables are shipped in the source
// (core/cost_tables.cc), measured on the host by `amarena calibrate`
// (runtime/calibrate.h) and stored in the search database keyed by the CPU
// identity (runtime/prices.h), which also holds the policy that picks one.
//
//   PriceTable t = ShippedPriceTables()[0];
//   std::string text = PricesToText(t);
//   absl::StatusOr<PriceTable> back = PricesFromText(text);  // == t
//   ShippedMatch m = NearestShipped(identity);  // m.table, m.exact
//
// Plain data and text here: core/ never reads CPUID or a file.
#ifndef AMARENA_CORE_PRICE_TABLE_H_
#define AMARENA_CORE_PRICE_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/target.h"

namespace amarena {

// What a price table belongs to: the CPUID vendor, display family and model
// (stepping left out: steppings of one model share their prices), the brand
// string and the cache geometry the measurements ran against.
struct CpuIdentity {
  std::string vendor;  // "AuthenticAMD", "GenuineIntel"
  int family = 0;      // display family: 25 (0x19) is Zen 3/4, 26 Zen 5
  int model = 0;       // display model
  std::string name;    // CPUID brand string, e.g. "AMD EPYC"
  int64_t l1d_bytes = 0;
  int64_t l2_bytes = 0;
  int64_t l3_bytes = 0;

  // The search database's key for a stored table: every field, so a table is
  // never used on a CPU that differs in any of them.
  std::string Key() const;
  // "AuthenticAMD family 25 model 17 (AMD EPYC; L1d 32 KiB, L2 1024 KiB,
  // L3 32768 KiB)".
  std::string Describe() const;
  bool operator==(const CpuIdentity&) const = default;
};

struct PriceTable {
  std::string label;  // a short name: "zen5-epyc-vm", AMARENA_PRICES=<label>
  CpuIdentity cpu;
  CostParams cost;
  bool operator==(const PriceTable& o) const;
};

// "key value" lines, one per field, in a fixed order; PricesFromText reads
// them back in any order and refuses unknown, repeated, missing or
// malformed fields with a message naming the field.
std::string PricesToText(const PriceTable& t);
absl::StatusOr<PriceTable> PricesFromText(absl::string_view text);
// One flat JSON object with the same keys (strings and integers only).
std::string PricesToJson(const PriceTable& t);
absl::StatusOr<PriceTable> PricesFromJson(absl::string_view json);

// The prices as "name=value" pairs joined by spaces, in a fixed order.
std::string CostParamsText(const CostParams& c);
// Eight hex digits of a hash of CostParamsText (FNV-1a, the same in every
// build and process): part of Target::Fingerprint, so search results found
// under one price table are never used under another.
std::string PricesHash(const CostParams& c);

// The orders the search relies on, restored by raising prices where a
// measurement broke them (a noisy run, a cache level too small to tell from
// the next). The lower bound prices every operand at the dense price of its
// level and assumes no move is cheaper than that, and the memo's boxes assume
// more budget never costs more, so:
//   every instruction and loop price >= 1, loop_iteration_stack >=
//   loop_iteration;
//   line prices by source level: GL >= L3 >= L2 >= 1 (L1 and VRF entries are
//   unused and left as they are), dense and strided each;
//   strided >= dense at every level;
//   dense GL <= line_gl_adjacent_panels <= strided GL;
//   dense L3 <= line_gl_far_panels <= strided GL;
//   dense GL <= line_gl_run at each run length, and no longer run dearer
//   than a shorter one;
//   line_gl_band 0 (the dense price) or above dense GL at each length;
//   dram_run_bytes >= 64 (one line), dram_streams >= 1, parallel_setup >= 0.
CostParams ClampPrices(CostParams c);  // core/price_clamp.cc

// Hysteresis for a re-calibration: `measured`, with every price that lies
// within `pct` per cent (and at least one unit) of the `standing` table's
// replaced by the standing one, so that measuring again on the same host
// moves a price only when the host reads it differently by more than its
// noise. A 0, where a field means "as another price" (a zmm price as the
// ymm one, a band at the dense line), settles only onto a 0; a choice
// (the stream_prefetch fields, which calibrate settles itself) never does.
// The names of
// the fields kept from `standing` whose measurement differed go to `kept`
// (if given), in the table's order.
CostParams SettlePrices(const CostParams& measured, const CostParams& standing,
                        int64_t pct, std::vector<std::string>* kept = nullptr);

// The tables shipped in the source, the first being the defaults
// (CostParams{}, measured on the project's Zen 5 development host).
absl::Span<const PriceTable> ShippedPriceTables();
// The shipped table with this label, or nullptr.
const PriceTable* FindShipped(absl::string_view label);

struct ShippedMatch {
  const PriceTable* table = nullptr;  // never null
  // Same vendor, family and model. Otherwise the nearest: of the tables of
  // the same vendor, the closest family, then the closest model (ties: the
  // first listed); of none, the defaults.
  bool exact = false;
};
// `tables` must not be empty; its first table is the fallback.
ShippedMatch NearestShipped(const CpuIdentity& cpu,
                            absl::Span<const PriceTable> tables);
ShippedMatch NearestShipped(const CpuIdentity& cpu);

}  // namespace amarena

#endif  // AMARENA_CORE_PRICE_TABLE_H_
