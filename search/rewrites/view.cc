// View an operand in a faster cache level.
// Applies to: any memory operand (GL, L3, L2) of any Spec, towards L2 or L1
//   when its lines fit the budget there: L2 only for inputs too big for L1
//   (Target::WorthPlacing; an output tile is read and written once per pass
//   over k, so it goes straight to L1). L3 holds packing buffers only: views
//   into L3 never changed the modelled cost of the trees (1024^3:
//   identical) and doubled the search time.
//   Same layout.
// Yields: an Alloc of kind view with one child, the Spec with the operand now
//   at that level and that level's budget reduced by the lines, rounded down
//   to a power of two. No code: the cost model charges the lines as traffic
//   wherever the view sits, so a view inside a loop pays on every iteration
//   and a view hoisted out of it pays once (that is what blocking buys).
#include "search/rewrites/alloc_common.h"
#include "search/rewrites/registry.h"

namespace amarena {

void ViewOperand(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  for (int i = 0; i < s.NumOperands(); ++i) {
    const TensorAux& from = s.aux[i];
    if (from.level == Level::kVRF || from.level == Level::kL1) continue;
    const int64_t lines = s.Operand(i).Lines();
    for (Level to : kCacheLevels) {
      if (!Faster(to, from.level) || !t.WorthPlacing(to, lines)) continue;
      if (to == Level::kL3) continue;
      if (to != Level::kL1 && i == s.OutputIndex()) continue;
      TensorAux aux = from;
      aux.level = to;
      if (auto c = MakeAlloc(s, i, aux, AllocKind::kView))
        out.push_back(*std::move(c));
    }
  }
}

}  // namespace amarena
