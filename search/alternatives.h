// Trees other than the search's best, for measuring how well the cost model
// ranks trees against the hardware (`amarena fidelity`, docs/fidelity.md):
// the k cheapest trees under the model, the best tree per decision at the
// top of the best tree, and random valid trees. Every tree
// is built from the rewrites' own candidates (search/rewrites/registry.h) on
// each node's Spec, so replay (search/replay.h) accepts its decisions, and
// each node's cost is composed by the model as the search composes it.
//
//   Searcher searcher(target);
//   std::vector<ImplPtr> best = KBestTrees(searcher, root, target, 10);
//   std::vector<ImplPtr> alts = DecisionAlternatives(searcher, root, target,
//   2); std::mt19937_64 rng(1); ImplPtr r = RandomTree(searcher, root, target,
//   rng, {.explore = 0.5});
#ifndef AMARENA_SEARCH_ALTERNATIVES_H_
#define AMARENA_SEARCH_ALTERNATIVES_H_

#include <random>
#include <vector>

#include "core/impl.h"
#include "core/target.h"
#include "search/search.h"

namespace amarena {

// The search's best tree for `s` (bound), built from the searcher's memo; the
// same tree Searcher::Solve returns. nullptr when no tree fits.
ImplPtr BestTree(Searcher& searcher, const Spec& s, const Target& t);

// The `k` cheapest distinct trees for `root` (bound) under the model, cheapest
// first; the first is BestTree. Fewer when the space has fewer trees.
//
// Lazy k-best over one-node deviations: the trees are popped from a queue in
// order of cost; popping a tree pushes every tree that differs from it at one
// node whose subtree is still the best for that node's Spec, by another
// action there with the best subtree under each of its children. Every tree
// is reached so (undo its deepest deviation from the best subtrees: by
// monotonicity the result costs no more), and no pushed tree costs less than
// the tree it came from, so the order is exact (trees of equal cost come in
// the order of their decision text).
//
// The model prices many trees the same (a tile of the store loop more or
// less, say), so the k cheapest are often all of the best cost. With
// `max_per_cost` > 0, at most that many trees of each cost are returned, and
// the others of that cost are dropped unexpanded: the result then spans
// more costs, but is no longer exactly the cheapest (a tree reached only
// through a dropped one is missed).
std::vector<ImplPtr> KBestTrees(Searcher& searcher, const Spec& root,
                                const Target& t, int k, int max_per_cost = 0);

// For each node in the first `levels` levels of the best tree (the root is
// level 0), each other action there with the best subtrees under it and the
// rest of the best tree around it: the best tree per top-level decision, then
// per second-level decision, and so on. Distinct, cheapest first.
std::vector<ImplPtr> DecisionAlternatives(Searcher& searcher, const Spec& root,
                                          const Target& t, int levels);

struct RandomTreeOptions {
  // At each node, the chance of a random action instead of the best one:
  // 1 is a uniform random descent, 0 the best tree.
  double explore = 1.0;
  // Nodes this deep or deeper take the best subtree (bounds the trees' size;
  // the root is at depth 0).
  int max_random_depth = 12;
};

// A random valid tree for `root` (bound) by descent through the rewrites: at
// each node, with probability `explore`, an action drawn uniformly from the
// candidates whose children all have a tree within their budgets (asked of
// the searcher, so the descent never dead-ends), else the best action. Leaves
// are kernels (the candidates' own). nullptr when no tree fits `root`.
ImplPtr RandomTree(Searcher& searcher, const Spec& root, const Target& t,
                   std::mt19937_64& rng, const RandomTreeOptions& options = {});

}  // namespace amarena

#endif  // AMARENA_SEARCH_ALTERNATIVES_H_
