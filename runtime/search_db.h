// The persistent search database: search results on disk, shared by every
// process on the machine, so a Spec searched once is a lookup afterwards.
//
// SQLite in WAL mode (runtime/db_conn.cc has the schema). One row per node of
// every tree the runtime searched:
//   target     DbTargetKey: the Target's fingerprint (ISA, threads,
//              registers, caches and cost-model version) and the generator
//              version: results never cross targets or versions, and
//              versions share the file;
//   spec       the table key: the node's Spec text without its budget;
//   *_lo/_hi   the coordinates: the box of budgets the result is best for,
//              from the tree's peak (lo) to the clamped budget it was found
//              under (hi), as in the search's memo table;
//   decisions  the subtree as action descriptors in preorder
//              (search/replay.h), never enumeration indices;
//   cost       the model's cost, checked when the tree is replayed.
// A `used` table holds when each table key was last stored or found, so the
// file can be kept under a size cap by dropping the least recently used.
//
// What is at the path decides what happens (docs/database.md): nothing, or
// an empty file, becomes a new database; an amarena database of this
// schema is used whatever generator made it; one of an older schema is
// migrated in place; a file SQLite itself reports damaged, or of a schema
// too old to migrate, is set aside (renamed to PATH.bad-<time>-<pid>-<n>,
// with a warning on stderr) and replaced; anything else -- a newer schema, a
// directory, a FIFO, a text file, another program's SQLite file -- is
// refused and left as it is, and the runtime goes on without a database. A
// read-only file is used for lookups only.
//
// No call waits long for another process: lookups give up after
// kReadWait, stores after kStoreWait (skipped and counted, the kernel is
// unaffected), and no lock of this object is held while SQLite waits.
//
//   absl::StatusOr<std::unique_ptr<SearchDb>> db = SearchDb::Open(path);
//   (*db)->Store(target, *impl);
//   std::optional<SearchDb::Found> f = (*db)->Find(target, clamped_spec);
#ifndef AMARENA_RUNTIME_SEARCH_DB_H_
#define AMARENA_RUNTIME_SEARCH_DB_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/impl.h"
#include "core/log.h"
#include "core/target.h"
#include "runtime/db_conn.h"

namespace amarena {

// The size cap when AMARENA_DB_MAX_MB is unset: about 3 000 Specs' trees.
inline constexpr int64_t kDefaultDbMaxBytes = int64_t{64} << 20;

struct DbOptions {
  // The file is kept under this many bytes by dropping the least recently
  // used table keys (0: no cap). See DbMaxBytesFromEnv.
  int64_t max_bytes = kDefaultDbMaxBytes;
  // Where its warnings go (a file set aside, read-only, a store skipped).
  Logger log = DefaultLogger();
};

struct DbStats {
  std::string path;
  int64_t rows = 0;       // result rows (tree nodes)
  int64_t specs = 0;      // distinct table keys
  int64_t targets = 0;    // distinct target fingerprints
  int64_t bytes = 0;      // file size, WAL included
  int64_t max_bytes = 0;  // the cap (0: none)
  bool read_only = false;
  // What this process's stores came to (SearchDb::Store): skipped because
  // another process held the write lock too long, or failed (a full disk,
  // say).
  int64_t stores_skipped = 0;
  int64_t stores_failed = 0;
};

// A stored tree, as SearchDb::Find returns it.
struct StoredResult {
  std::string decisions;
  int64_t cost = 0;
  int64_t row = 0;  // which row, for SearchDb::Store's `replaces`
};

class SearchDb {
 public:
  // How long a lookup waits for a lock another connection holds (in WAL
  // mode only recovery after a crash takes one), and how long a store waits
  // for the write lock before it is skipped. Bounds, not typical figures: a
  // store's transaction takes about a millisecond.
  static constexpr auto kReadWait = std::chrono::milliseconds(50);
  static constexpr auto kStoreWait = std::chrono::milliseconds(50);
  // A hit records its use at most this often per table key, so lookups
  // write almost never.
  static constexpr auto kUseInterval = std::chrono::hours(1);

  // Opens the database at `path`, creating it (and its directory) if needed;
  // migrates an older schema, sets a damaged one aside (see above). Fails,
  // naming the path and the problem, when the path holds something that is
  // not ours or no usable database can be made there.
  static absl::StatusOr<std::unique_ptr<SearchDb>> Open(const std::string& path,
                                                        DbOptions options = {});
  ~SearchDb();
  SearchDb(const SearchDb&) = delete;
  SearchDb& operator=(const SearchDb&) = delete;

  using Found = StoredResult;
  // The stored tree for `clamped` (bound, budget clamped as the search does:
  // ClampBudget) on `target`, if any row's box holds its budget. Errors read
  // as "not found"; a damaged file is set aside on the way.
  std::optional<Found> Find(const Target& target, const Spec& clamped);

  // Stores every node of `root`'s tree in one transaction, replacing rows of
  // the same key and box that differ, and `replaces` (a row Find returned
  // that did not replay) if it is unchanged. Unavailable when the write lock
  // was not free within kStoreWait (counted in stores_skipped); the first
  // skip and the first failure of this object are reported on stderr.
  absl::Status Store(const Target& target, const ImplNode& root,
                     const Found* replaces = nullptr);

  absl::StatusOr<DbStats> Stats();
  int64_t stores_skipped() const { return stores_skipped_.load(); }
  int64_t stores_failed() const { return stores_failed_.load(); }
  // Deletes every row (the file stays, with its schema).
  absl::Status Clear();
  // PRAGMA integrity_check: "ok", or what it found.
  absl::StatusOr<std::string> IntegrityCheck();
  // Checks the file at `path` as it is, without creating, repairing or
  // setting anything aside (for `amarena db check`): "ok"; DataLoss naming
  // what SQLite found wrong; FailedPrecondition for a file that is not an
  // amarena database of this version; NotFound if nothing is there.
  static absl::StatusOr<std::string> Check(const std::string& path);

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_.load(); }

 private:
  SearchDb(std::string path, DbOptions options)
      : path_(std::move(path)), options_(options) {}
  // Makes the first connection: examines the path, opens, checks the
  // version, sets aside and retries as needed.
  absl::StatusOr<std::unique_ptr<DbConn>> Connect();
  // A connection of the current generation (new ones check the version).
  std::unique_ptr<DbConn> Acquire();
  void Release(std::unique_ptr<DbConn> c);
  // After DataLoss on `c`: if PRAGMA quick_check agrees, sets the file
  // aside and connects to a new one.
  void Recover(std::unique_ptr<DbConn> c);
  absl::StatusOr<std::optional<Found>> FindOn(DbConn& c, const Target& target,
                                              const Spec& clamped);
  absl::Status StoreOn(DbConn& c, const Target& target, const ImplNode& root,
                       const Found* replaces);
  // Drops the least recently used table keys while the file is over its cap.
  absl::Status Prune(DbConn& c, int64_t now_ms);
  void WarnOnce(std::atomic<bool>& said, const absl::Status& s,
                absl::string_view consequence);

  std::string path_;
  DbOptions options_;
  // The file's, as Connect found it (again after a Recover).
  std::atomic<bool> read_only_{false};

  // Connections are lent one per call, so no lock of ours is held while
  // SQLite waits, and threads of one process read side by side as WAL
  // allows. A connection belongs to one file (generation): after the file is
  // set aside, connections to the old one are closed as they come back.
  std::mutex mu_;
  std::vector<std::unique_ptr<DbConn>> idle_;
  int generation_ = 0;
  std::mutex recover_mu_;  // one Recover at a time
  // Threads of this process store one at a time: SQLite's lock is taken by
  // polling, so queueing here is fairer and leaves one poller per process.
  // Waited for within the store's kStoreWait.
  std::timed_mutex store_mu_;
  std::atomic<int64_t> stores_skipped_{0}, stores_failed_{0};
  std::atomic<bool> said_skipped_{false}, said_failed_{false};
  std::atomic<bool> said_no_conn_{false};
};

// The generator version rows are stored and looked up under:
// kGeneratorVersion, or AMARENA_TESTING_GENERATOR_VERSION when set to an
// integer (tests only: processes posing as different versions of amarena on
// one file).
int DbGeneratorVersion();
// A row's `target` column: the target's fingerprint (which includes the
// cost-model version) and the generator version. Rows of other versions
// stay in the file, unread here, until the size cap drops them.
std::string DbTargetKey(const Target& target);

// Where the runtime keeps its database: AMARENA_DB if set ("off": nowhere,
// returned as ""), else $XDG_CACHE_HOME/amarena/amarena.db, else
// $HOME/.cache/amarena/amarena.db ("" if neither variable is set).
std::string DefaultDbPath();
// The database a runtime option names: "" = DefaultDbPath(), "off" = none
// (returned as ""), else the path itself.
std::string DbPathFor(absl::string_view option);

// The size cap: AMARENA_DB_MAX_MB (MiB; 0 or "off": none), else
// kDefaultDbMaxBytes. A value that is neither warns (to `log`) and gives the
// default.
int64_t DbMaxBytesFromEnv(const Logger& log = DefaultLogger());

}  // namespace amarena

#endif  // AMARENA_RUNTIME_SEARCH_DB_H_
