// SearchDb's maintenance side, for `amarena db stats|clear|check` and tests:
// nothing here runs when kernels are looked up or stored.
#include <sqlite3.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/db_file.h"
#include "runtime/search_db.h"
#include "search/search.h"

namespace amarena {

namespace {

// How long maintenance waits for another process's lock: a person is
// waiting, not a kernel.
constexpr auto kAdminWait = std::chrono::seconds(5);

}  // namespace

absl::StatusOr<DbStats> SearchDb::Stats() {
  std::unique_ptr<DbConn> c = Acquire();
  if (!c)
    return absl::UnavailableError(
        absl::StrCat("cannot read statistics of search database ", path_,
                     ": no connection to it could be made"));
  DbStats st;
  st.path = path_;
  st.max_bytes = options_.max_bytes;
  st.read_only = read_only_;
  st.stores_skipped = stores_skipped_;
  st.stores_failed = stores_failed_;
  c->WaitFor(kAdminWait);
  DbStmt q;
  int rc = sqlite3_prepare_v2(c->db(),
                              "SELECT count(*), count(DISTINCT spec), "
                              "count(DISTINCT target) FROM results",
                              -1, q.slot(), nullptr);
  if (rc == SQLITE_OK && (rc = q.Next()) == SQLITE_ROW) {
    st.rows = q.Int(0);
    st.specs = q.Int(1);
    st.targets = q.Int(2);
    rc = SQLITE_OK;
  }
  q.Done();
  absl::Status s =
      rc == SQLITE_OK ? absl::OkStatus() : c->Fail(rc, "read statistics of");
  Release(std::move(c));
  AMARENA_RETURN_IF_ERROR(s);
  for (const char* suffix : {"", "-wal"}) {
    struct stat f {};
    if (::stat((path_ + suffix).c_str(), &f) == 0) st.bytes += f.st_size;
  }
  return st;
}

absl::Status SearchDb::Clear() {
  if (read_only_)
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot clear search database ", path_, ": the file is read-only"));
  std::unique_ptr<DbConn> c = Acquire();
  if (!c)
    return absl::UnavailableError(
        absl::StrCat("cannot clear search database ", path_,
                     ": no connection to it could be made"));
  c->WaitFor(kAdminWait);
  absl::Status s =
      c->Exec("BEGIN IMMEDIATE; DELETE FROM results; DELETE FROM used; COMMIT",
              "delete the rows of");
  if (!s.ok()) {
    c->Exec("ROLLBACK", "roll back").IgnoreError();
  } else {
    // Pages back to the file system; the checkpoint makes the file shrink.
    s = c->Exec("PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(TRUNCATE)",
                "compact");
  }
  Release(std::move(c));
  return s;
}

absl::StatusOr<std::string> SearchDb::IntegrityCheck() {
  std::unique_ptr<DbConn> c = Acquire();
  if (!c)
    return absl::UnavailableError(
        absl::StrCat("cannot check search database ", path_,
                     ": no connection to it could be made"));
  c->WaitFor(kAdminWait);
  absl::StatusOr<std::string> r = c->IntegrityCheck(/*quick=*/false);
  Release(std::move(c));
  return r;
}

absl::StatusOr<std::string> SearchDb::Check(const std::string& path) {
  PathProbe p = ProbePath(path);
  if (p.kind == PathProbe::kRefused)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot check search database ", path, ": ", p.problem));
  if (p.kind == PathProbe::kMissing)
    return absl::NotFoundError(absl::StrCat("cannot check search database ",
                                            path, ": there is no file there"));
  if (p.kind == PathProbe::kEmpty) return std::string("ok (empty)");
  // Read-only: the file is the same, byte for byte, whatever the check finds
  // (a read-write connection, closing last, would copy the WAL into it).
  // SQLite may make the -wal and -shm files it needs to read a WAL database.
  AMARENA_ASSIGN_OR_RETURN(std::unique_ptr<DbConn> c,
                           DbConn::Open(path, DbConn::Mode::kReadOnly));
  c->WaitFor(kAdminWait);
  absl::StatusOr<std::string> r = c->IntegrityCheck(/*quick=*/false);
  if (r.ok() && *r != "ok")
    r = absl::DataLossError(
        absl::StrCat("search database ", path, " is damaged: ", *r));
  if (!r.ok()) {
    if (r.status().code() != absl::StatusCode::kDataLoss) return r.status();
    return absl::DataLossError(
        absl::StrCat(r.status().message(),
                     "; the next process to open it will set it aside"));
  }
  AMARENA_ASSIGN_OR_RETURN(DbConn::Version v, c->ReadVersion());
  if (v == DbConn::Version::kForeign)
    return absl::FailedPreconditionError(absl::StrCat(
        "search database ", path,
        " is intact but is another program's SQLite database (no amarena "
        "meta table); amarena leaves it alone"));
  if (v == DbConn::Version::kOther)
    return absl::FailedPreconditionError(
        absl::StrCat("search database ", path, " is intact but has schema ",
                     c->schema(), ", newer than this amarena's ",
                     kDbSchemaVersion, "; amarena leaves it alone"));
  if (v == DbConn::Version::kOlder)
    return absl::FailedPreconditionError(absl::StrCat(
        "search database ", path, " is intact but has schema ", c->schema(),
        " (this amarena's is ", kDbSchemaVersion,
        "); the next process to open it migrates it, or sets it aside if it "
        "is too old to migrate"));
  return *r;
}

}  // namespace amarena
