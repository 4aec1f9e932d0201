#include "search/search.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "core/cost_model.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "search/rewrites/registry.h"

namespace amarena {

absl::StatusOr<ImplPtr> Searcher::Solve(const Spec& root) {
  if (!root.budget)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot search ", PrintSpec(root),
                     ": budget is unset, must be bound "
                     "to a target"));
  auto start = std::chrono::steady_clock::now();
  const Entry& e = SolveSpec(root);
  stats_.ms += std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - start)
                   .count();
  if (!e.feasible)
    return absl::NotFoundError(absl::StrCat(
        "cannot implement ", PrintSpec(root), ": no tree fits the budget"));
  return Build(root);
}

std::optional<Cost> Searcher::BestCost(const Spec& s) {
  const Entry& e = SolveSpec(s);
  if (!e.feasible) return std::nullopt;
  return e.cost;
}

const Searcher::Entry& Searcher::SolveSpec(const Spec& s) {
  if (auto it = memo_.find(s); it != memo_.end()) {
    // Rewrites strictly shrink a Spec (smaller tile, faster level, or Matmul ->
    // MatmulAccum), so a Spec can never be its own descendant.
    AMARENA_CHECK(!it->second.in_progress);
    return it->second;
  }
  memo_.emplace(s, Entry{});
  ++stats_.specs_solved;

  Entry result;
  result.in_progress = false;
  std::vector<Cost> child_costs;
  for (Candidate& c : EnumerateCandidates(s, target_)) {
    ++stats_.candidates_tried;
    child_costs.clear();
    int64_t partial = 0;
    bool ok = true;
    for (const Spec& child : c.expansion.children) {
      const Entry& ce = SolveSpec(child);
      if (!ce.feasible) {
        ok = false;
        break;
      }
      child_costs.push_back(ce.cost);
      // Branch and bound: costs only grow with more children (every coefficient
      // is at least 1), so once the children so far exceed the incumbent, stop.
      partial += ce.cost.main;
      if (result.feasible && partial > result.cost.main) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    Cost cost = ComposeCost(s, c.expansion, child_costs, target_);
    if (!result.feasible || cost < result.cost) {
      result.feasible = true;
      result.cost = cost;
      result.best = std::move(c);
    }
  }
  // `memo_` may have rehashed while children were solved: look the slot up
  // again.
  Entry& slot = memo_[s];
  slot = std::move(result);
  return slot;
}

ImplPtr Searcher::Build(const Spec& s) {
  const Entry& e = SolveSpec(s);
  AMARENA_CHECK(e.feasible);
  auto node = std::make_shared<ImplNode>();
  node->spec = s;
  node->how = e.best.expansion;
  node->cost = e.cost;
  for (const Spec& child : e.best.expansion.children)
    node->children.push_back(Build(child));
  return node;
}

}  // namespace amarena
