// The database file as a file: what the runtime checks and does to it
// without SQLite (runtime/search_db.cc holds the SQL side).
//
//   PathProbe p = ProbePath(path);   // what is there, before SQLite opens it
//   if (p.kind == PathProbe::kRefused) ...   // p.problem says why
//   SetAside(path, inode, "is damaged");     // only a damaged SQLite file
//
// Nothing here opens anything but a regular file, so a FIFO at the path
// cannot hang the process, and nothing renames or deletes what is not an
// SQLite file of ours: the user's directories, devices and text files stay
// where they are.
#ifndef AMARENA_RUNTIME_DB_FILE_H_
#define AMARENA_RUNTIME_DB_FILE_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/log.h"

namespace amarena {

// Creates the directories above `path` (mkdir -p of its parent).
absl::Status MakeDirs(const std::string& path);

// What is at the database path, seen by lstat/stat and its first bytes.
struct PathProbe {
  enum Kind {
    kMissing,  // nothing there: a new database may be made
    kEmpty,    // an empty regular file: SQLite makes a database in it
    kSqlite,   // a regular file that begins with SQLite's magic string
    kRefused,  // anything else: never opened, moved or written
  };
  Kind kind = kMissing;
  std::string problem;     // kRefused: what is wrong, ready for a message
  bool symlink = false;    // the path is a symbolic link (to a regular file)
  bool read_only = false;  // we may not (or the owner says not to) write it
  bool wal = false;        // kSqlite: its header says WAL mode
  ino_t inode = 0;
};
PathProbe ProbePath(const std::string& path);

// The inode of the file at `path` (0 if none).
ino_t InodeOf(const std::string& path);

// Renames the file at `path` (and its -wal and -shm) to
// PATH.bad-<time>-<pid>-<n> and says so to `log`, giving `why` -- but only
// if it is still the file that was found bad (`inode`), a regular file (not
// a link) that begins with SQLite's magic string: another process may have
// replaced it meanwhile. Then deletes all but the newest kKeepSetAside files
// set aside at `path`. Returns whether the file is gone from `path`.
inline constexpr int kKeepSetAside = 2;
bool SetAside(const std::string& path, ino_t inode, absl::string_view why,
              const Logger& log = DefaultLogger());

}  // namespace amarena

#endif  // AMARENA_RUNTIME_DB_FILE_H_
