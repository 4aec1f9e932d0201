// The DP search: the cheapest Impl for a Spec under the cost model, over every
// tree the rewrites (search/rewrites/registry.h) allow. Top-down and memoised
// on the whole Spec, budget included, which is what makes it exact: every
// node's cost is monotone in its children's, so the best child for each
// sub-Spec gives the best parent.
//
//   Searcher s(target);
//   absl::StatusOr<ImplPtr> impl = s.Solve(target.Bind(spec));
//   s.stats().specs_solved
#ifndef AMARENA_SEARCH_SEARCH_H_
#define AMARENA_SEARCH_SEARCH_H_

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/impl.h"
#include "core/target.h"
#include "search/action.h"

namespace amarena {

struct SearchStats {
  int64_t specs_solved = 0;      // distinct Specs whose best Impl was computed
  int64_t candidates_tried = 0;  // expansions costed
  double ms = 0;
};

class Searcher {
 public:
  explicit Searcher(const Target& target) : target_(target) {}

  // `root` must carry a budget (Target::Bind). NotFound if no tree implements
  // it (cannot happen for a bound user Spec: tiling to 1x1x1 always reaches a
  // kernel).
  absl::StatusOr<ImplPtr> Solve(const Spec& root);

  // The best cost of a Spec, or nullopt if no Impl fits its budget.
  std::optional<Cost> BestCost(const Spec& s);

  const SearchStats& stats() const { return stats_; }

 private:
  struct Entry {
    bool in_progress = true;
    bool feasible = false;
    Cost cost;
    Candidate best;
  };

  const Entry& SolveSpec(const Spec& s);
  ImplPtr Build(const Spec& s);

  Target target_;
  absl::flat_hash_map<Spec, Entry> memo_;
  SearchStats stats_;
};

}  // namespace amarena

#endif  // AMARENA_SEARCH_SEARCH_H_
