// The on-disk search database: results survive the runtime that searched
// them, nothing read back is trusted beyond what replay verifies, and damaged
// or foreign files are set aside and rebuilt.
#include "runtime/search_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "search/replay.h"
#include "search/search.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/temp_dir.h"

namespace amarena {
namespace {

using testing::KernelMatchesReference;
using testing::TempDir;

RuntimeOptions WithDb(const std::string& path) {
  RuntimeOptions o;
  o.db = path;
  return o;
}

// The files set aside next to `db`.
int SetAsideCount(const std::string& db) {
  int n = 0;
  auto dir = std::filesystem::path(db).parent_path();
  std::string stem = std::filesystem::path(db).filename().string() + ".bad-";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind(stem, 0) == 0 && name.find("-wal") == std::string::npos &&
        name.find("-shm") == std::string::npos)
      ++n;
  }
  return n;
}

void Sql(const std::string& db, const char* sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql, nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

TEST(SearchDbTest, ASecondRuntimeReplaysWhatTheFirstSearched) {
  TempDir dir;
  std::string db = dir.path() + "/sub/dir/amarena.db";  // directories made
  Spec spec = *ParseSpec("matmul 100x37x70 f32 b=col");
  std::string first_tree;
  {
    Runtime rt(HostTarget(), WithDb(db));
    ASSERT_NE(rt.db(), nullptr);
    absl::StatusOr<KernelPtr> k = rt.Get(spec);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->source(), KernelSource::kSearch);
    first_tree = PrintImpl((*k)->impl());
  }
  Runtime rt(HostTarget(), WithDb(db));
  absl::StatusOr<KernelPtr> k = rt.Get(spec);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ((*k)->source(), KernelSource::kDatabase);
  EXPECT_EQ(PrintImpl((*k)->impl()), first_tree);
  EXPECT_TRUE(KernelMatchesReference(*k, spec));
  EXPECT_EQ(rt.cache_stats().from_database, 1);
  absl::StatusOr<DbStats> st = rt.db()->Stats();
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_GT(st->rows, 3);
  EXPECT_EQ(st->targets, 1);
  EXPECT_EQ(*rt.db()->IntegrityCheck(), "ok");
}

TEST(SearchDbTest, ResultsAreFoundByTargetAndBudgetBox) {
  TempDir dir;
  absl::StatusOr<std::unique_ptr<SearchDb>> db =
      SearchDb::Open(dir.path() + "/a.db");
  ASSERT_TRUE(db.ok()) << db.status();
  Target t = Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  Searcher s(t);
  Spec bound = t.Bind(*ParseSpec("matmul 64x64x64 f32"));
  ImplPtr impl = *s.Solve(bound);
  ASSERT_TRUE((*db)->Store(t, *impl).ok());
  ASSERT_TRUE((*db)->Store(t, *impl).ok());  // again: nothing duplicated
  std::optional<SearchDb::Found> f = (*db)->Find(t, ClampBudget(bound, t));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->decisions, EncodeDecisions(*impl));
  EXPECT_EQ(f->cost, impl->cost.main);
  // A budget below the tree's peak is not answered by this row.
  Spec tight = bound;
  tight.budget->vrf = impl->cost.peak.vrf - 1;
  EXPECT_FALSE((*db)->Find(t, ClampBudget(tight, t)).has_value());
  // Nor is another target.
  Target other = t;
  other.workers = 2;
  EXPECT_FALSE((*db)->Find(other, ClampBudget(bound, t)).has_value());
  absl::StatusOr<DbStats> st = (*db)->Stats();
  int64_t rows = st->rows;
  ASSERT_TRUE((*db)->Clear().ok());
  EXPECT_GT(rows, 0);
  EXPECT_EQ((*db)->Stats()->rows, 0);
  EXPECT_FALSE((*db)->Find(t, ClampBudget(bound, t)).has_value());
}

TEST(SearchDbTest, TamperedRowsAreSearchedAgainNotTrusted) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Spec spec = *ParseSpec("matmul 48x64x40 f32");
  { ASSERT_TRUE(Runtime(HostTarget(), WithDb(db)).Get(spec).ok()); }
  // A cost that no longer matches, then decisions that do not apply.
  for (const char* tamper :
       {"UPDATE results SET cost = cost + 1",
        "UPDATE results SET decisions = 'tile m 7;select scalar_fma'",
        "UPDATE results SET decisions = 'bogus'"}) {
    Sql(db, tamper);
    Runtime rt(HostTarget(), WithDb(db));
    absl::StatusOr<KernelPtr> k = rt.Get(spec);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->source(), KernelSource::kSearch) << tamper;
    EXPECT_TRUE(KernelMatchesReference(*k, spec));
    Sql(db, "DELETE FROM results");
    { ASSERT_TRUE(Runtime(HostTarget(), WithDb(db)).Get(spec).ok()); }
  }
}

TEST(SearchDbTest, AFileFromAnotherVersionIsSetAsideAndRebuilt) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Spec spec = *ParseSpec("matmul 20x30x40 f32");
  { ASSERT_TRUE(Runtime(HostTarget(), WithDb(db)).Get(spec).ok()); }
  Sql(db, "UPDATE meta SET value = '999' WHERE name = 'generator'");
  Runtime rt(HostTarget(), WithDb(db));
  ASSERT_NE(rt.db(), nullptr);
  EXPECT_EQ(SetAsideCount(db), 1);
  absl::StatusOr<KernelPtr> k = rt.Get(spec);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ((*k)->source(), KernelSource::kSearch);  // nothing carried over
  EXPECT_GT(rt.db()->Stats()->rows, 0);              // and stored anew
  // Another program's SQLite file is foreign too, and left intact.
  std::string other = dir.path() + "/other.db";
  Sql(other, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('mine')");
  absl::StatusOr<std::unique_ptr<SearchDb>> o = SearchDb::Open(other);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(SetAsideCount(other), 1);
}

TEST(SearchDbTest, GarbageAndTruncatedFilesAreSetAsideAndRebuilt) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  {
    std::ofstream junk(db, std::ios::binary);
    for (int i = 0; i < 1000; ++i) junk << "not a database ";
  }
  {
    Runtime rt(HostTarget(), WithDb(db));
    ASSERT_NE(rt.db(), nullptr);
    EXPECT_EQ(SetAsideCount(db), 1);
    for (int m = 1; m <= 40; ++m)  // enough rows for several pages
      ASSERT_TRUE(rt.Get(Spec::Matmul(m, 33, 17)).ok());
  }
  ASSERT_GT(std::filesystem::file_size(db), 8192u);
  std::filesystem::resize_file(db, std::filesystem::file_size(db) / 2);
  Runtime rt(HostTarget(), WithDb(db));
  ASSERT_NE(rt.db(), nullptr);
  EXPECT_EQ(SetAsideCount(db), 2);
  EXPECT_EQ(*rt.db()->IntegrityCheck(), "ok");
  Spec spec = Spec::Matmul(7, 33, 17);
  absl::StatusOr<KernelPtr> k = rt.Get(spec);
  ASSERT_TRUE(k.ok());
  EXPECT_TRUE(KernelMatchesReference(*k, spec));
}

TEST(SearchDbTest, AnUnusablePathIsAnErrorAndTheRuntimeGoesOnWithout) {
  absl::StatusOr<std::unique_ptr<SearchDb>> db =
      SearchDb::Open("/dev/null/amarena.db");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("/dev/null"), std::string::npos)
      << db.status();
  Runtime rt(HostTarget(), WithDb("/dev/null/amarena.db"));
  EXPECT_EQ(rt.db(), nullptr);
  EXPECT_TRUE(KernelMatchesReference(rt, Spec::Matmul(5, 6, 7)));
}

TEST(SearchDbTest, DefaultPathFollowsTheEnvironment) {
  const char* saved[3] = {std::getenv("AMARENA_DB"),
                          std::getenv("XDG_CACHE_HOME"), std::getenv("HOME")};
  std::string keep[3];
  for (int i = 0; i < 3; ++i) keep[i] = saved[i] ? saved[i] : "";
  setenv("AMARENA_DB", "off", 1);
  EXPECT_EQ(DefaultDbPath(), "");
  setenv("AMARENA_DB", "/x/y.db", 1);
  EXPECT_EQ(DefaultDbPath(), "/x/y.db");
  unsetenv("AMARENA_DB");
  setenv("XDG_CACHE_HOME", "/cache", 1);
  EXPECT_EQ(DefaultDbPath(), "/cache/amarena/amarena.db");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultDbPath(), "/home/u/.cache/amarena/amarena.db");
  const char* names[3] = {"AMARENA_DB", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i) {
    if (saved[i])
      setenv(names[i], keep[i].c_str(), 1);
    else
      unsetenv(names[i]);
  }
}

TEST(DeadlineTest, AMissedDeadlineGetsAProvisionalKernelThenTheExactOne) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Spec spec = *ParseSpec("matmul 1024x1024x1024 f32");
  {
    Runtime rt(HostTarget(), WithDb(db));
    GetOptions now;
    now.deadline = std::chrono::steady_clock::now();
    absl::StatusOr<KernelPtr> quick = rt.Get(spec, now);
    ASSERT_TRUE(quick.ok()) << quick.status();
    EXPECT_EQ((*quick)->source(), KernelSource::kProvisional);
    EXPECT_TRUE(KernelMatchesReference(*quick, spec));
    EXPECT_EQ(rt.cache_stats().provisional, 1);
    // The exact search finishes in the background and replaces it.
    KernelPtr exact;
    for (int i = 0; i < 600 && !exact; ++i) {
      KernelPtr k = *rt.Get(spec);
      if (k->source() == KernelSource::kSearch)
        exact = k;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_NE(exact, nullptr) << "the exact kernel never replaced it";
    EXPECT_LE(exact->impl().cost.main, (*quick)->impl().cost.main);
    EXPECT_TRUE(KernelMatchesReference(exact, spec));
  }
  // ... and was stored for the next process.
  Runtime rt(HostTarget(), WithDb(db));
  GetOptions soon;
  soon.deadline = std::chrono::steady_clock::now();
  EXPECT_EQ((*rt.Get(spec, soon))->source(), KernelSource::kDatabase);
}

TEST(DeadlineTest, AGenerousDeadlineGetsTheExactKernel) {
  RuntimeOptions no_db;
  no_db.db = "off";
  Runtime rt(HostTarget(), no_db);
  GetOptions later;
  later.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  absl::StatusOr<KernelPtr> k = rt.Get("matmul 64x64x64 f32", later);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ((*k)->source(), KernelSource::kSearch);
}

// The destructor cancels the exact search still running for a deadline miss
// and joins its thread (a hang or crash here fails the test).
TEST(DeadlineTest, DestroyingTheRuntimeStopsItsBackgroundSearch) {
  RuntimeOptions no_db;
  no_db.db = "off";
  Spec spec = *ParseSpec("matmul 2048x2048x2048 f32");
  Runtime rt(HostTarget(), no_db);
  GetOptions now;
  now.deadline = std::chrono::steady_clock::now();
  absl::StatusOr<KernelPtr> k = rt.Get(spec, now);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ((*k)->source(), KernelSource::kProvisional);
}

}  // namespace
}  // namespace amarena
