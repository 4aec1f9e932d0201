#include "core/spec.h"

#include <bit>

#include "core/status_macros.h"

namespace amarena {

int64_t FloorPow2(int64_t x) {
  if (x <= 0) return 0;
  return int64_t{1} << (63 - std::countl_zero(static_cast<uint64_t>(x)));
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
    }
    if (a.level != Level::kVRF) a.vector_width = 0;
  }
  if (s.budget) s.budget->l1_lines = FloorPow2(s.budget->l1_lines);
  return s;
}

}  // namespace amarena
