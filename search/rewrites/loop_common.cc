#include "search/rewrites/loop_common.h"

#include "core/status_macros.h"

namespace amarena {

Spec WithExtent(Spec s, Dim d, int64_t extent) {
  switch (d) {
    case Dim::kM:
      s.m = extent;
      break;
    case Dim::kK:
      s.k = extent;
      break;
    case Dim::kN:
      s.n = extent;
      break;
  }
  return Canonical(s);
}

Candidate MakeLoop(const Spec& s, ActionKind kind, Dim d, int64_t size) {
  int64_t extent = Extent(s, d);
  AMARENA_CHECK(size >= 1 && size < extent);
  Candidate c;
  c.action = Action{.kind = kind, .dim = d, .size = size};
  Expansion& e = c.expansion;
  e.type = NodeType::kLoop;
  e.loop = LoopInfo{.dim = d, .tile = size, .full_iters = extent / size};
  e.children.push_back(WithExtent(s, d, size));
  if (extent % size) e.children.push_back(WithExtent(s, d, extent % size));
  return c;
}

}  // namespace amarena
