// A loop's remainder follows its body's tree (SearchOptions::
// follow_remainders, search/search.h): the body's decisions re-applied to
// the remainder's smaller Spec, node by node.
//
// Following `like` (a tree) for Spec `r`:
//   - r is like's own Spec: like itself.
//   - like is a loop whose tile is not below r's extent: r is one partial
//     tile, so it follows the loop's body.
//   - otherwise like's action is applied to r. Each child follows like's
//     child in the same place, except a remainder of r's own loop, which
//     follows r's body (as every remainder does).
//   - where the action does not apply to r (a kernel that does not take its
//     shape, a view that does not fit), or the tree built does not fit r's
//     budget, r is searched (Tree), and so are its children below.
#include "core/cost_model.h"
#include "search/rewrites/registry.h"
#include "search/search.h"

namespace amarena {

MemoEntry Searcher::FollowRemainder(const Spec& rem, const Spec& body) {
  ImplPtr like = Tree(body);
  ImplPtr tree = like == nullptr ? nullptr : Follow(rem, like);
  if (tree == nullptr) return MemoEntry{};
  return MemoEntry{.feasible = true, .cost = tree->cost, .action = {}};
}

ImplPtr Searcher::Follow(const Spec& r, const ImplPtr& like) {
  if (r == like->spec) return like;
  const std::pair<Spec, const ImplNode*> key(r, like.get());
  if (auto it = followed_.find(key); it != followed_.end()) return it->second;
  ImplPtr tree = FollowUncached(r, like);
  // `like` stays alive in trees_ or followed_, so its address names it.
  followed_.emplace(key, tree);
  return tree;
}

ImplPtr Searcher::FollowUncached(const Spec& r, const ImplPtr& like) {
  if (ObviouslyInfeasible(r)) return nullptr;
  ++stats_.remainders_followed;
  const Expansion& how = like->how;
  const Action action = ActionOf(how);
  if (how.type == NodeType::kLoop && how.loop.tile >= Extent(r, how.loop.dim))
    return Follow(r, like->children[0]);
  auto searched = [&] {
    ++stats_.follow_searched;
    return Tree(r);
  };
  absl::StatusOr<Candidate> c = ApplyAction(r, action, target_);
  if (!c.ok()) return searched();
  auto node = std::make_shared<ImplNode>();
  node->spec = r;
  node->how = std::move(c->expansion);
  const auto& kids = node->how.children;
  // A remainder of r's own loop is any loop's remainder (WithBestChildren):
  // it follows r's body, or is searched. Every other child follows like's
  // child in its place.
  const bool loop = node->how.type == NodeType::kLoop;
  const size_t placed = loop ? 1 : kids.size();
  if (like->children.size() < placed) return searched();
  std::vector<Cost> costs;
  for (size_t i = 0; i < kids.size(); ++i) {
    ImplPtr child;
    if (i < placed) {
      child = Follow(kids[i], like->children[i]);
    } else {
      child = RemainderFollows(node->how) ? Follow(kids[i], node->children[0])
                                          : Tree(kids[i]);
    }
    if (child == nullptr) return searched();
    costs.push_back(child->cost);
    node->children.push_back(std::move(child));
  }
  node->cost = ComposeCost(r, node->how, costs, target_);
  if (!node->cost.peak.FitsIn(*r.budget)) return searched();
  return node;
}

}  // namespace amarena
