// Which price table the host's Target uses, and price tables in the search
// database. The policy (docs/calibration.md):
//   1. AMARENA_PRICES, when set: `default` (the first shipped table), `host`
//      (the table stored for this CPU; an error if there is none) or a
//      shipped table's label;
//   2. else the table stored in the search database for this CPU identity
//      (written by `amarena calibrate`);
//   3. else the shipped table of this vendor, family and model;
//   4. else the nearest shipped table (core/price_table.h, NearestShipped).
// Choosing never measures anything: a host with a stored table reads it.
//
//   absl::StatusOr<ChosenPrices> p = HostPrices();
//   target.cost = p->table.cost;   // p->Describe() says where they came from
#ifndef AMARENA_RUNTIME_PRICES_H_
#define AMARENA_RUNTIME_PRICES_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/price_table.h"
#include "jit/cpu_features.h"

namespace amarena {

CpuIdentity IdentityOf(const CpuFeatures& cpu);

struct ChosenPrices {
  enum class Source { kStored, kShipped, kNearest, kForced };
  PriceTable table;
  Source source = Source::kShipped;
  std::string forced;  // AMARENA_PRICES's value, for kForced
  // "calibrated on this host", "shipped table for zen4-epyc-vm (...)",
  // "nearest shipped table zen5-epyc-vm (...); run amarena calibrate",
  // "AMARENA_PRICES=default: zen5-epyc-vm".
  std::string Describe() const;
  // Why a table stored for this CPU was passed over ("" when none was): the
  // caller logs it (a warning: run amarena calibrate).
  std::string unusable_stored;
  // "stored", "shipped", "nearest" or "forced".
  absl::string_view SourceName() const;
};

// The policy above for `cpu`, reading the database at `db_path` ("" for
// none) and with `forced` as AMARENA_PRICES's value ("" when unset). A bad
// `forced` is InvalidArgument naming it and the choices; `host` without a
// stored table is FailedPrecondition saying to run amarena calibrate.
absl::StatusOr<ChosenPrices> ChoosePrices(const CpuIdentity& cpu,
                                          const std::string& db_path,
                                          absl::string_view forced);
// ChoosePrices(IdentityOf(DetectCpu()), db_path, AMARENA_PRICES).
absl::StatusOr<ChosenPrices> HostPrices(const std::string& db_path);
absl::StatusOr<ChosenPrices> HostPrices();  // at DefaultDbPath()

// The table stored for `cpu` in the database at `db_path`, read without
// creating, changing or setting aside anything: nullopt when there is no
// file, no table for this CPU, or the file is not a current amarena
// database (the runtime's SearchDb deals with those). A stored table that
// does not parse (one written by an amarena whose prices had other fields)
// is nullopt too, and `unusable` (if given) says why.
std::optional<PriceTable> LoadStoredPrices(const std::string& db_path,
                                           const CpuIdentity& cpu,
                                           std::string* unusable = nullptr);
// Stores `table` (clamped: ClampPrices) for table.cpu, replacing any stored
// for the same identity; creates the database if needed. Errors name the
// path and the problem.
absl::Status StorePrices(const std::string& db_path, const PriceTable& table);

}  // namespace amarena

#endif  // AMARENA_RUNTIME_PRICES_H_
