// What the search database does with what it finds at its path: only an
// SQLite file SQLite itself reports damaged, or an amarena database of a
// schema too old to migrate, is ever set aside; anything else the user pointed
// at is left exactly as it is, nothing hangs, and the kernel still runs.
#include "runtime/db_file.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "runtime/search_db.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/temp_dir.h"

namespace amarena {
namespace {

namespace fs = std::filesystem;
using testing::KernelMatchesReference;
using testing::TempDir;

using testing::WithDb;

// The names in `dir`, sorted, one per line.
std::string Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += n + "\n";
  return out;
}

std::string Contents(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Makes a runtime on `db` and gets a kernel from it, within 20 s (a hang
// fails the test instead of the suite), returning what it said on stderr.
// `had_db`: whether the runtime got a database.
std::string RunBeside(const std::string& db, bool* had_db = nullptr) {
  ::testing::internal::CaptureStderr();
  auto done = std::async(std::launch::async, [&] {
    Runtime rt(HostTarget(), WithDb(db));
    if (had_db) *had_db = rt.db() != nullptr;
    EXPECT_TRUE(KernelMatchesReference(rt, Spec::Matmul(9, 10, 11)));
  });
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "opening " << db << " hung";
    std::_Exit(1);  // the thread cannot be stopped
  }
  return ::testing::internal::GetCapturedStderr();
}

TEST(DbFileTest, ADirectoryIsRefusedAndLeftWithItsContents) {
  TempDir dir;
  std::string db = dir.path() + "/d";
  fs::create_directory(db);
  std::ofstream(db + "/keep") << "mine";
  std::string before = Listing(dir.path());
  bool had_db = true;
  std::string err = RunBeside(db, &had_db);
  EXPECT_FALSE(had_db);
  EXPECT_NE(err.find("cannot open search database " + db +
                     ": it is a directory, must be a regular file"),
            std::string::npos)
      << err;
  EXPECT_EQ(Listing(dir.path()), before);
  EXPECT_EQ(Contents(db + "/keep"), "mine");
}

TEST(DbFileTest, AFifoIsNeverOpened) {
  TempDir dir;
  std::string db = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(db.c_str(), 0644), 0);
  std::string before = Listing(dir.path());
  bool had_db = true;
  std::string err = RunBeside(db, &had_db);
  EXPECT_FALSE(had_db);
  EXPECT_NE(err.find(db + ": it is a FIFO, must be a regular file"),
            std::string::npos)
      << err;
  EXPECT_EQ(Listing(dir.path()), before);
}

TEST(DbFileTest, ATextFileIsRefusedAndLeftAsItIs) {
  TempDir dir;
  std::string db = dir.path() + "/notes.txt";
  std::ofstream(db) << "my notes, not a database\n";
  std::string before = Listing(dir.path());
  bool had_db = true;
  std::string err = RunBeside(db, &had_db);
  EXPECT_FALSE(had_db);
  EXPECT_NE(err.find(db + ": it is not an SQLite database"), std::string::npos)
      << err;
  EXPECT_EQ(Listing(dir.path()), before);  // no -wal, -shm, .lock, .bad-*
  EXPECT_EQ(Contents(db), "my notes, not a database\n");
}

TEST(DbFileTest, AnotherProgramsSqliteFileIsRefusedAndLeftAsItIs) {
  TempDir dir;
  std::string db = dir.path() + "/other.db";
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h,
                         "CREATE TABLE notes(x TEXT); "
                         "INSERT INTO notes VALUES('mine')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(h);
  std::string before = Listing(dir.path()), contents = Contents(db);
  absl::StatusOr<std::unique_ptr<SearchDb>> o = SearchDb::Open(db);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(o.status().message().find("another program"), std::string::npos)
      << o.status();
  EXPECT_EQ(Listing(dir.path()), before);
  EXPECT_EQ(Contents(db), contents);
}

TEST(DbFileTest, AReadOnlyFileIsUsedForLookupsOnlyAndNotChanged) {
  TempDir dir;
  std::string db = dir.path() + "/ro.db";
  Spec stored = Spec::Matmul(24, 16, 8), fresh = Spec::Matmul(25, 16, 8);
  { ASSERT_TRUE(Runtime(HostTarget(), WithDb(db)).Get(stored).ok()); }
  ASSERT_EQ(chmod(db.c_str(), 0444), 0);
  std::string contents = Contents(db);
  ::testing::internal::CaptureStderr();
  {
    Runtime rt(HostTarget(), WithDb(db));
    ASSERT_NE(rt.db(), nullptr);
    EXPECT_TRUE(rt.db()->read_only());
    absl::StatusOr<KernelPtr> k = rt.Get(stored);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->source(), KernelSource::kDatabase);
    k = rt.Get(fresh);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->source(), KernelSource::kSearch);
    EXPECT_TRUE(KernelMatchesReference(*k, fresh));
    EXPECT_EQ(rt.cache_stats().db_store_failed, 0);  // not even tried
  }
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(db + " is read-only; it is used for lookups only"),
            std::string::npos)
      << err;
  EXPECT_EQ(Contents(db), contents);
  EXPECT_EQ(Listing(dir.path()).find(".bad-"), std::string::npos);
}

// A file SQLite reports damaged at its first read (a truncated one: its
// header promises pages the file does not hold, with no WAL to supply them).
TEST(DbFileTest, AFileSqliteSaysIsDamagedIsSetAsideAndReplaced) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  {
    Runtime rt(HostTarget(), WithDb(db));
    for (int m = 1; m <= 40; ++m)  // enough rows for several pages
      ASSERT_TRUE(rt.Get(Spec::Matmul(m, 33, 17)).ok());
  }
  ASSERT_GT(fs::file_size(db), 16384u);
  fs::resize_file(db, fs::file_size(db) / 2);
  ::testing::internal::CaptureStderr();
  Runtime rt(HostTarget(), WithDb(db));
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_NE(rt.db(), nullptr);
  EXPECT_NE(err.find(db + " is damaged (SQLite: "), std::string::npos) << err;
  EXPECT_NE(Listing(dir.path()).find("a.db.bad-"), std::string::npos);
  EXPECT_EQ(*rt.db()->IntegrityCheck(), "ok");
  EXPECT_TRUE(KernelMatchesReference(rt, Spec::Matmul(7, 33, 17)));
}

TEST(DbFileTest, OnlyTheNewestSetAsideFilesAreKept) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  // Five earlier ones, and files that only look alike.
  for (int t = 1; t <= 5; ++t)
    for (const char* suffix : {"", "-wal"})
      std::ofstream(db + ".bad-" + std::to_string(1000 + t) + "-7-0" + suffix)
          << "old";
  std::ofstream(db + ".bad-notes") << "mine";
  fs::create_directory(db + ".bad-1-2-3");
  {
    sqlite3* h = nullptr;  // a schema too old to migrate
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h,
                           "CREATE TABLE meta(name TEXT, value TEXT); "
                           "INSERT INTO meta VALUES('format', 'amarena search "
                           "database'), ('schema', '0'), ('generator', '1')",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(h);
  }
  ::testing::internal::CaptureStderr();
  absl::StatusOr<std::unique_ptr<SearchDb>> o = SearchDb::Open(db);
  ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(o.ok()) << o.status();
  std::string names = Listing(dir.path());
  // Kept: the one just set aside and the newest earlier one (1005), plus
  // what is not ours.
  EXPECT_EQ(names.find("a.db.bad-1004-7-0"), std::string::npos) << names;
  EXPECT_EQ(names.find("a.db.bad-1001-7-0-wal"), std::string::npos) << names;
  EXPECT_NE(names.find("a.db.bad-1005-7-0\n"), std::string::npos) << names;
  EXPECT_NE(names.find("a.db.bad-1005-7-0-wal"), std::string::npos) << names;
  EXPECT_NE(names.find("a.db.bad-notes"), std::string::npos) << names;
  EXPECT_TRUE(fs::is_directory(db + ".bad-1-2-3"));
  int ours = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    std::string n = e.path().filename().string();
    ours += n.rfind("a.db.bad-1", 0) == 0 && n.find("-wal") == n.npos &&
            n != "a.db.bad-1-2-3";
  }
  EXPECT_EQ(ours, kKeepSetAside);
}

TEST(DbFileTest, CheckReportsDamageAndChangesNothing) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  {
    Runtime rt(HostTarget(), WithDb(db));
    for (int m = 1; m <= 40; ++m)
      ASSERT_TRUE(rt.Get(Spec::Matmul(m, 33, 17)).ok());
  }
  EXPECT_EQ(*SearchDb::Check(db), "ok");
  // Garbage over the pages after the first two (the meta table's).
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2 * 4096);
    for (int i = 0; i < 3 * 4096; ++i) f.put(static_cast<char>(i * 7));
  }
  std::string before = Listing(dir.path()), contents = Contents(db);
  absl::StatusOr<std::string> r = SearchDb::Check(db);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_NE(r.status().message().find(db), std::string::npos);
  EXPECT_EQ(Listing(dir.path()), before);
  EXPECT_EQ(Contents(db), contents);
  EXPECT_EQ(SearchDb::Check(dir.path() + "/none.db").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(SearchDb::Check(dir.path()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace amarena
