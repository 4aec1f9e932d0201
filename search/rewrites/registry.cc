#include "search/rewrites/registry.h"

namespace amarena {

std::span<const Rewrite> Rewrites() {
  // Cheap leaves first, so a good incumbent exists before the big subtrees are
  // tried.
  static const Rewrite kRewrites[] = {
      {"select", SelectKernel}, {"move", MoveOperand}, {"to-accum", ToAccum},
      {"tile", TileOut},        {"split", SplitK},
  };
  return kRewrites;
}

std::vector<Candidate> EnumerateCandidates(const Spec& s, const Target& t) {
  std::vector<Candidate> out;
  for (const Rewrite& r : Rewrites()) r.enumerate(s, t, out);
  return out;
}

}  // namespace amarena
