// A loop's remainder follows its body's tree (SearchOptions::
// follow_remainders, search/search.h): the body's decisions re-applied to
// the remainder's smaller Spec, node by node.
//
// Following `like` (a tree) for Spec `r`:
//   - r is like's own Spec: like itself.
//   - like is a loop whose tile is not below r's extent: r is one partial
//     tile, so it follows the loop's body.
//   - otherwise like's action is applied to r. Each child follows like's
//     child in the same place: a remainder of r's own loop follows the
//     remainder of like's (the body's edge, searched if short), or r's body
//     where like's loop has none. So nothing under a followed remainder is
//     searched, short edges included, but where an action does not apply:
//   - where it does not apply to r (a kernel that does not take its
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
  const Step& how = like->how;
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
  node->how = c->expansion;
  const auto& kids = c->expansion.children;
  // Every child follows like's child in its place; a remainder of r's own
  // loop where like's loop has none follows r's body.
  const bool loop = node->how.type == NodeType::kLoop;
  if (like->children.size() < (loop ? 1 : kids.size())) return searched();
  std::vector<Cost> costs;
  for (size_t i = 0; i < kids.size(); ++i) {
    const ImplPtr& pattern =
        i < like->children.size() ? like->children[i] : node->children[0];
    ImplPtr child = Follow(kids[i], pattern);
    if (child == nullptr) return searched();
    costs.push_back(child->cost);
    node->children.push_back(std::move(child));
  }
  node->cost = ComposeCost(r, c->expansion, costs, target_);
  if (!node->cost.peak.FitsIn(*r.budget)) return searched();
  return node;
}

}  // namespace amarena
