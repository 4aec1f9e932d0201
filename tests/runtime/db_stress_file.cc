// db_stress modes that put the database file through what SQLite promises to
// survive: writers beside readers and checkpoints, a checkpoint killed or
// failing midway, a full disk, and a process holding the write lock.
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>

#include "core/spec_text.h"
#include "runtime/search_db.h"
#include "search/search.h"
#include "tests/runtime/db_stress.h"
#include "tests/testing/random_specs.h"

namespace amarena::db_stress {
namespace {

// The value of `name=value` among `args`, or `fallback`.
std::string Option(const Args& args, const std::string& name,
                   const std::string& fallback = "") {
  for (const std::string& a : args)
    if (a.rfind(name + "=", 0) == 0) return a.substr(name.size() + 1);
  return fallback;
}
bool Flag(const Args& args, const std::string& name) {
  for (const std::string& a : args)
    if (a == name) return true;
  return false;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// Writes beyond `bytes` in any file fail with EFBIG (SIGXFSZ ignored, so the
// process lives on): how these modes make a disk full without mounting one.
void LimitFileSize(int64_t bytes) {
  std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit r {};
  r.rlim_cur = r.rlim_max = static_cast<rlim_t>(bytes);
  if (setrlimit(RLIMIT_FSIZE, &r) != 0) std::perror("setrlimit");
}

sqlite3* OpenRaw(const std::string& db) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) !=
      SQLITE_OK) {
    std::fprintf(stderr, "cannot open %s: %s\n", db.c_str(), sqlite3_errmsg(h));
    sqlite3_close(h);
    return nullptr;
  }
  sqlite3_busy_timeout(h, 10000);
  return h;
}

}  // namespace

// Store FIRST COUNT [keep-wal] [fsize=BYTES] [ok-list=FILE] [cap=BYTES]:
// searches
// SmallMatmul(FIRST..FIRST+COUNT-1) and stores each tree (cap: the size cap,
// default DbOptions'). keep-wal: a read
// snapshot taken first keeps every commit in the WAL (no checkpoint can copy
// it) and the process ends with _exit, so the WAL is left as a crash leaves
// it. ok-list: the numbers of the Specs whose store succeeded, one a line.
int Store(const std::string& db, const Args& args) {
  if (args.size() < 2) return 2;
  const int first = std::atoi(args[0].c_str()),
            count = std::atoi(args[1].c_str());
  Target t = HostOrDie();
  DbOptions options;
  if (std::string cap = Option(args, "cap"); !cap.empty())
    options.max_bytes = std::atoll(cap.c_str());
  absl::StatusOr<std::unique_ptr<SearchDb>> store = SearchDb::Open(db, options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 2;
  }
  sqlite3* snapshot = nullptr;
  if (Flag(args, "keep-wal")) {
    snapshot = OpenRaw(db);
    if (!snapshot || sqlite3_exec(snapshot, "BEGIN; SELECT count(*) FROM meta",
                                  nullptr, nullptr, nullptr) != SQLITE_OK)
      return 2;
  }
  if (std::string f = Option(args, "fsize"); !f.empty())
    LimitFileSize(std::atoll(f.c_str()));
  std::ofstream ok_list;
  if (std::string f = Option(args, "ok-list"); !f.empty()) ok_list.open(f);
  Searcher searcher(t);
  int stored = 0, skipped = 0, failed = 0;
  double slowest = 0;  // ms
  std::string first_error;
  for (int i = first; i < first + count; ++i) {
    absl::StatusOr<ImplPtr> impl =
        searcher.Solve(t.Bind(testing::SmallMatmul(i)));
    if (!impl.ok()) return 2;
    auto t0 = std::chrono::steady_clock::now();
    absl::Status s = (*store)->Store(t, **impl);
    slowest = std::max(slowest, std::chrono::duration<double, std::milli>(
                                    std::chrono::steady_clock::now() - t0)
                                    .count());
    if (s.ok()) {
      ++stored;
      if (ok_list.is_open()) ok_list << i << "\n" << std::flush;
    } else {
      (absl::IsUnavailable(s) ? skipped : failed) += 1;
      if (first_error.empty()) first_error = std::string(s.message());
    }
  }
  std::printf(
      "stored %d, skipped %d, failed %d, slowest store %.1f ms%s%s\n", stored,
      skipped, failed, slowest,
      first_error.empty() ? "" : "; first error: ", first_error.c_str());
  std::fflush(stdout);
  if (snapshot) _exit(0);
  return 0;
}

// Expect FIRST COUNT | Expect list=FILE: every listed SmallMatmul is found in
// the database (by a fresh SearchDb, as the next process would).
int Expect(const std::string& db, const Args& args) {
  std::vector<int> want;
  if (std::string f = Option(args, "list"); !f.empty()) {
    std::ifstream in(f);
    for (int i; in >> i;) want.push_back(i);
  } else if (args.size() >= 2) {
    for (int i = 0; i < std::atoi(args[1].c_str()); ++i)
      want.push_back(std::atoi(args[0].c_str()) + i);
  } else {
    return 2;
  }
  Target t = HostOrDie();
  absl::StatusOr<std::unique_ptr<SearchDb>> store = SearchDb::Open(db);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  int missing = 0;
  for (int i : want)
    if (!(*store)->Find(t, ClampBudget(t.Bind(testing::SmallMatmul(i)), t))) {
      if (missing++ < 5)
        std::fprintf(stderr, "missing: #%d %s\n", i,
                     PrintSpec(testing::SmallMatmul(i)).c_str());
    }
  std::printf("found %zu of %zu\n", want.size() - missing, want.size());
  return missing ? 1 : 0;
}

// Readers STOP_FILE: until STOP_FILE exists, opens the database as a new
// process would, reads its statistics, and runs a passive checkpoint on a
// connection of its own.
int Readers(const std::string& db, const Args& args) {
  if (args.empty()) return 2;
  int rounds = 0, open_failures = 0, checkpoints = 0;
  while (!Exists(args[0])) {
    ++rounds;
    {
      absl::StatusOr<std::unique_ptr<SearchDb>> store = SearchDb::Open(db);
      if (!store.ok() || !(*store)->Stats().ok()) ++open_failures;
    }
    if (sqlite3* h = OpenRaw(db)) {
      if (sqlite3_exec(h, "PRAGMA wal_checkpoint", nullptr, nullptr, nullptr) ==
          SQLITE_OK)
        ++checkpoints;
      sqlite3_close(h);
    }
  }
  std::printf("%d rounds, %d checkpoints, %d failed opens\n", rounds,
              checkpoints, open_failures);
  return open_failures ? 1 : 0;
}

// Checkpoint [fsize=BYTES] [die|kill-midway]: a TRUNCATE checkpoint of the
// WAL into the file. fsize: writes past BYTES fail (a full disk). die: the
// process kills itself with SIGKILL when the checkpoint returns, without
// closing anything. kill-midway: the checkpoint runs on a thread while this
// one watches the file, and SIGKILLs the process as soon as the file has
// grown (the checkpoint has written page 1 and is writing the rest); exit 3
// if the checkpoint finished first.
int Checkpoint(const std::string& db, const Args& args) {
  sqlite3* h = OpenRaw(db);
  if (!h) return 2;
  if (std::string f = Option(args, "fsize"); !f.empty())
    LimitFileSize(std::atoll(f.c_str()));
  if (Flag(args, "kill-midway")) {
    const int64_t start = FileSize(db);
    std::atomic<bool> done{false};
    std::thread worker([&] {
      sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr,
                   nullptr);
      done = true;
    });
    while (!done) {
      if (FileSize(db) > start) raise(SIGKILL);
    }
    worker.join();
    std::printf("the checkpoint finished before it was seen writing\n");
    return 3;
  }
  int rc = sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr,
                        nullptr);
  std::printf("checkpoint: %s\n", rc == SQLITE_OK ? "ok" : sqlite3_errmsg(h));
  std::fflush(stdout);
  if (Flag(args, "die")) raise(SIGKILL);
  sqlite3_close(h);
  return 0;
}

// Header: what the first page says against what the file holds, the state
// a checkpoint leaves while it copies (the header is written first).
int Header(const std::string& db) {
  unsigned char b[32] = {};
  int fd = ::open(db.c_str(), O_RDONLY);
  if (fd < 0 || ::pread(fd, b, sizeof b, 0) != sizeof b) return 2;
  ::close(fd);
  int64_t page = (b[16] << 8) | b[17];
  if (page == 1) page = 65536;
  int64_t pages = (int64_t{b[28]} << 24) | (b[29] << 16) | (b[30] << 8) | b[31];
  std::printf("header: %lld pages, file: %lld pages\n",
              static_cast<long long>(pages),
              static_cast<long long>(FileSize(db) / page));
  return 0;
}

// HoldLock SECONDS READY_FILE: takes the write lock (BEGIN IMMEDIATE),
// creates READY_FILE, holds the lock for SECONDS, lets go.
int HoldLock(const std::string& db, const Args& args) {
  if (args.size() < 2) return 2;
  sqlite3* h = OpenRaw(db);
  if (!h) return 2;
  if (sqlite3_exec(h, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    std::fprintf(stderr, "cannot lock %s: %s\n", db.c_str(), sqlite3_errmsg(h));
    return 2;
  }
  std::ofstream(args[1]) << "locked\n";
  std::this_thread::sleep_for(
      std::chrono::duration<double>(std::atof(args[0].c_str())));
  sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(h);
  return 0;
}

}  // namespace amarena::db_stress
