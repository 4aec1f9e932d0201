// A fresh directory under $TMPDIR (or /tmp), removed with its contents when
// the object goes.
//
//   TempDir dir;  std::string db = dir.path() + "/amarena.db";
#ifndef AMARENA_TESTS_TESTING_TEMP_DIR_H_
#define AMARENA_TESTS_TESTING_TEMP_DIR_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace amarena::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ =
        std::string(base && *base ? base : "/tmp") + "/amarena-test-XXXXXX";
    path_ = mkdtemp(templ.data()) ? templ : std::string();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_TEMP_DIR_H_
