// Tile the output along m or n.
// Applies to: Matmul, MatmulAccum, Zero, Move, with the sizes TileSizes allows
//   (2^a and 3 * 2^a below the extent; register tiles and packed panels kept
//   whole). A tile need not divide the extent.
// Yields: a serial Loop whose body is the same Spec on one tile (inputs follow:
//   A's rows with m, B's columns with n) and, if the size does not divide, one
//   remainder Spec covering the last partial tile. A loop allocates nothing;
//   a counted loop's body loses the GPR that holds its counter.
#include "search/rewrites/loop_common.h"
#include "search/rewrites/registry.h"

namespace amarena {

void TileOut(const Spec& s, const Target&, std::vector<Candidate>& out) {
  for (Dim d : {Dim::kM, Dim::kN})
    for (int64_t size : TileSizes(s, d))
      out.push_back(MakeLoop(s, ActionKind::kTile, d, size));
}

}  // namespace amarena
