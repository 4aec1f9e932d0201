// The Impl tree: the implementation the search chooses for a Spec.
//
//   Loop   — over tiles of the output (or of k, for a split): `full_iters` full
//   tiles,
//            then at most one remainder tile; children: body[, remainder].
//   Block  — a sequence; children run in order (Matmul -> Zero ; MatmulAccum).
//   Alloc  — one operand moved to a faster level. A cache view (GL -> L1) emits
//   no code
//            and is charged as traffic; a register tile (L1 -> VRF) is real:
//            children are [prologue Move,] body[, epilogue Move].
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

#include "core/kernels.h"
#include "core/spec.h"

namespace amarena {

// Cost of an Impl: the model's time estimate, then peak use per level, then
// depth. Ordered lexicographically, so among equally fast programs the leaner
// one wins.
struct Cost {
  int64_t main = 0;
  int32_t peak_vrf = 0;
  int64_t peak_l1 = 0;
  int32_t depth = 0;

  friend auto operator<=>(const Cost&, const Cost&) = default;
};

enum class NodeType : uint8_t { kLoop, kBlock, kAlloc, kKernel };

// Dimension indices into a Spec: Matmul tiles m or n and splits k; Zero/Move
// tile m or n.
enum class Dim : uint8_t { kM, kK, kN };
absl::string_view Name(Dim d);
int64_t Extent(const Spec& s, Dim d);

struct LoopInfo {
  Dim dim = Dim::kM;
  int64_t tile = 1;
  int64_t full_iters = 1;
  bool parallel = false;
};

struct AllocInfo {
  int operand = 0;
  TensorAux to;
  bool view = false;  // a cache view: traffic, no code
  bool prologue = false;
  bool epilogue = false;
};

struct Expansion {
  NodeType type = NodeType::kKernel;
  LoopInfo loop;
  AllocInfo alloc;
  KernelId kernel = KernelId::kScalarFma;
  std::vector<Spec> children;
};

struct ImplNode {
  Spec spec;
  Expansion how;
  Cost cost;
  std::vector<std::shared_ptr<const ImplNode>> children;

  bool HasRemainder() const {
    return how.type == NodeType::kLoop && children.size() == 2;
  }
};
using ImplPtr = std::shared_ptr<const ImplNode>;

// One line per node, indented by depth: what the node does, then its Spec and
// cost.
std::string PrintImpl(const ImplNode& root);
// Number of nodes, and the distinct kernels used (for tests and logs).
int CountNodes(const ImplNode& root);

}  // namespace amarena

#endif  // AMARENA_CORE_IMPL_H_
