#include "runtime/search_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "runtime/db_file.h"
#include "search/replay.h"
#include "search/search.h"

namespace amarena {

namespace {

using Clock = DbConn::Clock;
using Version = DbConn::Version;

// How long opening waits for a lock: only another process's recovery of a
// WAL left by a crash takes one a reader needs, and making a new file's
// tables takes the write lock for a moment.
constexpr auto kOpenWait = std::chrono::seconds(2);
// Idle connections kept for reuse (one per thread that used the database at
// once, up to this).
constexpr size_t kMaxIdle = 16;
// Pruning goes below the cap by a tenth, so it runs once per tenth of the cap
// stored rather than on every store.
constexpr int64_t kPruneToPercent = 90;

// When a key was last used: milliseconds since the epoch (seconds would give
// a whole burst of stores one age, none of which pruning could tell apart).
int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The table key: the Spec without its budget.
std::string Key(const Spec& s) {
  Spec k = s;
  k.budget.reset();
  return PrintSpec(k);
}

}  // namespace

int DbGeneratorVersion() {
  const char* v = std::getenv("AMARENA_TESTING_GENERATOR_VERSION");
  int n = 0;
  return v != nullptr && absl::SimpleAtoi(v, &n) ? n : kGeneratorVersion;
}

std::string DbTargetKey(const Target& target) {
  return absl::StrCat(target.Fingerprint(), "-gen", DbGeneratorVersion());
}

std::string DefaultDbPath() {
  if (const char* env = std::getenv("AMARENA_DB"); env && *env)
    return absl::string_view(env) == "off" ? "" : env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/')
    return absl::StrCat(xdg, "/amarena/amarena.db");
  if (const char* home = std::getenv("HOME"); home && *home)
    return absl::StrCat(home, "/.cache/amarena/amarena.db");
  return "";
}

std::string DbPathFor(absl::string_view option) {
  if (option.empty()) return DefaultDbPath();
  return option == "off" ? "" : std::string(option);
}

int64_t DbMaxBytesFromEnv(const Logger& log) {
  const char* v = std::getenv("AMARENA_DB_MAX_MB");
  if (v == nullptr || *v == '\0') return kDefaultDbMaxBytes;
  if (absl::string_view(v) == "off") return 0;
  int64_t mb = 0;
  if (absl::SimpleAtoi(v, &mb) && mb >= 0 && mb <= (int64_t{1} << 20))
    return mb << 20;
  log.Log(LogLevel::kWarning,
          absl::StrCat("cannot use AMARENA_DB_MAX_MB: its value is '", v,
                       "', must be a whole number of MiB up to 1048576, 0 or "
                       "off; using the default, ",
                       kDefaultDbMaxBytes >> 20, " MiB"));
  return kDefaultDbMaxBytes;
}

absl::StatusOr<std::unique_ptr<SearchDb>> SearchDb::Open(
    const std::string& path, DbOptions options) {
  if (path.empty())
    return absl::InvalidArgumentError(
        "cannot open search database: the path is empty, must name a file");
  std::unique_ptr<SearchDb> db(new SearchDb(path, options));
  AMARENA_ASSIGN_OR_RETURN(std::unique_ptr<DbConn> c, db->Connect());
  db->idle_.push_back(std::move(c));
  if (db->read_only_)
    db->options_.log.Log(
        LogLevel::kWarning,
        absl::StrCat("search database ", path,
                     " is read-only; it is used for lookups only, and what "
                     "is searched is not stored"));
  return db;
}

SearchDb::~SearchDb() = default;

absl::StatusOr<std::unique_ptr<DbConn>> SearchDb::Connect() {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open search database ", path_, ": ", why));
  };
  // The file as found; a new one after setting it aside; once more if
  // another process replaced it meanwhile.
  for (int attempt = 0; attempt < 3; ++attempt) {
    PathProbe p = ProbePath(path_);
    if (p.kind == PathProbe::kRefused) return refuse(p.problem);
    if (p.kind == PathProbe::kMissing) AMARENA_RETURN_IF_ERROR(MakeDirs(path_));
    read_only_ = p.read_only;
    if (read_only_ && p.kind != PathProbe::kSqlite)
      return refuse(
          "it is empty and read-only, must be writable to become a "
          "database");
    AMARENA_ASSIGN_OR_RETURN(
        std::unique_ptr<DbConn> c,
        DbConn::Open(path_, read_only_ ? DbConn::Mode::kReadOnly
                                       : DbConn::Mode::kCreate));
    c->WaitFor(kOpenWait);
    // The first read of the file: a damaged one fails here.
    absl::StatusOr<Version> v = c->ReadVersion();
    if (v.ok() && *v == Version::kEmpty && !read_only_) v = c->CreateSchema();
    if (v.ok() && *v == Version::kOlder && !read_only_) v = c->Migrate();
    std::string why;
    if (!v.ok()) {
      std::string detail;
      if (v.status().code() != absl::StatusCode::kDataLoss ||
          !c->ConfirmDamage(&detail))
        return v.status();
      why = absl::StrCat("is damaged (SQLite: ", detail, ")");
    } else if (*v == Version::kForeign) {
      return refuse(
          "it is an SQLite database of another program (it has tables but no "
          "amarena meta table), must be an amarena search database; it is "
          "left as it is");
    } else if (*v == Version::kEmpty) {
      return refuse("it is read-only and has no tables yet");
    } else if (*v == Version::kOther) {
      // A newer amarena's: its rows are no use here, and not ours to drop.
      return refuse(absl::StrCat(
          "it has schema ", c->schema() >= 0 ? absl::StrCat(c->schema()) : "?",
          ", must be ", kDbSchemaVersion,
          " or older (a newer amarena's file); it is left as it is"));
    } else if (*v == Version::kOlder && read_only_) {
      return refuse(absl::StrCat("it has schema ", c->schema(),
                                 " and is read-only, so it cannot be migrated "
                                 "to schema ",
                                 kDbSchemaVersion));
    } else if (*v == Version::kOlder) {
      why = absl::StrCat("has schema ", c->schema(),
                         ", older than any this version migrates to schema ",
                         kDbSchemaVersion);
    } else {
      if (!p.wal && !read_only_ && p.kind == PathProbe::kSqlite)
        AMARENA_RETURN_IF_ERROR(
            c->ExecUntilNotBusy("PRAGMA journal_mode=WAL",
                                "set the journal mode of"));
      AMARENA_RETURN_IF_ERROR(c->Prepare());
      return c;
    }
    // Damaged, or too old to migrate: set aside if it may be.
    ino_t inode = c->inode();
    c.reset();
    if (read_only_ || p.symlink)
      return absl::FailedPreconditionError(
          absl::StrCat("cannot use search database ", path_, ": it ", why,
                       "; it is ", read_only_ ? "read-only" : "a symbolic link",
                       ", so it is left as it is"));
    if (!SetAside(path_, inode, why, options_.log))
      return absl::FailedPreconditionError(
          absl::StrCat("cannot use search database ", path_, ": it ", why,
                       " and could not be set aside"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot open search database ", path_,
                   ": no usable database could be made there in 3 tries"));
}

std::unique_ptr<DbConn> SearchDb::Acquire() {
  // One stat per call: if another process has set the file aside (and made
  // a new one), connections to the old one would go on reading and writing
  // a file nobody else sees.
  const ino_t at_path = InodeOf(path_);
  int generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty() && idle_.back()->inode() != at_path) {
      ++generation_;
      idle_.clear();
    }
    if (!idle_.empty()) {
      std::unique_ptr<DbConn> c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
    generation = generation_;
  }
  // A new connection must find the file this object checked: another
  // process may have replaced it since.
  absl::StatusOr<std::unique_ptr<DbConn>> c = DbConn::Open(
      path_, read_only_ ? DbConn::Mode::kReadOnly : DbConn::Mode::kReadWrite);
  absl::Status s = c.status();
  if (c.ok()) {
    (*c)->generation = generation;
    (*c)->WaitFor(kReadWait);
    absl::StatusOr<Version> v = (*c)->ReadVersion();
    if (v.status().code() == absl::StatusCode::kDataLoss) {
      Recover(*std::move(c));
      return nullptr;
    }
    s = !v.ok()                   ? v.status()
        : *v != Version::kCurrent ? absl::FailedPreconditionError(absl::StrCat(
                                        "cannot open search database ", path_,
                                        " again: another process replaced it "
                                        "with a file this version cannot use"))
                                  : (*c)->Prepare();
  }
  if (!s.ok()) {
    WarnOnce(said_no_conn_, s, "lookups and stores that need it fail");
    return nullptr;
  }
  return *std::move(c);
}

void SearchDb::Release(std::unique_ptr<DbConn> c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (c->generation == generation_ && idle_.size() < kMaxIdle)
    idle_.push_back(std::move(c));
}

void SearchDb::Recover(std::unique_ptr<DbConn> c) {
  std::lock_guard<std::mutex> recovering(recover_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (c->generation != generation_) return;  // done by another thread
  }
  std::string detail;
  if (!c->ConfirmDamage(&detail)) return;  // SQLite finds it intact
  c.reset();
  std::vector<std::unique_ptr<DbConn>> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    old.swap(idle_);
  }
  old.clear();
  // Connect sets it aside if it may, and makes a new one.
  absl::StatusOr<std::unique_ptr<DbConn>> fresh = Connect();
  if (!fresh.ok()) {
    WarnOnce(said_no_conn_, fresh.status(),
             "lookups and stores that need it fail");
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  (*fresh)->generation = generation_;
  idle_.push_back(*std::move(fresh));
}

void SearchDb::WarnOnce(std::atomic<bool>& said, const absl::Status& s,
                        absl::string_view consequence) {
  if (said.exchange(true)) return;
  options_.log.Log(LogLevel::kWarning,
                   absl::StrCat(s.message(), "; ", consequence));
}

std::optional<SearchDb::Found> SearchDb::Find(const Target& target,
                                              const Spec& clamped) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<DbConn> c = Acquire();
    if (!c) return std::nullopt;
    c->WaitFor(kReadWait);
    absl::StatusOr<std::optional<Found>> r = FindOn(*c, target, clamped);
    if (r.status().code() == absl::StatusCode::kDataLoss) {
      Recover(std::move(c));
      continue;
    }
    Release(std::move(c));
    return r.ok() ? *r : std::nullopt;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<SearchDb::Found>> SearchDb::FindOn(
    DbConn& c, const Target& target, const Spec& clamped) {
  AMARENA_CHECK(clamped.budget.has_value());
  const Budget& b = *clamped.budget;
  std::string fp = DbTargetKey(target), key = Key(clamped);
  DbStmt& q = c.find;
  q.Bind(1, fp).Bind(2, key);
  int64_t coords[] = {b.vrf, b.gpr, b.l1_lines, b.l2_lines, b.l3_lines};
  for (int i = 0; i < 5; ++i) q.Bind(3 + i, coords[i]);
  int rc = q.Next();
  std::optional<Found> found;
  int64_t last_used = 0;
  if (rc == SQLITE_ROW) {
    found = Found{q.Text(1), q.Int(2), q.Int(0)};
    last_used = q.Int(3);
    rc = SQLITE_DONE;
  }
  q.Done();
  if (rc != SQLITE_DONE) return c.Fail(rc, "look up a result in");
  // Record the use for the size cap, rarely, and never waiting: the lock may
  // be another process's, and a use not recorded only ages the key early.
  int64_t now = NowMs();
  if (found && !read_only_ &&
      now - last_used >=
          std::chrono::duration_cast<std::chrono::milliseconds>(kUseInterval)
              .count()) {
    c.WaitFor(Clock::duration::zero());
    c.use.Bind(1, fp).Bind(2, key).Bind(3, now).Next();
    c.use.Done();
  }
  return found;
}

absl::Status SearchDb::Store(const Target& target, const ImplNode& root,
                             const Found* replaces) {
  if (read_only_)
    return absl::FailedPreconditionError(
        absl::StrCat("cannot store results in search database ", path_,
                     ": the file is read-only"));
  auto deadline = Clock::now() + kStoreWait;
  absl::Status s;
  std::unique_lock<std::timed_mutex> turn(store_mu_, deadline);
  if (!turn.owns_lock()) {
    s = absl::UnavailableError(
        absl::StrCat("cannot store results in search database ", path_,
                     ": other threads of this process were storing for over ",
                     kStoreWait.count(), " ms"));
  }
  for (int attempt = 0; turn.owns_lock() && attempt < 2; ++attempt) {
    std::unique_ptr<DbConn> c = Acquire();
    if (!c) {
      s = absl::UnavailableError(
          absl::StrCat("cannot store results in search database ", path_,
                       ": no connection to it could be made"));
      break;
    }
    c->WaitUntil(deadline);
    s = StoreOn(*c, target, root, replaces);
    if (s.code() == absl::StatusCode::kDataLoss) {
      Recover(std::move(c));
      deadline = Clock::now() + kStoreWait;
      continue;
    }
    turn.unlock();
    if (s.ok()) c->CheckpointIfBig();  // outside the turn: others may store
    Release(std::move(c));
    break;
  }
  if (s.ok()) return s;
  if (s.code() == absl::StatusCode::kUnavailable) {
    ++stores_skipped_;
    WarnOnce(said_skipped_, s,
             "the result was not stored (the kernel is unaffected); later "
             "skips are counted, not reported");
  } else {
    ++stores_failed_;
    WarnOnce(said_failed_, s,
             "the result was not stored (the kernel is unaffected); later "
             "failures are counted, not reported");
  }
  return s;
}

absl::Status SearchDb::StoreOn(DbConn& c, const Target& target,
                               const ImplNode& root, const Found* replaces) {
  absl::Status status = c.Exec("BEGIN IMMEDIATE", "lock (to store in)");
  if (status.code() == absl::StatusCode::kUnavailable)
    return absl::UnavailableError(
        absl::StrCat("cannot store results in search database ", path_,
                     ": another process held its write lock for over ",
                     kStoreWait.count(), " ms"));
  AMARENA_RETURN_IF_ERROR(status);
  const std::string fp = DbTargetKey(target);
  const int64_t now = NowMs();
  auto run = [&](DbStmt& q) {
    int rc = q.Next();
    q.Done();
    if (rc != SQLITE_DONE && status.ok())
      status = c.Fail(rc, "store results in");
  };
  if (replaces != nullptr)
    run(c.forget.Bind(1, replaces->row)
            .Bind(2, replaces->decisions)
            .Bind(3, replaces->cost));
  std::function<void(const ImplNode&)> put = [&](const ImplNode& n) {
    if (!status.ok()) return;
    Spec hi = ClampBudget(n.spec, target);
    const Budget& h = *hi.budget;
    const Budget& l = n.cost.peak;
    std::string key = Key(n.spec), decisions = EncodeDecisions(n);
    DbStmt& q = c.put;
    q.Bind(1, fp).Bind(2, key);
    int64_t coords[] = {l.vrf, l.gpr, l.l1_lines, l.l2_lines, l.l3_lines,
                        h.vrf, h.gpr, h.l1_lines, h.l2_lines, h.l3_lines};
    for (int i = 0; i < 10; ++i) q.Bind(3 + i, coords[i]);
    run(q.Bind(13, decisions).Bind(14, n.cost.main));
    run(c.use.Bind(1, fp).Bind(2, key).Bind(3, now));
    for (const auto& child : n.children) put(*child);
  };
  put(root);
  if (status.ok() && options_.max_bytes > 0) status = Prune(c, now);
  if (status.ok()) status = c.Exec("COMMIT", "commit results to");
  if (!status.ok()) c.Exec("ROLLBACK", "roll back").IgnoreError();
  return status;
}

absl::Status SearchDb::Prune(DbConn& c, int64_t now_ms) {
  auto used_bytes = [&]() -> absl::StatusOr<int64_t> {
    AMARENA_ASSIGN_OR_RETURN(int64_t pages,
                             c.Int("PRAGMA page_count", "measure"));
    AMARENA_ASSIGN_OR_RETURN(int64_t free,
                             c.Int("PRAGMA freelist_count", "measure"));
    AMARENA_ASSIGN_OR_RETURN(int64_t size,
                             c.Int("PRAGMA page_size", "measure"));
    return (pages - free) * size;
  };
  AMARENA_ASSIGN_OR_RETURN(int64_t used, used_bytes());
  if (used <= options_.max_bytes) return absl::OkStatus();
  const int64_t goal = options_.max_bytes / 100 * kPruneToPercent;
  // Each round drops as many of the oldest keys as the excess suggests from
  // the average bytes per key; rows share pages, so it may take a few.
  AMARENA_ASSIGN_OR_RETURN(int64_t keys,
                           c.Int("SELECT count(*) FROM used", "prune"));
  std::vector<std::pair<std::string, std::string>> doomed;  // (target, spec)
  for (int round = 0; round < 8 && used > goal && keys > 0; ++round) {
    int64_t n = std::max<int64_t>(16, (used - goal) * keys / used + 1);
    doomed.clear();
    DbStmt& q = c.oldest;
    q.Bind(1, now_ms).Bind(2, n);
    int rc;
    while ((rc = q.Next()) == SQLITE_ROW)
      doomed.emplace_back(q.Text(0), q.Text(1));
    q.Done();
    if (rc != SQLITE_DONE) return c.Fail(rc, "prune");
    if (doomed.empty()) break;  // only what this store wrote is left
    keys -= static_cast<int64_t>(doomed.size());
    for (const auto& [target, spec] : doomed) {
      for (DbStmt* d : {&c.drop_results, &c.drop_use}) {
        d->Bind(1, target).Bind(2, spec);
        rc = d->Next();
        d->Done();
        if (rc != SQLITE_DONE) return c.Fail(rc, "prune");
      }
    }
    // Give the freed pages back, so the file shrinks at the next checkpoint.
    AMARENA_RETURN_IF_ERROR(c.Exec("PRAGMA incremental_vacuum", "prune"));
    AMARENA_ASSIGN_OR_RETURN(used, used_bytes());
  }
  return absl::OkStatus();
}

}  // namespace amarena
