// The affine cost model: a node's cost is a non-negative combination of its
// children's plus a constant, so a cheaper child never makes its parent dearer
// and memoised DP over Specs is exact.
//
//   Loop   : F * (body + loop_iteration) + remainder   (no back-edge when F ==
//   1) Block  : sum of children Alloc  : view: lines * line_into_l1 + body ;
//   register tile: sum of children Kernel : the kernel's own cost
//   (core/kernels.h)
// Peaks: an Alloc adds its tensor's units at its level to the largest child
// peak; a kernel's peak is its scratch registers.
//
//   Cost c = ComposeCost(spec, expansion, child_costs, target);
#ifndef AMARENA_CORE_COST_MODEL_H_
#define AMARENA_CORE_COST_MODEL_H_

#include <span>

#include "core/impl.h"
#include "core/target.h"

namespace amarena {

Cost ComposeCost(const Spec& spec, const Expansion& e,
                 std::span<const Cost> children, const Target& t);

}  // namespace amarena

#endif  // AMARENA_CORE_COST_MODEL_H_
