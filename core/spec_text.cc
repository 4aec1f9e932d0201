// The notation's parsing half (core/spec_text.h): ParseSpec and its one-line
// errors. Printing is in core/spec_print.cc, requests in core/spec_request.cc.
#include "core/spec_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"

namespace amarena {

namespace {

// The operand a leading dimension's option names ("lda" is 0 for a matmul,
// "lddst" 1 for a move), or -1.
int LdOperand(Kind k, absl::string_view key) {
  if (!absl::StartsWith(key, "ld")) return -1;
  const std::vector<absl::string_view> names = OperandNames(k);
  for (size_t i = 0; i < names.size(); ++i)
    if (key.substr(2) == names[i]) return static_cast<int>(i);
  return -1;
}

// The operand a batch stride's option names ("sb" is 1), or -1. Only a
// matmul has a batch.
int StrideOperand(Kind k, absl::string_view key) {
  if (k != Kind::kMatmul && k != Kind::kMatmulAccum) return -1;
  if (key == "sa") return 0;
  if (key == "sb") return 1;
  if (key == "sc") return 2;
  return -1;
}

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  // One line whatever the text holds: control characters are shown escaped.
  absl::Status Error(absl::string_view what) const {
    std::string quoted;
    for (char c : text_) {
      if (static_cast<unsigned char>(c) < 0x20) {
        absl::StrAppend(&quoted, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "?");
      } else {
        quoted.push_back(c);
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("cannot parse spec '", quoted, "': ", what));
  }

  absl::StatusOr<int64_t> Int(absl::string_view tok,
                              absl::string_view what) const {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (tok.empty() || ec == std::errc::invalid_argument ||
        ptr != tok.data() + tok.size())
      return Error(
          absl::StrCat(what, " is '", tok, "', must be a positive integer"));
    if (ec == std::errc::result_out_of_range)
      return Error(
          absl::StrCat(what, " is ", tok, ", must be at most ", INT32_MAX));
    return v;
  }

  absl::StatusOr<Spec> Parse();

 private:
  absl::Status ParseDims(absl::string_view tok, Spec& s);
  absl::Status ParseDTypes(absl::string_view tok, Spec& s);
  absl::Status ParseOperand(absl::string_view name, absl::string_view props,
                            Spec& s);
  absl::Status ParseBudget(absl::string_view v, Spec& s);
  absl::Status ParseAlpha(absl::string_view v, Spec& s);
  absl::Status ApplyLd(int i, int64_t ld, Spec& s) const;
  absl::Status CheckStride(int i, const Spec& s) const;
  absl::Status CheckSizes(const Spec& s) const;

  absl::string_view text_;
};

absl::Status Parser::ParseDims(absl::string_view tok, Spec& s) {
  std::vector<absl::string_view> parts = absl::StrSplit(tok, 'x');
  std::vector<absl::string_view> names;
  if (s.IsMatmul()) {
    if (parts.size() == 3) {
      names = {"M", "K", "N"};
    } else if (parts.size() == 4) {
      names = {"batch", "M", "K", "N"};
    } else {
      return Error(
          absl::StrCat("dims '", tok, "' has ", parts.size(),
                       " dimensions, must have 3 (MxKxN) or 4 (BxMxKxN)"));
    }
  } else {
    if (parts.size() != 2)
      return Error(absl::StrCat("dims '", tok, "' has ", parts.size(),
                                " dimensions, must have 2 (MxN)"));
    names = {"M", "N"};
  }
  std::vector<int64_t> v;
  for (size_t i = 0; i < parts.size(); ++i) {
    AMARENA_ASSIGN_OR_RETURN(
        int64_t d, Int(parts[i], absl::StrCat("dimension ", names[i])));
    if (d < 1)
      return Error(absl::StrCat("dimension ", names[i], " is ", d,
                                ", must be at least 1"));
    if (d > INT32_MAX)
      return Error(absl::StrCat("dimension ", names[i], " is ", d,
                                ", must be at most ", INT32_MAX));
    v.push_back(d);
  }
  if (s.IsMatmul()) {
    size_t o = v.size() - 3;
    s.b = o ? v[0] : 1;
    s.m = v[o];
    s.k = v[o + 1];
    s.n = v[o + 2];
  } else {
    s.m = v[0];
    s.n = v[1];
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseDTypes(absl::string_view tok, Spec& s) {
  auto one = [&](absl::string_view t) -> absl::StatusOr<DType> {
    auto d = ParseDType(t);
    if (!d)
      return Error(
          absl::StrCat("dtype '", t, "' is unknown, must be f32 or bf16"));
    return *d;
  };
  size_t arrow = tok.find("->");
  if (arrow == absl::string_view::npos) {
    AMARENA_ASSIGN_OR_RETURN(DType d, one(tok));
    for (auto& a : s.aux) a.dtype = d;
    return absl::OkStatus();
  }
  if (s.kind == Kind::kZero)
    return Error(absl::StrCat("dtypes '", tok,
                              "' has an arrow, must be one dtype for zero"));
  std::vector<absl::string_view> ins =
      absl::StrSplit(tok.substr(0, arrow), '*');
  size_t want_ins = s.IsMatmul() ? 2 : 1;
  if (ins.size() != want_ins)
    return Error(absl::StrCat("dtypes '", tok, "' has ", ins.size(),
                              " inputs, must have ", want_ins));
  for (size_t i = 0; i < ins.size(); ++i) {
    AMARENA_ASSIGN_OR_RETURN(s.aux[i].dtype, one(ins[i]));
  }
  AMARENA_ASSIGN_OR_RETURN(s.aux[want_ins].dtype, one(tok.substr(arrow + 2)));
  return absl::OkStatus();
}

absl::Status Parser::ParseOperand(absl::string_view name,
                                  absl::string_view props, Spec& s) {
  std::vector<absl::string_view> names = OperandNames(s.kind);
  int idx = -1;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) idx = static_cast<int>(i);
  if (idx < 0)
    return Error(absl::StrCat("operand '", name,
                              "' is unknown, must be one of ",
                              absl::StrJoin(names, ", ")));
  TensorAux& a = s.aux[idx];
  // The order and the panels may come in either order: the layout is made of
  // both once all are read.
  Order order = a.layout.order();
  Layout panels = a.layout.WithOrder(Order::kRowMajor);
  std::optional<int64_t> way;
  std::optional<bool> unaligned;
  for (absl::string_view p : absl::StrSplit(props, ',')) {
    if (auto l = ParseLevel(p)) {
      a.level = *l;
    } else if (auto o = ParseOrder(p)) {
      order = *o;
    } else if (p.size() > 1 && p[0] == 'v') {
      AMARENA_ASSIGN_OR_RETURN(int64_t w, Int(p.substr(1), "vector width"));
      if (w != 1 && w != 4 && w != 8 && w != 16)
        return Error(
            absl::StrCat("vector width is ", w, ", must be 1, 4, 8 or 16"));
      a.vector_width = static_cast<uint8_t>(w);
    } else if (p.size() > 1 && p[0] == 'p') {
      absl::StatusOr<Layout> l = Layout::ParsePanels(p);
      if (!l.ok()) return Error(l.status().message());
      panels = *l;
    } else if (p.size() > 3 && p.substr(0, 3) == "way") {
      absl::StatusOr<int64_t> w = Layout::ParseWayOffset(p);
      if (!w.ok()) return Error(w.status().message());
      way = *w;
    } else if (p == "aligned" || p == "unaligned") {
      unaligned = p == "unaligned";
    } else if (p == "any") {
      return Error(
          absl::StrCat("property 'any' of operand ", name,
                       " is only for a request's b=any (amarena run/explain, "
                       "Runtime::Get), must be a concrete layout here"));
    } else {
      return Error(absl::StrCat("property '", p, "' of operand ", name,
                                " is unknown, must be gl, l3, l2, l1, vrf, "
                                "row, col, pN, pNx2, pNsS, pNx2sS, wayN, "
                                "aligned, unaligned or vN"));
    }
  }
  if (panels.in_sections() && order != Order::kRowMajor)
    return Error(absl::StrCat("operand ", name,
                              " is in sections and column-major, must be "
                              "row-major for sections"));
  if (panels.paired() && order != Order::kRowMajor)
    return Error(absl::StrCat("operand ", name,
                              " is interleaved and column-major, must be "
                              "row-major to interleave"));
  a.layout = panels.WithOrder(order);
  // What a tile keeps of its matrix's pitch: only plain tiles have a pitch.
  if ((way || unaligned) && a.layout.packed())
    return Error(absl::StrCat(
        "operand ", name,
        way ? " is packed and has a way offset, must be plain to have one"
               : " is packed and says its rows' alignment, must be plain to "
                 "say it"));
  if (way) a.layout = a.layout.WithWayOffset(*way);
  if (unaligned) a.layout = a.layout.WithUnalignedRows(*unaligned);
  if (a.layout.packed() && a.level == Level::kVRF)
    return Error(absl::StrCat("operand ", name,
                              " is packed in vrf, must be packed only in "
                              "memory"));
  if ((a.level == Level::kVRF) != (a.vector_width != 0))
    return Error(absl::StrCat(
        "operand ", name,
        " has a vector width only if it is in vrf, must say both"));
  return absl::OkStatus();
}

absl::Status Parser::ParseBudget(absl::string_view v, Spec& s) {
  static constexpr absl::string_view kWant =
      "vrf:R,gpr:G,l1:LINES,l2:LINES,l3:LINES";
  Budget b;
  int seen = 0;
  for (absl::string_view part : absl::StrSplit(v, ',')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(part, ':');
    static constexpr absl::string_view kKeys[] = {"vrf", "gpr", "l1", "l2",
                                                  "l3"};
    int key = -1;
    for (int i = 0; i < 5; ++i)
      if (kv.first == kKeys[i]) key = i;
    if (key < 0)
      return Error(absl::StrCat("budget '", part, "' is unknown, must be ",
                                "one of ", kWant));
    AMARENA_ASSIGN_OR_RETURN(int64_t x,
                             Int(kv.second, absl::StrCat("budget ", kv.first)));
    if (x < 0)
      return Error(
          absl::StrCat("budget ", kv.first, " is ", x, ", must be at least 0"));
    if (key <= 1 && x > 64)
      return Error(
          absl::StrCat("budget ", kv.first, " is ", x, ", must be at most 64"));
    switch (key) {
      case 0:
        b.vrf = static_cast<int32_t>(x);
        break;
      case 1:
        b.gpr = static_cast<int32_t>(x);
        break;
      case 2:
        b.l1_lines = x;
        break;
      case 3:
        b.l2_lines = x;
        break;
      case 4:
        b.l3_lines = x;
        break;
    }
    seen |= 1 << key;
  }
  if (seen != 31)
    return Error(
        absl::StrCat("budget '", v, "' is incomplete, must be ", kWant));
  s.budget = b;
  return absl::OkStatus();
}

// A finite float in the form std::from_chars reads (what PrintSpec writes:
// the shortest text that reads back as the same float).
absl::Status Parser::ParseAlpha(absl::string_view v, Spec& s) {
  if (!s.IsMatmul())
    return Error(
        absl::StrCat("option alpha is only valid for matmul, must not "
                     "be given for ",
                     OpName(s.kind)));
  float a = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), a);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() ||
      !std::isfinite(a))
    return Error(absl::StrCat("alpha is '", v,
                              "', must be a finite number such as 0.5, -2 "
                              "or 1e-3"));
  s.alpha = a;
  return absl::OkStatus();
}

// Once every option is read (the operand's order and level may come after
// its ld).
absl::Status Parser::ApplyLd(int i, int64_t ld, Spec& s) const {
  const std::string name(OperandNames(s.kind)[static_cast<size_t>(i)]);
  const std::string key = absl::StrCat("ld", name);
  TensorAux& a = s.aux[static_cast<size_t>(i)];
  if (a.level != Level::kGL)
    return Error(absl::StrCat("option ", key, " is for an operand in gl, "
                              "must not be given with ",
                              name, " in ", Name(a.level)));
  if (a.layout.packed())
    return Error(absl::StrCat(
        "option ", key, " is for a plain (row- or column-major) operand, must "
        "not be given with ", name, " packed (", a.layout.PanelText(), ")"));
  const TensorSpec t = s.Operand(i);
  const int64_t inner = t.InnerExtent();
  if (ld < inner)
    return Error(absl::StrCat(
        key, " is ", ld, ", must be at least ", inner, ": the ",
        a.layout.row_major() ? "rows" : "columns", " of ",
        a.layout.row_major() ? "row" : "column", "-major ", name, " (",
        t.rows, "x", t.cols, ") are ", inner, " elements long"));
  a.layout = a.layout.WithLd(ld);
  return absl::OkStatus();
}

// Once the leading dimensions are applied: C's matrices must not overlap
// (inputs may: sb=0 is one B for the whole batch).
absl::Status Parser::CheckStride(int i, const Spec& s) const {
  const std::string key =
      absl::StrCat("s", OperandNames(s.kind)[static_cast<size_t>(i)]);
  const int64_t st = s.batch_stride[static_cast<size_t>(i)];
  if (s.b == 1)
    return Error(absl::StrCat("option ", key,
                              " is for a batched matmul (BxMxKxN), must not "
                              "be given with batch 1"));
  if (i != s.OutputIndex()) return absl::OkStatus();
  const TensorSpec t = s.Operand(i);
  const int64_t stored = t.StoredElements();
  if (st >= stored) return absl::OkStatus();
  // Side by side within one pitch: the matrices' outer rows interleave,
  // each batch element taking its own columns (rows) of every outer row.
  const int64_t inner = t.InnerExtent(),
                pitch = t.layout().Pitch(t.rows, t.cols);
  if (!t.layout().packed() && st >= inner && (s.b - 1) * st + inner <= pitch)
    return absl::OkStatus();
  return Error(
      absl::StrCat(key, " is ", st, ", must be at least ", stored,
                   " (C's matrices one after another) or, with ldc, at least ",
                   inner, " with all ", s.b, " side by side within ldc (",
                   pitch, "): the batch's outputs must not overlap"));
}

absl::Status Parser::CheckSizes(const Spec& s) const {
  std::vector<absl::string_view> names = OperandNames(s.kind);
  for (int i = 0; i < s.NumOperands(); ++i) {
    TensorSpec t = s.Operand(i);
    // What its layout stores (panel padding, unused section slots and the
    // gaps of a leading dimension included) over the whole batch, which is
    // what the JIT addresses: below 2^63 for dims, leading dimensions and
    // batch strides below 2^31, so the sum of products fits in 128 bits.
    const int64_t st = s.batch_stride[static_cast<size_t>(i)];
    const __int128 stride = st == Spec::kDenseBatch ? DenseBatchStride(t) : st;
    __int128 bytes =
        ((s.b - 1) * stride + t.StoredElements()) * SizeOf(t.aux.dtype);
    if (bytes > kMaxOperandBytes)
      return Error(absl::StrCat(
          "operand ", names[i], " needs ", static_cast<double>(bytes),
          " bytes, must need at most ", kMaxOperandBytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<Spec> Parser::Parse() {
  std::vector<absl::string_view> toks =
      absl::StrSplit(text_, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  if (toks.empty())
    return Error(
        "text is empty, must start with an operation such as 'matmul MxKxN "
        "f32'");
  Spec s;
  if (toks[0] == "matmul") {
    s.kind = Kind::kMatmul;
  } else if (toks[0] == "zero") {
    s.kind = Kind::kZero;
  } else if (toks[0] == "move") {
    s.kind = Kind::kMove;
  } else {
    return Error(absl::StrCat("operation '", toks[0],
                              "' is unknown, must be matmul, zero or move"));
  }
  if (toks.size() < 3)
    return Error(
        absl::StrCat("text has ", toks.size(),
                     " words, must have at least 3 (operation, dims, dtype)"));
  AMARENA_RETURN_IF_ERROR(ParseDims(toks[1], s));
  AMARENA_RETURN_IF_ERROR(ParseDTypes(toks[2], s));
  int64_t lds[3] = {0, 0, 0};  // 0: not given
  bool strides[3] = {false, false, false};
  for (size_t i = 3; i < toks.size(); ++i) {
    absl::string_view t = toks[i];
    if (t == "accum") {
      if (!s.IsMatmul()) return Error("option accum is only valid for matmul");
      s.kind = Kind::kMatmulAccum;
      continue;
    }
    if (t == "serial") {
      s.serial = true;
      continue;
    }
    size_t eq = t.find('=');
    if (eq == absl::string_view::npos)
      return Error(absl::StrCat(
          "option '", t, "' is unknown, must be accum, serial or NAME=VALUE"));
    absl::string_view key = t.substr(0, eq), val = t.substr(eq + 1);
    if (key == "budget") {
      AMARENA_RETURN_IF_ERROR(ParseBudget(val, s));
    } else if (key == "alpha") {
      AMARENA_RETURN_IF_ERROR(ParseAlpha(val, s));
    } else if (const int o = LdOperand(s.kind, key); o >= 0) {
      AMARENA_ASSIGN_OR_RETURN(int64_t ld, Int(val, key));
      if (ld < 1)
        return Error(absl::StrCat(key, " is ", ld, ", must be at least 1"));
      if (ld > INT32_MAX)
        return Error(absl::StrCat(key, " is ", ld, ", must be at most ",
                                  INT32_MAX));
      lds[o] = ld;
    } else if (const int o = StrideOperand(s.kind, key); o >= 0) {
      AMARENA_ASSIGN_OR_RETURN(int64_t st, Int(val, key));
      if (st < 0)
        return Error(absl::StrCat(key, " is ", st, ", must be at least 0"));
      if (st > INT32_MAX)
        return Error(
            absl::StrCat(key, " is ", st, ", must be at most ", INT32_MAX));
      s.batch_stride[static_cast<size_t>(o)] = st;
      strides[o] = true;
    } else if (absl::StartsWith(key, "ld")) {  // no operand's name does
      return Error(absl::StrCat("option ", key, " is unknown, must be ld",
                                absl::StrJoin(OperandNames(s.kind), ", ld"),
                                " for ", OpName(s.kind)));
    } else {
      AMARENA_RETURN_IF_ERROR(ParseOperand(key, val, s));
    }
  }
  for (int i = 0; i < 3; ++i)
    if (lds[i] != 0) AMARENA_RETURN_IF_ERROR(ApplyLd(i, lds[i], s));
  for (int i = 0; i < 3; ++i)
    if (strides[i]) AMARENA_RETURN_IF_ERROR(CheckStride(i, s));
  AMARENA_RETURN_IF_ERROR(CheckSizes(s));
  return Canonical(s);
}

}  // namespace

absl::StatusOr<Spec> ParseSpec(absl::string_view text) {
  return Parser(text).Parse();
}

}  // namespace amarena
