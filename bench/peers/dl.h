// dlopen of one exact shared library, and typed dlsym. OpenBLAS and BLIS both
// export cblas_sgemm; opening each by its full path with RTLD_LOCAL and
// resolving symbols through its own handle keeps them apart in one process.
//
//   absl::StatusOr<Library> lib = Library::Open(kOpenBlasPath);
//   auto* sgemm = lib->Sym<decltype(&cblas_sgemm)>("cblas_sgemm");
//
// The Debian paths of the peers (x86-64 multiarch) are below; each is the
// pthread build where Debian offers a choice, so no OpenMP runtime is shared
// with oneDNN or Eigen.
#ifndef AMARENA_BENCH_PEERS_DL_H_
#define AMARENA_BENCH_PEERS_DL_H_

#include <string>

#include "absl/status/statusor.h"

namespace amarena::bench {

inline constexpr char kOpenBlasPath[] =
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0";
inline constexpr char kBlisPath[] =
    "/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4";
inline constexpr char kOneDnnPath[] = "/usr/lib/x86_64-linux-gnu/libdnnl.so.2";
inline constexpr char kXnnpackPath[] =
    "/usr/lib/x86_64-linux-gnu/libXNNPACK.so.0";

class Library {
 public:
  // Unavailable (naming the path and dlerror) when it cannot be opened. The
  // handle is never closed: libraries with thread pools do not unload cleanly.
  static absl::StatusOr<Library> Open(const std::string& path);

  // nullptr when absent.
  void* RawSym(const char* name) const;
  template <typename Fn>
  Fn Sym(const char* name) const {
    return reinterpret_cast<Fn>(RawSym(name));
  }
  // Like Sym, but a missing symbol is an Unavailable status.
  template <typename Fn>
  absl::Status Need(const char* name, Fn* out) const {
    *out = Sym<Fn>(name);
    return *out != nullptr ? absl::OkStatus() : Missing(name);
  }
  const std::string& path() const { return path_; }

 private:
  absl::Status Missing(const char* name) const;
  void* handle_ = nullptr;
  std::string path_;
};

// Sets environment variable `name` to `value` (empty: unsets it) and returns
// a note for the CPU-choice line when the environment had preset something
// else, e.g. "OPENBLAS_CORETYPE was preset to Haswell".
std::string SetEnvNoting(const char* name, const std::string& value);

}  // namespace amarena::bench

#endif  // AMARENA_BENCH_PEERS_DL_H_
