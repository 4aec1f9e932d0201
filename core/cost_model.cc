#include "core/cost_model.h"

#include <algorithm>
#include <vector>

#include "core/kernels.h"
#include "core/status_macros.h"

namespace amarena {
namespace {

TensorSpec Moved(const Spec& spec, const AllocInfo& a) {
  TensorSpec t = spec.Operand(a.operand);
  t.aux = a.to;
  return t;
}

// A k step's view of a plain A in L2 is narrower than a line along k, its
// contiguous axis: a broadcast kernel's 6x1 column of A is 6 lines, and the
// next 15 steps read the rest of those lines. The loop along k walks them
// while they stay in L1, so each step is charged its bytes rather than its
// lines: its share of the lines the loop reads once. Only a single step (one
// element along k, or a bf16 pair: at most 4 bytes), and only from L2:
// - a wider piece narrower than a line (4 of k's 100) is a row's tail, whose
//   line the next row's steps do not share;
// - a tile narrow along m or n (a column-major A's 6 rows) is next touched
//   by another iteration of an outer loop, after the k loop has run through
//   L1, and keeps paying whole lines;
// - from L3 or DRAM a step's lines are not overlapped with the work
//   (OverlapsWork) and wait on their latency, step after step.
bool KStepFromL2(const Spec& spec, int i, const TensorSpec& op, Level from) {
  if (!spec.IsMatmul() || i == spec.OutputIndex() || from != Level::kL2)
    return false;
  const Layout& l = op.layout();
  if (l.packed() || l.row_group() != 1) return false;
  if (op.InnerExtent() * SizeOf(op.aux.dtype) > 4) return false;
  return OperandAxis(spec, i, Dim::kK) ==
         (l.row_major() ? Axis::kCols : Axis::kRows);
}

// The traffic of viewing `op` (operand i of `spec`, in `from`) at `line` per
// line, `ways` times: whole lines, or a k step's bytes (above), rounded up.
int64_t ViewTraffic(const Spec& spec, int i, const TensorSpec& op,
                    Level from, int64_t line, int ways) {
  if (!KStepFromL2(spec, i, op, from)) return ways * op.Lines() * line;
  const int64_t bytes = op.Elements() * SizeOf(op.aux.dtype);
  return (ways * line * bytes + kLineBytes - 1) / kLineBytes;
}

// A loop along k over B in DRAM that spans several of B's runs reads them
// side by side, each its own stream, and its lines pay for that on top of
// the dense price its (narrower) views were charged (CostParams):
// - packed B: each panel is a run. Steps shorter than dram_run_bytes per
//   panel over more than dram_streams panels: every line costs the strided
//   price (the prefetchers lose the streams). Otherwise, whether the panels
//   are read a row at a time or in longer pieces in turn: each panel beside
//   another of its own section (all of them, without sections) adds
//   line_gl_adjacent_panels - dense per line, up to the strided price.
// - column-major B: each column is a run (k contiguous); any step shorter
//   than the column cuts it (a dot kernel's longest k is 1024: splitting k
//   outside the loop over columns reads every column in two halves, a
//   column's length apart in time; inside it, one column after another is a
//   single stream), and more than dram_streams columns cost strided.
// A view of more than dram_streams panels is priced strided itself; a tree
// with both pays twice, which only makes a plan that is bad anyway worse.
int64_t SideBySideRuns(const Spec& spec, const LoopInfo& loop,
                       const Target& t) {
  if (!spec.IsMatmul() || loop.dim != Dim::kK) return 0;
  const TensorSpec b = spec.Operand(1);
  if (b.aux.level != Level::kGL) return 0;
  const CostParams& c = t.cost;
  const int64_t strided_extra =
      c.Line(Level::kGL, false) - c.Line(Level::kGL, true);
  if (b.layout().packed()) {
    const bool short_steps =
        b.layout().PanelRunBytes(loop.tile, SizeOf(b.aux.dtype)) <
        c.dram_run_bytes;
    if (short_steps && b.Panels() > c.dram_streams)
      return b.Lines() * strided_extra;
    const int64_t beside = b.layout().PanelsBeside(b.rows, b.cols);
    const int64_t each = c.line_gl_adjacent_panels - c.Line(Level::kGL, true);
    return b.Lines() * std::min(strided_extra, beside * each);
  }
  if (!b.layout().row_major() && loop.tile < spec.k && b.cols > c.dram_streams)
    return b.Lines() * strided_extra;
  return 0;
}

// From DRAM, a plain row-major matrix cut into column strips is read as
// runs: each row's piece of a strip, the next a pitch away, and the next
// piece of that row only when the loop comes back to it (a whole strip
// later). A loop along a GL operand's columns cuts it so when the operand has
// more than Layout::kDenseRows rows (at most that many, the loop continues
// the same few streams, each along its row: what a view of them is priced
// as). Each iteration's tile pays, per line, CostParams::RunLine of its
// row's bytes over the dense price its views were charged. A column-major B
// is left to SideBySideRuns. A leading dimension changes nothing here, as
// nowhere in the model: every tile is priced as a view of a larger matrix
// (its Spec is shared with the dense problem's, core/spec.h WithoutLds).
int64_t CutRows(const Spec& parent, const Spec& child, Dim dim,
                const Target& t) {
  int64_t extra = 0;
  const int64_t dense = t.cost.Line(Level::kGL, true);
  for (int i = 0; i < parent.NumOperands(); ++i) {
    const TensorSpec op = parent.Operand(i);
    const Layout& l = op.layout();
    if (op.aux.level != Level::kGL || l.packed() || !l.row_major()) continue;
    if (OperandAxis(parent, i, dim) != Axis::kCols ||
        op.rows <= Layout::kDenseRows)
      continue;
    const TensorSpec tile = child.Operand(i);
    extra += tile.Lines() * (t.cost.RunLine(tile.RunBytes()) - dense);
  }
  return extra;
}

// Code size. A loop's remainder is code emitted a second time beside its
// body, and chains of them (a 16-row copy split 12 + 4, 12 split 8 + 4, ...)
// unroll a whole tile into straight-line code that a counted loop runs from
// one body. Each remainder is charged its estimated code, as lines fetched
// from L2 on every run: kernels unroll at most kMaxUnrolledStores vectors
// (core/kernels.h) and loop beyond, so the estimate is capped there:
//   vectors of the output, at most kMaxUnrolledStores, times the
//   instructions per vector (move: load + store; zero: store; matmul: load,
//   FMA, store of the accumulator), times kBytesPerInstruction, in 64-byte
//   lines, each at the dense L2 line price.
// The estimate depends on the remainder's Spec only (not on the tree chosen
// for it), so a loop's cost stays its children's costs plus a constant: the
// DP stays exact. Loops that move a register tile are not charged: they are
// unrolled by necessity (registers are bound statically) and their copies
// are the microkernel itself; parallel loops are not either (their
// remainder is one task, run once).
// A VEX/EVEX vector instruction with a base+disp32 address: 5 to 9 bytes, 6
// in the listings of this generator's kernels.
constexpr int64_t kBytesPerInstruction = 6;

int64_t RemainderCodeCost(const Spec& rem, const Target& t) {
  const TensorSpec out = rem.Operand(rem.OutputIndex());
  const int64_t vectors = std::min<int64_t>(
      kMaxUnrolledStores, (out.Elements() + t.f32_lanes - 1) / t.f32_lanes);
  const int64_t per_vector = rem.IsMatmul()            ? 3
                             : rem.kind == Kind::kMove ? 2
                                                       : 1;
  const int64_t lines = (vectors * per_vector * kBytesPerInstruction + 63) / 64;
  return lines * t.cost.Line(Level::kL2, true);
}

bool MovesRegisters(const Spec& spec, const LoopInfo& loop) {
  for (int i = 0; i < spec.NumOperands(); ++i)
    if (OperandAxis(spec, i, loop.dim) != Axis::kNone &&
        spec.aux[i].level == Level::kVRF)
      return true;
  return false;
}

}  // namespace

int64_t RemainderCode(const Spec& spec, const Expansion& e, const Target& t) {
  if (e.type != NodeType::kLoop || e.children.size() != 2 || e.loop.parallel ||
      MovesRegisters(spec, e.loop))
    return 0;
  return RemainderCodeCost(e.children[1], t);
}

std::optional<Budget> AllocChildBudget(const Spec& spec, const AllocInfo& a) {
  AMARENA_CHECK(spec.budget.has_value());
  Budget b = *spec.budget;
  TensorSpec t = Moved(spec, a);
  if (a.kind == AllocKind::kRegisters) {
    if (t.Registers() > b.vrf) return std::nullopt;
    b.vrf -= t.Registers();
    return b;
  }
  AMARENA_CHECK(IsCache(a.to.level));
  int64_t& lines = b.Lines(a.to.level);
  if (t.Lines() > lines) return std::nullopt;
  lines = FloorBudgetLines(lines - t.Lines());
  if (a.kind == AllocKind::kBuffer) {
    if (b.gpr < 1) return std::nullopt;
    b.gpr -= 1;
  }
  return b;
}

Budget LoopChildBudget(const Budget& b, const LoopInfo& loop, int i) {
  Budget c = b;
  if (i == 0 && loop.counter_in_reg) c.gpr -= 1;
  return c;
}

Cost ComposeCost(const Spec& spec, const Expansion& e,
                 std::span<const Cost> children, const Target& t) {
  AMARENA_CHECK(children.size() == e.children.size());
  Cost c;
  for (const Cost& ch : children) {
    c.peak = Budget::Max(c.peak, ch.peak);
    c.depth = std::max(c.depth, ch.depth + 1);
  }
  switch (e.type) {
    case NodeType::kLoop: {
      const LoopInfo& loop = e.loop;
      // Each iteration as its child costs it, and the runs it reads.
      int64_t body[2] = {0, 0};
      for (size_t i = 0; i < children.size(); ++i)
        body[i] = children[i].main + CutRows(spec, e.children[i], loop.dim, t);
      if (loop.parallel) {
        // Full tiles spread over the workers, the remainder tile alongside.
        int64_t tasks = loop.full_iters + (children.size() == 2 ? 1 : 0);
        int64_t rounds = (tasks + t.workers - 1) / t.workers;
        int64_t slowest = std::max(body[0], body[1]);
        c.main = rounds * slowest + t.cost.parallel_setup;
        break;
      }
      int64_t back_edge = loop.unrolled         ? 0
                          : loop.counter_in_reg ? t.cost.loop_iteration
                                                : t.cost.loop_iteration_stack;
      c.main = loop.full_iters * (body[0] + back_edge) + body[1];
      c.main += SideBySideRuns(spec, loop, t);
      c.main += RemainderCode(spec, e, t);
      if (loop.counter_in_reg) {
        c.peak.gpr = children[0].peak.gpr + 1;
        if (children.size() == 2)
          c.peak.gpr = std::max(c.peak.gpr, children[1].peak.gpr);
      }
      break;
    }
    case NodeType::kBlock:
      for (const Cost& ch : children) c.main += ch.main;
      break;
    case NodeType::kAlloc: {
      for (const Cost& ch : children) c.main += ch.main;
      TensorSpec moved = Moved(spec, e.alloc);
      if (e.alloc.kind == AllocKind::kRegisters) {
        c.peak.vrf += moved.Registers();
        break;
      }
      const Level to = e.alloc.to.level;
      c.peak.Lines(to) = CeilBudgetLines(moved.Lines() + c.peak.Lines(to));
      if (e.alloc.kind == AllocKind::kBuffer) {
        c.peak.gpr += 1;
      } else {
        const Level from = spec.aux[e.alloc.operand].level;
        bool dense = moved.Dense();
        // However its inner loops then walk it, a view of more than
        // dram_streams panels is read side by side (below).
        if (from == Level::kGL && moved.Panels() > t.cost.dram_streams)
          dense = false;
        int64_t line = t.cost.Line(from, dense);
        // Two panels sections apart (adjacent ones pay in their loop along
        // k, SideBySideRuns).
        if (from == Level::kGL && dense && moved.Panels() >= 2 &&
            !moved.AdjacentPanels())
          line = t.cost.line_gl_far_panels;
        // An output's lines travel both ways: read (an accumulating matmul
        // adds to them; a zero or a first k block writes whole lines, which
        // the cache still fetches) and written back.
        const int ways = e.alloc.operand == spec.OutputIndex() ? 2 : 1;
        const int64_t traffic =
            ViewTraffic(spec, e.alloc.operand, moved, from, line, ways);
        if (OverlapsWork(from, to)) {
          c.main = std::max(c.main, t.OverlappedL2(traffic));
        } else {
          c.main += traffic;
        }
      }
      break;
    }
    case NodeType::kKernel:
      c.main = Info(e.kernel).cost(spec, t);
      c.peak.vrf = Info(e.kernel).scratch_vregs(spec, t);
      break;
  }
  return c;
}

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
//   held: C's registers, or the VRF budget less `least_scratch` (the fewest
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
  const int64_t held_vectors =
      c.aux.level == Level::kVRF
          ? c.Registers()
          : std::max(1, spec.budget->vrf - least_scratch);
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
