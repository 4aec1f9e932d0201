// LowerBound (core/lower_bound.h): the matmul's multiply-adds folded over the
// catalogue's peak rates, the steps between kernel calls along k, C's stores
// and loads, and each operand's lines from its level.
#include "core/lower_bound.h"

#include <algorithm>
#include <vector>

#include "core/cost_model.h"
#include "core/kernels.h"

namespace amarena {
namespace {

// The least a tree of broadcast-form kernels, each covering at most
// `k_per_call` of k, pays to carry its outputs' partial sums from one call to
// the next along k: each element of C meets ceil(k / k_per_call) calls, so
// one step fewer between them. Over a step an element either
// - stays in a register, and the code between the two calls passes the
//   back-edge of a counted loop over k (every k loop that runs more than once
//   is counted: only C is ever in registers, and it has no k axis; the step
//   into a remainder after the loop is paid by its last back-edge) or the
//   remainder of a split that runs its body once (which pays the remainder's
//   code, at least a line at L2's price), each charged once for all that is
//   held: C's registers, or the register file less `least_scratch` (the fewest
//   scratch registers of the kernels that may run, which run beside it);
// - or leaves registers, paying a store and a load for its vector (of at
//   most the target's lanes).
// Zero when k fits one call, and for batched Specs (not counted).
int64_t LeastKStepCost(const Spec& spec, const Target& t, int64_t k_per_call,
                       int least_scratch) {
  if (spec.b != 1 || !spec.budget || spec.aux[2].dtype != DType::kF32) return 0;
  const int64_t steps = (spec.k + k_per_call - 1) / k_per_call - 1;
  if (steps <= 0) return 0;
  const TensorSpec c = spec.Operand(2);
  // The whole register file, not the Spec's budget: the search keeps one
  // bound per Spec whatever its budget (MemoTable's KeyInfo, the bound
  // cache), so the bound must hold under every budget, and more registers
  // only lower it.
  const int64_t held_vectors =
      c.aux.level == Level::kVRF
          ? c.Registers()
          : std::max(1, t.MaxBudget().vrf - least_scratch);
  const int64_t step =
      std::min({t.cost.loop_iteration, t.cost.loop_iteration_stack,
                t.cost.Line(Level::kL2, true)});
  using Wide = __int128;
  const Wide elements = static_cast<Wide>(spec.m) * spec.n * steps;
  const Wide lanes = t.f32_lanes;
  const Wide in_registers = elements * step / (held_vectors * lanes);
  const Wide through_memory =
      elements * (t.LoadPrice() + t.StorePrice()) / lanes;
  return static_cast<int64_t>(std::min(in_registers, through_memory));
}

// The least any tree for the matmul `spec` pays for its multiply-adds,
// folded over the catalogue's peak rates (KernelInfo::peak_rate): a tree's
// leaves are kernels that may run below `spec`, covering its multiply-adds.
// Per form, the widest lanes and k_per_op and the lowest prices of the
// kernels of that form bound each of them.
// - A tree of broadcast-form kernels only pays at least LeastCost at that
//   rate (LeastCost is subadditive, so the tiles together pay at least
//   that). When every one of them also claims loads_rows_and_vectors, their
//   loads bound it too: each kernel costs at least the larger of its ops and
//   its loads, so all of them at least the larger of the two sums.
// - Likewise a tree of dot-form kernels only: LeastCost, which counts a call
//   per output. Each holds only where the other form cannot run: a tree may
//   mix them (broadcast ops on packed columns of B, dot products on the
//   rest) and cost less than either alone.
// - Any tree: each output's k multiply-adds are covered by broadcast-form
//   ops (at best Lr = lanes x k_per_op of them each: a = op price / Lr per
//   multiply-add) or by dot calls (d = op price / Ld per multiply-add, plus
//   per_call once per output that any call computes). A B that is not
//   row-major must be packed, at LeastRepackCost r per element, before the
//   broadcast form reads it as vectors; unpacked, each op reads one of its
//   elements (one multiply-add, at the op price e). Per column of B, with s
//   of its k elements packed, each of the column's outputs pays at least s a
//   + min((k - s) e, (k - s) d + per_call) (s < k), or min(k e, k d +
//   per_call) without them; the column's cost s r + that, over its outputs,
//   is concave in s below k, so it is least at s = 0 or s = k: the column
//   pays at least min(k r + rows k a, rows min(k e, k d + per_call)), where
//   rows is the outputs one column of B feeds. This is what bounds a
//   column-major B (in L1 the broadcast form is one lane wide; outside it,
//   the pack's copy is the price), which the form-only bounds left 1.5-4x
//   loose.
int64_t LeastMatmulCost(const Spec& spec, const Target& t) {
  // The catalogue's matmul kernels, once (only they have a peak rate; the
  // search asks for millions of bounds).
  static const std::vector<const KernelInfo*> kMatmulKernels = [] {
    std::vector<const KernelInfo*> v;
    for (KernelId id : AllKernels())
      if (Info(id).kind == Kind::kMatmulAccum) v.push_back(&Info(id));
    return v;
  }();
  std::optional<PeakRate> rows, dots;
  int64_t k_per_call = 1;   // the most k a broadcast-form call covers
  int least_scratch = -1;   // and the fewest scratch registers one takes
  int64_t load_price = -1;  // and the least price of one's loads
  bool rows_load = true;
  int64_t rows_macs = 1;  // the most multiply-adds one broadcast op covers
  for (const KernelInfo* k : kMatmulKernels) {
    const std::optional<PeakRate> r = k->peak_rate(spec, t);
    if (!r) continue;
    std::optional<PeakRate>& form = r->dot ? dots : rows;
    if (!form) form = *r;
    form->lanes = std::max(form->lanes, r->lanes);
    form->k_per_op = std::max(form->k_per_op, r->k_per_op);
    form->op_price = std::min(form->op_price, r->op_price);
    form->per_call = std::min(form->per_call, r->per_call);
    if (!r->dot) {
      k_per_call = std::max(k_per_call, r->k_per_call);
      if (least_scratch < 0 || k->least_scratch_vregs < least_scratch)
        least_scratch = k->least_scratch_vregs;
      const int64_t price = r->load_price > 0 ? r->load_price : t.LoadPrice();
      if (load_price < 0 || price < load_price) load_price = price;
      rows_load &= r->loads_rows_and_vectors;
      rows_macs = std::max(rows_macs, r->lanes * r->k_per_op);
    }
  }
  if (!rows && !dots) return 0;  // no kernel: no tree to bound
  if (!rows) return LeastCost(*dots, spec);
  // Per column of B, over the common denominator Lr x Ld (in 128 bits: k
  // may be large).
  using Wide = __int128;
  const Wide lr = rows_macs, ld = dots ? dots->lanes : 1, k = spec.k;
  const Wide a = rows->op_price * ld, e = rows->op_price * lr * ld;
  const bool shared_b = spec.b > 1 && spec.batch_stride[1] == 0;
  const Wide columns = static_cast<Wide>(shared_b ? 1 : spec.b) * spec.n;
  const Wide rows_fed = static_cast<Wide>(shared_b ? spec.b : 1) * spec.m;
  Wide unpacked = k * e;
  if (dots)
    unpacked =
        std::min(unpacked, (k * dots->op_price + dots->per_call * ld) * lr);
  const Wide packed = k * LeastRepackCost(spec, t) * lr * ld + rows_fed * k * a;
  const Wide per_column = std::min(packed, rows_fed * unpacked);
  const int64_t any_tree =
      static_cast<int64_t>(columns * per_column / (lr * ld));
  // With both forms a tree may mix them (broadcast ops on packed columns, dot
  // products on the rest), and such a tree may cost less than either form
  // alone: only the bound for any tree holds then.
  if (dots) return any_tree;
  int64_t rows_only = LeastCost(*rows, spec);
  if (rows_load)
    rows_only = std::max(rows_only, LeastLoads(*rows, spec) * load_price);
  return std::max(any_tree, rows_only) +
         LeastKStepCost(spec, t, k_per_call, std::max(least_scratch, 0));
}

}  // namespace

int64_t LowerBound(const Spec& spec, const Target& t) {
  int64_t lb = 0;
  int64_t overlapped = 0;
  if (spec.IsMatmul()) lb = LeastMatmulCost(spec, t);
  // An f32 C outside registers: every element is written to memory by a
  // kernel, and read first when accumulating: a vector store (and load) of at
  // most the target's lanes, or a dot product or scalar FMA that pays a store
  // (and a load) for its one element. Those kernels' costs add to their
  // multiply-adds' (a register tile's store and load are kernels of their
  // own; the dot product and scalar FMA charge theirs on top).
  // Row by row when C is a plain row-major matrix (a row's tail costs a
  // masked store or a store per element: LeastRowStoreCost).
  if (spec.IsMatmul() && spec.aux[2].level != Level::kVRF &&
      spec.aux[2].dtype == DType::kF32) {
    const TensorSpec c = spec.Operand(2);
    const bool accum = spec.kind == Kind::kMatmulAccum;
    int64_t each = 0;
    if (c.layout().row_major() && !c.layout().packed()) {
      const bool unaligned = c.layout().UnalignedRows(c.rows, c.cols, 4);
      each = c.rows * (LeastRowStoreCost(c.cols, t, unaligned) +
                       (accum ? LeastRowLoadCost(c.cols, t, unaligned) : 0));
    } else {
      each = (c.Elements() + t.f32_lanes - 1) / t.f32_lanes *
             (t.StorePrice() + (accum ? t.LoadPrice() : 0));
    }
    const int64_t copies = spec.batch_stride[2] != 0 ? spec.b : 1;
    lb += copies * each;
  }
  // Moves and zeros touch every element of their output, at most a vector at
  // a time: a store each, unless the output is registers (then a load for a
  // move, one unit for a zero).
  if (!spec.IsMatmul()) {
    const TensorSpec out = spec.Operand(spec.OutputIndex());
    const int64_t vectors = (out.Elements() + t.f32_lanes - 1) / t.f32_lanes;
    int64_t each = out.aux.level != Level::kVRF ? t.StorePrice()
                   : spec.kind == Kind::kMove   ? t.LoadPrice()
                                                : 1;
    lb += vectors * each;
  }
  for (int i = 0; i < spec.NumOperands(); ++i) {
    const Level l = spec.aux[i].level;
    if (l == Level::kL1 || l == Level::kVRF) continue;
    TensorSpec op = spec.Operand(i);
    // Kernels read and write L1 and registers only, so every element of the
    // operand is viewed at least once; views of parts of it touch at least
    // its own Lines() in all (each row of each part starts a line), at no
    // less than the dense price (runs, CutRows, only add to it).
    int64_t line = t.cost.Line(l, true);
    // Panels in sections may be read two at a time, sections apart.
    if (l == Level::kGL && op.layout().in_sections())
      line = std::min(line, t.cost.line_gl_far_panels);
    // Each batch element's matrix is viewed by its own tree; a shared one
    // may be viewed once for all of them.
    const int64_t copies =
        spec.IsMatmul() && spec.batch_stride[static_cast<size_t>(i)] != 0
            ? spec.b
            : 1;
    // The output's lines travel both ways, as its views pay them: it reaches
    // L1 only through views (or, a bf16 C, through an f32 buffer whose
    // epilogue copy is itself a Spec with this output, bounded the same way).
    const int64_t ways = i == spec.OutputIndex() ? 2 : 1;
    // Viewed from L2 a k step at a time (ViewTraffic), the parts of an
    // input pay at least its bytes, not its lines; which parts are
    // contiguous along k depends on their own layouts (a one-column tile of
    // a column-major A is row-major), so any input's may be.
    const int64_t lines_paid =
        spec.IsMatmul() && i != spec.OutputIndex() && l == Level::kL2
            ? line * op.Elements() * SizeOf(op.aux.dtype) / kLineBytes
            : op.Lines() * line;
    const int64_t traffic = copies * ways * lines_paid;
    // From L2 the lines may reach L1 through views that overlap the work
    // (OverlapsWork): the tree costs at least each such operand's traffic,
    // not their sum nor the work plus them. Everything else adds: kernels
    // and the views from GL and L3 (into L2 or L1).
    if (OverlapsWork(l, Level::kL1)) {
      overlapped = std::max(overlapped, t.OverlappedL2(traffic));
      continue;
    }
    lb += traffic;
  }
  const int64_t serial = std::max(lb, overlapped);
  // A matmul that is not serial (the root: every Spec below it is serial)
  // may hold a parallel loop. Such a loop costs
  // its rounds of tasks plus parallel_setup, and its rounds at least the
  // tasks' work over the workers; the rest of the tree adds in full. So a
  // tree holding one costs at least this bound over the workers (the bound
  // counts only kernels and views, never a loop's own back-edges or code)
  // plus parallel_setup; a tree without, the bound itself.
  if (spec.IsMatmul() && !spec.serial && t.workers > 1)
    return std::min(serial, serial / t.workers + t.cost.parallel_setup);
  return serial;
}

}  // namespace amarena
