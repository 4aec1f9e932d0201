// One SQLite connection to the search database file: the schema, the
// statements the search database runs, and a bound on every wait for a lock
// another connection holds. Used by one thread at a time; SearchDb
// (runtime/search_db.h) keeps a few and lends them out.
//
//   absl::StatusOr<std::unique_ptr<DbConn>> c = DbConn::Open(path, false);
//   (*c)->WaitFor(kReadWait);       // then SQLITE_BUSY, never a long stall
//   absl::StatusOr<DbConn::Version> v = (*c)->ReadVersion();
//
// Errors are Status with a code the caller acts on: DataLoss when SQLite
// reports the file damaged (CORRUPT, NOTADB), Unavailable when a lock was
// not free in time, ResourceExhausted for a full disk, Internal otherwise.
// Each message names the path and what SQLite said.
#ifndef AMARENA_RUNTIME_DB_CONN_H_
#define AMARENA_RUNTIME_DB_CONN_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace amarena {

// Bump when the stored form or the meaning of stored decisions changes.
inline constexpr int kDbSchemaVersion = 2;

// The price tables `amarena calibrate` measured (runtime/prices.h), one per
// CPU identity (CpuIdentity::Key) as PricesToText. Part of a new file's
// schema; added on first store to a file made before it existed, which
// needs no new schema version since nothing else reads it.
inline constexpr const char* kPricesSchema = R"sql(
CREATE TABLE IF NOT EXISTS prices(
  cpu TEXT PRIMARY KEY,
  prices TEXT NOT NULL,
  stored INTEGER NOT NULL);  -- milliseconds since the epoch
)sql";

// A prepared statement, reset and unbound after each use by Run/Next.
class DbStmt {
 public:
  DbStmt() = default;
  ~DbStmt();
  DbStmt(const DbStmt&) = delete;
  DbStmt& operator=(const DbStmt&) = delete;
  sqlite3_stmt** slot() { return &s_; }

  DbStmt& Bind(int i, absl::string_view text);  // not copied: keep it alive
  DbStmt& Bind(int i, int64_t v);
  // One step: SQLITE_ROW (read the columns, then Next or Done), SQLITE_DONE,
  // or an error code.
  int Next();
  void Done();  // reset, clear bindings
  std::string Text(int col);
  int64_t Int(int col);

 private:
  sqlite3_stmt* s_ = nullptr;
};

class DbConn {
 public:
  using Clock = std::chrono::steady_clock;

  enum class Mode {
    kCreate,     // read and write, and make the file if it is missing
    kReadWrite,  // read and write a file that is there
    kReadOnly,   // never write (SQLite may still make -wal and -shm files)
  };
  // Opens `path`. Reads nothing yet.
  static absl::StatusOr<std::unique_ptr<DbConn>> Open(const std::string& path,
                                                      Mode mode);
  ~DbConn();
  DbConn(const DbConn&) = delete;
  DbConn& operator=(const DbConn&) = delete;

  // A statement that needs a lock another connection holds waits for it
  // until `deadline`, then fails with Unavailable (SQLITE_BUSY).
  void WaitUntil(Clock::time_point deadline) { deadline_ = deadline; }
  void WaitFor(Clock::duration d) { deadline_ = Clock::now() + d; }

  // Rows of every generator and cost-model version share a file (their
  // target key says which), so only the schema decides.
  enum class Version {
    kCurrent,  // an amarena database of this schema
    kOlder,    // of an older schema (schema() says which): for Migrate
    kOther,    // of a newer schema, or one that is not a number
    kForeign,  // an SQLite database of another program
    kEmpty,    // no tables at all: ours to fill
  };
  absl::StatusOr<Version> ReadVersion();
  // The schema the last ReadVersion found (-1: none, or not a number).
  int schema() const { return schema_; }
  // Brings a kOlder file to this schema in one transaction, rows kept;
  // returns what the file is afterwards (still kOlder: its schema is older
  // than any this version can migrate).
  absl::StatusOr<Version> Migrate();
  // Makes the schema in an empty database, in one transaction (so no other
  // process ever sees half of it); returns what the file is afterwards.
  absl::StatusOr<Version> CreateSchema();
  // Prepares the statements below (the schema must be there).
  absl::Status Prepare();

  // `what` completes "cannot <what> search database PATH" in messages.
  absl::Status Exec(const char* sql, absl::string_view what);
  // Exec of a statement that takes a shared lock and then an exclusive one
  // (a journal mode change): SQLite fails such a statement at once, without
  // the busy handler, when another connection also holds a shared lock and
  // wants more (waiting could deadlock), so it is run again after a short
  // nap, until the deadline.
  absl::Status ExecUntilNotBusy(const char* sql, absl::string_view what);
  // The first integer `sql` returns (a PRAGMA, a count).
  absl::StatusOr<int64_t> Int(const char* sql, absl::string_view what);
  // `rc` (an SQLite result code) as a Status: see the file comment.
  absl::Status Fail(int rc, absl::string_view what);

  // After a damage error: whether PRAGMA quick_check agrees, with what it
  // said in `detail`.
  bool ConfirmDamage(std::string* detail);
  // PRAGMA integrity_check (quick: quick_check, which skips the indexes'
  // contents): "ok", or what it found.
  absl::StatusOr<std::string> IntegrityCheck(bool quick);
  // A passive checkpoint when the WAL has grown past about 4 MB since the
  // last one (SQLite's automatic checkpoint, run where it holds no lock of
  // ours: see SearchDb::Store).
  void CheckpointIfBig();

  sqlite3* db() { return db_; }
  const std::string& path() const { return path_; }
  ino_t inode() const { return inode_; }
  bool read_only() const { return read_only_; }
  int generation = 0;  // SearchDb's: which file this connection was made for

  // find(target, spec, vrf, gpr, l1, l2, l3) -> rowid, decisions, cost,
  //   last_used (NULL if never recorded)
  DbStmt find;
  // put(target, spec, lo x5, hi x5, decisions, cost): a row replaced only
  // when its decisions or cost differ
  DbStmt put;
  DbStmt use;     // use(target, spec, now_ms): records a use of a table key
  DbStmt forget;  // forget(rowid, decisions, cost): drops a row that failed
  // oldest(before_ms, n) -> target, spec: the least recently used keys
  DbStmt oldest;
  DbStmt drop_results, drop_use;  // (target, spec): every row of a key

 private:
  DbConn(std::string path, Mode mode)
      : path_(std::move(path)), read_only_(mode == Mode::kReadOnly) {}
  static int OnBusy(void* self, int tries);
  static int OnWal(void* self, sqlite3*, const char*, int frames);

  std::string path_;
  bool read_only_;
  sqlite3* db_ = nullptr;
  ino_t inode_ = 0;
  Clock::time_point deadline_{};
  int wal_frames_ = 0;
  int schema_ = -1;
};

}  // namespace amarena

#endif  // AMARENA_RUNTIME_DB_CONN_H_
