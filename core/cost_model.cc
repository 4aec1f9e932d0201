#include "core/cost_model.h"

#include <algorithm>

#include "core/status_macros.h"

namespace amarena {

Cost ComposeCost(const Spec& spec, const Expansion& e,
                 std::span<const Cost> children, const Target& t) {
  AMARENA_CHECK(children.size() == e.children.size());
  Cost c;
  for (const Cost& ch : children) {
    c.peak_vrf = std::max(c.peak_vrf, ch.peak_vrf);
    c.peak_l1 = std::max(c.peak_l1, ch.peak_l1);
    c.depth = std::max(c.depth, ch.depth + 1);
  }
  switch (e.type) {
    case NodeType::kLoop: {
      int64_t per_iter = children[0].main +
                         (e.loop.full_iters > 1 ? t.cost.loop_iteration : 0);
      c.main = e.loop.full_iters * per_iter;
      if (children.size() == 2) c.main += children[1].main;
      break;
    }
    case NodeType::kBlock:
      for (const Cost& ch : children) c.main += ch.main;
      break;
    case NodeType::kAlloc: {
      for (const Cost& ch : children) c.main += ch.main;
      TensorSpec moved = spec.Operand(e.alloc.operand);
      moved.aux = e.alloc.to;
      if (e.alloc.view) {
        c.main += moved.Lines() * t.cost.line_into_l1;
        c.peak_l1 += moved.Lines();
      } else {
        c.peak_vrf += moved.Registers();
      }
      break;
    }
    case NodeType::kKernel:
      c.main = Info(e.kernel).cost(spec, t);
      c.peak_vrf = Info(e.kernel).scratch_vregs(spec, t);
      break;
  }
  return c;
}

}  // namespace amarena
