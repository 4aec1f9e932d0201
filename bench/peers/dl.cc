#include "bench/peers/dl.h"

#include <dlfcn.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace amarena::bench {

absl::StatusOr<Library> Library::Open(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    return absl::UnavailableError(absl::StrCat(
        "cannot open ", path, ": ", e != nullptr ? e : "unknown dlopen error",
        " (install the peer packages with scripts/setup.sh)"));
  }
  Library lib;
  lib.handle_ = h;
  lib.path_ = path;
  return lib;
}

void* Library::RawSym(const char* name) const {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

absl::Status Library::Missing(const char* name) const {
  return absl::UnavailableError(absl::StrCat(path_, " has no symbol ", name));
}

std::string SetEnvNoting(const char* name, const std::string& value) {
  const char* old = std::getenv(name);
  std::string note;
  if (old != nullptr && *old != '\0' && value != old)
    note = absl::StrCat(name, " was preset to '", old, "'");
  if (value.empty()) {
    unsetenv(name);
  } else {
    setenv(name, value.c_str(), 1);
  }
  return note;
}

}  // namespace amarena::bench
