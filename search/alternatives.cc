#include "search/alternatives.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <queue>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/cost_model.h"
#include "core/status_macros.h"
#include "search/replay.h"
#include "search/rewrites/registry.h"

namespace amarena {

namespace {

ImplPtr MakeNode(const Spec& s, const Expansion& e,
                 std::vector<ImplPtr> children, const Target& t) {
  std::vector<Cost> costs;
  costs.reserve(children.size());
  for (const ImplPtr& c : children) costs.push_back(c->cost);
  auto node = std::make_shared<ImplNode>();
  node->spec = s;
  node->how = e;
  node->cost = ComposeCost(s, e, costs, t);
  node->children = std::move(children);
  return node;
}

// Trees assembled from the searcher's answers (it remembers them per Spec).
class Builder {
 public:
  Builder(Searcher& searcher, const Target& t) : searcher_(searcher), t_(t) {}

  // The searcher's own tree, so the trees below start from its pick.
  ImplPtr Best(const Spec& s) { return searcher_.Tree(s); }

  bool Feasible(const Spec& s) { return searcher_.BestCost(s).has_value(); }

  bool IsBestAction(const ImplNode& n) {
    std::optional<Action> a = searcher_.BestAction(n.spec);
    return a.has_value() && *a == ActionOf(n.how);
  }

  // The expansion with the best tree under each child (as the searcher
  // assembles its own); nullptr when a child has none.
  ImplPtr WithBestChildren(const Spec& s, const Expansion& e) {
    return searcher_.WithBestChildren(s, e);
  }

  // Every other action at `n`'s Spec, each with the best children.
  const std::vector<ImplPtr>& Others(const ImplNode& n) {
    auto [it, fresh] = others_.try_emplace(n.spec);
    if (!fresh) return it->second;
    const Action current = ActionOf(n.how);
    std::vector<ImplPtr> trees;
    for (const Candidate& c : EnumerateCandidates(n.spec, t_)) {
      if (c.action == current) continue;
      if (ImplPtr tree = WithBestChildren(n.spec, c.expansion))
        trees.push_back(std::move(tree));
    }
    // Best() never touches others_: `it` is still valid.
    return it->second = std::move(trees);
  }

  // Appends to `out` every tree that differs from `n`'s subtree at one node
  // whose subtree is the best for its Spec (see KBestTrees); returns whether
  // `n`'s own subtree is the best.
  // Nodes `levels` or more below `n` are not deviated (their subtrees are
  // still checked for being the best).
  bool Deviations(const ImplPtr& n, std::vector<ImplPtr>& out,
                  int levels = std::numeric_limits<int>::max()) {
    bool pristine = true;
    for (size_t i = 0; i < n->children.size(); ++i) {
      // A remainder that follows its body is the body's choice, not one of
      // its own: nothing to deviate there.
      if (i == 1 && n->HasRemainder() && searcher_.follows_remainders())
        continue;
      std::vector<ImplPtr> sub;
      pristine &= Deviations(n->children[i], sub, levels - 1);
      for (ImplPtr& s : sub) {
        std::vector<ImplPtr> children = n->children;
        children[i] = std::move(s);
        out.push_back(
            MakeNode(n->spec, ExpansionOf(*n), std::move(children), t_));
      }
    }
    pristine = pristine && IsBestAction(*n);
    if (pristine && levels > 0)
      for (const ImplPtr& other : Others(*n)) out.push_back(other);
    return pristine;
  }

  const Target& target() const { return t_; }

 private:
  Searcher& searcher_;
  const Target& t_;
  absl::flat_hash_map<Spec, std::vector<ImplPtr>> others_;
};

ImplPtr Random(Builder& b, const Spec& s, int depth, std::mt19937_64& rng,
               const RandomTreeOptions& o) {
  if (depth >= o.max_random_depth ||
      !std::bernoulli_distribution(o.explore)(rng))
    return b.Best(s);
  std::vector<Candidate> cands = EnumerateCandidates(s, b.target());
  std::vector<size_t> order(cands.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t i : order) {
    const Expansion& e = cands[i].expansion;
    if (!std::all_of(e.children.begin(), e.children.end(),
                     [&](const Spec& c) { return b.Feasible(c); }))
      continue;
    std::vector<ImplPtr> children;
    for (const Spec& c : e.children)
      children.push_back(Random(b, c, depth + 1, rng, o));
    return MakeNode(s, e, std::move(children), b.target());
  }
  return b.Best(s);  // nullptr: nothing fits `s`
}

}  // namespace

ImplPtr BestTree(Searcher& searcher, const Spec& s, const Target& t) {
  return Builder(searcher, t).Best(s);
}

std::vector<ImplPtr> KBestTrees(Searcher& searcher, const Spec& root,
                                const Target& t, int k, int max_per_cost) {
  Builder b(searcher, t);
  std::vector<ImplPtr> out;
  ImplPtr best = b.Best(root);
  if (best == nullptr || k <= 0) return out;
  struct Entry {
    int64_t cost;
    std::string text;
    ImplPtr tree;
    // Cheapest (then smallest text) first out of std::priority_queue.
    bool operator<(const Entry& o) const {
      return std::tie(cost, text) > std::tie(o.cost, o.text);
    }
  };
  std::priority_queue<Entry> queue;
  absl::flat_hash_set<std::string> seen;
  std::string text = EncodeDecisions(*best);
  seen.insert(text);
  queue.push(Entry{best->cost.main, std::move(text), best});
  int same_cost = 0;
  while (!queue.empty() && static_cast<int>(out.size()) < k) {
    ImplPtr tree = queue.top().tree;
    queue.pop();
    // Popped in order of cost: the trees of one cost come in one run.
    if (!out.empty() && tree->cost.main == out.back()->cost.main) {
      ++same_cost;
    } else {
      same_cost = 1;
    }
    if (max_per_cost > 0 && same_cost > max_per_cost) continue;
    out.push_back(tree);
    std::vector<ImplPtr> next;
    b.Deviations(tree, next);
    for (ImplPtr& n : next) {
      std::string d = EncodeDecisions(*n);
      if (!seen.insert(d).second) continue;
      queue.push(Entry{n->cost.main, std::move(d), std::move(n)});
    }
  }
  return out;
}

std::vector<ImplPtr> DecisionAlternatives(Searcher& searcher, const Spec& root,
                                          const Target& t, int levels) {
  Builder b(searcher, t);
  std::vector<ImplPtr> out;
  ImplPtr best = b.Best(root);
  if (best == nullptr) return out;
  b.Deviations(best, out, levels);
  std::vector<std::pair<int64_t, std::string>> keys;
  for (const ImplPtr& tree : out)
    keys.emplace_back(tree->cost.main, EncodeDecisions(*tree));
  std::vector<size_t> order(out.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t c) { return keys[a] < keys[c]; });
  std::vector<ImplPtr> sorted;
  for (size_t i = 0; i < order.size(); ++i)
    if (i == 0 || keys[order[i]].second != keys[order[i - 1]].second)
      sorted.push_back(out[order[i]]);
  return sorted;
}

ImplPtr RandomTree(Searcher& searcher, const Spec& root, const Target& t,
                   std::mt19937_64& rng, const RandomTreeOptions& options) {
  Builder b(searcher, t);
  return Random(b, root, 0, rng, options);
}

}  // namespace amarena
