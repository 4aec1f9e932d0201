#include "search/rewrites/registry.h"

namespace amarena {

std::span<const Rewrite> Rewrites() {
  // Enumeration order only breaks ties between equal lower bounds (the sort
  // is stable): cheap leaves first.
  static const Rewrite kRewrites[] = {
      {"select", SelectKernel}, {"to-registers", ToRegisters},
      {"view", ViewOperand},    {"pack", PackOperand},
      {"to-accum", ToAccum},    {"tile", TileOut},
      {"split", SplitK},
  };
  return kRewrites;
}

std::vector<Candidate> EnumerateCandidates(const Spec& s, const Target& t) {
  std::vector<Candidate> out;
  out.reserve(48);
  for (const Rewrite& r : Rewrites()) r.enumerate(s, t, out);
  return out;
}

}  // namespace amarena
