// The one notation for Specs, used by the CLI, the API, logs, tests and cache
// keys.
//
//   matmul 256x256x256 f32                       C[256,256] = A . B
//   matmul 1x2048x16384 bf16*bf16->f32 b=col
//   matmul 4x1x16 f32 accum a=l1 b=l1 c=vrf,v8 serial
//       budget=vrf:3,gpr:4,l1:512,l2:16384,l3:524288
//   matmul 6x256x16 f32 accum a=l1 b=l2,p16 c=vrf,v8
//   matmul 64x64x64 bf16*bf16->bf16 alpha=0.5    C = 0.5 A . B, rounded to bf16
//   zero 4x16 f32 out=vrf,v8
//   move 256x64 f32 src=l1 dst=l2,p16
//   matmul 8x64x64x64 f32 sb=0                   C[q] = A[q] . B, q < 8
//
// Grammar (tokens separated by spaces):
//   spec    := op dims dtypes option*
//   op      := matmul | zero | move
//   dims    := MxKxN | BxMxKxN (matmul) ; MxN (zero, move)
//   dtypes  := T | T*T->T (matmul) ; T (zero, move) ;  T := f32 | bf16
//   option  := accum | serial | NAME=prop(,prop)*
//            | budget=vrf:R,gpr:G,l1:L,l2:L,l3:L
//            | ldNAME=E                   (elements between outer rows)
//            | sa=E | sb=E | sc=E         (batched matmul: elements between
//                                          batch elements' matrices; default
//                                          dense, one after another; sb=0:
//                                          one B shared by the whole batch;
//                                          C's must not overlap)
//            | alpha=X                    (matmul: C = X * A.B; a finite float)
//   NAME    := a | b | c (matmul) ; out (zero) ; src | dst (move)
//   prop    := gl | l3 | l2 | l1 | vrf    (level)
//            | row | col                  (layout)
//            | pP                         (packed in panels of P, memory only)
//            | pPx2                       (panels of k-pairs: rows 2i and 2i+1
//                                          interleaved, as vdpbf16ps reads)
//            | pPsS, pPx2sS               (panels dealt round S sections,
//                                          core/tensor_spec.h)
//            | vW                         (lanes per register, vrf only)
// Defaults (printed by omission): operands in GL, row-major; parallel allowed;
// no budget (the target's whole budget); alpha=1. alpha prints as the
// shortest text that reads back as the same float. PrintSpec(ParseSpec(t)) is
// canonical and ParseSpec(PrintSpec(s)) == s for every Spec.
#ifndef AMARENA_CORE_SPEC_TEXT_H_
#define AMARENA_CORE_SPEC_TEXT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/spec.h"

namespace amarena {

// Largest operand the JIT addresses with 32-bit displacements.
inline constexpr int64_t kMaxOperandBytes = (int64_t{1} << 31) - 1;
// A packed layout's name: "p32", "p32x2", "p32s2", "p128x2s2"; "" when plain
// (Layout::PanelText).
std::string PackName(const TensorAux& a);

std::string PrintSpec(const Spec& s);

// The notation's words: "matmul", "zero" or "move"; the operands' names in
// order ({"a", "b", "c"}, {"out"}, {"src", "dst"}), as options use them
// (`b=col`, `lda=`, `sb=`).
absl::string_view OpName(Kind k);
std::vector<absl::string_view> OperandNames(Kind k);

// Parses and validates. Errors are InvalidArgument with one line:
//   cannot parse spec '<text>': <what> is <value>, must be <constraint>
absl::StatusOr<Spec> ParseSpec(absl::string_view text);

// What a user asks a runtime for: a Spec, or a matmul whose B layout is left
// to amarena with the option `b=any` (weights laid out once, ahead of the
// calls, in whatever layout makes the fastest kernel, as oneDNN's
// format_tag::any): `spec` then has B plain row-major in GL and `b_any` is
// set (search/weight_layout.h chooses). With b=any, `m=LO..HI` asks for one
// layout that serves every M in the range (decode and prefill sharing one
// packed copy); the Spec's own M must lie in it.
struct SpecRequest {
  Spec spec;
  bool b_any = false;
  int64_t m_lo = 0, m_hi = 0;  // 0: the Spec's M alone
};
absl::StatusOr<SpecRequest> ParseRequest(absl::string_view text);

}  // namespace amarena

#endif  // AMARENA_CORE_SPEC_TEXT_H_
