// The notation's printing half (core/spec_text.h): operation and operand
// names, and PrintSpec, the canonical text ParseSpec (core/spec_text.cc)
// reads back.
#include <charconv>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/spec_text.h"

namespace amarena {

std::string PackName(const TensorAux& a) { return a.layout.PanelText(); }

absl::string_view OpName(Kind k) {
  switch (k) {
    case Kind::kMatmul:
    case Kind::kMatmulAccum:
      return "matmul";
    case Kind::kZero:
      return "zero";
    case Kind::kMove:
      return "move";
  }
  return "?";
}

std::vector<absl::string_view> OperandNames(Kind k) {
  switch (k) {
    case Kind::kMatmul:
    case Kind::kMatmulAccum:
      return {"a", "b", "c"};
    case Kind::kZero:
      return {"out"};
    case Kind::kMove:
      return {"src", "dst"};
  }
  return {};
}

namespace {

std::string PrintAux(const TensorAux& a) {
  std::vector<std::string> props;
  if (a.level != Level::kGL) props.emplace_back(Name(a.level));
  if (std::string l = a.layout.Text(); !l.empty()) props.push_back(l);
  if (a.vector_width != 0) props.push_back(absl::StrCat("v", a.vector_width));
  return absl::StrJoin(props, ",");
}

}  // namespace

std::string PrintSpec(const Spec& s) {
  std::string out = absl::StrCat(OpName(s.kind), " ");
  if (s.IsMatmul()) {
    if (s.b != 1) absl::StrAppend(&out, s.b, "x");
    absl::StrAppend(&out, s.m, "x", s.k, "x", s.n, " ");
  } else {
    absl::StrAppend(&out, s.m, "x", s.n, " ");
  }
  int n = s.NumOperands();
  bool uniform = true;
  for (int i = 1; i < n; ++i) uniform &= s.aux[i].dtype == s.aux[0].dtype;
  if (uniform) {
    absl::StrAppend(&out, Name(s.aux[0].dtype));
  } else {
    std::vector<absl::string_view> ins;
    for (int i = 0; i < n - 1; ++i) ins.push_back(Name(s.aux[i].dtype));
    absl::StrAppend(&out, absl::StrJoin(ins, "*"), "->",
                    Name(s.aux[n - 1].dtype));
  }
  if (s.kind == Kind::kMatmulAccum) absl::StrAppend(&out, " accum");
  if (s.alpha != 1.0f) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), s.alpha);
    absl::StrAppend(&out, " alpha=", absl::string_view(buf, end - buf));
  }
  std::vector<absl::string_view> names = OperandNames(s.kind);
  for (int i = 0; i < n; ++i) {
    std::string p = PrintAux(s.aux[i]);
    if (!p.empty()) absl::StrAppend(&out, " ", names[i], "=", p);
  }
  for (int i = 0; i < n; ++i)
    if (const int64_t ld = s.aux[i].layout.ld())
      absl::StrAppend(&out, " ld", names[i], "=", ld);
  for (int i = 0; i < n; ++i)
    if (const int64_t st = s.batch_stride[static_cast<size_t>(i)];
        st != Spec::kDenseBatch)
      absl::StrAppend(&out, " s", names[i], "=", st);
  if (s.serial) absl::StrAppend(&out, " serial");
  if (s.budget)
    absl::StrAppend(&out, " budget=vrf:", s.budget->vrf, ",gpr:", s.budget->gpr,
                    ",l1:", s.budget->l1_lines, ",l2:", s.budget->l2_lines,
                    ",l3:", s.budget->l3_lines);
  return out;
}

}  // namespace amarena
