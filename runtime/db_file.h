// The database file as a file: what the runtime checks and does to it
// without SQLite (runtime/search_db.cc holds the SQL side).
//
//   Header h = ReadHeader(path);      // exists? truncated? already WAL?
//   { OpenLock lock(path); ... }      // one process at a time sets aside
//   SetAside(path, h.inode, "is truncated");
#ifndef AMARENA_RUNTIME_DB_FILE_H_
#define AMARENA_RUNTIME_DB_FILE_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace amarena {

// Creates the directories above `path` (mkdir -p of its parent).
absl::Status MakeDirs(const std::string& path);

// What the first 100 bytes of an SQLite file say, read directly.
struct Header {
  bool exists = false;     // a non-empty file is there
  bool truncated = false;  // shorter than its own header says it is
  bool wal = false;        // already in WAL mode
  ino_t inode = 0;
};
Header ReadHeader(const std::string& path);

// The inode of the file at `path` (0 if none).
ino_t InodeOf(const std::string& path);

// An exclusive flock on PATH.lock for the object's lifetime: held while a
// process makes the schema or sets a file aside, so two processes never
// rename each other's fresh file.
class OpenLock {
 public:
  explicit OpenLock(const std::string& path);
  ~OpenLock();
  OpenLock(const OpenLock&) = delete;
  OpenLock& operator=(const OpenLock&) = delete;

 private:
  int fd_ = -1;
};

// Renames the file at `path` (and its -wal and -shm) to
// PATH.bad-<time>-<pid>-<n>, with a warning on stderr saying `why` -- if it
// is still the file that was found bad (`inode`; 0: whatever is there).
void SetAside(const std::string& path, ino_t inode, absl::string_view why);

}  // namespace amarena

#endif  // AMARENA_RUNTIME_DB_FILE_H_
