// One connection to the search database: a wait for another connection's
// lock ends at its bound, a reader never waits for a writer, versions are
// told apart, and SQLite's result codes become the Status codes callers act
// on.
#include "runtime/db_conn.h"

#include <sqlite3.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace amarena {
namespace {

using testing::TempDir;
using Clock = std::chrono::steady_clock;

std::unique_ptr<DbConn> Made(const std::string& path) {
  absl::StatusOr<std::unique_ptr<DbConn>> c =
      DbConn::Open(path, DbConn::Mode::kCreate);
  EXPECT_TRUE(c.ok()) << c.status();
  (*c)->WaitFor(std::chrono::seconds(2));
  absl::StatusOr<DbConn::Version> v = (*c)->ReadVersion();
  if (v.ok() && *v == DbConn::Version::kEmpty) v = (*c)->CreateSchema();
  EXPECT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE((*c)->Prepare().ok());
  return *std::move(c);
}

TEST(DbConnTest, AWaitForALockEndsAtItsBound) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  std::unique_ptr<DbConn> holder = Made(db), waiter = Made(db);
  ASSERT_TRUE(holder->Exec("BEGIN IMMEDIATE", "lock").ok());
  for (auto bound :
       {std::chrono::milliseconds(0), std::chrono::milliseconds(30),
        std::chrono::milliseconds(200)}) {
    waiter->WaitFor(bound);
    auto t0 = Clock::now();
    absl::Status s = waiter->Exec("BEGIN IMMEDIATE", "lock");
    auto took = Clock::now() - t0;
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
    EXPECT_GE(took, bound);
    EXPECT_LT(took, bound + std::chrono::seconds(2));  // generous: a bound
  }
  ASSERT_TRUE(holder->Exec("ROLLBACK", "unlock").ok());
  waiter->WaitFor(std::chrono::milliseconds(0));
  EXPECT_TRUE(waiter->Exec("BEGIN IMMEDIATE; ROLLBACK", "lock").ok());
}

TEST(DbConnTest, AReaderDoesNotWaitForAWriter) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  std::unique_ptr<DbConn> writer = Made(db), reader = Made(db);
  ASSERT_TRUE(writer
                  ->Exec("BEGIN IMMEDIATE; INSERT INTO used "
                         "VALUES('t', 's', 1)",
                         "write")
                  .ok());
  reader->WaitFor(std::chrono::milliseconds(0));  // no waiting at all
  absl::StatusOr<DbConn::Version> v = reader->ReadVersion();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, DbConn::Version::kCurrent);
  absl::StatusOr<int64_t> n = reader->Int("SELECT count(*) FROM used", "n");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 0);  // the writer's row is not committed
  ASSERT_TRUE(writer->Exec("COMMIT", "commit").ok());
  EXPECT_EQ(*reader->Int("SELECT count(*) FROM used", "n"), 1);
}

TEST(DbConnTest, VersionsAreToldApart) {
  TempDir dir;
  auto version = [&](const std::string& name, const char* sql) {
    std::string db = dir.path() + "/" + name;
    sqlite3* h = nullptr;
    EXPECT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(h, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
    std::unique_ptr<DbConn> c = *DbConn::Open(db, DbConn::Mode::kReadOnly);
    c->WaitFor(std::chrono::seconds(2));
    return *c->ReadVersion();
  };
  using V = DbConn::Version;
  EXPECT_EQ(version("empty.db", ""), V::kEmpty);
  EXPECT_EQ(version("notes.db", "CREATE TABLE notes(x)"), V::kForeign);
  const char* meta = "CREATE TABLE meta(name TEXT, value TEXT);";
  EXPECT_EQ(version("format.db",
                    (std::string(meta) +
                     "INSERT INTO meta VALUES('format', 'other program')")
                        .c_str()),
            V::kForeign);
  auto schema = [&](const char* name, const char* value) {
    return version(name,
                   absl::StrCat(meta,
                                "INSERT INTO meta VALUES('format', "
                                "'amarena search database'), ('schema', '",
                                value, "'), ('generator', '999')")
                       .c_str());
  };
  EXPECT_EQ(schema("old.db", "1"), V::kOlder);
  EXPECT_EQ(schema("new.db", "99"), V::kOther);
  EXPECT_EQ(schema("word.db", "two"), V::kOther);
  // Any generator's file of this schema is this version's to use.
  EXPECT_EQ(schema("gen.db", absl::StrCat(kDbSchemaVersion).c_str()),
            V::kCurrent);
  std::string db = dir.path() + "/ours.db";
  Made(db);
  std::unique_ptr<DbConn> c = *DbConn::Open(db, DbConn::Mode::kReadOnly);
  c->WaitFor(std::chrono::seconds(2));
  EXPECT_EQ(*c->ReadVersion(), V::kCurrent);
  // Made with incremental auto-vacuum (2), so pruning can shrink it.
  EXPECT_EQ(*c->Int("PRAGMA auto_vacuum", "read"), 2);
}

TEST(DbConnTest, SqliteCodesBecomeStatusCodesNamingThePath) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  std::unique_ptr<DbConn> c = Made(db);
  struct {
    int rc;
    absl::StatusCode code;
  } cases[] = {{SQLITE_BUSY, absl::StatusCode::kUnavailable},
               {SQLITE_CORRUPT, absl::StatusCode::kDataLoss},
               {SQLITE_NOTADB, absl::StatusCode::kDataLoss},
               {SQLITE_FULL, absl::StatusCode::kResourceExhausted},
               {SQLITE_IOERR_WRITE, absl::StatusCode::kInternal}};
  for (const auto& [rc, code] : cases) {
    absl::Status s = c->Fail(rc, "store results in");
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_EQ(s.message().rfind(
                  "cannot store results in search database " + db + ": ", 0),
              0u)
        << s;
  }
}

}  // namespace
}  // namespace amarena
