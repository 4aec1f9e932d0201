// A fast, inexact search: the first valid tree found depth-first, trying each
// Spec's candidates in lower-bound order. It is what a request with a search
// deadline gets when the exact search (search/search.h) has not finished in
// time; the exact result replaces it later.
//
//   absl::StatusOr<ImplPtr> quick = SolveGreedy(target.Bind(spec), target);
#ifndef AMARENA_SEARCH_GREEDY_H_
#define AMARENA_SEARCH_GREEDY_H_

#include "absl/status/statusor.h"
#include "core/impl.h"
#include "core/target.h"

namespace amarena {

// `root` must be bound. NoTreeError(root) if no tree fits (as for
// Searcher::Solve).
absl::StatusOr<ImplPtr> SolveGreedy(const Spec& root, const Target& t);

}  // namespace amarena

#endif  // AMARENA_SEARCH_GREEDY_H_
