// The Impl tree: the implementation the search chooses for a Spec.
//
//   Loop   — over tiles of the output (or of k, for a split): `full_iters` full
//   tiles,
//            then at most one remainder tile; children: body[, remainder].
//   Block  — a sequence; children run in order (Matmul -> Zero ; MatmulAccum).
//   Alloc  — one operand moved to a faster level, in one of three ways:
//            a cache view (e.g. GL -> L2) emits no code and is charged as
//            traffic; a buffer (e.g. GL -> L2 packed in panels of 16) is real
//            memory the kernel fills with a copy; a register tile (L1 -> VRF)
//            binds vector registers. Buffers and register tiles have children
//            [prologue Move,] body[, epilogue Move].
//   Kernel — a microkernel leaf (core/kernels.h).
//
// A rewrite produces an Expansion (the node without solved children); the
// search turns it into an ImplNode once every child Spec is solved. Nodes are
// immutable and shared.
#ifndef AMARENA_CORE_IMPL_H_
#define AMARENA_CORE_IMPL_H_

#include <compare>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/kernels.h"
#include "core/spec.h"

namespace amarena {

// Cost of an Impl: the model's time estimate, then its peak use per level,
// then depth. Ordered lexicographically, so among equally fast programs the
// leaner one wins.
//
// `peak` is the smallest budget under which this exact tree is valid, given
// how each rewrite hands budget to its children (cache budgets are rounded
// down onto the budget grid on the way, core/spec.h, so the peak of a cache
// level is rounded up onto it). Hence a tree found best under budget L with
// peak P is best for every budget between P and L: the search's memo table
// stores it once, as a box.
struct Cost {
  int64_t main = 0;
  Budget peak;
  int32_t depth = 0;

  friend bool operator==(const Cost&, const Cost&) = default;
  // Equal costs prefer the shallower tree, then the smaller peak: fewer
  // loops and views around the same kernels is less code and fewer reloads
  // the model does not price (docs/search.md, the DP). With the peak first,
  // a 6x64 AVX-512 register tile ran as six 2x32 kernels, twelve B loads a
  // k step instead of four, for two fewer scratch registers. The memo's boxes
  // stay sound: a tree best under budget L is still best, in this order,
  // among the trees that fit any smaller budget it fits.
  friend std::strong_ordering operator<=>(const Cost& a, const Cost& b) {
    if (auto c = a.main <=> b.main; c != 0) return c;
    if (auto c = a.depth <=> b.depth; c != 0) return c;
    return a.peak <=> b.peak;
  }
};

enum class NodeType : uint8_t { kLoop, kBlock, kAlloc, kKernel };

// Dimension indices into a Spec: Matmul tiles m or n and splits k; Zero/Move
// tile m or n; a batched matmul (b > 1) loops over b, each operand's matrix
// moving by its batch stride.
enum class Dim : uint8_t { kM, kK, kN, kB };
absl::string_view Name(Dim d);
int64_t Extent(const Spec& s, Dim d);

// How operand i's tile follows a loop over `d`: not at all, along its rows,
// or along its columns (Axis: core/layout.h). Matmul: m moves A's and C's
// rows, n moves B's and C's columns, k moves A's columns and B's rows, b none
// (each matrix moves whole, by BatchStep); Zero and Move: m rows, n columns.
Axis OperandAxis(const Spec& s, int i, Dim d);
// Elements operand i moves per `tile` batch elements (0 for a shared one).
int64_t BatchStep(const Spec& s, int i, int64_t tile);

struct LoopInfo {
  Dim dim = Dim::kM;
  int64_t tile = 1;
  int64_t full_iters = 1;
  // Run by the thread pool, one task per tile (only at the root, where every
  // operand is in GL; the JIT compiles body and remainder as functions).
  bool parallel = false;
  // Unrolled when it moves a register tile (registers are bound statically)
  // or runs once; otherwise a counted loop whose counter lives in a GPR taken
  // from the budget, or in a stack slot when the budget has none.
  bool unrolled = false;
  bool counter_in_reg = false;
};

enum class AllocKind : uint8_t { kView, kBuffer, kRegisters };

struct AllocInfo {
  int operand = 0;
  TensorAux to;
  AllocKind kind = AllocKind::kView;
  bool prologue = false;
  bool epilogue = false;
};

// What a node does: its kind and parameters, without its children's Specs.
struct Step {
  NodeType type = NodeType::kKernel;
  LoopInfo loop;
  AllocInfo alloc;
  KernelId kernel = KernelId::kScalarFma;
};

// A step with the Specs of the children it makes, as a rewrite offers it.
struct Expansion : Step {
  // At most three: [prologue,] body[, epilogue] or body[, remainder] (inline:
  // the search builds millions of these).
  absl::InlinedVector<Spec, 3> children;
};

struct ImplNode {
  Spec spec;
  // The node keeps its step only: its children's Specs are theirs (a node
  // with its expansion inline was 896 bytes, two thirds of a cold search's
  // memory the trees it builds to follow remainders).
  Step how;
  Cost cost;
  std::vector<std::shared_ptr<const ImplNode>> children;

  bool HasRemainder() const {
    return how.type == NodeType::kLoop && children.size() == 2;
  }
};
using ImplPtr = std::shared_ptr<const ImplNode>;

// The node's step with its children's Specs (ComposeCost costs it).
Expansion ExpansionOf(const ImplNode& node);

// One line per node, indented by depth: what the node does, then its Spec and
// cost.
std::string PrintImpl(const ImplNode& root);
// "vrf:12,gpr:3,l1:64,l2:0,l3:0".
std::string PrintPeak(const Budget& b);
// Number of nodes, and the distinct kernels used (for tests and logs).
int CountNodes(const ImplNode& root);

}  // namespace amarena

#endif  // AMARENA_CORE_IMPL_H_
