// The persistent search database: search results on disk, shared by every
// process on the machine, so a Spec searched once is a lookup afterwards.
//
// SQLite in WAL mode. One row per node of every tree the runtime searched:
//   target     the Target's fingerprint (ISA, threads, registers, caches and
//              cost-model version): results never cross targets;
//   spec       the table key: the node's Spec text without its budget;
//   *_lo/_hi   the coordinates: the box of budgets the result is best for,
//              from the tree's peak (lo) to the clamped budget it was found
//              under (hi), as in the search's memo table;
//   decisions  the subtree as action descriptors in preorder
//              (search/replay.h), never enumeration indices;
//   cost       the model's cost, checked when the tree is replayed.
// A `meta` table names the format, schema and generator version. A file that
// is not such a database, is damaged, or comes from another version is set
// aside (renamed to PATH.bad-<time>-<pid>-<n>, with a warning on stderr) and a
// fresh one is made: nothing in it is trusted beyond what replay verifies.
//
//   absl::StatusOr<std::unique_ptr<SearchDb>> db = SearchDb::Open(path);
//   (*db)->Store(target, *impl);
//   std::optional<SearchDb::Found> f = (*db)->Find(target, clamped_spec);
#ifndef AMARENA_RUNTIME_SEARCH_DB_H_
#define AMARENA_RUNTIME_SEARCH_DB_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/impl.h"
#include "core/target.h"

struct sqlite3;
struct sqlite3_stmt;

namespace amarena {

// Bump when the stored form or the meaning of stored decisions changes.
inline constexpr int kDbSchemaVersion = 1;

struct DbStats {
  std::string path;
  int64_t rows = 0;     // result rows (tree nodes)
  int64_t specs = 0;    // distinct table keys
  int64_t targets = 0;  // distinct target fingerprints
  int64_t bytes = 0;    // file size, WAL included
};

class SearchDb {
 public:
  // Opens the database at `path`, creating it (and its directory) if needed.
  // A damaged or foreign file is set aside and replaced. Fails only when no
  // usable database can be made at `path` (e.g. an unwritable directory).
  static absl::StatusOr<std::unique_ptr<SearchDb>> Open(
      const std::string& path);
  ~SearchDb();
  SearchDb(const SearchDb&) = delete;
  SearchDb& operator=(const SearchDb&) = delete;

  struct Found {
    std::string decisions;
    int64_t cost = 0;
  };
  // The stored tree for `clamped` (bound, budget clamped as the search does:
  // ClampBudget) on `target`, if any row's box holds its budget. Errors read
  // as "not found"; a damaged file is set aside on the way.
  std::optional<Found> Find(const Target& target, const Spec& clamped);

  // Stores every node of `root`'s tree (one transaction; rows already there
  // are kept). Safe against concurrent writers in this and other processes.
  absl::Status Store(const Target& target, const ImplNode& root);

  absl::StatusOr<DbStats> Stats();
  // Deletes every row (the file stays, with its schema).
  absl::Status Clear();
  // PRAGMA integrity_check: "ok", or what it found.
  absl::StatusOr<std::string> IntegrityCheck();
  const std::string& path() const { return path_; }

 private:
  explicit SearchDb(std::string path) : path_(std::move(path)) {}
  absl::Status Connect();  // open + validate or set aside + create
  // Whether the file is an amarena database of this version (an empty file
  // becomes one); DataLoss if it is damaged.
  absl::StatusOr<bool> CheckVersion();
  void Disconnect();                            // mu_ held
  absl::Status Recover(absl::string_view why);  // set aside, reconnect
  absl::StatusOr<std::optional<Found>> FindLocked(const Target& target,
                                                  const Spec& clamped);
  absl::Status StoreLocked(const Target& target, const ImplNode& root);

  std::string path_;
  std::mutex mu_;  // one connection, used by one thread at a time
  sqlite3* db_ = nullptr;
  uint64_t inode_ = 0;  // of the file db_ has open
  sqlite3_stmt* find_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
};

// Where the runtime keeps its database: AMARENA_DB if set ("off": nowhere,
// returned as ""), else $XDG_CACHE_HOME/amarena/amarena.db, else
// $HOME/.cache/amarena/amarena.db ("" if neither variable is set).
std::string DefaultDbPath();

}  // namespace amarena

#endif  // AMARENA_RUNTIME_SEARCH_DB_H_
