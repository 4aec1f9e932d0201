#include "runtime/db_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace amarena {

namespace {

constexpr char kMagic[16] = "SQLite format 3";  // and its '\0'

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// An exclusive flock on PATH.lock while held: one process at a time sets a
// file aside, so two never rename each other's fresh file. Waits at most
// kWait for a process that holds it (one renaming a file takes
// milliseconds).
class SetAsideLock {
 public:
  static constexpr auto kWait = std::chrono::seconds(2);
  explicit SetAsideLock(const std::string& path) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    auto until = std::chrono::steady_clock::now() + kWait;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() > until) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~SetAsideLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  SetAsideLock(const SetAsideLock&) = delete;
  SetAsideLock& operator=(const SetAsideLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Whether `path` is still the regular file `inode`, not a link, beginning
// with SQLite's magic string.
bool StillOurs(const std::string& path, ino_t inode) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (inode != 0 && st.st_ino != inode) return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  char b[sizeof kMagic];
  bool magic = ::pread(fd, b, sizeof b, 0) == sizeof b &&
               std::memcmp(b, kMagic, sizeof b) == 0;
  ::close(fd);
  return magic;
}

// Deletes the files set aside at `path` (PATH.bad-<time>-<pid>-<n>, with
// their -wal and -shm), all but the newest `keep` (by time, then n). Only
// regular files whose names have exactly that form are touched.
void PruneSetAside(const std::string& path, int keep) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? std::string(".")
                    : slash == 0               ? std::string("/")
                                               : path.substr(0, slash);
  std::string stem =
      path.substr(slash == std::string::npos ? 0 : slash + 1) + ".bad-";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  // (time, n, pid, name) of each main file set aside.
  std::vector<std::tuple<int64_t, int64_t, int64_t, std::string>> found;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(stem, 0) != 0) continue;
    std::vector<absl::string_view> parts =
        absl::StrSplit(absl::string_view(name).substr(stem.size()), '-');
    int64_t t, pid, n;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &t) ||
        !absl::SimpleAtoi(parts[1], &pid) || !absl::SimpleAtoi(parts[2], &n))
      continue;  // a -wal or -shm, or not ours
    found.emplace_back(t, n, pid, name);
  }
  ::closedir(d);
  if (static_cast<int>(found.size()) <= keep) return;
  std::sort(found.begin(), found.end(), std::greater<>());
  for (size_t i = keep; i < found.size(); ++i) {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::string file = dir + "/" + std::get<3>(found[i]) + suffix;
      struct stat st {};
      if (::lstat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        ::unlink(file.c_str());
    }
  }
}

}  // namespace

absl::Status MakeDirs(const std::string& path) {
  for (size_t i = 1; i < path.size(); ++i) {
    if (path[i] != '/') continue;
    std::string dir = path.substr(0, i);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create search database ", path, ": directory ",
                       dir, " cannot be made (", std::strerror(errno), ")"));
  }
  return absl::OkStatus();
}

PathProbe ProbePath(const std::string& path) {
  PathProbe p;
  auto refuse = [&](std::string why) {
    p.kind = PathProbe::kRefused;
    p.problem = std::move(why);
    return p;
  };
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return p;  // kMissing (a missing parent included)
    if (errno == ENOTDIR)
      return refuse(
          "a directory it names is a file, must be a directory or absent");
    return refuse(absl::StrCat("the path cannot be examined (",
                               std::strerror(errno), ")"));
  }
  if (S_ISLNK(st.st_mode)) {
    p.symlink = true;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return p;  // a dangling link: SQLite creates it
      return refuse(absl::StrCat("the link's target cannot be examined (",
                                 std::strerror(errno), ")"));
    }
  }
  if (!S_ISREG(st.st_mode))
    return refuse(absl::StrCat(p.symlink ? "the link's target is " : "it is ",
                               KindOf(st.st_mode),
                               ", must be a regular file or absent"));
  p.inode = st.st_ino;
  // Write permission as the owner set it, not only as this user may:
  // root may write a file marked read-only, but it should not.
  p.read_only = ::access(path.c_str(), W_OK) != 0 || (st.st_mode & 0222) == 0;
  if (st.st_size == 0) {
    p.kind = PathProbe::kEmpty;
    return p;
  }
  // O_NONBLOCK: if the path became a FIFO since the stat, do not wait.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return refuse(
        absl::StrCat("the file cannot be read (", std::strerror(errno), ")"));
  unsigned char b[20] = {};
  ssize_t got = ::pread(fd, b, sizeof b, 0);
  struct stat again {};
  bool same = ::fstat(fd, &again) == 0 && S_ISREG(again.st_mode) &&
              again.st_ino == st.st_ino;
  ::close(fd);
  if (!same) return refuse("it changed while it was examined");
  if (got < static_cast<ssize_t>(sizeof kMagic) ||
      std::memcmp(b, kMagic, sizeof kMagic) != 0)
    return refuse(
        "it is not an SQLite database (it does not begin with \"SQLite "
        "format 3\"), must be an amarena search database, an empty file, or "
        "absent; it is left as it is");
  p.kind = PathProbe::kSqlite;
  p.wal = got == static_cast<ssize_t>(sizeof b) && b[18] == 2 && b[19] == 2;
  return p;
}

ino_t InodeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

bool SetAside(const std::string& path, ino_t inode, absl::string_view why,
              const Logger& log) {
  SetAsideLock lock(path);
  auto say = [&](const std::string& what) {
    log.Log(LogLevel::kWarning,
            absl::StrCat("search database ", path, " ", why, "; ", what));
  };
  if (!lock.held()) {
    say(absl::StrCat("cannot lock ", path,
                     ".lock to set it aside, so it is left as it is"));
    return false;
  }
  ino_t now = InodeOf(path);
  if (now == 0 || now != inode) return true;  // gone, or replaced by another
  if (!StillOurs(path, inode)) {
    say("it is not a regular SQLite file, so it is left as it is");
    return false;
  }
  static std::atomic<int> count{0};
  std::string to =
      absl::StrCat(path, ".bad-", std::time(nullptr), "-",
                   static_cast<int64_t>(::getpid()), "-", count.fetch_add(1));
  if (std::rename(path.c_str(), to.c_str()) != 0) {
    say(absl::StrCat("cannot move it to ", to, " (", std::strerror(errno),
                     "), so it is left as it is"));
    return false;
  }
  // A -wal or -shm left behind would be taken for the new file's.
  for (const char* suffix : {"-wal", "-shm"}) {
    std::string side = path + suffix;
    if (std::rename(side.c_str(), (to + suffix).c_str()) != 0)
      std::remove(side.c_str());
  }
  say(absl::StrCat("moved it to ", to, " and starting a new one"));
  PruneSetAside(path, kKeepSetAside);
  return true;
}

}  // namespace amarena
