#include "search/action.h"

namespace amarena {

Action ActionOf(const Step& e) {
  Action a;
  switch (e.type) {
    case NodeType::kLoop:
      a.kind = e.loop.parallel         ? ActionKind::kParallelTile
               : e.loop.dim == Dim::kK ? ActionKind::kSplit
                                       : ActionKind::kTile;
      a.dim = e.loop.dim;
      a.size = e.loop.tile;
      break;
    case NodeType::kBlock:
      a.kind = ActionKind::kToAccum;
      break;
    case NodeType::kAlloc:
      a.kind = ActionKind::kMove;
      a.operand = e.alloc.operand;
      // A descriptor says where and how an operand moves, not its set
      // spread nor its rows' alignment (the Spec it applies to knows the
      // pitch).
      a.to = e.alloc.to;
      a.to.layout = a.to.layout.WithoutTileFacts();
      a.alloc = e.alloc.kind;
      break;
    case NodeType::kKernel:
      a.kind = ActionKind::kSelect;
      a.kernel = e.kernel;
      break;
  }
  return a;
}

}  // namespace amarena
