// The affine cost model, and how budget flows down the tree.
//
// Cost: a node's cost is a non-negative combination of its children's plus a
// constant, or the larger of its child's and a constant, so a cheaper child
// never makes its parent dearer and memoised DP over Specs is exact.
//   Loop   : counted: F * (body + back-edge) + remainder; unrolled: F * body +
//            remainder (back-edge: loop_iteration, or loop_iteration_stack
//            when the counter is in a stack slot); a serial loop that does
//            not move a register tile also pays for its remainder's code
//            (RemainderCode); parallel: ceil(tasks / workers) * the slower
//            of body and remainder + parallel_setup. Body and remainder
//            each pay for the DRAM runs their tile is read as when the loop
//            cuts a plain GL operand into column strips (CutRows), and a
//            loop along k pays for B's panels or columns read side by side
//            (SideBySideRuns)
//   Block  : sum of children
//   Alloc  : view: traffic = lines * price(source level, dense or
//            strided), twice for the output (read and written back);
//            into L1 from L2, max(traffic, body) (OverlapsWork),
//            else traffic + body;
//            buffer and register tile: sum of children (the copies are
//            Move children with their own cost)
//   Kernel : the kernel's own cost (core/kernels.h)
//
// Budget: ChildBudget says what a node leaves its children; ComposeCost's
// peak is its inverse, the least parent budget under which every child's
// peak still fits:
//   view / buffer at cache level X : X -= lines, rounded down onto the
//                                    budget grid (core/spec.h); a buffer
//                                    also takes one GPR (its base pointer)
//   register tile                  : vrf -= registers
//   counted loop, counter in a GPR : the body gets gpr - 1
//
//   Cost c = ComposeCost(spec, expansion, child_costs, target);
#ifndef AMARENA_CORE_COST_MODEL_H_
#define AMARENA_CORE_COST_MODEL_H_

#include <optional>
#include <span>

#include "core/impl.h"
#include "core/target.h"

namespace amarena {

// Whether a view from `from` into `to` overlaps the work below it: lines
// filled into L1 from L2 arrive while the kernels run (the prefetchers
// follow their streams, and L2 feeds L1 faster than the FMAs consume), so
// such a view costs the larger of its traffic and its body. Other views add
// to the body. On the Zen 4 host, one pinned thread, each tree timed
// against the one the model that added every view picked: 128x768x3072
// 1.4x, 16x4096x4096 1.08x, 512^3 and 1024^3 1.04x, 2048^3 1.02x,
// 17x1793x796 1.01x. Hiding L3's views too made thin row strips stream
// all of B from L3 and lost (16x4096x4096 0.84x, 17x1793x796 0.92x).
constexpr bool OverlapsWork(Level from, Level to) {
  return to == Level::kL1 && from == Level::kL2;
}

// The budget an Alloc leaves its children, or nullopt when the moved tensor
// does not fit.
std::optional<Budget> AllocChildBudget(const Spec& spec, const AllocInfo& a);

// The budget a loop leaves child `i` (0 = body, 1 = remainder).
Budget LoopChildBudget(const Budget& b, const LoopInfo& loop, int i);

// What a loop pays for the code of its remainder, emitted beside its body:
// the remainder's estimated code (from its Spec alone, so the DP stays exact),
// in 64-byte lines at the dense L2 price, on every run. 0 for other nodes, for
// loops without a remainder, parallel loops and loops that move a register
// tile (unrolled by necessity).
int64_t RemainderCode(const Spec& spec, const Expansion& e, const Target& t);

Cost ComposeCost(const Spec& spec, const Expansion& e,
                 std::span<const Cost> children, const Target& t);

}  // namespace amarena

#endif  // AMARENA_CORE_COST_MODEL_H_
