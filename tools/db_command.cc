// amarena db stats|path|check|clear: the search database the runtime uses
// (AMARENA_DB, else the XDG cache directory).
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
  absl::StatusOr<std::unique_ptr<SearchDb>> db = SearchDb::Open(path);
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
  if (action == "check") {
    absl::StatusOr<std::string> r = (*db)->IntegrityCheck();
    if (!r.ok()) {
      std::fprintf(stderr, "amarena: %s\n",
                   std::string(r.status().message()).c_str());
      return 2;
    }
    std::printf("%s: %s\n", path.c_str(), r->c_str());
    return *r == "ok" ? 0 : 1;
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
  std::printf("size:     %.1f KiB\n", static_cast<double>(st->bytes) / 1024);
  if (json) {
    JsonLine j;
    j.Add("path", st->path);
    j.Add("rows", st->rows);
    j.Add("specs", st->specs);
    j.Add("targets", st->targets);
    j.Add("bytes", st->bytes);
    std::printf("%s\n", j.str().c_str());
  }
  return 0;
}

}  // namespace amarena::tools
