#include "search/weight_layout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"

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
  // k-pair panels serve vdpbf16ps beside a bf16 A, and widen_pairs (a
  // shift and an AND, then f32 FMAs; both ISAs) beside an f32 A, which
  // vdpbf16ps would round.
  const DType a = spec.aux[0].dtype;
  const bool pairs = spec.aux[1].dtype == DType::kBF16 && spec.k > 1 &&
                     (a == DType::kF32 || (a == DType::kBF16 && t.bf16_dot));
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

absl::StatusOr<WeightLayoutRangeChoice> ChooseWeightLayoutOverM(
    const Spec& spec, const Target& t, int64_t m_lo, int64_t m_hi,
    absl::FunctionRef<absl::StatusOr<int64_t>(const Spec&)> cost_of) {
  if (m_lo < 1 || m_hi < m_lo || spec.m < m_lo || spec.m > m_hi)
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot choose B's layout for ", PrintSpec(spec), ": m range is ", m_lo,
        "..", m_hi, ", must be 1 <= lo <= M <= hi"));
  WeightLayoutRangeChoice out;
  out.ms.push_back(m_lo);
  for (int64_t m = CeilPow2(m_lo + 1); m < m_hi; m *= 2) out.ms.push_back(m);
  if (m_hi != m_lo) out.ms.push_back(m_hi);
  // Per candidate (by B's layout name, in the order at the Spec's M), its
  // cost at each M sampled.
  AMARENA_ASSIGN_OR_RETURN(out.at_m, ChooseWeightLayout(spec, t, cost_of));
  std::vector<std::string> names;
  for (auto& [c, cost] : out.at_m.tried)
    names.push_back(WeightLayoutName(c.aux[1]));
  std::vector<std::vector<double>> costs(names.size());
  std::vector<bool> everywhere(names.size(), true);
  for (int64_t m : out.ms) {
    Spec at = spec;
    at.m = m;
    AMARENA_ASSIGN_OR_RETURN(WeightLayoutChoice c,
                             ChooseWeightLayout(at, t, cost_of));
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = std::find_if(c.tried.begin(), c.tried.end(), [&](auto& e) {
        return WeightLayoutName(e.first.aux[1]) == names[i];
      });
      if (it == c.tried.end()) {
        everywhere[i] = false;
      } else {
        costs[i].push_back(static_cast<double>(it->second) /
                           static_cast<double>(std::max<int64_t>(c.cost, 1)));
      }
    }
  }
  int best = -1;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!everywhere[i]) continue;
    const double worst = *std::max_element(costs[i].begin(), costs[i].end());
    if (best < 0 || worst < out.regret) {
      best = static_cast<int>(i);
      out.regret = worst;
    }
  }
  if (best < 0)
    return absl::UnimplementedError(absl::StrCat(
        "cannot choose B's layout for ", PrintSpec(spec), " over m ", m_lo,
        "..", m_hi, ": no layout of B has a tree at every M"));
  out.at_m.spec = out.at_m.tried[static_cast<size_t>(best)].first;
  out.at_m.cost = out.at_m.tried[static_cast<size_t>(best)].second;
  return out;
}

}  // namespace amarena
