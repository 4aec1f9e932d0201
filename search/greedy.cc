#include "search/greedy.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/cost_model.h"
#include "core/lower_bound.h"
#include "core/spec_text.h"
#include "search/rewrites/registry.h"
#include "search/search.h"

namespace amarena {

namespace {

// Depth-first, first complete candidate wins: under a millisecond for
// 1024^3 (exact: about 60 ms), at 2-4x the exact tree's model cost there.
// Comparing the best two or three complete candidates per Spec instead gets
// within 1.2-1.7x but takes 45-100 ms, no faster than the exact search.
class Greedy {
 public:
  explicit Greedy(const Target& t) : t_(t) {}

  // The first tree found for `s`, or nullptr if none fits. Results (and
  // failures) are remembered per clamped Spec, so each is explored once.
  ImplPtr Solve(const Spec& spec) {
    if (ObviouslyInfeasible(spec)) return nullptr;
    Spec s = ClampBudget(spec, t_);
    if (auto it = memo_.find(s); it != memo_.end())
      return Rebase(it->second, spec);
    std::vector<Candidate> cands = EnumerateCandidates(s, t_);
    std::vector<std::pair<int64_t, size_t>> ranked;
    ranked.reserve(cands.size());
    for (size_t i = 0; i < cands.size(); ++i) {
      std::vector<Cost> bounds;
      for (const Spec& child : cands[i].expansion.children)
        bounds.push_back(Cost{.main = LowerBound(child, t_), .peak = {}});
      ranked.emplace_back(ComposeCost(s, cands[i].expansion, bounds, t_).main,
                          i);
    }
    std::sort(ranked.begin(), ranked.end());
    ImplPtr found;
    for (const auto& [bound, i] : ranked) {
      const Expansion& e = cands[i].expansion;
      std::vector<ImplPtr> children;
      std::vector<Cost> costs;
      for (const Spec& child : e.children) {
        ImplPtr c = Solve(child);
        if (!c) break;
        costs.push_back(c->cost);
        children.push_back(std::move(c));
      }
      if (children.size() != e.children.size()) continue;
      auto node = std::make_shared<ImplNode>();
      node->spec = s;
      node->how = e;
      node->cost = ComposeCost(s, e, costs, t_);
      node->children = std::move(children);
      found = std::move(node);
      break;
    }
    memo_.emplace(s, found);
    return Rebase(found, spec);
  }

 private:
  // A remembered tree under the Spec it was asked for (same problem; the
  // budget may be larger than the clamped one it was found under).
  static ImplPtr Rebase(const ImplPtr& tree, const Spec& spec) {
    if (!tree || tree->spec == spec) return tree;
    auto node = std::make_shared<ImplNode>(*tree);
    node->spec = spec;
    return node;
  }

  const Target& t_;
  absl::flat_hash_map<Spec, ImplPtr> memo_;
};

}  // namespace

absl::StatusOr<ImplPtr> SolveGreedy(const Spec& root, const Target& t) {
  if (!root.budget)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot search ", PrintSpec(root),
                     ": budget is unset, must be bound to a target"));
  ImplPtr tree = Greedy(t).Solve(root);
  if (!tree) return NoTreeError(root);
  return tree;
}

}  // namespace amarena
