// Tile the output along m or n.
// Applies to: Matmul, MatmulAccum, Zero, Move; tile sizes are powers of two
// below the
//   extent. A tile need not divide the extent. Along n, a tile of a v8 register
//   operand must be a whole number of registers (register tiles are never split
//   inside a register).
// Yields: a serial Loop whose body is the same Spec on one tile (inputs follow:
// A's rows
//   with m, B's columns with n) and, if the size does not divide, one remainder
//   Spec covering the last partial tile. Budgets are unchanged: a loop
//   allocates nothing.
#include "search/rewrites/loop_common.h"
#include "search/rewrites/registry.h"

namespace amarena {

void TileOut(const Spec& s, const Target&, std::vector<Candidate>& out) {
  for (Dim d : {Dim::kM, Dim::kN}) {
    int64_t extent = Extent(s, d);
    for (int64_t size = 1; size < extent; size *= 2) {
      bool ok = true;
      if (d == Dim::kN) {
        for (int i = 0; i < s.NumOperands(); ++i) {
          int vw = s.aux[i].vector_width;
          if (vw > 1 && s.Operand(i).cols > 1 && size % vw != 0) ok = false;
        }
      }
      if (ok) out.push_back(MakeLoop(s, ActionKind::kTile, d, size));
    }
  }
}

}  // namespace amarena
