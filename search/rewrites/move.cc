// Move an operand to a faster memory level.
// Applies to: operands of Matmul, MatmulAccum and Zero (Moves are what this
// creates).
//   - GL -> L1, a cache view: same layout; the tile's lines must fit the L1
//   budget.
//     No code; the cost model charges the lines as traffic wherever the view
//     sits.
//   - L1 -> VRF, a register tile, for the output only: v8 when its columns are
//   a whole
//     number of vectors, else v1 (one scalar per register); its registers must
//     fit.
// Yields: an Alloc. A view has one child (the Spec with the operand now in L1)
// whose L1
//   budget is what is left, rounded down to a power of two. A register tile has
//   [Move L1->VRF if the operand is read,] body[, Move VRF->L1 if it is
//   written], all under the VRF budget minus the tile's registers.
#include "core/status_macros.h"
#include "search/rewrites/registry.h"

namespace amarena {
namespace {

Candidate MakeAlloc(const Spec& s, int i, TensorAux to, Budget child_budget,
                    bool view) {
  Spec body = s;
  body.aux[i] = to;
  body.budget = child_budget;
  body = Canonical(body);

  Candidate c;
  c.action = Action{.kind = ActionKind::kMove, .operand = i, .to = body.aux[i]};
  Expansion& e = c.expansion;
  e.type = NodeType::kAlloc;
  e.alloc.operand = i;
  e.alloc.to = body.aux[i];
  e.alloc.view = view;
  if (!view) {
    Access acc = s.OperandAccess(i);
    TensorSpec t = s.Operand(i);
    e.alloc.prologue = acc != Access::kOut;
    e.alloc.epilogue = acc != Access::kIn;
    Spec load = Spec::Move(t.rows, t.cols, s.aux[i], body.aux[i]);
    Spec store = Spec::Move(t.rows, t.cols, body.aux[i], s.aux[i]);
    load.budget = store.budget = child_budget;
    load.serial = store.serial = s.serial;
    if (e.alloc.prologue) e.children.push_back(Canonical(load));
    e.children.push_back(body);
    if (e.alloc.epilogue) e.children.push_back(Canonical(store));
  } else {
    e.children.push_back(body);
  }
  return c;
}

}  // namespace

void MoveOperand(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  if (s.kind == Kind::kMove) return;
  const Budget& budget = *s.budget;
  for (int i = 0; i < s.NumOperands(); ++i) {
    TensorSpec op = s.Operand(i);
    if (op.aux.dtype != DType::kF32) continue;
    if (op.aux.level == Level::kGL) {
      int64_t lines = op.Lines();
      if (lines > budget.l1_lines) continue;
      TensorAux to = op.aux;
      to.level = Level::kL1;
      Budget child = budget;
      child.l1_lines = FloorPow2(budget.l1_lines - lines);
      out.push_back(MakeAlloc(s, i, to, child, /*view=*/true));
    } else if (op.aux.level == Level::kL1 && i == s.OutputIndex()) {
      TensorAux to{
          op.aux.dtype, Level::kVRF, Layout::kRowMajor,
          static_cast<uint8_t>(op.cols % t.f32_lanes == 0 ? t.f32_lanes : 1)};
      TensorSpec reg = op;
      reg.aux = to;
      if (reg.Registers() > budget.vrf) continue;
      Budget child = budget;
      child.vrf -= reg.Registers();
      out.push_back(MakeAlloc(s, i, to, child, /*view=*/false));
    }
  }
}

}  // namespace amarena
