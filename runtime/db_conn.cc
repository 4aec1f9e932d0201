#include "runtime/db_conn.h"

#include <sqlite3.h>

#include <algorithm>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/db_file.h"
#include "search/search.h"

namespace amarena {

namespace {

constexpr absl::string_view kFormat = "amarena search database";

// Incremental auto-vacuum: rows pruned to keep the file under its cap give
// their pages back to the file system (PRAGMA incremental_vacuum), which a
// database made without it cannot do short of a full VACUUM.
constexpr const char* kMetaTable =
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);";
// The tables after meta. IF NOT EXISTS, so that a migration may make those
// an older schema lacks with the same text.
constexpr const char* kTables = R"sql(
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
CREATE TABLE IF NOT EXISTS used(  -- when a key was last stored or found
  target TEXT NOT NULL,
  spec TEXT NOT NULL,
  last_used INTEGER NOT NULL,  -- milliseconds since the epoch
  PRIMARY KEY(target, spec)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS used_by_age ON used(last_used);
)sql";

// The oldest schema Migrate brings up to date. Schema 1 had meta and
// results as they are now; 2 added `used` (for the size cap), which kTables
// makes. (Schema 1 files keep the auto-vacuum mode they were made with: a
// prune frees pages inside the file but cannot give them back.)
constexpr int kOldestMigratable = 1;

constexpr const char* kFind = R"sql(
SELECT r.rowid, r.decisions, r.cost, u.last_used FROM results r
  LEFT JOIN used u ON u.target = r.target AND u.spec = r.spec
 WHERE r.target = ?1 AND r.spec = ?2
   AND vrf_lo <= ?3 AND ?3 <= vrf_hi AND gpr_lo <= ?4 AND ?4 <= gpr_hi
   AND l1_lo <= ?5 AND ?5 <= l1_hi AND l2_lo <= ?6 AND ?6 <= l2_hi
   AND l3_lo <= ?7 AND ?7 <= l3_hi
 ORDER BY r.cost LIMIT 1
)sql";

// A row with the same key and box is replaced only when it differs: a row
// that failed replay is overwritten by the tree searched in its place, and
// an identical one is not rewritten.
constexpr const char* kPut = R"sql(
INSERT INTO results VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,
                           ?13, ?14)
  ON CONFLICT(target, spec, vrf_lo, gpr_lo, l1_lo, l2_lo, l3_lo,
              vrf_hi, gpr_hi, l1_hi, l2_hi, l3_hi)
  DO UPDATE SET decisions = excluded.decisions, cost = excluded.cost
  WHERE decisions != excluded.decisions OR cost != excluded.cost
)sql";

constexpr const char* kUse = R"sql(
INSERT INTO used VALUES(?1, ?2, ?3) ON CONFLICT(target, spec)
  DO UPDATE SET last_used = excluded.last_used
  WHERE last_used < excluded.last_used
)sql";

constexpr const char* kForget =
    "DELETE FROM results WHERE rowid = ?1 AND decisions = ?2 AND cost = ?3";
constexpr const char* kOldest =
    "SELECT target, spec FROM used WHERE last_used < ?1 "
    "ORDER BY last_used LIMIT ?2";
constexpr const char* kDropResults =
    "DELETE FROM results WHERE target = ?1 AND spec = ?2";
constexpr const char* kDropUse =
    "DELETE FROM used WHERE target = ?1 AND spec = ?2";

// What a new file's meta says. "generator" names the version that made the
// file, for people reading it; rows of every generator version live side by
// side (SearchDb keys them by it), so reading ignores it.
std::string Meta(absl::string_view name) {
  if (name == "format") return std::string(kFormat);
  if (name == "schema") return absl::StrCat(kDbSchemaVersion);
  return absl::StrCat(kGeneratorVersion);  // "generator"
}
constexpr absl::string_view kMetaNames[] = {"format", "schema", "generator"};

// SQLite's automatic checkpoint threshold (pages of WAL).
constexpr int kCheckpointFrames = 1000;

}  // namespace

DbStmt::~DbStmt() { sqlite3_finalize(s_); }

DbStmt& DbStmt::Bind(int i, absl::string_view text) {
  sqlite3_bind_text(s_, i, text.data(), static_cast<int>(text.size()),
                    SQLITE_STATIC);
  return *this;
}

DbStmt& DbStmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}

int DbStmt::Next() { return sqlite3_step(s_); }

void DbStmt::Done() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

std::string DbStmt::Text(int col) {
  const unsigned char* t = sqlite3_column_text(s_, col);
  return t ? reinterpret_cast<const char*>(t) : "";
}

int64_t DbStmt::Int(int col) { return sqlite3_column_int64(s_, col); }

absl::StatusOr<std::unique_ptr<DbConn>> DbConn::Open(const std::string& path,
                                                     Mode mode) {
  std::unique_ptr<DbConn> c(new DbConn(path, mode));
  int flags =
      SQLITE_OPEN_NOMUTEX |
      (mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
      (mode == Mode::kCreate ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &c->db_, flags, nullptr);
  if (rc != SQLITE_OK) return c->Fail(rc, "open");
  c->inode_ = InodeOf(path);
  sqlite3_extended_result_codes(c->db_, 1);
  sqlite3_busy_handler(c->db_, &DbConn::OnBusy, c.get());
  // Our own hook replaces SQLite's automatic checkpoint (CheckpointIfBig).
  sqlite3_wal_hook(c->db_, &DbConn::OnWal, c.get());
  // Durable against a killed process (not against power loss); the WAL is
  // cut back to 4 MB after a checkpoint has emptied it. On a damaged file
  // these may fail; the caller's first read (ReadVersion) reports that.
  sqlite3_exec(c->db_,
               "PRAGMA synchronous=NORMAL; PRAGMA journal_size_limit=4194304",
               nullptr, nullptr, nullptr);
  return c;
}

DbConn::~DbConn() {
  for (DbStmt* s :
       {&find, &put, &use, &forget, &oldest, &drop_results, &drop_use}) {
    sqlite3_finalize(*s->slot());
    *s->slot() = nullptr;
  }
  sqlite3_close(db_);
}

int DbConn::OnBusy(void* self, int tries) {
  auto* c = static_cast<DbConn*>(self);
  auto now = Clock::now();
  if (now >= c->deadline_) return 0;  // give up: SQLITE_BUSY
  // Short naps: a writer's transaction here takes about a millisecond.
  Clock::duration nap =
      tries < 10 ? std::chrono::milliseconds(1) : std::chrono::milliseconds(5);
  std::this_thread::sleep_for(std::min(nap, c->deadline_ - now));
  return 1;
}

int DbConn::OnWal(void* self, sqlite3*, const char*, int frames) {
  static_cast<DbConn*>(self)->wal_frames_ = frames;
  return SQLITE_OK;
}

void DbConn::CheckpointIfBig() {
  if (wal_frames_ < kCheckpointFrames) return;
  wal_frames_ = 0;
  // Passive: copies what no reader still needs, waits for nobody.
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr,
                            nullptr);
}

absl::Status DbConn::Fail(int rc, absl::string_view what) {
  bool same = db_ && (sqlite3_errcode(db_) & 0xff) == (rc & 0xff);
  std::string msg =
      absl::StrCat("cannot ", what, " search database ", path_, ": ",
                   same ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(msg);
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status DbConn::Exec(const char* sql, absl::string_view what) {
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? absl::OkStatus() : Fail(rc, what);
}

absl::Status DbConn::ExecUntilNotBusy(const char* sql, absl::string_view what) {
  for (int tries = 0;; ++tries) {
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if ((rc & 0xff) != SQLITE_BUSY || !OnBusy(this, tries))
      return rc == SQLITE_OK ? absl::OkStatus() : Fail(rc, what);
  }
}

absl::StatusOr<int64_t> DbConn::Int(const char* sql, absl::string_view what) {
  DbStmt q;
  int rc = sqlite3_prepare_v2(db_, sql, -1, q.slot(), nullptr);
  if (rc == SQLITE_OK) rc = q.Next();
  if (rc != SQLITE_ROW) return Fail(rc, what);
  return q.Int(0);
}

absl::StatusOr<DbConn::Version> DbConn::ReadVersion() {
  DbStmt q;
  int rc = sqlite3_prepare_v2(db_, "SELECT name, value FROM meta", -1, q.slot(),
                              nullptr);
  for (int retry = 0; (rc & 0xff) == SQLITE_ERROR; ++retry) {
    // No meta table: an empty file, or not ours, or ours since made by
    // another process (CreateSchema makes every table in one transaction,
    // after the failed read above): tables seen now came with a meta table
    // unless the file is another program's. Read again then, once.
    AMARENA_ASSIGN_OR_RETURN(
        int64_t tables,
        Int("SELECT count(*) FROM sqlite_master", "read the schema of"));
    if (tables == 0) return Version::kEmpty;
    AMARENA_ASSIGN_OR_RETURN(
        int64_t meta, Int("SELECT count(*) FROM sqlite_master WHERE "
                          "type = 'table' AND name = 'meta'",
                          "read the schema of"));
    if (meta == 0 || retry == 1) return Version::kForeign;
    rc = sqlite3_prepare_v2(db_, "SELECT name, value FROM meta", -1,
                            q.slot(), nullptr);
  }
  if (rc != SQLITE_OK) return Fail(rc, "read the version of");
  bool format = false;
  schema_ = -1;
  while ((rc = q.Next()) == SQLITE_ROW) {
    std::string name = q.Text(0), value = q.Text(1);
    if (name == "format" && value == kFormat) format = true;
    if (name == "schema" && !absl::SimpleAtoi(value, &schema_)) schema_ = -1;
  }
  if (rc != SQLITE_DONE) return Fail(rc, "read the version of");
  if (!format) return Version::kForeign;
  if (schema_ == kDbSchemaVersion) return Version::kCurrent;
  return schema_ >= 0 && schema_ < kDbSchemaVersion ? Version::kOlder
                                                    : Version::kOther;
}

absl::StatusOr<DbConn::Version> DbConn::Migrate() {
  AMARENA_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "lock (to migrate)"));
  absl::StatusOr<Version> v = ReadVersion();  // again, with the lock held
  if (v.ok() && *v == Version::kOlder && schema_ >= kOldestMigratable) {
    std::string sql =
        absl::StrCat(kTables, "UPDATE meta SET value = '", kDbSchemaVersion,
                     "' WHERE name = 'schema'; COMMIT;");
    absl::Status made = Exec(sql.c_str(), "migrate");
    if (made.ok()) schema_ = kDbSchemaVersion;
    v = made.ok() ? absl::StatusOr<Version>(Version::kCurrent) : made;
  }
  if (sqlite3_get_autocommit(db_) == 0)
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return v;
}

absl::StatusOr<DbConn::Version> DbConn::CreateSchema() {
  // Neither can be set inside a transaction, and auto_vacuum only before the
  // first page is written, which setting WAL mode does.
  // Several processes making one new file all get here: the journal mode
  // change is where they meet (db_concurrency_test.sh, eight creators).
  AMARENA_RETURN_IF_ERROR(ExecUntilNotBusy(
      "PRAGMA auto_vacuum=INCREMENTAL; PRAGMA journal_mode=WAL",
      "set the journal mode of"));
  AMARENA_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "lock (to create)"));
  absl::StatusOr<Version> v = ReadVersion();  // again, with the lock held
  if (v.ok() && *v == Version::kEmpty) {
    std::string create =
        absl::StrCat(kMetaTable, kTables, kPricesSchema, "INSERT INTO meta VALUES");
    for (absl::string_view n : kMetaNames)
      absl::StrAppend(&create, n == kMetaNames[0] ? "" : ",", "('", n, "','",
                      Meta(n), "')");
    absl::StrAppend(&create, "; COMMIT;");
    absl::Status made = Exec(create.c_str(), "create the tables of");
    v = made.ok() ? absl::StatusOr<Version>(Version::kCurrent) : made;
  }
  if (sqlite3_get_autocommit(db_) == 0)
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return v;
}

absl::Status DbConn::Prepare() {
  struct {
    DbStmt* stmt;
    const char* sql;
  } all[] = {{&find, kFind},       {&put, kPut},
             {&use, kUse},         {&forget, kForget},
             {&oldest, kOldest},   {&drop_results, kDropResults},
             {&drop_use, kDropUse}};
  for (auto& [stmt, sql] : all) {
    if (*stmt->slot() != nullptr) continue;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT,
                                stmt->slot(), nullptr);
    if (rc != SQLITE_OK) return Fail(rc, "prepare the statements for");
  }
  return absl::OkStatus();
}

bool DbConn::ConfirmDamage(std::string* detail) {
  absl::StatusOr<std::string> r = IntegrityCheck(/*quick=*/true);
  if (!r.ok()) {
    *detail = sqlite3_errmsg(db_);
    return r.status().code() == absl::StatusCode::kDataLoss;
  }
  *detail = *r;
  return *r != "ok";
}

absl::StatusOr<std::string> DbConn::IntegrityCheck(bool quick) {
  DbStmt q;
  int rc = sqlite3_prepare_v2(
      db_, quick ? "PRAGMA quick_check" : "PRAGMA integrity_check", -1,
      q.slot(), nullptr);
  std::string out;
  while (rc == SQLITE_OK || rc == SQLITE_ROW) {
    if ((rc = q.Next()) != SQLITE_ROW) break;
    absl::StrAppend(&out, out.empty() ? "" : "; ", q.Text(0));
  }
  if (rc != SQLITE_DONE) return Fail(rc, "check the integrity of");
  return out;
}

}  // namespace amarena
