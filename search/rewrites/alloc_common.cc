#include "search/rewrites/alloc_common.h"

#include "core/cost_model.h"

namespace amarena {

std::optional<Candidate> MakeAlloc(const Spec& s, int i, TensorAux to,
                                   AllocKind kind) {
  Spec body = s;
  body.aux[i] = to;
  body = Canonical(body);
  AllocInfo info{.operand = i, .to = body.aux[i], .kind = kind};
  std::optional<Budget> child_budget = AllocChildBudget(s, info);
  if (!child_budget) return std::nullopt;
  body.budget = child_budget;
  body = Canonical(body);

  Candidate c;
  c.action = Action{
      .kind = ActionKind::kMove, .operand = i, .to = info.to, .alloc = kind};
  Expansion& e = c.expansion;
  e.type = NodeType::kAlloc;
  if (kind != AllocKind::kView) {
    Access acc = s.OperandAccess(i);
    TensorSpec t = s.Operand(i);
    info.prologue = acc != Access::kOut;
    info.epilogue = acc != Access::kIn;
    Spec load = Spec::Move(t.rows, t.cols, s.aux[i], info.to);
    Spec store = Spec::Move(t.rows, t.cols, info.to, s.aux[i]);
    load.budget = store.budget = child_budget;
    load.serial = store.serial = s.serial;
    if (info.prologue) e.children.push_back(Canonical(load));
    e.children.push_back(body);
    if (info.epilogue) e.children.push_back(Canonical(store));
  } else {
    e.children.push_back(body);
  }
  e.alloc = info;
  return c;
}

}  // namespace amarena
