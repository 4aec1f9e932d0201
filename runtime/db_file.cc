#include "runtime/db_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "absl/strings/str_cat.h"

namespace amarena {

absl::Status MakeDirs(const std::string& path) {
  for (size_t i = 1; i < path.size(); ++i) {
    if (path[i] != '/') continue;
    std::string dir = path.substr(0, i);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      return absl::FailedPreconditionError(
          absl::StrCat("search database: cannot create directory ", dir, ": ",
                       std::strerror(errno)));
  }
  return absl::OkStatus();
}

Header ReadHeader(const std::string& path) {
  Header h;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return h;
  unsigned char b[100];
  ssize_t got = ::pread(fd, b, sizeof b, 0);
  struct stat st {};
  bool stat_ok = ::fstat(fd, &st) == 0;
  ::close(fd);
  if (!stat_ok || st.st_size == 0) return h;  // empty: a new database
  h.exists = true;
  h.inode = st.st_ino;
  if (got < static_cast<ssize_t>(sizeof b)) {
    h.truncated = true;
    return h;
  }
  if (std::memcmp(b, "SQLite format 3", 16) != 0) return h;  // SQLite: NOTADB
  h.wal = b[18] == 2 && b[19] == 2;
  int64_t page = (b[16] << 8) | b[17];
  if (page == 1) page = 65536;
  int64_t pages = (int64_t{b[28]} << 24) | (b[29] << 16) | (b[30] << 8) | b[31];
  // The header's page count is valid only when it matches the change counter.
  bool valid = std::memcmp(b + 24, b + 92, 4) == 0;
  // SQLite would read the missing pages as zeros.
  h.truncated = valid && pages > 0 && st.st_size < page * pages;
  return h;
}

ino_t InodeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

OpenLock::OpenLock(const std::string& path) {
  fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ >= 0) ::flock(fd_, LOCK_EX);
}

OpenLock::~OpenLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

// Renames the file at `path` out of the way, if it is still the file that
// was found bad (`inode`): another process may have replaced it already.
void SetAside(const std::string& path, ino_t inode, absl::string_view why) {
  OpenLock lock(path);
  if (inode != 0 && InodeOf(path) != inode) return;
  static std::atomic<int> count{0};
  std::string to =
      absl::StrCat(path, ".bad-", std::time(nullptr), "-",
                   static_cast<int64_t>(::getpid()), "-", count.fetch_add(1));
  bool moved = std::rename(path.c_str(), to.c_str()) == 0;
  for (const char* suffix : {"-wal", "-shm"}) {
    std::string side = path + suffix;
    if (moved)
      std::rename(side.c_str(), (to + suffix).c_str());
    else
      std::remove(side.c_str());
  }
  std::fprintf(
      stderr,
      "amarena: warning: search database %s %.*s; %s, starting a "
      "new one\n",
      path.c_str(), static_cast<int>(why.size()), why.data(),
      moved ? absl::StrCat("moved it to ", to).c_str() : "could not move it");
}

}  // namespace amarena
