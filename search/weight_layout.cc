#include "search/weight_layout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"

namespace amarena {

std::vector<Spec> WeightLayoutCandidates(const Spec& spec, const Target& t) {
  std::vector<Spec> out;
  // In canonical form, each once (a layout may fold into an earlier one).
  auto add = [&](Spec s) {
    s = Canonical(s);
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  add(spec);
  Spec col = spec;
  col.aux[1].layout = Order::kColMajor;
  add(col);
  // k-pair panels serve vdpbf16ps, which needs A in bf16 too (an f32 A
  // would be rounded).
  const bool pairs = spec.aux[0].dtype == DType::kBF16 &&
                     spec.aux[1].dtype == DType::kBF16 && t.bf16_dot &&
                     spec.k > 1;
  const int64_t widest = (spec.n + 15) / 16 * 16;
  for (int interleave : {0, 2}) {
    if (interleave == 2 && !pairs) continue;
    for (int64_t p : {16, 32, 64, 128}) {
      if (p > widest) break;
      Spec packed = spec;
      Layout& l = packed.aux[1].layout;
      l = Layout::Panels(l.order(), p);
      if (interleave == 2 && l.row_major()) l = l.Paired();
      add(packed);
    }
  }
  // The same panels in two sections, where a section is long enough.
  const size_t unsectioned = out.size();
  for (size_t i = 0; i < unsectioned; ++i) {
    Spec s = out[i];
    Layout& l = s.aux[1].layout;
    if (!l.packed() || !l.row_major()) continue;
    l = l.InSections(2);
    const TensorSpec b = s.Operand(1);
    if (b.Panels() < 2) continue;
    if (b.StoredElements() / 2 * SizeOf(b.aux.dtype) < kMinSectionBytes)
      continue;
    add(s);
  }
  return out;
}

std::string WeightLayoutName(const TensorAux& b) {
  if (!b.layout.packed()) return std::string(Name(b.layout.order()));
  return b.layout.PanelText();
}

absl::StatusOr<WeightLayoutChoice> ChooseWeightLayout(
    const Spec& spec, const Target& t,
    absl::FunctionRef<absl::StatusOr<int64_t>(const Spec&)> cost_of) {
  const TensorAux& b = spec.aux[1];
  if (!spec.IsMatmul() || b.level != Level::kGL || b.layout != Layout())
    return absl::InvalidArgumentError(
        absl::StrCat("cannot choose B's layout for ", PrintSpec(spec),
                     ": must be a matmul with B plain row-major in gl"));
  WeightLayoutChoice choice{spec, -1, {}};
  for (const Spec& c : WeightLayoutCandidates(spec, t)) {
    absl::StatusOr<int64_t> cost = cost_of(c);
    if (absl::IsUnimplemented(cost.status())) continue;
    if (!cost.ok()) return cost.status();
    choice.tried.emplace_back(c, *cost);
    if (choice.cost < 0 || *cost < choice.cost) {
      choice.spec = c;
      choice.cost = *cost;
    }
  }
  if (choice.cost < 0)
    return absl::UnimplementedError(
        absl::StrCat("cannot choose B's layout for ", PrintSpec(spec),
                     ": no tree implements it in any layout of B"));
  return choice;
}

}  // namespace amarena
