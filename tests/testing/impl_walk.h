// Walking an Impl tree in tests: every node, and whether a kernel is used.
//
//   ForEachNode(*impl, [&](const ImplNode& n) { ... });
//   EXPECT_TRUE(UsesKernel(*impl, KernelId::kOuterBf16));
#ifndef AMARENA_TESTS_TESTING_IMPL_WALK_H_
#define AMARENA_TESTS_TESTING_IMPL_WALK_H_

#include <vector>

#include "core/impl.h"

namespace amarena::testing {

// Calls f on every node of the tree, parents before children.
template <typename F>
void ForEachNode(const ImplNode& root, F f) {
  std::vector<const ImplNode*> todo = {&root};
  while (!todo.empty()) {
    const ImplNode* n = todo.back();
    todo.pop_back();
    f(*n);
    for (const ImplPtr& c : n->children) todo.push_back(c.get());
  }
}

inline bool UsesKernel(const ImplNode& root, KernelId id) {
  bool used = false;
  ForEachNode(root, [&](const ImplNode& n) {
    used |= n.how.type == NodeType::kKernel && n.how.kernel == id;
  });
  return used;
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_IMPL_WALK_H_
