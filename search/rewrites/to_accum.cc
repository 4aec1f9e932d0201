// to-accum: Matmul -> Zero ; MatmulAccum.
// Applies to: a non-accumulating batch-1 Matmul whose C is f32 (a bf16 C is
//   zeroed in its f32 buffer instead: pack, moves.cc). alpha stays on the
//   accumulating matmul: 0 + alpha * A.B.
// Yields: a Block of two sub-Specs under the same budget: Zero of C, then the
//   accumulating Matmul on the same operands.
// Descriptor: "to-accum", with no parameters.
#include "search/rewrites/registry.h"

namespace amarena {

namespace {

void ToAccum(const Spec& s, const Target&, std::vector<Candidate>& out) {
  // batch: loops.cc
  if (s.kind != Kind::kMatmul || s.b > 1 || s.aux[2].dtype != DType::kF32)
    return;
  Spec zero = Spec::Zero(s.m, s.n, s.aux[2]);
  zero.budget = s.budget;
  zero.serial = s.serial;
  Spec accum = s;
  accum.kind = Kind::kMatmulAccum;
  Candidate c;
  c.action = Action{.kind = ActionKind::kToAccum};
  c.expansion.type = NodeType::kBlock;
  c.expansion.children = {Canonical(zero), Canonical(accum)};
  out.push_back(std::move(c));
}

std::string DescribeToAccum(const Action&) { return "to-accum"; }

absl::StatusOr<Action> ParseToAccum(std::span<const absl::string_view> words) {
  if (words.size() != 1)
    return absl::InvalidArgumentError("'to-accum' takes no parameters");
  return Action{.kind = ActionKind::kToAccum};
}

}  // namespace

extern const Rewrite kToAccumRewrite = {.name = "to-accum",
                                        .keyword = "to-accum",
                                        .enumerate = ToAccum,
                                        .owns = OwnsKind<ActionKind::kToAccum>,
                                        .describe = DescribeToAccum,
                                        .parse = ParseToAccum};

}  // namespace amarena
