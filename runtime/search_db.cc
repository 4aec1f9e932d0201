#include "runtime/search_db.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdlib>
#include <functional>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "runtime/db_file.h"
#include "search/replay.h"
#include "search/search.h"

namespace amarena {

namespace {

constexpr absl::string_view kFormat = "amarena search database";

// How long a writer waits for another process's transaction.
constexpr int kBusyTimeoutMs = 30000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results(
  target TEXT NOT NULL,
  spec TEXT NOT NULL,
  vrf_lo INTEGER NOT NULL, gpr_lo INTEGER NOT NULL, l1_lo INTEGER NOT NULL,
  l2_lo INTEGER NOT NULL, l3_lo INTEGER NOT NULL,
  vrf_hi INTEGER NOT NULL, gpr_hi INTEGER NOT NULL, l1_hi INTEGER NOT NULL,
  l2_hi INTEGER NOT NULL, l3_hi INTEGER NOT NULL,
  decisions TEXT NOT NULL,
  cost INTEGER NOT NULL,
  UNIQUE(target, spec, vrf_lo, gpr_lo, l1_lo, l2_lo, l3_lo,
         vrf_hi, gpr_hi, l1_hi, l2_hi, l3_hi));
)sql";

constexpr const char* kFind = R"sql(
SELECT decisions, cost FROM results
 WHERE target = ?1 AND spec = ?2
   AND vrf_lo <= ?3 AND ?3 <= vrf_hi AND gpr_lo <= ?4 AND ?4 <= gpr_hi
   AND l1_lo <= ?5 AND ?5 <= l1_hi AND l2_lo <= ?6 AND ?6 <= l2_hi
   AND l3_lo <= ?7 AND ?7 <= l3_hi
 ORDER BY cost LIMIT 1
)sql";

constexpr const char* kInsert = R"sql(
INSERT OR IGNORE INTO results VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                                     ?11, ?12, ?13, ?14)
)sql";

std::string Meta(absl::string_view name) {
  if (name == "format") return std::string(kFormat);
  if (name == "schema") return absl::StrCat(kDbSchemaVersion);
  return absl::StrCat(kGeneratorVersion);  // "generator"
}
constexpr absl::string_view kMetaNames[] = {"format", "schema", "generator"};

// The table key: the Spec without its budget.
std::string Key(const Spec& s) {
  Spec k = s;
  k.budget.reset();
  return PrintSpec(k);
}

bool IsDamage(int rc) {
  rc &= 0xff;
  return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

class Error {
 public:
  Error(sqlite3* db, int rc, absl::string_view what) {
    status_ = absl::InternalError(
        absl::StrCat("search database: ", what, ": ",
                     db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
    damage_ = IsDamage(rc);
  }
  absl::Status status() const { return status_; }
  bool damage() const { return damage_; }

 private:
  absl::Status status_;
  bool damage_ = false;
};

// Runs `sql` (no results wanted).
absl::Status Exec(sqlite3* db, const char* sql, absl::string_view what) {
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    Error e(db, rc, what);
    absl::Status s = e.status();
    if (e.damage()) s = absl::DataLossError(s.message());
    return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::string DefaultDbPath() {
  if (const char* env = std::getenv("AMARENA_DB"); env && *env)
    return absl::string_view(env) == "off" ? "" : env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return absl::StrCat(xdg, "/amarena/amarena.db");
  if (const char* home = std::getenv("HOME"); home && *home)
    return absl::StrCat(home, "/.cache/amarena/amarena.db");
  return "";
}

absl::StatusOr<std::unique_ptr<SearchDb>> SearchDb::Open(
    const std::string& path) {
  if (path.empty())
    return absl::InvalidArgumentError("search database path is empty");
  std::unique_ptr<SearchDb> db(new SearchDb(path));
  std::lock_guard<std::mutex> lock(db->mu_);
  AMARENA_RETURN_IF_ERROR(db->Connect());
  return db;
}

SearchDb::~SearchDb() {
  std::lock_guard<std::mutex> lock(mu_);
  Disconnect();
}

void SearchDb::Disconnect() {
  sqlite3_finalize(find_);
  sqlite3_finalize(insert_);
  find_ = insert_ = nullptr;
  sqlite3_close(db_);
  db_ = nullptr;
}

absl::Status SearchDb::Connect() {
  // A few tries: the file as found; a fresh one after setting it aside; and
  // once more if another process replaced it meanwhile.
  for (int attempt = 0; attempt < 4; ++attempt) {
    Disconnect();
    Header h = ReadHeader(path_);
    std::string why;
    if (h.truncated) {
      SetAside(path_, h.inode, "is truncated");
      continue;
    }
    if (!h.exists) AMARENA_RETURN_IF_ERROR(MakeDirs(path_));
    int rc = sqlite3_open_v2(
        path_.c_str(), &db_,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
        nullptr);
    if (rc != SQLITE_OK)
      return Error(db_, rc, absl::StrCat("cannot open ", path_)).status();
    inode_ = InodeOf(path_);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    // The first read of the file: one that is not a database, or a damaged
    // one, fails here.
    absl::StatusOr<bool> current = CheckVersion();
    if (!current.ok()) {
      if (current.status().code() != absl::StatusCode::kDataLoss)
        return current.status();
      why = "is damaged or not a database";
    } else if (!*current) {
      why = absl::StrCat("is from another version or program (want schema ",
                         kDbSchemaVersion, ", generator ", kGeneratorVersion,
                         ")");
    } else {
      if (!h.wal)
        AMARENA_RETURN_IF_ERROR(
            Exec(db_, "PRAGMA journal_mode=WAL", "set WAL mode"));
      // Durable against a killed process (not against power loss).
      AMARENA_RETURN_IF_ERROR(
          Exec(db_, "PRAGMA synchronous=NORMAL", "set synchronous"));
      rc = sqlite3_prepare_v3(db_, kFind, -1, SQLITE_PREPARE_PERSISTENT, &find_,
                              nullptr);
      if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v3(db_, kInsert, -1, SQLITE_PREPARE_PERSISTENT,
                                &insert_, nullptr);
      if (rc == SQLITE_OK) return absl::OkStatus();
      if (!IsDamage(rc)) return Error(db_, rc, "prepare statements").status();
      why = "is damaged";
    }
    Disconnect();
    SetAside(path_, inode_, why);
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "search database: cannot make a usable database at ", path_));
}

absl::StatusOr<bool> SearchDb::CheckVersion() {
  // Held once the meta table is found missing: whoever creates the schema
  // does it alone, and a process that finds the file half made waits for it
  // instead of taking it for a foreign one.
  std::unique_ptr<OpenLock> lock;
  for (int attempt = 0; attempt < 3; ++attempt) {
    sqlite3_stmt* q = nullptr;
    int rc = sqlite3_prepare_v2(db_, "SELECT name, value FROM meta", -1, &q,
                                nullptr);
    int rows = 0, matching = 0;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
      if ((rc = sqlite3_step(q)) != SQLITE_ROW) break;
      ++rows;
      auto text = [&](int col) {
        const unsigned char* t = sqlite3_column_text(q, col);
        return std::string(t ? reinterpret_cast<const char*>(t) : "");
      };
      std::string name = text(0), value = text(1);
      for (absl::string_view n : kMetaNames)
        if (name == n && value == Meta(n)) ++matching;
    }
    sqlite3_finalize(q);
    if (IsDamage(rc))
      return absl::DataLossError(
          Error(db_, rc, "read its version").status().message());
    if (rc == SQLITE_DONE)
      return rows == matching &&
             rows == static_cast<int>(std::size(kMetaNames));
    if (attempt == 2) return Error(db_, rc, "read its version").status();
    if (!lock) {  // look again with the lock held
      lock = std::make_unique<OpenLock>(path_);
      continue;
    }
    // No meta table, and nobody else is making one. An empty file becomes
    // ours; anything else is foreign.
    sqlite3_stmt* count = nullptr;
    int64_t tables = -1;
    rc = sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master", -1,
                            &count, nullptr);
    if (rc == SQLITE_OK && (rc = sqlite3_step(count)) == SQLITE_ROW)
      tables = sqlite3_column_int64(count, 0);
    sqlite3_finalize(count);
    if (IsDamage(rc))
      return absl::DataLossError(
          Error(db_, rc, "read its schema").status().message());
    if (tables != 0) return false;
    std::string create =
        absl::StrCat("PRAGMA journal_mode=WAL; BEGIN IMMEDIATE; ", kSchema,
                     "INSERT OR IGNORE INTO meta VALUES");
    for (absl::string_view n : kMetaNames)
      absl::StrAppend(&create, n == kMetaNames[0] ? "" : ",", "('", n, "','",
                      Meta(n), "')");
    absl::StrAppend(&create, "; COMMIT;");
    absl::Status made = Exec(db_, create.c_str(), "create the schema");
    if (!made.ok()) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return made;
    }
  }
  return false;
}

absl::Status SearchDb::Recover(absl::string_view why) {
  ino_t inode = inode_;
  Disconnect();
  SetAside(path_, inode, why);
  return Connect();
}

std::optional<SearchDb::Found> SearchDb::Find(const Target& target,
                                              const Spec& clamped) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!db_) return std::nullopt;
    absl::StatusOr<std::optional<Found>> r = FindLocked(target, clamped);
    if (r.ok()) return *r;
    if (r.status().code() != absl::StatusCode::kDataLoss) return std::nullopt;
    if (!Recover("is damaged").ok()) return std::nullopt;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<SearchDb::Found>> SearchDb::FindLocked(
    const Target& target, const Spec& clamped) {
  AMARENA_CHECK(clamped.budget.has_value());
  const Budget& b = *clamped.budget;
  std::string fp = target.Fingerprint(), key = Key(clamped);
  sqlite3_stmt* q = find_;
  sqlite3_reset(q);
  sqlite3_bind_text(q, 1, fp.data(), static_cast<int>(fp.size()),
                    SQLITE_STATIC);
  sqlite3_bind_text(q, 2, key.data(), static_cast<int>(key.size()),
                    SQLITE_STATIC);
  int64_t coords[] = {b.vrf, b.gpr, b.l1_lines, b.l2_lines, b.l3_lines};
  for (int i = 0; i < 5; ++i) sqlite3_bind_int64(q, 3 + i, coords[i]);
  int rc = sqlite3_step(q);
  std::optional<Found> found;
  if (rc == SQLITE_ROW) {
    const unsigned char* d = sqlite3_column_text(q, 0);
    found = Found{std::string(d ? reinterpret_cast<const char*>(d) : ""),
                  sqlite3_column_int64(q, 1)};
    rc = SQLITE_DONE;
  }
  sqlite3_reset(q);
  sqlite3_clear_bindings(q);
  if (rc != SQLITE_DONE) {
    Error e(db_, rc, "look up a result");
    return e.damage() ? absl::DataLossError(e.status().message()) : e.status();
  }
  return found;
}

absl::Status SearchDb::Store(const Target& target, const ImplNode& root) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!db_) return absl::FailedPreconditionError("search database is closed");
  absl::Status s = StoreLocked(target, root);
  if (s.code() == absl::StatusCode::kDataLoss && Recover("is damaged").ok())
    s = StoreLocked(target, root);
  return s;
}

absl::Status SearchDb::StoreLocked(const Target& target, const ImplNode& root) {
  const std::string fp = target.Fingerprint();
  // IMMEDIATE: take the write lock now, so the transaction never has to
  // upgrade (and fail) halfway.
  AMARENA_RETURN_IF_ERROR(
      Exec(db_, "BEGIN IMMEDIATE", "start a write transaction"));
  absl::Status status = absl::OkStatus();
  std::function<void(const ImplNode&)> put = [&](const ImplNode& n) {
    if (!status.ok()) return;
    Spec hi = ClampBudget(n.spec, target);
    const Budget& h = *hi.budget;
    const Budget& l = n.cost.peak;
    std::string key = Key(n.spec), decisions = EncodeDecisions(n);
    sqlite3_stmt* q = insert_;
    sqlite3_reset(q);
    sqlite3_bind_text(q, 1, fp.data(), static_cast<int>(fp.size()),
                      SQLITE_STATIC);
    sqlite3_bind_text(q, 2, key.data(), static_cast<int>(key.size()),
                      SQLITE_STATIC);
    int64_t coords[] = {l.vrf, l.gpr, l.l1_lines, l.l2_lines, l.l3_lines,
                        h.vrf, h.gpr, h.l1_lines, h.l2_lines, h.l3_lines};
    for (int i = 0; i < 10; ++i) sqlite3_bind_int64(q, 3 + i, coords[i]);
    sqlite3_bind_text(q, 13, decisions.data(),
                      static_cast<int>(decisions.size()), SQLITE_STATIC);
    sqlite3_bind_int64(q, 14, n.cost.main);
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    if (rc != SQLITE_DONE) {
      Error e(db_, rc, "store a result");
      status =
          e.damage() ? absl::DataLossError(e.status().message()) : e.status();
      return;
    }
    for (const auto& c : n.children) put(*c);
  };
  put(root);
  if (!status.ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  return Exec(db_, "COMMIT", "commit results");
}

absl::StatusOr<DbStats> SearchDb::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!db_) return absl::FailedPreconditionError("search database is closed");
  DbStats st;
  st.path = path_;
  sqlite3_stmt* q = nullptr;
  int rc = sqlite3_prepare_v2(db_,
                              "SELECT count(*), count(DISTINCT spec), "
                              "count(DISTINCT target) FROM results",
                              -1, &q, nullptr);
  if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
    st.rows = sqlite3_column_int64(q, 0);
    st.specs = sqlite3_column_int64(q, 1);
    st.targets = sqlite3_column_int64(q, 2);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_OK) return Error(db_, rc, "count results").status();
  for (const char* suffix : {"", "-wal"}) {
    struct stat s {};
    if (::stat((path_ + suffix).c_str(), &s) == 0) st.bytes += s.st_size;
  }
  return st;
}

absl::Status SearchDb::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!db_) return absl::FailedPreconditionError("search database is closed");
  AMARENA_RETURN_IF_ERROR(
      Exec(db_, "DELETE FROM results", "delete the results"));
  return Exec(db_, "PRAGMA wal_checkpoint(TRUNCATE); VACUUM",
              "compact the file");
}

absl::StatusOr<std::string> SearchDb::IntegrityCheck() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!db_) return absl::FailedPreconditionError("search database is closed");
  sqlite3_stmt* q = nullptr;
  int rc = sqlite3_prepare_v2(db_, "PRAGMA integrity_check", -1, &q, nullptr);
  std::string out;
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    if ((rc = sqlite3_step(q)) != SQLITE_ROW) break;
    const unsigned char* t = sqlite3_column_text(q, 0);
    absl::StrAppend(&out, out.empty() ? "" : "; ",
                    t ? reinterpret_cast<const char*>(t) : "");
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_DONE && !IsDamage(rc))
    return Error(db_, rc, "check integrity").status();
  if (rc != SQLITE_DONE) absl::StrAppend(&out, "damaged: ", sqlite3_errstr(rc));
  return out;
}

}  // namespace amarena
