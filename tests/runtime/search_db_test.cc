// The on-disk search database: results survive the runtime that searched
// them, nothing read back is trusted beyond what replay verifies (and what
// fails replay is replaced), the file stays under its size cap, and a store
// never waits long for another process's lock. What happens to files at the
// path is in db_file_test.cc.
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
#include "tests/testing/random_specs.h"
#include "tests/testing/temp_dir.h"

namespace amarena {
namespace {

using testing::KernelMatchesReference;
using testing::TempDir;

using testing::WithDb;

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

int64_t Rows(const std::string& db) {
  absl::StatusOr<std::unique_ptr<SearchDb>> d = SearchDb::Open(db);
  return d.ok() ? (*d)->Stats()->rows : -1;
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

// A Spec with leading dimensions is its own row (its text includes them) and
// replays into a kernel that honours them; the dense Spec is a different
// problem.
TEST(SearchDbTest, LeadingDimensionsAreStoredAndReplayed) {
  TempDir dir;
  std::string db = dir.path() + "/amarena.db";
  Spec spec = *ParseSpec("matmul 100x37x70 f32 b=col lda=41 ldb=113 ldc=71");
  std::string first_tree;
  {
    Runtime rt(HostTarget(), WithDb(db));
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
  EXPECT_EQ((*k)->spec().aux[2].layout.ld(), 71);
  EXPECT_TRUE(KernelMatchesReference(*k, spec));
  absl::StatusOr<KernelPtr> dense =
      rt.Get(*ParseSpec("matmul 100x37x70 f32 b=col"));
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_EQ((*dense)->source(), KernelSource::kSearch);
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

// A stored row that does not replay is searched again once, and the
// search's tree takes its place: the next process finds it in the database.
TEST(SearchDbTest, TamperedRowsAreSearchedAgainAndReplaced) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Spec spec = *ParseSpec("matmul 48x64x40 f32");
  std::string tree;
  {
    Runtime rt(HostTarget(), WithDb(db));
    tree = PrintImpl((*rt.Get(spec))->impl());
  }
  const int64_t rows = Rows(db);
  // A cost that no longer matches, then decisions that do not apply, then
  // a box the row did not come from (so the search's row has another key).
  for (const char* tamper :
       {"UPDATE results SET cost = cost + 1",
        "UPDATE results SET decisions = 'tile m 7;select scalar_fma'",
        "UPDATE results SET decisions = 'bogus'",
        "UPDATE results SET vrf_lo = vrf_lo - 1, decisions = 'bogus' "
        "WHERE spec = 'matmul 48x64x40 f32'"}) {
    Sql(db, tamper);
    {
      Runtime rt(HostTarget(), WithDb(db));
      absl::StatusOr<KernelPtr> k = rt.Get(spec);
      ASSERT_TRUE(k.ok()) << k.status();
      EXPECT_EQ((*k)->source(), KernelSource::kSearch) << tamper;
      EXPECT_TRUE(KernelMatchesReference(*k, spec));
    }
    Runtime rt(HostTarget(), WithDb(db));
    absl::StatusOr<KernelPtr> k = rt.Get(spec);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->source(), KernelSource::kDatabase) << tamper;
    EXPECT_EQ(PrintImpl((*k)->impl()), tree);
    EXPECT_EQ(Rows(db), rows) << tamper;  // replaced, not added
  }
}

// Storing more than the cap holds keeps the file under it (plus one
// store's worth): the least recently used keys go first, and a key found
// recently counts as used.
TEST(SearchDbTest, TheCapKeepsTheMostRecentlyUsed) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Target t = Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  Searcher searcher(t);
  auto store = [&](SearchDb& d, int first, int last) {
    for (int i = first; i < last; ++i)
      ASSERT_TRUE(
          d.Store(t, **searcher.Solve(t.Bind(testing::SmallMatmul(i)))).ok());
  };
  auto found = [&](SearchDb& d, int i) {
    return d.Find(t, ClampBudget(t.Bind(testing::SmallMatmul(i)), t))
        .has_value();
  };
  auto file_size = [&] {
    return static_cast<int64_t>(std::filesystem::file_size(db));
  };
  // 120 Specs without a cap; closing puts them in the file, whose size
  // becomes the cap: the next 40 Specs must make room.
  { store(**SearchDb::Open(db, {.max_bytes = 0}), 0, 120); }
  const int64_t cap = file_size();
  // All of them were used two hours ago; then 0..4 are found again.
  Sql(db, "UPDATE used SET last_used = last_used - 7200000");
  {
    std::unique_ptr<SearchDb> d = *SearchDb::Open(db, {.max_bytes = cap});
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(found(*d, i));
    store(*d, 120, 160);
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(found(*d, i)) << i;
    for (int i = 120; i < 160; ++i) EXPECT_TRUE(found(*d, i)) << i;
    int old = 0;
    for (int i = 5; i < 120; ++i) old += found(*d, i);
    EXPECT_LT(old, 115 - 20) << "too little was pruned";
  }
  // Closed, so the WAL is in the file: the file is what stays on disk.
  const int64_t slack = 64 << 10;
  EXPECT_LE(file_size(), cap + slack);
  // A lower cap shrinks the file at the next store.
  {
    std::unique_ptr<SearchDb> d = *SearchDb::Open(db, {.max_bytes = cap / 4});
    store(*d, 160, 161);
    EXPECT_TRUE(found(*d, 160));
  }
  EXPECT_LE(file_size(), cap / 4 + slack);
}

// With another connection holding the write lock, a new Spec's store waits
// kStoreWait, is skipped and counted, and the kernel is still returned; a
// stored Spec is found without waiting. (db_lock_test.sh does this across
// processes, for longer.)
TEST(SearchDbTest, AStoreBesideAHeldWriteLockIsSkippedAndCounted) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Spec stored = Spec::Matmul(40, 24, 56), fresh = Spec::Matmul(41, 24, 56);
  { ASSERT_TRUE(Runtime(HostTarget(), WithDb(db)).Get(stored).ok()); }
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  ::testing::internal::CaptureStderr();
  {
    Runtime rt(HostTarget(), WithDb(db));
    auto t0 = Clock::now();
    absl::StatusOr<KernelPtr> k = rt.Get(stored);
    EXPECT_LT(ms(t0), 2000);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->source(), KernelSource::kDatabase);
    t0 = Clock::now();
    k = rt.Get(fresh);
    // Generous: the search itself takes milliseconds, the wait 50.
    EXPECT_LT(ms(t0), 2000);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE(KernelMatchesReference(*k, fresh));
    EXPECT_EQ(rt.cache_stats().db_store_skipped, 1);
  }
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cannot store results in search database " + db +
                     ": another process held its write lock for over 50 ms"),
            std::string::npos)
      << err;
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  // Not stored then, so searched (and stored) by the next runtime.
  {
    Runtime rt(HostTarget(), WithDb(db));
    EXPECT_EQ((*rt.Get(fresh))->source(), KernelSource::kSearch);
    EXPECT_EQ(rt.cache_stats().db_store_skipped, 0);
  }
  Runtime rt(HostTarget(), WithDb(db));
  EXPECT_EQ((*rt.Get(fresh))->source(), KernelSource::kDatabase);
}

// Another process may set the file aside and make a new one while this one
// has it open: lookups and stores then go to the new file, not on into the
// old one.
TEST(SearchDbTest, AFileReplacedByAnotherProcessIsFollowed) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Target t = Target::Avx2({.l1d = 48 << 10, .l2 = 1 << 20, .l3 = 32 << 20});
  Searcher searcher(t);
  auto impl = [&](int i) {
    return *searcher.Solve(t.Bind(testing::SmallMatmul(i)));
  };
  auto clamped = [&](int i) {
    return ClampBudget(t.Bind(testing::SmallMatmul(i)), t);
  };
  std::unique_ptr<SearchDb> mine = *SearchDb::Open(db);
  ASSERT_TRUE(mine->Store(t, *impl(0)).ok());
  std::filesystem::rename(db, db + ".bad-1-2-3");
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
  {
    std::unique_ptr<SearchDb> theirs = *SearchDb::Open(db);  // a new file
    ASSERT_TRUE(theirs->Store(t, *impl(1)).ok());
  }
  EXPECT_TRUE(mine->Find(t, clamped(1)).has_value());
  EXPECT_FALSE(mine->Find(t, clamped(0)).has_value());
  ASSERT_TRUE(mine->Store(t, *impl(2)).ok());
  mine.reset();
  std::unique_ptr<SearchDb> next = *SearchDb::Open(db);
  EXPECT_TRUE(next->Find(t, clamped(2)).has_value());
}

// A file made by another generator version is used, not set aside: rows
// are keyed by version, so each version finds its own and not the other's.
TEST(SearchDbTest, VersionsShareAFileAndEachFindsItsOwnRows) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Spec spec = *ParseSpec("matmul 20x30x40 f32");
  { ASSERT_TRUE(Runtime(HostTarget(), WithDb(db)).Get(spec).ok()); }
  // As if another generator made the file.
  Sql(db, "UPDATE meta SET value = '999' WHERE name = 'generator'");
  const int64_t ours = Rows(db);
  ASSERT_GT(ours, 0);
  {
    Runtime rt(HostTarget(), WithDb(db));
    ASSERT_NE(rt.db(), nullptr);
    EXPECT_EQ(SetAsideCount(db), 0);
    absl::StatusOr<KernelPtr> k = rt.Get(spec);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ((*k)->source(), KernelSource::kDatabase);
  }
  // Another version does not find this version's rows, stores its own
  // beside them, and finds those next time.
  setenv("AMARENA_TESTING_GENERATOR_VERSION", "12345", 1);
  for (KernelSource want : {KernelSource::kSearch, KernelSource::kDatabase}) {
    Runtime rt(HostTarget(), WithDb(db));
    absl::StatusOr<KernelPtr> k = rt.Get(spec);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ((*k)->source(), want);
  }
  unsetenv("AMARENA_TESTING_GENERATOR_VERSION");
  EXPECT_EQ(Rows(db), 2 * ours);
  EXPECT_EQ(SetAsideCount(db), 0);
  Runtime rt(HostTarget(), WithDb(db));
  absl::StatusOr<KernelPtr> k = rt.Get(spec);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ((*k)->source(), KernelSource::kDatabase);
}

// A schema-1 file (meta and results, no `used`) is migrated in place, its
// rows kept; a newer schema is refused and left exactly as it is; a schema
// older than any migration is set aside.
TEST(SearchDbTest, OlderSchemasAreMigratedNewerOnesLeftAlone) {
  TempDir dir;
  std::string db = dir.path() + "/a.db";
  Spec spec = *ParseSpec("matmul 20x30x40 f32");
  { ASSERT_TRUE(Runtime(HostTarget(), WithDb(db)).Get(spec).ok()); }
  Sql(db, "DROP TABLE used; UPDATE meta SET value = '1' WHERE name = 'schema'");
  {
    Runtime rt(HostTarget(), WithDb(db));
    ASSERT_NE(rt.db(), nullptr);
    EXPECT_EQ(SetAsideCount(db), 0);
    absl::StatusOr<KernelPtr> k = rt.Get(spec);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ((*k)->source(), KernelSource::kDatabase);
  }
  EXPECT_EQ(*SearchDb::Check(db), "ok");  // now this schema's

  Sql(db, "UPDATE meta SET value = '99' WHERE name = 'schema'");
  const auto size = std::filesystem::file_size(db);
  {
    ::testing::internal::CaptureStderr();
    Runtime rt(HostTarget(), WithDb(db));
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rt.db(), nullptr);
    EXPECT_NE(err.find("has schema 99"), std::string::npos) << err;
  }
  EXPECT_EQ(SetAsideCount(db), 0);
  EXPECT_EQ(std::filesystem::file_size(db), size);
  absl::StatusOr<std::string> check = SearchDb::Check(db);
  EXPECT_EQ(check.status().code(), absl::StatusCode::kFailedPrecondition);

  Sql(db, "UPDATE meta SET value = '0' WHERE name = 'schema'");
  ::testing::internal::CaptureStderr();
  Runtime rt(HostTarget(), WithDb(db));
  ::testing::internal::GetCapturedStderr();
  ASSERT_NE(rt.db(), nullptr);
  EXPECT_EQ(SetAsideCount(db), 1);
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
