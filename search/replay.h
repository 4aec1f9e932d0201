// Stored decisions back into a tree: how a search result read from disk (or
// from anywhere untrusted) becomes an Impl again.
//
// A tree is stored as its actions in preorder (a node's action, then each
// child's subtree), each as its descriptor, written and read by the rewrite
// that owns it (search/rewrites/registry.h). Replay re-derives every node from
// its Spec by applying the action with the current rewrites, and re-costs it
// with the current model, so a decision that no longer applies, a sequence of
// the wrong length, or a cost that differs from the one recorded is an error,
// never a wrong kernel.
//
// A hand-written schedule may leave subtrees to the search: the word "*"
// stands for the best tree of the Spec it is reached at, which `fill` gives
// (stored decisions never hold it; without `fill` it is an error).
//
//   std::string text = EncodeDecisions(*impl);   // "tile m 8;select dot;..."
//   absl::StatusOr<ImplPtr> again = Replay(spec, text, target);
//   Replay(spec, "tile m 64;*;*", target,
//          [&](const Spec& s) { return searcher.Solve(s); });
#ifndef AMARENA_SEARCH_REPLAY_H_
#define AMARENA_SEARCH_REPLAY_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/impl.h"
#include "core/target.h"

namespace amarena {

// The tree's actions in preorder, as descriptors separated by ';'.
std::string EncodeDecisions(const ImplNode& root);

// The word that leaves a subtree to the search.
inline constexpr absl::string_view kFillWord = "*";
using Fill = std::function<absl::StatusOr<ImplPtr>(const Spec&)>;

// The tree `decisions` describes for `root` (bound). InvalidArgument for a
// malformed or mis-sized sequence (or a "*" without `fill`), NotFound for an
// action the rewrites do not offer for its Spec.
absl::StatusOr<ImplPtr> Replay(const Spec& root, absl::string_view decisions,
                               const Target& t, const Fill& fill = nullptr);

}  // namespace amarena

#endif  // AMARENA_SEARCH_REPLAY_H_
