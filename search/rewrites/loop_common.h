// Shared by tile.cc and split.cc: which tile sizes a loop over one dimension
// may use, and the Loop itself, the last partial tile becoming its own
// remainder sub-Spec.
#ifndef AMARENA_SEARCH_REWRITES_LOOP_COMMON_H_
#define AMARENA_SEARCH_REWRITES_LOOP_COMMON_H_

#include <vector>

#include "search/action.h"

namespace amarena {

// Spec with dimension `d` set to `extent`.
Spec WithExtent(Spec s, Dim d, int64_t extent);

// Tile sizes below the extent of `d`: 2^a, plus 3, 6 and 12 along m (so 6 x 16
// register tiles exist), keeping every register tile whole (a multiple of its
// vector width) and every packed operand's panels whole (a multiple of its
// panel width) and its interleaved row pairs whole (a multiple of 2).
std::vector<int64_t> TileSizes(const Spec& s, Dim d);

// A Loop candidate over `d` in tiles of `size` (< the extent).
Candidate MakeLoop(const Spec& s, ActionKind kind, Dim d, int64_t size);

}  // namespace amarena

#endif  // AMARENA_SEARCH_REWRITES_LOOP_COMMON_H_
