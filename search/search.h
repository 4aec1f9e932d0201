// The DP search: the cheapest Impl for a Spec under the cost model, over every
// tree the rewrites (search/rewrites/registry.h) allow.
//
// Top-down and memoised on the whole Spec, budget included, which is what makes
// it exact: every node's cost is monotone in its children's, so the best child
// for each sub-Spec gives the best parent.
//
// Branch and bound: candidates are tried best-first by an admissible lower
// bound (core/cost_model.h); once a candidate's bound, or its solved children
// plus the bounds of the rest, exceeds the best found, it is dropped. Children
// are always solved exactly (never under a limit), so every memo entry is the
// true optimum for its Spec. (Passing limits down to children was tried: the
// re-searches it forces when a later parent allows more cost outweighed the
// pruning, 5-10x slower on 64^3 and 256^3.) Exact ties in cost go to the
// smallest Action, so the result is one tree, whatever order Specs are solved
// in and whether the memo table compresses or not.
//
// A loop's remainder (its last, partial tile) longer than kSearchedRemainder
// along the loop follows its body's best tree (SearchOptions::
// follow_remainders), as hand-written kernels handle their edges: the body's
// decisions applied to the smaller Spec, level by level, where they apply (a
// loop whose tile no longer fits runs as its body; a decision that does not
// apply leaves that sub-Spec to the search). So the large remainders of odd
// shapes (510 rows, 427 of k) add no searches of their own; the short ones,
// register tiles' edges, where the shape of the tile matters, are searched.
// The DP is then exact over that space, up to each body being chosen for its
// own cost rather than with its remainder's; with the option off every
// remainder is searched like any Spec (the brute-force tests compare that).
//
// What earlier solves learnt only prunes (SearchOptions::reuse_bounds): a
// key's best cost under the most budget bounds it under any less (more budget
// never costs more), and a key's first solve bounds each of its candidates in
// its later solves under less budget. A Spec whose top result does not fit
// its budget is solved under the top lowered only where that peak does not
// fit (relax_budgets), whose box also answers the budgets left high.
//
//   Searcher s(target);
//   absl::StatusOr<ImplPtr> impl = s.Solve(target.Bind(spec));
//   s.stats().specs_solved
#ifndef AMARENA_SEARCH_SEARCH_H_
#define AMARENA_SEARCH_SEARCH_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "core/impl.h"
#include "core/target.h"
#include "search/action.h"
#include "search/memo_table.h"

namespace amarena {

struct SearchOptions {
  bool compress_memo = true;  // boxes (true) or one point per result (false)
  bool prune = true;          // lower-bound pruning (tests turn it off)
  // Solve each new Spec at the most budget it could use before its own budget
  // (needs compress_memo to pay off).
  bool solve_at_top = true;
  // When the result at the top does not fit, solve under the top budget with
  // only the components its peak does not fit lowered, before this budget
  // (needs solve_at_top).
  bool relax_budgets = true;
  // Prune with what earlier solves learnt: a key's best cost under the most
  // budget bounds it under less, and a key's first solve bounds each of its
  // candidates in its later solves (tests turn it off to compare).
  bool reuse_bounds = true;
  // A loop's remainder follows its body's best tree instead of being
  // searched on its own (see above). Off: the search is exact over the
  // whole space.
  bool follow_remainders = true;
  // Count the distinct Specs looked up (MemoStats::specs_asked).
  bool count_queries = false;
  // When it becomes true, the search stops: Solve returns Cancelled, and the
  // memo holds wrong answers from then on (discard the Searcher).
  const std::atomic<bool>* cancel = nullptr;
};

struct SearchStats {
  int64_t specs_solved = 0;       // distinct Specs whose best Impl was computed
  int64_t candidates_tried = 0;   // expansions whose children were searched
  int64_t candidates_pruned = 0;  // dropped by the lower bound
  // Remainder trees built by following a body's tree, and the sub-Specs
  // among them where a decision did not apply and the search took over.
  int64_t remainders_followed = 0;
  int64_t follow_searched = 0;
  double ms = 0;
};

class Searcher {
 public:
  explicit Searcher(const Target& target, SearchOptions options = {})
      : target_(target), options_(options), memo_(options.compress_memo) {
    if (options.count_queries) memo_.CountQueries();
  }

  // `root` must carry a budget (Target::Bind). NoTreeError(root) if no tree
  // implements it (cannot happen for a Spec bound to the target's whole
  // budget: tiling to 1x1x1 always reaches a kernel; it can for a budget
  // given in the Spec text).
  absl::StatusOr<ImplPtr> Solve(const Spec& root);

  // The best cost of a Spec, or nullopt if no Impl fits its budget.
  std::optional<Cost> BestCost(const Spec& s);
  // The best action for a Spec (nullopt if none fits).
  std::optional<Action> BestAction(const Spec& s);
  // The best tree for a Spec, as Solve builds it (nullptr if none fits):
  // its best action with the best tree under each child, a loop's
  // remainder following its body. Remembered per Spec, so every body is
  // built once.
  ImplPtr Tree(const Spec& s);
  // `how` (an expansion of `s`) with the best tree under each child, a
  // loop's remainder following its body; nullptr if a child has none.
  ImplPtr WithBestChildren(const Spec& s, Expansion how);

  const SearchStats& stats() const { return stats_; }
  bool follows_remainders() const { return options_.follow_remainders; }
  MemoStats memo_stats() const { return memo_.Stats(); }
  // The memo table's memory and the prior bounds, bound cache and trees
  // beside it.
  int64_t memo_bytes() const {
    return memo_.ApproxBytes() + prior_bytes_ +
           static_cast<int64_t>(bound_cache_.size() * sizeof(BoundSlot)) +
           static_cast<int64_t>((trees_.size() + followed_.size()) *
                                kTreeBytes);
  }

 private:
  // What the first solve of a key learnt about its candidates, as lower
  // bounds for its later solves under less budget: a candidate's best tree
  // under less budget costs at least its best under more (its children's
  // budgets shrink with the parent's, and more budget never costs more), so
  // a candidate's exact cost, or its solved children plus the bounds of the
  // rest, under `budget` bounds it under every budget that fits in `budget`;
  // one with no tree there has none below. Only candidates whose bound rose
  // above their composed lower bound are kept, as (action, bound) in
  // enumeration order.
  struct PriorBounds {
    Budget budget;
    std::vector<std::pair<Action, int64_t>> entries;
  };

  // Per candidate of a solve: its children's lower bounds (kept for the
  // partial sums), keys and their ids once looked up; what it is known to
  // cost at least once tried (kept for PriorBounds), its composed lower
  // bound to begin with; and its bound from PriorBounds (0 if none).
  struct Tried {
    // User-provided, so that resizing the list does not zero each entry's
    // 400-odd bytes of inline storage before constructing it.
    Tried() {}
    absl::InlinedVector<Cost, 3> bounds;
    absl::InlinedVector<MemoTable::Key, 3> keys;
    absl::InlinedVector<uint32_t, 3> ids;
    int64_t known = 0, composed = 0, from_prior = 0;
    bool refined = false;
    uint8_t solved = 0;  // children solved so far, in order
  };
  // A solve's candidates, what it learnt of each, and its min-heap of
  // (bound, index): one per depth of the solves in progress, reused (a
  // solve is a few microseconds, and a candidate list tens of KiB).
  struct SolveScratch {
    std::vector<Candidate> cands;
    std::vector<Tried> tried;
    std::vector<std::pair<int64_t, uint32_t>> heap;
  };
  std::vector<std::unique_ptr<SolveScratch>> scratch_;
  size_t depth_ = 0;  // solves in progress

  static constexpr uint32_t kNoId = ~0u;
  // The longest remainder (along its loop) still searched when remainders
  // follow their bodies: 12, the most rows a register tile has.
  static constexpr int64_t kSearchedRemainder = 12;

  MemoEntry SolveExact(const Spec& s);
  // `s` (not ObviouslyInfeasible) by its key's id in the memo table.
  MemoEntry SolveExact(const Spec& s, uint32_t id);
  // The id of `s`'s key, with its KeyInfo::usable set. The overloads below
  // that take `key` are given MemoTable::KeyOf of their Spec, which a solve
  // computes once per child of its candidates.
  uint32_t KeyId(const Spec& s) { return KeyId(s, MemoTable::KeyOf(s)); }
  uint32_t KeyId(const Spec& s, const MemoTable::Key& key);
  // A lower bound on a child's best cost (kNoTree: it has none, and kNoId)
  // and its key's id: its LowerBound, or, when its key was solved under a
  // budget its own fits in, the cost found there if larger (more budget
  // never costs more).
  std::pair<int64_t, uint32_t> ChildBound(const Spec& child,
                                          const MemoTable::Key& key);
  // LowerBound(s), through a fixed-size table by key (a clash overwrites):
  // the candidates of many Specs share children, and the memo gives ids only
  // to the children of the candidates it refines.
  int64_t CachedLowerBound(const Spec& s, const MemoTable::Key& key);
  // Starts loading `key`'s slot of that table.
  void PrefetchBound(const MemoTable::Key& key);
  // The tree for `r` that follows `like` (search/remainder.cc): nullptr if
  // none fits. Remembered per (r, like).
  ImplPtr Follow(const Spec& r, const ImplPtr& like);
  ImplPtr FollowUncached(const Spec& r, const ImplPtr& like);
  // Whether `e` is a loop whose remainder follows its body.
  bool RemainderFollows(const Expansion& e) const {
    return options_.follow_remainders && e.type == NodeType::kLoop &&
           e.children.size() == 2 &&
           Extent(e.children[1], e.loop.dim) > kSearchedRemainder;
  }
  // The cost of a loop's remainder `rem`, by following the best tree of
  // its body `body` (solved); infeasible if none fits.
  MemoEntry FollowRemainder(const Spec& rem, const Spec& body);

  Target target_;
  SearchOptions options_;
  MemoTable memo_;
  SearchStats stats_;
  // Prior bounds need pruning, and a loop whose counter spills to the stack
  // (under no GPR) costing at least one whose counter is in a register.
  bool reuse_bounds_ =
      options_.prune && options_.reuse_bounds &&
      target_.cost.loop_iteration_stack >= target_.cost.loop_iteration;
  std::vector<PriorBounds> prior_;
  int64_t prior_bytes_ = 0;
  struct BoundSlot {
    MemoTable::Key key;
    int64_t lower = -1;  // -1: empty
  };
  static constexpr size_t kBoundSlots = size_t{1} << 14;  // 1 MiB
  std::vector<BoundSlot> bound_cache_;
  absl::flat_hash_map<Spec, ImplPtr> trees_;  // Tree's
  absl::flat_hash_map<std::pair<Spec, const ImplNode*>, ImplPtr> followed_;
  // A node and its map slot, roughly.
  static constexpr int64_t kTreeBytes = 2 * sizeof(ImplNode) + 64;
};

// The most of each budget any tree for `s` could use (a sound over-estimate):
// the search clamps budgets to it, since budget beyond it changes nothing.
Budget UsableBudget(const Spec& s, const Target& t);

// `s` (bound) with its budget clamped to `usable` (UsableBudget(s, t)): the
// form the search memoises, and the coordinates a stored result is found by.
Spec ClampBudget(const Spec& s, const Budget& usable);
inline Spec ClampBudget(const Spec& s, const Target& t) {
  return ClampBudget(s, UsableBudget(s, t));
}

// Whether no tree can fit `s`'s budget, known without search (s is bound).
bool ObviouslyInfeasible(const Spec& s);

// Why no tree implements `root` (bound): InvalidArgument naming what the
// budget lacks when it is ObviouslyInfeasible (no kernel could exist within
// it), else Unimplemented (none that the generator has).
absl::Status NoTreeError(const Spec& root);

}  // namespace amarena

#endif  // AMARENA_SEARCH_SEARCH_H_
