#include "core/price_table.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace amarena {

namespace {

// Every price of CostParams by name, in the order they are written. A field
// added after tables were stored is `optional`: a table without it reads the
// default (CostParams{}), and at the default it is left out of
// CostParamsText, so the hash of such a table, and every result stored under
// it, stays what it was.
struct PriceField {
  const char* name;
  int64_t& (*get)(CostParams&);
  bool optional = false;
  // A choice among a few values rather than a price (SettlePrices leaves it
  // as measured: one unit apart is another choice).
  bool choice = false;
};


template <int kLevel>
int64_t& Dense(CostParams& c) {
  return c.line_dense[kLevel];
}
template <int kLevel>
int64_t& Strided(CostParams& c) {
  return c.line_strided[kLevel];
}
template <int kStep>
int64_t& Run(CostParams& c) {
  return c.line_gl_run[kStep];
}
template <int kStep>
int64_t& Band(CostParams& c) {
  return c.line_gl_band[kStep];
}
constexpr int kGL = static_cast<int>(Level::kGL);
constexpr int kL3 = static_cast<int>(Level::kL3);
constexpr int kL2 = static_cast<int>(Level::kL2);

const PriceField kPriceFields[] = {
    {"fma", [](CostParams& c) -> int64_t& { return c.fma; }},
    {"load", [](CostParams& c) -> int64_t& { return c.load; }},
    {"store", [](CostParams& c) -> int64_t& { return c.store; }},
    {"loop_iteration",
     [](CostParams& c) -> int64_t& { return c.loop_iteration; }},
    {"loop_iteration_stack",
     [](CostParams& c) -> int64_t& { return c.loop_iteration_stack; }},
    {"parallel_setup",
     [](CostParams& c) -> int64_t& { return c.parallel_setup; }},
    {"line_dense_gl", Dense<kGL>},
    {"line_dense_l3", Dense<kL3>},
    {"line_dense_l2", Dense<kL2>},
    {"line_strided_gl", Strided<kGL>},
    {"line_strided_l3", Strided<kL3>},
    {"line_strided_l2", Strided<kL2>},
    {"dram_run_bytes",
     [](CostParams& c) -> int64_t& { return c.dram_run_bytes; }},
    {"dram_streams", [](CostParams& c) -> int64_t& { return c.dram_streams; }},
    {"line_gl_adjacent_panels",
     [](CostParams& c) -> int64_t& { return c.line_gl_adjacent_panels; }},
    {"line_gl_far_panels",
     [](CostParams& c) -> int64_t& { return c.line_gl_far_panels; }},
    {"line_gl_run_64", Run<0>},
    {"line_gl_run_128", Run<1>},
    {"line_gl_run_256", Run<2>},
    {"line_gl_run_512", Run<3>},
    {"line_gl_run_1024", Run<4>},
    {"line_gl_run_2048", Run<5>},
    {"line_gl_run_4096", Run<6>},
    {"line_gl_run_8192", Run<7>},
    {"line_gl_run_16384", Run<8>},
    {"l3_share_pct", [](CostParams& c) -> int64_t& { return c.l3_share_pct; },
     /*optional=*/true},
    {"fma_zmm", [](CostParams& c) -> int64_t& { return c.fma_zmm; },
     /*optional=*/true},
    {"load_zmm", [](CostParams& c) -> int64_t& { return c.load_zmm; },
     /*optional=*/true},
    {"store_zmm", [](CostParams& c) -> int64_t& { return c.store_zmm; },
     /*optional=*/true},
    {"load_beside_fma",
     [](CostParams& c) -> int64_t& { return c.load_beside_fma; },
     /*optional=*/true},
    {"stream_prefetch",
     [](CostParams& c) -> int64_t& { return c.stream_prefetch; },
     /*optional=*/true, /*choice=*/true},
    {"stream_prefetch_zmm",
     [](CostParams& c) -> int64_t& { return c.stream_prefetch_zmm; },
     /*optional=*/true, /*choice=*/true},
    {"stream_prefetch_bf16",
     [](CostParams& c) -> int64_t& { return c.stream_prefetch_bf16; },
     /*optional=*/true, /*choice=*/true},
    {"stream_prefetch_bf16_zmm",
     [](CostParams& c) -> int64_t& { return c.stream_prefetch_bf16_zmm; },
     /*optional=*/true, /*choice=*/true},
    {"panel_prefetch_bytes",
     [](CostParams& c) -> int64_t& { return c.panel_prefetch_bytes; },
     /*optional=*/true},
    {"l2_overlap_pct_zmm",
     [](CostParams& c) -> int64_t& { return c.l2_overlap_pct_zmm; },
     /*optional=*/true},
    {"l2_share_pct", [](CostParams& c) -> int64_t& { return c.l2_share_pct; },
     /*optional=*/true},
    {"split_beside_fma",
     [](CostParams& c) -> int64_t& { return c.split_beside_fma; },
     /*optional=*/true},
    {"line_shared_set_zmm",
     [](CostParams& c) -> int64_t& { return c.line_shared_set_zmm; },
     /*optional=*/true},
    {"line_gl_band_256", Band<0>, /*optional=*/true},
    {"line_gl_band_512", Band<1>, /*optional=*/true},
    {"line_gl_band_1024", Band<2>, /*optional=*/true},
    {"line_gl_band_2048", Band<3>, /*optional=*/true},
    {"line_gl_band_4096", Band<4>, /*optional=*/true},
    {"line_gl_band_8192", Band<5>, /*optional=*/true},
    {"line_gl_band_16384", Band<6>, /*optional=*/true},
};
static_assert(CostParams::kDramRunSteps == 9,
              "one line_gl_run_* field per measured run length");
static_assert(CostParams::kDramBandSteps == 7,
              "one line_gl_band_* field per measured piece length");

// The identity's fields: strings, then integers.
struct StringField {
  const char* name;
  std::string& (*get)(PriceTable&);
};
const StringField kStringFields[] = {
    {"label", [](PriceTable& t) -> std::string& { return t.label; }},
    {"vendor", [](PriceTable& t) -> std::string& { return t.cpu.vendor; }},
    {"name", [](PriceTable& t) -> std::string& { return t.cpu.name; }},
};
struct IntField {
  const char* name;
  int64_t (*read)(const PriceTable&);
  void (*write)(PriceTable&, int64_t);
  int64_t min, max;
};
const IntField kIdentityFields[] = {
    {"family", [](const PriceTable& t) -> int64_t { return t.cpu.family; },
     [](PriceTable& t, int64_t v) { t.cpu.family = static_cast<int>(v); }, 0,
     4095},
    {"model", [](const PriceTable& t) -> int64_t { return t.cpu.model; },
     [](PriceTable& t, int64_t v) { t.cpu.model = static_cast<int>(v); }, 0,
     4095},
    {"l1d_bytes", [](const PriceTable& t) { return t.cpu.l1d_bytes; },
     [](PriceTable& t, int64_t v) { t.cpu.l1d_bytes = v; }, 0, int64_t{1} << 40},
    {"l2_bytes", [](const PriceTable& t) { return t.cpu.l2_bytes; },
     [](PriceTable& t, int64_t v) { t.cpu.l2_bytes = v; }, 0, int64_t{1} << 40},
    {"l3_bytes", [](const PriceTable& t) { return t.cpu.l3_bytes; },
     [](PriceTable& t, int64_t v) { t.cpu.l3_bytes = v; }, 0, int64_t{1} << 40},
};
// Prices are at most this (a line from DRAM costs ~100; parallel_setup
// ~50 000): larger values are typos or overflow bait for the cost model.
constexpr int64_t kMaxPrice = int64_t{1} << 32;

int64_t PriceOf(const CostParams& c, const PriceField& f) {
  return f.get(const_cast<CostParams&>(c));
}

bool AtDefault(const PriceField& f, const CostParams& c) {
  return PriceOf(c, f) == PriceOf(CostParams{}, f);
}

// Collects fields by name, then fills a table from them, so the text and
// JSON readers share every check.
class FieldReader {
 public:
  // JSON: strings must be quoted and integers not; text has no quotes.
  explicit FieldReader(absl::string_view form)
      : form_(form), json_(form == "JSON") {}

  absl::Status Add(absl::string_view key, std::string value, bool quoted) {
    if (!Known(key))
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot read price table (", form_, "): field '", key,
          "' is unknown"));
    if (!values_.emplace(std::string(key), Value{std::move(value), quoted})
             .second)
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot read price table (", form_, "): field '", key,
          "' appears twice"));
    return absl::OkStatus();
  }

  absl::StatusOr<PriceTable> Table() const {
    PriceTable t;
    for (const StringField& f : kStringFields) {
      const Value* v = Find(f.name);
      if (v == nullptr) return Missing(f.name);
      if (json_ && !v->quoted)
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot read price table (", form_, "): field '", f.name,
            "' is '", v->text, "', must be a string"));
      f.get(t) = v->text;
    }
    for (const IntField& f : kIdentityFields) {
      absl::StatusOr<int64_t> v = Int(f.name, f.min, f.max);
      if (!v.ok()) return v.status();
      f.write(t, *v);
    }
    for (const PriceField& f : kPriceFields) {
      if (f.optional && !Find(f.name)) continue;
      absl::StatusOr<int64_t> v = Int(f.name, 0, kMaxPrice);
      if (!v.ok()) return v.status();
      f.get(t.cost) = *v;
    }
    return t;
  }

 private:
  struct Value {
    std::string text;
    bool quoted;
  };
  static bool Known(absl::string_view key) {
    for (const StringField& f : kStringFields)
      if (key == f.name) return true;
    for (const IntField& f : kIdentityFields)
      if (key == f.name) return true;
    for (const PriceField& f : kPriceFields)
      if (key == f.name) return true;
    return false;
  }
  const Value* Find(const char* name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  absl::Status Missing(const char* name) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read price table (", form_, "): field '", name,
        "' is missing"));
  }
  absl::StatusOr<int64_t> Int(const char* name, int64_t min,
                              int64_t max) const {
    const Value* v = Find(name);
    if (v == nullptr) return Missing(name);
    int64_t n = 0;
    if (v->quoted || !absl::SimpleAtoi(v->text, &n) || n < min || n > max)
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot read price table (", form_, "): field '", name, "' is '",
          v->text, "', must be an integer from ", min, " to ", max));
    return n;
  }

  absl::string_view form_;
  bool json_;
  std::map<std::string, Value, std::less<>> values_;
};

void AppendJsonString(std::string* out, absl::string_view s) {
  *out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      *out += absl::StrFormat("\\u%04x", c);
    } else {
      *out += c;
    }
  }
  *out += '"';
}

}  // namespace

std::string CpuIdentity::Key() const {
  return absl::StrCat(vendor, "/", family, "/", model, "/", name,
                      "/l1d:", l1d_bytes, "/l2:", l2_bytes, "/l3:", l3_bytes);
}

std::string CpuIdentity::Describe() const {
  return absl::StrCat(vendor, " family ", family, " model ", model, " (",
                      name.empty() ? "" : name + "; ", "L1d ",
                      l1d_bytes >> 10, " KiB, L2 ", l2_bytes >> 10,
                      " KiB, L3 ", l3_bytes >> 10, " KiB)");
}

bool PriceTable::operator==(const PriceTable& o) const {
  return label == o.label && cpu == o.cpu &&
         CostParamsText(cost) == CostParamsText(o.cost);
}

std::string CostParamsText(const CostParams& c) {
  std::string out;
  for (const PriceField& f : kPriceFields) {
    if (f.optional && AtDefault(f, c)) continue;
    absl::StrAppend(&out, out.empty() ? "" : " ", f.name, "=", PriceOf(c, f));
  }
  return out;
}

std::string PricesHash(const CostParams& c) {
  uint32_t h = 2166136261u;
  for (char ch : CostParamsText(c)) {
    h ^= static_cast<unsigned char>(ch);
    h *= 16777619u;
  }
  return absl::StrFormat("%08x", h);
}

std::string PricesToText(const PriceTable& t) {
  PriceTable copy = t;
  std::string out;
  for (const StringField& f : kStringFields)
    absl::StrAppend(&out, f.name, " ", f.get(copy), "\n");
  for (const IntField& f : kIdentityFields)
    absl::StrAppend(&out, f.name, " ", f.read(t), "\n");
  for (const PriceField& f : kPriceFields)
    absl::StrAppend(&out, f.name, " ", PriceOf(t.cost, f), "\n");
  return out;
}

absl::StatusOr<PriceTable> PricesFromText(absl::string_view text) {
  FieldReader r("text");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (absl::StripAsciiWhitespace(line).empty() || line.front() == '#')
      continue;
    size_t space = line.find(' ');
    absl::string_view key = line.substr(0, space);
    // A string's value is the rest of the line as written (a brand may have
    // inner spaces); an integer's is trimmed by SimpleAtoi.
    std::string value(space == absl::string_view::npos
                          ? absl::string_view()
                          : line.substr(space + 1));
    if (absl::Status s = r.Add(key, std::move(value), false); !s.ok())
      return s;
  }
  return r.Table();
}

std::string PricesToJson(const PriceTable& t) {
  PriceTable copy = t;
  std::string out = "{";
  auto key = [&](const char* name) {
    if (out.size() > 1) out += ",";
    AppendJsonString(&out, name);
    out += ":";
  };
  for (const StringField& f : kStringFields) {
    key(f.name);
    AppendJsonString(&out, f.get(copy));
  }
  for (const IntField& f : kIdentityFields) {
    key(f.name);
    absl::StrAppend(&out, f.read(t));
  }
  for (const PriceField& f : kPriceFields) {
    key(f.name);
    absl::StrAppend(&out, PriceOf(t.cost, f));
  }
  return out + "}";
}

absl::StatusOr<PriceTable> PricesFromJson(absl::string_view json) {
  FieldReader r("JSON");
  size_t i = 0;
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read price table (JSON): ", what, " at offset ",
                     i, ", must be one flat object of strings and integers"));
  };
  auto skip_space = [&] {
    while (i < json.size() && absl::ascii_isspace(json[i])) ++i;
  };
  // A JSON string at i (its opening quote), unescaped into *out.
  auto read_string = [&](std::string* out) -> bool {
    if (i >= json.size() || json[i] != '"') return false;
    for (++i; i < json.size(); ++i) {
      char c = json[i];
      if (c == '"') {
        ++i;
        return true;
      }
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (++i >= json.size()) return false;
      char e = json[i];
      if (e == 'u') {
        unsigned code = 0;
        if (i + 4 >= json.size() ||
            !absl::SimpleHexAtoi(json.substr(i + 1, 4), &code) || code > 0x7f)
          return false;  // only the ASCII escapes PricesToJson writes
        *out += static_cast<char>(code);
        i += 4;
      } else if (e == '"' || e == '\\' || e == '/') {
        *out += e;
      } else if (e == 'n') {
        *out += '\n';
      } else if (e == 't') {
        *out += '\t';
      } else {
        return false;
      }
    }
    return false;
  };
  skip_space();
  if (i >= json.size() || json[i] != '{') return bad("no opening '{'");
  ++i;
  skip_space();
  bool first = true;
  while (i < json.size() && json[i] != '}') {
    if (!first) {
      if (json[i] != ',') return bad("expected ','");
      ++i;
      skip_space();
    }
    first = false;
    std::string key, value;
    if (!read_string(&key)) return bad("a malformed key");
    skip_space();
    if (i >= json.size() || json[i] != ':') return bad("expected ':'");
    ++i;
    skip_space();
    bool quoted = i < json.size() && json[i] == '"';
    if (quoted) {
      if (!read_string(&value)) return bad("a malformed string");
    } else {
      size_t start = i;
      while (i < json.size() && (json[i] == '-' || absl::ascii_isdigit(json[i])))
        ++i;
      if (i == start) return bad("a value that is neither string nor integer");
      value = std::string(json.substr(start, i - start));
    }
    if (absl::Status s = r.Add(key, std::move(value), quoted); !s.ok())
      return s;
    skip_space();
  }
  if (i >= json.size()) return bad("no closing '}'");
  ++i;
  skip_space();
  if (i != json.size()) return bad("text after the object");
  return r.Table();
}

CostParams SettlePrices(const CostParams& measured, const CostParams& standing,
                        int64_t pct, std::vector<std::string>* kept) {
  CostParams out = measured;
  for (const PriceField& f : kPriceFields) {
    const int64_t m = PriceOf(measured, f);
    const int64_t s = PriceOf(standing, f);
    if (f.choice || m == s || m == 0 || s == 0) continue;
    const int64_t band = std::max<int64_t>(1, s * pct / 100);
    if (std::abs(m - s) > band) continue;
    f.get(out) = s;
    if (kept != nullptr) kept->emplace_back(f.name);
  }
  return out;
}

}  // namespace amarena
