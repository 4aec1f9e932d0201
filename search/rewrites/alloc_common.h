// Shared by view.cc, pack.cc and to_registers.cc: an Alloc candidate that
// moves one operand to `to`, with the children its kind needs.
#ifndef AMARENA_SEARCH_REWRITES_ALLOC_COMMON_H_
#define AMARENA_SEARCH_REWRITES_ALLOC_COMMON_H_

#include <optional>

#include "search/action.h"

namespace amarena {

// nullopt when the moved operand does not fit the Spec's budget.
std::optional<Candidate> MakeAlloc(const Spec& s, int operand, TensorAux to,
                                   AllocKind kind);

}  // namespace amarena

#endif  // AMARENA_SEARCH_REWRITES_ALLOC_COMMON_H_
