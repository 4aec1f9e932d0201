#include "core/cost_model.h"

#include <algorithm>

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
// more than Layout::kDenseRows rows: each iteration's tile pays, per line,
// CostParams::RunLine of its row's bytes over the dense price its views were
// charged. With 2 to kDenseRows rows the loop continues the same few
// streams, each along its row, a piece of each in turn: a band, whose tile
// pays CostParams::BandLine of its row's bytes over dense instead where the
// root's operands stream from DRAM (Target::dram_operands). A
// column-major B is left to SideBySideRuns. A leading dimension changes
// nothing here, as nowhere in the model: every tile is priced as a view of a
// larger matrix (its Spec is shared with the dense problem's, core/spec.h
// WithoutLds).
// Whether `op` (in GL) is a band from DRAM: a few plain rows (2 to
// Layout::kDenseRows) of a root whose operands stream from DRAM.
bool DramBand(const TensorSpec& op, const Target& t) {
  const Layout& l = op.layout();
  return t.dram_operands && !l.packed() && l.row_major() && op.rows >= 2 &&
         op.rows <= Layout::kDenseRows;
}

// With `together`, the loop's tiles are read at the same time (a parallel
// loop's tasks in one round): the workers stream a cut operand's rows side
// by side, their pieces adjacent, so the rows are runs as long as the
// operand's own. On the Zen 4 guest, two threads, 1x4096x4096 f32 split in
// two column halves ran 0.64-0.84x the time of the serial pick, which read
// each 16 KiB row whole; priced as 8 KiB runs, the halves cost it more.
int64_t CutRows(const Spec& parent, const Spec& child, Dim dim,
                const Target& t, bool together) {
  int64_t extra = 0;
  const int64_t dense = t.cost.Line(Level::kGL, true);
  for (int i = 0; i < parent.NumOperands(); ++i) {
    const TensorSpec op = parent.Operand(i);
    const Layout& l = op.layout();
    if (op.aux.level != Level::kGL || l.packed() || !l.row_major()) continue;
    if (OperandAxis(parent, i, dim) != Axis::kCols) continue;
    const TensorSpec tile = child.Operand(i);
    const int64_t run = together ? op.RunBytes() : tile.RunBytes();
    const int64_t line = op.rows > Layout::kDenseRows ? t.cost.RunLine(run)
                         : DramBand(op, t)            ? t.cost.BandLine(run)
                                                      : dense;
    extra += tile.Lines() * (line - dense);
  }
  return extra;
}

// A and C tiles whose rows all start on one L1 set (pitches that are
// multiples of 4 KiB: Layout::RowsOnOneSet) share those sets: row r's j-th
// line of A and of C land on the same set, assumed the same for both (A and
// C allocated apart on page boundaries, or at one offset past them, as
// large allocations are). A C tile viewed in L1 therefore shares each of
// its rows' first sets with A's rows of the same tile, however A is read
// (every line A's kernels read passes through L1), and with B's lines when
// B sits in L1 (its lines spread over all the sets). Lines beyond the ways
// (Layout::kDenseRows) are evicted while the tile is worked on and fetched
// again: the view pays CostParams::line_shared_set_zmm for each, for every
// set that a row of both A and C reaches, on AVX-512 targets whose prices
// have one (it was measured with zmm kernels only).
int64_t SharedSets(const Spec& spec, const AllocInfo& a, const TensorSpec& c,
                   const Target& t) {
  const int64_t price = t.cost.line_shared_set_zmm;
  if (t.isa != Isa::kAvx512 || price == 0 || !spec.IsMatmul() ||
      a.operand != spec.OutputIndex() || a.to.level != Level::kL1)
    return 0;
  const TensorSpec at = spec.Operand(0);
  const int64_t a_rows = at.RowsOnOneSet();
  const int64_t c_rows = c.RowsOnOneSet();
  if (a_rows == 0 || c_rows == 0) return 0;
  const int64_t sets = Layout::kWayBytes / kLineBytes;
  const TensorSpec bt = spec.Operand(1);
  const int64_t b_lines =
      bt.aux.level == Level::kL1 ? (bt.Lines() + sets - 1) / sets : 0;
  const int64_t excess = a_rows + c_rows + b_lines - Layout::kDenseRows;
  if (excess <= 0) return 0;
  auto row_lines = [](const TensorSpec& op) {
    return (op.InnerExtent() * SizeOf(op.aux.dtype) + kLineBytes - 1) /
           kLineBytes;
  };
  const int64_t shared = std::min({row_lines(at), row_lines(c), sets});
  return excess * shared * price;
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
      // Full tiles of a parallel loop spread over the workers, the
      // remainder tile alongside.
      const int64_t tasks = loop.full_iters + (children.size() == 2 ? 1 : 0);
      const int64_t rounds = (tasks + t.workers - 1) / t.workers;
      const bool together = loop.parallel && rounds == 1;
      int64_t body[2] = {0, 0};
      for (size_t i = 0; i < children.size(); ++i)
        body[i] = children[i].main +
                  CutRows(spec, e.children[i], loop.dim, t, together);
      if (loop.parallel) {
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
        // A few plain rows from DRAM are read as a band in pieces of a row
        // of the view at most (CutRows): so a view of whole rows cannot
        // hide a band's price from the loops below it. A loop that cuts a
        // band into pieces it then views pays for them twice, which only
        // makes long pieces dearer still.
        if (from == Level::kGL && dense && DramBand(moved, t))
          line = std::max(line, t.cost.BandLine(moved.RunBytes()));
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
        c.main += SharedSets(spec, e.alloc, moved, t);
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

}  // namespace amarena
