#include "core/spec.h"

#include <algorithm>
#include <bit>

#include "core/status_macros.h"

namespace amarena {

int64_t FloorPow2(int64_t x) {
  if (x <= 0) return 0;
  return int64_t{1} << (63 - std::countl_zero(static_cast<uint64_t>(x)));
}

int64_t CeilPow2(int64_t x) {
  if (x <= 0) return 0;
  int64_t f = FloorPow2(x);
  return f == x ? f : 2 * f;
}

int64_t Budget::Lines(Level l) const {
  return const_cast<Budget*>(this)->Lines(l);
}

int64_t& Budget::Lines(Level l) {
  switch (l) {
    case Level::kL1:
      return l1_lines;
    case Level::kL2:
      return l2_lines;
    case Level::kL3:
      return l3_lines;
    default:
      AMARENA_CHECK(false && "Budget::Lines of a level without lines");
  }
  return l1_lines;
}

bool Budget::FitsIn(const Budget& b) const {
  return vrf <= b.vrf && gpr <= b.gpr && l1_lines <= b.l1_lines &&
         l2_lines <= b.l2_lines && l3_lines <= b.l3_lines;
}

Budget Budget::Max(const Budget& a, const Budget& b) {
  return Budget{std::max(a.vrf, b.vrf), std::max(a.gpr, b.gpr),
                std::max(a.l1_lines, b.l1_lines),
                std::max(a.l2_lines, b.l2_lines),
                std::max(a.l3_lines, b.l3_lines)};
}

Spec Spec::Matmul(int64_t m, int64_t k, int64_t n, TensorAux a, TensorAux b,
                  TensorAux c, bool accum) {
  Spec s;
  s.kind = accum ? Kind::kMatmulAccum : Kind::kMatmul;
  s.m = m;
  s.k = k;
  s.n = n;
  s.aux = {a, b, c};
  return Canonical(s);
}

Spec Spec::Zero(int64_t m, int64_t n, TensorAux out) {
  Spec s;
  s.kind = Kind::kZero;
  s.m = m;
  s.n = n;
  s.aux = {out, TensorAux{}, TensorAux{}};
  return Canonical(s);
}

Spec Spec::Move(int64_t m, int64_t n, TensorAux src, TensorAux dst) {
  Spec s;
  s.kind = Kind::kMove;
  s.m = m;
  s.n = n;
  s.aux = {src, dst, TensorAux{}};
  return Canonical(s);
}

int Spec::NumOperands() const {
  switch (kind) {
    case Kind::kMatmul:
    case Kind::kMatmulAccum:
      return 3;
    case Kind::kZero:
      return 1;
    case Kind::kMove:
      return 2;
  }
  return 0;
}

TensorSpec Spec::Operand(int i) const {
  AMARENA_CHECK(i >= 0 && i < NumOperands());
  TensorSpec t;
  t.aux = aux[i];
  if (IsMatmul()) {
    t.rows = i == 1 ? k : m;
    t.cols = i == 0 ? k : n;
  } else {
    t.rows = m;
    t.cols = n;
  }
  return t;
}

Access Spec::OperandAccess(int i) const {
  if (i != OutputIndex()) return Access::kIn;
  return kind == Kind::kMatmulAccum ? Access::kInOut : Access::kOut;
}

int Spec::OutputIndex() const {
  switch (kind) {
    case Kind::kMatmul:
    case Kind::kMatmulAccum:
      return 2;
    case Kind::kZero:
      return 0;
    case Kind::kMove:
      return 1;
  }
  return 0;
}

Spec Canonical(Spec s) {
  if (!s.IsMatmul()) s.k = 1;
  for (int i = 0; i < 3; ++i) {
    if (i >= s.NumOperands()) {
      s.aux[i] = TensorAux{};
      continue;
    }
    TensorSpec t = s.Operand(i);
    TensorAux& a = s.aux[i];
    if ((t.rows == 1 && t.cols == 1) || a.level == Level::kVRF) {
      a.layout = Layout::kRowMajor;
      a.pack = 0;
    }
    if (a.pack != 0 && t.OuterExtent() == 1 && t.InnerExtent() <= a.pack)
      a.pack = 0;
    if (a.level != Level::kVRF) a.vector_width = 0;
  }
  if (s.budget) {
    // A cache level's budget can only be spent by moving an operand that is
    // farther out into it; when none is, every budget there is the same
    // problem.
    Level slowest = Level::kVRF;
    for (int i = 0; i < s.NumOperands(); ++i)
      if (Faster(slowest, s.aux[i].level)) slowest = s.aux[i].level;
    for (Level l : kCacheLevels) {
      int64_t& lines = s.budget->Lines(l);
      lines = Faster(l, slowest) ? FloorPow2(lines) : 0;
    }
  }
  return s;
}

}  // namespace amarena
