// Hold the output tile in vector registers.
// Applies to: the output of Matmul, MatmulAccum or Zero when it is in L1: in
//   the widest vectors that divide its columns (v16 zmm with AVX-512, v8 ymm,
//   else v1, one scalar per register), and, when that is not the target's
//   full width, also in full-width vectors whose last one per row is partial
//   (read and written under a mask). Its registers must fit the VRF budget.
// Yields: an Alloc of kind registers: [Move L1 -> VRF if the operand is read,]
//   body[, Move VRF -> L1 if it is written], all under the VRF budget minus
//   the tile's registers.
#include "search/rewrites/alloc_common.h"
#include "search/rewrites/registry.h"

namespace amarena {

void ToRegisters(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  if (s.kind == Kind::kMove) return;
  const int i = s.OutputIndex();
  TensorSpec op = s.Operand(i);
  if (op.aux.level != Level::kL1 || op.aux.dtype != DType::kF32) return;
  const int exact = op.cols % t.f32_lanes == 0 ? t.f32_lanes
                    : op.cols % 8 == 0         ? 8
                                               : 1;
  auto offer = [&](int vw) {
    TensorAux to{op.aux.dtype, Level::kVRF, Order::kRowMajor,
                 static_cast<uint8_t>(vw)};
    if (auto c = MakeAlloc(s, i, to, AllocKind::kRegisters))
      out.push_back(*std::move(c));
  };
  offer(exact);
  if (exact != t.f32_lanes) offer(t.f32_lanes);
}

}  // namespace amarena
