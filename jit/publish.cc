#include "jit/publish.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/log.h"

namespace amarena::jit {
namespace {

struct Config {
  bool perf_map = false;
  std::string dump_dir;
};

const Config& GetConfig() {
  static const Config config = [] {
    Config c;
    const char* profile = std::getenv("AMARENA_JIT_PROFILE");
    if (profile != nullptr && *profile != '\0') {
      if (std::strcmp(profile, "perf") == 0) {
        c.perf_map = true;
      } else {
        DefaultLogger().Log(LogLevel::kWarning,
                            absl::StrCat("AMARENA_JIT_PROFILE is '", profile,
                                         "', must be perf; ignored"));
      }
    }
    const char* dump = std::getenv("AMARENA_JIT_DUMP");
    if (dump != nullptr) c.dump_dir = dump;
    return c;
  }();
  return config;
}

std::mutex mu;  // one writer at a time to the map file

}  // namespace

void PublishCode(const std::string& name, const void* code, size_t size) {
  const Config& c = GetConfig();
  if (!c.perf_map && c.dump_dir.empty()) return;
  std::lock_guard<std::mutex> lock(mu);
  if (c.perf_map) {
    static bool warned = false;
    std::string path = absl::StrCat("/tmp/perf-", getpid(), ".map");
    FILE* f = std::fopen(path.c_str(), "a");
    if (f != nullptr) {
      std::fprintf(f, "%lx %zx %s\n", reinterpret_cast<unsigned long>(code),
                   size, name.c_str());
      std::fclose(f);
    } else if (!warned) {
      warned = true;
      DefaultLogger().Log(
          LogLevel::kWarning,
          absl::StrCat("cannot append to ", path, ": ", std::strerror(errno)));
    }
  }
  if (!c.dump_dir.empty()) {
    static bool warned = false;
    std::string path = absl::StrCat(c.dump_dir, "/", name, ".bin");
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f != nullptr) {
      std::fwrite(code, 1, size, f);
      std::fclose(f);
    } else if (!warned) {
      warned = true;
      DefaultLogger().Log(
          LogLevel::kWarning,
          absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
    }
  }
}

}  // namespace amarena::jit
