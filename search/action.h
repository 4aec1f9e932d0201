// An action: one rewrite applied to a Spec, described by its kind and
// parameters (never by an enumeration index, so stored decisions survive
// changes to the enumeration). A Candidate pairs an action with what it does:
// the Expansion (core/impl.h) whose child Specs the search must solve.
//
//   Action{.kind = ActionKind::kTile, .dim = Dim::kN, .size = 16}
#ifndef AMARENA_SEARCH_ACTION_H_
#define AMARENA_SEARCH_ACTION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/impl.h"

namespace amarena {

enum class ActionKind : uint8_t {
  kTile,
  kSplit,
  kToAccum,
  kMove,
  kSelect,
  kParallelTile
};

struct Action {
  ActionKind kind = ActionKind::kSelect;
  Dim dim = Dim::kM;                       // kTile, kSplit
  int64_t size = 0;                        // kTile, kSplit
  int operand = 0;                         // kMove
  TensorAux to{};                          // kMove
  AllocKind alloc = AllocKind::kView;      // kMove
  KernelId kernel = KernelId::kScalarFma;  // kSelect

  // A total order, used only to break exact ties in cost so that the chosen
  // tree does not depend on the order in which Specs were solved.
  friend auto operator<=>(const Action&, const Action&) = default;
};

// The action's descriptor: "tile m 8", "parallel tile n 512", "split k 64",
// "to-accum", "view 0 l2", "pack 1 l3 p32", "regs 2 vrf v16",
// "select broadcast_fma". ParseAction(Describe(a)) == a for every action.
std::string Describe(const Action& a);
absl::StatusOr<Action> ParseAction(absl::string_view descriptor);

// The action that produced an expansion (what the search stored for it).
Action ActionOf(const Expansion& e);

struct Candidate {
  Action action;
  Expansion expansion;
};

}  // namespace amarena

#endif  // AMARENA_SEARCH_ACTION_H_
