// Tile the output along m or n.
// Applies to: Matmul, MatmulAccum, Zero, Move, with the sizes TileSizes allows
//   (2^a and 3 * 2^a below the extent; register tiles and packed panels kept
//   whole). A tile need not divide the extent.
// Yields: a serial Loop whose body is the same Spec on one tile (inputs follow:
//   A's rows with m, B's columns with n) and, if the size does not divide, one
//   remainder Spec covering the last partial tile. A loop allocates nothing;
//   a counted loop's body loses the GPR that holds its counter.
//   With more than one worker, also a parallel loop at the root (every operand
//   in GL, not serial): its tiles run as pool tasks and are marked serial.
#include "search/rewrites/loop_common.h"
#include "search/rewrites/registry.h"

namespace amarena {

void TileOut(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  for (Dim d : {Dim::kM, Dim::kN})
    for (int64_t size : TileSizes(s, d))
      out.push_back(MakeLoop(s, ActionKind::kTile, d, size));
  // Parallel: once per tree (the tiles are serial), at the root (every
  // operand in GL, so each task is a whole kernel over its tile), with at
  // least as many tiles as workers.
  if (s.serial || t.workers < 2 || !s.IsMatmul()) return;
  for (int i = 0; i < s.NumOperands(); ++i)
    if (s.aux[i].level != Level::kGL) return;
  for (Dim d : {Dim::kM, Dim::kN})
    for (int64_t size : TileSizes(s, d))
      if (Extent(s, d) / size >= t.workers)
        out.push_back(MakeLoop(s, ActionKind::kParallelTile, d, size));
}

}  // namespace amarena
