// Shared by tile.cc and split.cc: build a Loop over one dimension of a Spec
// with power-of-two tiles, the last partial tile becoming its own remainder
// sub-Spec.
#ifndef AMARENA_SEARCH_REWRITES_LOOP_COMMON_H_
#define AMARENA_SEARCH_REWRITES_LOOP_COMMON_H_

#include "search/action.h"

namespace amarena {

// Spec with dimension `d` set to `extent`.
Spec WithExtent(Spec s, Dim d, int64_t extent);

// A Loop candidate over `d` in tiles of `size` (< the extent).
Candidate MakeLoop(const Spec& s, ActionKind kind, Dim d, int64_t size);

}  // namespace amarena

#endif  // AMARENA_SEARCH_REWRITES_LOOP_COMMON_H_
