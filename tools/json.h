// A minimal writer for the one-line JSON objects the CLI prints last (--json).
//
//   JsonLine j;  j.Add("spec", text);  j.Add("ok", true);
//   puts(j.str().c_str());
#ifndef AMARENA_TOOLS_JSON_H_
#define AMARENA_TOOLS_JSON_H_

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace amarena::tools {

class JsonLine {
 public:
  void Add(absl::string_view key, absl::string_view v) {
    Key(key);
    Quote(v);
  }
  void Add(absl::string_view key, const char* v) {
    Add(key, absl::string_view(v));
  }
  void Add(absl::string_view key, bool v) {
    Key(key);
    out_ += v ? "true" : "false";
  }
  void Add(absl::string_view key, int64_t v) {
    Key(key);
    absl::StrAppend(&out_, v);
  }
  void Add(absl::string_view key, double v) {
    Key(key);
    out_ += std::isfinite(v) ? absl::StrFormat("%.6g", v) : "null";
  }
  // `json` must already be valid JSON (a nested object or array).
  void AddRaw(absl::string_view key, absl::string_view json) {
    Key(key);
    absl::StrAppend(&out_, json);
  }
  std::string str() const { return "{" + out_ + "}"; }

 private:
  void Key(absl::string_view k) {
    if (!out_.empty()) out_ += ",";
    Quote(k);
    out_ += ":";
  }
  void Quote(absl::string_view s) {
    out_ += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        out_ += absl::StrFormat("\\u%04x", c);
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }
  std::string out_;
};

}  // namespace amarena::tools

#endif  // AMARENA_TOOLS_JSON_H_
