// An action: one rewrite applied to a Spec, described by its kind and
// parameters (never by an enumeration index, so stored decisions survive
// changes to the enumeration). A Candidate pairs an action with what it does:
// the Expansion (core/impl.h) whose child Specs the search must solve. Each
// action belongs to one rewrite, which gives it its text form
// (search/rewrites/registry.h: Describe, ParseAction).
//
//   Action{.kind = ActionKind::kTile, .dim = Dim::kN, .size = 16}
#ifndef AMARENA_SEARCH_ACTION_H_
#define AMARENA_SEARCH_ACTION_H_

#include "core/impl.h"

namespace amarena {

// Which rewrite made an action; the three moves (view, pack, to-registers)
// share kMove and differ in `alloc`. The enumerators' order, then the fields',
// is the order that breaks ties in cost, so reordering them can change which
// of two equal-cost trees the search chooses.
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

// The action that produced an expansion (what the search stored for it).
Action ActionOf(const Step& e);

struct Candidate {
  Action action;
  Expansion expansion;
};

}  // namespace amarena

#endif  // AMARENA_SEARCH_ACTION_H_
