// Split the reduction dimension k.
// Applies to: MatmulAccum (the accumulation makes the pieces independent of
//   order), with the sizes TileSizes allows.
// Yields: a serial Loop over k whose body is the MatmulAccum on a k-slice (A's
//   columns, B's rows) and, if the size does not divide k, one remainder
//   slice. Budgets as for tiling.
#include "search/rewrites/loop_common.h"
#include "search/rewrites/registry.h"

namespace amarena {

void SplitK(const Spec& s, const Target&, std::vector<Candidate>& out) {
  if (s.kind != Kind::kMatmulAccum) return;
  for (int64_t size : TileSizes(s, Dim::kK))
    out.push_back(MakeLoop(s, ActionKind::kSplit, Dim::kK, size));
}

}  // namespace amarena
