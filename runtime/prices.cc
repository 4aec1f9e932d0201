#include "runtime/prices.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "runtime/db_conn.h"
#include "runtime/db_file.h"
#include "runtime/search_db.h"

namespace amarena {

namespace {

constexpr const char* kFindPrices = "SELECT prices FROM prices WHERE cpu = ?1";
constexpr const char* kPutPrices = R"sql(
INSERT INTO prices VALUES(?1, ?2, ?3) ON CONFLICT(cpu)
  DO UPDATE SET prices = excluded.prices, stored = excluded.stored
)sql";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ShippedLabels() {
  std::vector<std::string> labels;
  for (const PriceTable& t : ShippedPriceTables()) labels.push_back(t.label);
  return absl::StrJoin(labels, ", ");
}

}  // namespace

CpuIdentity IdentityOf(const CpuFeatures& cpu) {
  return {.vendor = cpu.vendor,
          .family = cpu.family,
          .model = cpu.model,
          .name = cpu.brand,
          .l1d_bytes = cpu.l1d_bytes,
          .l2_bytes = cpu.l2_bytes,
          .l3_bytes = cpu.l3_bytes};
}

absl::string_view ChosenPrices::SourceName() const {
  switch (source) {
    case Source::kStored:
      return "stored";
    case Source::kShipped:
      return "shipped";
    case Source::kNearest:
      return "nearest";
    case Source::kForced:
      return "forced";
  }
  return "";
}

std::string ChosenPrices::Describe() const {
  switch (source) {
    case Source::kStored:
      return "calibrated on this host";
    case Source::kShipped:
      return absl::StrCat("shipped table for ", table.label, " (",
                          table.cpu.Describe(), ")");
    case Source::kNearest:
      return absl::StrCat("nearest shipped table ", table.label, " (",
                          table.cpu.Describe(), "); run amarena calibrate");
    case Source::kForced:
      return absl::StrCat("AMARENA_PRICES=", forced, ": ", table.label);
  }
  return "";
}

std::optional<PriceTable> LoadStoredPrices(const std::string& db_path,
                                           const CpuIdentity& cpu,
                                           std::string* unusable) {
  if (db_path.empty()) return std::nullopt;
  // Only a file that is there and SQLite's: opening never creates one.
  if (ProbePath(db_path).kind != PathProbe::kSqlite) return std::nullopt;
  absl::StatusOr<std::unique_ptr<DbConn>> c =
      DbConn::Open(db_path, DbConn::Mode::kReadOnly);
  if (!c.ok()) return std::nullopt;
  (*c)->WaitFor(SearchDb::kReadWait);
  absl::StatusOr<DbConn::Version> v = (*c)->ReadVersion();
  if (!v.ok() || *v != DbConn::Version::kCurrent) return std::nullopt;
  DbStmt q;
  // A database made before the prices table existed has none: not found.
  if (sqlite3_prepare_v2((*c)->db(), kFindPrices, -1, q.slot(), nullptr) !=
      SQLITE_OK)
    return std::nullopt;
  const std::string key = cpu.Key();
  q.Bind(1, key);
  if (q.Next() != SQLITE_ROW) return std::nullopt;
  std::string text = q.Text(0);
  q.Done();
  absl::StatusOr<PriceTable> t = PricesFromText(text);
  if (!t.ok() || !(t->cpu == cpu)) {
    if (unusable != nullptr)
      *unusable = absl::StrCat(
          "the prices stored in search database ", db_path,
          " for this CPU cannot be used (",
          t.ok() ? "they name another CPU" : t.status().message(),
          "); run amarena calibrate");
    return std::nullopt;
  }
  t->cost = ClampPrices(t->cost);
  return *std::move(t);
}

absl::Status StorePrices(const std::string& db_path, const PriceTable& table) {
  // Makes the file, or sets aside one of another version, as the runtime
  // would; then writes on a connection of its own.
  {
    AMARENA_ASSIGN_OR_RETURN(std::unique_ptr<SearchDb> db,
                             SearchDb::Open(db_path));
    if (db->read_only())
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot store prices in search database ", db_path,
          ": the file is read-only"));
  }
  AMARENA_ASSIGN_OR_RETURN(std::unique_ptr<DbConn> c,
                           DbConn::Open(db_path, DbConn::Mode::kReadWrite));
  c->WaitFor(std::chrono::seconds(2));
  AMARENA_RETURN_IF_ERROR(c->Exec(kPricesSchema, "add the prices table to"));
  PriceTable clamped = table;
  clamped.cost = ClampPrices(table.cost);
  const std::string key = table.cpu.Key(), text = PricesToText(clamped);
  DbStmt put;
  int rc = sqlite3_prepare_v2(c->db(), kPutPrices, -1, put.slot(), nullptr);
  if (rc != SQLITE_OK) return c->Fail(rc, "prepare to store prices in");
  put.Bind(1, key).Bind(2, text).Bind(3, NowMs());
  rc = put.Next();
  put.Done();
  if (rc != SQLITE_DONE) return c->Fail(rc, "store prices in");
  return absl::OkStatus();
}

absl::StatusOr<ChosenPrices> ChoosePrices(const CpuIdentity& cpu,
                                          const std::string& db_path,
                                          absl::string_view forced) {
  ChosenPrices p;
  if (!forced.empty()) {
    p.source = ChosenPrices::Source::kForced;
    p.forced = std::string(forced);
    if (forced == "default") {
      p.table = ShippedPriceTables().front();
    } else if (forced == "host") {
      std::string why;
      std::optional<PriceTable> stored = LoadStoredPrices(db_path, cpu, &why);
      if (!stored)
        return absl::FailedPreconditionError(
            !why.empty()
                ? absl::StrCat("AMARENA_PRICES is 'host', but ", why)
                : absl::StrCat("AMARENA_PRICES is 'host', but no prices are "
                               "stored for this CPU (",
                               cpu.Describe(), ") in search database '",
                               db_path.empty() ? "off" : db_path,
                               "'; run amarena calibrate"));
      p.table = *std::move(stored);
    } else if (const PriceTable* t = FindShipped(forced)) {
      p.table = *t;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "AMARENA_PRICES is '", forced,
          "', must be default, host or a shipped table (", ShippedLabels(),
          ")"));
    }
    return p;
  }
  if (std::optional<PriceTable> stored =
          LoadStoredPrices(db_path, cpu, &p.unusable_stored)) {
    p.table = *std::move(stored);
    p.source = ChosenPrices::Source::kStored;
    return p;
  }
  ShippedMatch m = NearestShipped(cpu);
  p.table = *m.table;
  p.source = m.exact ? ChosenPrices::Source::kShipped
                     : ChosenPrices::Source::kNearest;
  return p;
}

absl::StatusOr<ChosenPrices> HostPrices(const std::string& db_path) {
  const char* forced = std::getenv("AMARENA_PRICES");
  return ChoosePrices(IdentityOf(DetectCpu()), db_path,
                      forced == nullptr ? "" : forced);
}

absl::StatusOr<ChosenPrices> HostPrices() { return HostPrices(DefaultDbPath()); }

}  // namespace amarena
