// Split the reduction dimension k.
// Applies to: MatmulAccum (the accumulation makes the pieces independent of
// order);
//   sizes are powers of two below k.
// Yields: a serial Loop over k whose body is the MatmulAccum on a k-slice (A's
// columns,
//   B's rows) and, if the size does not divide k, one remainder slice. Budgets
//   unchanged.
#include "search/rewrites/loop_common.h"
#include "search/rewrites/registry.h"

namespace amarena {

void SplitK(const Spec& s, const Target&, std::vector<Candidate>& out) {
  if (s.kind != Kind::kMatmulAccum) return;
  for (int64_t size = 1; size < s.k; size *= 2)
    out.push_back(MakeLoop(s, ActionKind::kSplit, Dim::kK, size));
}

}  // namespace amarena
