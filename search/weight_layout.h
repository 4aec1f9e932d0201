// Weights laid out once: for a matmul whose B the caller packs ahead of many
// calls (an inference engine's weights; oneDNN's format_tag::any), the
// layout of B with the cheapest kernel. `b=any` in Spec text asks for it
// (core/spec_text.h, ParseRequest); the kernel's Spec then names the layout,
// and core/reference.h's Relayout lays B out in it.
//
//   absl::StatusOr<WeightLayoutChoice> c = ChooseWeightLayout(
//       spec, target, [&](const Spec& s) { return CostOf(s); });
//   c->spec  // e.g. matmul 1x2048x16384 bf16*bf16->f32 b=p64x2
#ifndef AMARENA_SEARCH_WEIGHT_LAYOUT_H_
#define AMARENA_SEARCH_WEIGHT_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "core/spec.h"
#include "core/target.h"

namespace amarena {

// The layouts tried, in order of preference on equal cost: B as given
// (row-major), column-major, row panels of 16, 32, 64 and 128 columns (those
// no wider than N rounded up to 16), and the same panels of k-pairs for a
// bf16 B beside an f32 A (widen_pairs) or beside a bf16 A on a target with
// vdpbf16ps; each packed layout also in two
// sections where a section holds at least kMinSectionBytes; each in
// canonical form and once (a B of one column is row- and column-major
// alike). `spec` is a matmul with B plain row-major in GL.
//
// Two panels read side by side stream from DRAM faster the farther apart
// they lie, up to a few MiB (bench/bf16_benchmark, BM_StreamDistance: 78 %
// of the DRAM rate 128 KiB apart, 93 % 2 MiB apart, 95 % 32 MiB apart), and
// the cost model prices panels in sections as far apart: so sections are
// offered only where they are.
inline constexpr int64_t kMinSectionBytes = int64_t{2} << 20;
std::vector<Spec> WeightLayoutCandidates(const Spec& spec, const Target& t);

// B's layout as Spec text writes it: "row", "col", "p32", "p32x2", "p32s2".
std::string WeightLayoutName(const TensorAux& b);

struct WeightLayoutChoice {
  Spec spec;     // the cheapest candidate
  int64_t cost;  // its cost
  // Every candidate with its cost, in WeightLayoutCandidates' order; those
  // no tree implements (or whose cost failed) are left out.
  std::vector<std::pair<Spec, int64_t>> tried;
};

// `cost_of` returns the best cost of a candidate (a search, a database
// lookup, a kernel's cost); Unimplemented means no tree implements it (or the
// target cannot read that layout), any other error stops the choice.
// Unimplemented if no candidate has a tree. Ties go to the earlier candidate.
absl::StatusOr<WeightLayoutChoice> ChooseWeightLayout(
    const Spec& spec, const Target& t,
    absl::FunctionRef<absl::StatusOr<int64_t>(const Spec&)> cost_of);

// One packed copy for a range of M (decode and prefill share the weights):
// each candidate is costed at M = m_lo, m_hi and the powers of two between,
// and the choice is the candidate whose worst ratio to the best layout at
// the same M is lowest (ties to the earlier candidate). A candidate without
// a tree at some M is no choice. The result's spec, cost and tried are at
// `spec`'s own M, which must lie in [m_lo, m_hi]; `regret` is the chosen
// worst ratio (1.0: best at every M sampled).
struct WeightLayoutRangeChoice {
  WeightLayoutChoice at_m;
  double regret = 1.0;
  std::vector<int64_t> ms;  // the M values costed
};
absl::StatusOr<WeightLayoutRangeChoice> ChooseWeightLayoutOverM(
    const Spec& spec, const Target& t, int64_t m_lo, int64_t m_hi,
    absl::FunctionRef<absl::StatusOr<int64_t>(const Spec&)> cost_of);

}  // namespace amarena

#endif  // AMARENA_SEARCH_WEIGHT_LAYOUT_H_
