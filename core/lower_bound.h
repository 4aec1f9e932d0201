// The search's admissible lower bound on a Spec's cost (core/lower_bound.cc):
// what every tree implementing the Spec pays at least under the cost model
// (core/cost_model.h), so pruning with it keeps the search exact.
#ifndef AMARENA_CORE_LOWER_BOUND_H_
#define AMARENA_CORE_LOWER_BOUND_H_

#include <cstdint>

#include "core/spec.h"
#include "core/target.h"

namespace amarena {

// A lower bound on the cost of every tree implementing `spec` (admissible, so
// pruning with it keeps the search exact): the FMAs, one per (masked) vector
// of the target's width per output row and k (where dot products may run, one
// per vector of multiply-adds in all); for
// moves and zeros, one store (or register load) per vector of output; plus
// each operand's elements brought in once from its level at the dense price.
// Every element must reach L1 through some view out of its level, and a view
// charges at least the dense price per line for at least elements * size / 64
// lines. An operand in L2 may reach L1 under views that overlap the work
// (OverlapsWork), so its lines are not added: the bound is the larger of the
// sum of the rest and each L2 operand's lines.
int64_t LowerBound(const Spec& spec, const Target& t);

}  // namespace amarena

#endif  // AMARENA_CORE_LOWER_BOUND_H_
