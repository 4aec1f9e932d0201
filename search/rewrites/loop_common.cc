#include "search/rewrites/loop_common.h"

#include "core/cost_model.h"
#include "core/status_macros.h"

namespace amarena {

namespace {

void SetExtent(Spec& s, Dim d, int64_t extent) {
  switch (d) {
    case Dim::kM:
      s.m = extent;
      break;
    case Dim::kK:
      s.k = extent;
      break;
    case Dim::kN:
      s.n = extent;
      break;
  }
}

}  // namespace

Spec WithExtent(Spec s, Dim d, int64_t extent) {
  SetExtent(s, d, extent);
  return Canonical(s);
}

std::vector<int64_t> TileSizes(const Spec& s, Dim d) {
  const int64_t extent = Extent(s, d);
  // Each operand that moves along `d` may demand tiles be multiples of some
  // width: a register tile's lanes along its columns, what its layout needs
  // in memory (Layout::TileMultiple: panels, groups of them, row pairs).
  int64_t multiple = 1;
  for (int i = 0; i < s.NumOperands(); ++i) {
    Axis axis = OperandAxis(s, i, d);
    if (axis == Axis::kNone) continue;
    TensorSpec t = s.Operand(i);
    int64_t w = 1;
    if (t.aux.level == Level::kVRF && axis == Axis::kCols && t.cols > 1) {
      w = t.aux.vector_width;
    } else {
      w = t.layout().TileMultiple(axis, extent);
    }
    if (w > 1) {
      if (multiple % w != 0 && w % multiple != 0) return {};
      multiple = std::max(multiple, w);
    }
  }
  // 3 * 2^a only where it makes register tiles: 3, 6 and 12 rows along m.
  const int64_t max_three = d == Dim::kM ? 12 : 0;
  std::vector<int64_t> sizes;
  for (int64_t p = 1; p < extent; p *= 2) {
    for (int64_t size : {p, 3 * p}) {
      if (size >= extent || size % multiple != 0) continue;
      if (size != p && size > max_three) continue;
      sizes.push_back(size);
    }
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  // A tile over half the extent runs once and leaves a remainder: a split in
  // two. Only the largest such tile is offered (biggest piece + the rest).
  while (sizes.size() >= 2 && 2 * sizes[sizes.size() - 2] > extent)
    sizes.erase(sizes.end() - 2);
  return sizes;
}

Candidate MakeLoop(const Spec& s, ActionKind kind, Dim d, int64_t size) {
  int64_t extent = Extent(s, d);
  AMARENA_CHECK(size >= 1 && size < extent);
  Candidate c;
  c.action = Action{.kind = kind, .dim = d, .size = size};
  Expansion& e = c.expansion;
  e.type = NodeType::kLoop;
  LoopInfo& loop = e.loop;
  loop = LoopInfo{.dim = d, .tile = size, .full_iters = extent / size};
  bool moves_registers = false;
  for (int i = 0; i < s.NumOperands(); ++i)
    moves_registers |=
        OperandAxis(s, i, d) != Axis::kNone && s.aux[i].level == Level::kVRF;
  Spec body = s;
  SetExtent(body, d, size);
  if (kind == ActionKind::kParallelTile) {
    // Run by the pool: no counter, and nothing below may be parallel again.
    loop.parallel = true;
    body.serial = true;
  } else {
    loop.unrolled = moves_registers || loop.full_iters == 1;
    loop.counter_in_reg = !loop.unrolled && s.budget->gpr >= 1;
  }
  body.budget = LoopChildBudget(*s.budget, loop, 0);
  e.children.push_back(Canonical(body));
  if (extent % size) {
    Spec rem = s;
    SetExtent(rem, d, extent % size);
    rem.serial = body.serial;
    e.children.push_back(Canonical(rem));
  }
  return c;
}

}  // namespace amarena
