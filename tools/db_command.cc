// amarena db stats|path|check|clear: the search database the runtime uses
// (AMARENA_DB, else the XDG cache directory).
//
// check looks at the file as it is, read-only, and never sets it aside:
// exit 0 intact, 1 damaged (or intact but not usable by this version),
// 2 nothing to check (no file, or something that is not a database).
#include <cstdio>
#include <string>

#include "runtime/search_db.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace amarena::tools {

int DbCommand(const std::string& action, bool json) {
  std::string path = DefaultDbPath();
  if (action == "path") {
    if (path.empty()) {
      std::printf("off\n");
    } else {
      std::printf("%s\n", path.c_str());
    }
    return 0;
  }
  if (path.empty()) {
    std::fprintf(stderr,
                 "amarena: no search database: AMARENA_DB is off (or neither "
                 "XDG_CACHE_HOME nor HOME is set)\n");
    return 2;
  }
  if (action == "check") {
    absl::StatusOr<std::string> r = SearchDb::Check(path);
    if (!r.ok()) {
      std::fprintf(stderr, "amarena: %s\n",
                   std::string(r.status().message()).c_str());
      return r.status().code() == absl::StatusCode::kDataLoss ||
                     r.status().code() == absl::StatusCode::kFailedPrecondition
                 ? 1
                 : 2;
    }
    std::printf("%s: %s\n", path.c_str(), r->c_str());
    return 0;
  }
  absl::StatusOr<std::unique_ptr<SearchDb>> db =
      SearchDb::Open(path, DbOptions{.max_bytes = DbMaxBytesFromEnv()});
  if (!db.ok()) {
    std::fprintf(stderr, "amarena: %s\n",
                 std::string(db.status().message()).c_str());
    return 2;
  }
  if (action == "clear") {
    absl::Status s = (*db)->Clear();
    if (!s.ok()) {
      std::fprintf(stderr, "amarena: %s\n", std::string(s.message()).c_str());
      return 2;
    }
    std::printf("cleared %s\n", path.c_str());
    return 0;
  }
  // stats
  absl::StatusOr<DbStats> st = (*db)->Stats();
  if (!st.ok()) {
    std::fprintf(stderr, "amarena: %s\n",
                 std::string(st.status().message()).c_str());
    return 2;
  }
  std::printf("path:     %s\n", st->path.c_str());
  std::printf("results:  %lld rows for %lld distinct Specs, %lld target%s\n",
              static_cast<long long>(st->rows),
              static_cast<long long>(st->specs),
              static_cast<long long>(st->targets), st->targets == 1 ? "" : "s");
  std::printf("size:     %.1f KiB", static_cast<double>(st->bytes) / 1024);
  if (st->max_bytes > 0) {
    std::printf(" (cap %lld MiB: AMARENA_DB_MAX_MB)\n",
                static_cast<long long>(st->max_bytes >> 20));
  } else {
    std::printf(" (no cap)\n");
  }
  if (st->read_only) std::printf("read-only: lookups only\n");
  if (json) {
    JsonLine j;
    j.Add("path", st->path);
    j.Add("rows", st->rows);
    j.Add("specs", st->specs);
    j.Add("targets", st->targets);
    j.Add("bytes", st->bytes);
    j.Add("max_bytes", st->max_bytes);
    std::printf("%s\n", j.str().c_str());
  }
  return 0;
}

}  // namespace amarena::tools
