// What the generator accepts from a user (Runtime::Get): the parser accepts
// the whole notation, the search and JIT implement less. Each refusal is one
// line naming the operand or property and what it must be: InvalidArgument
// for what no kernel could mean (an operand outside GL, a budget beyond the
// target), Unimplemented for what is not built yet.
#ifndef AMARENA_RUNTIME_SUPPORTED_H_
#define AMARENA_RUNTIME_SUPPORTED_H_

#include "absl/status/status.h"
#include "core/spec.h"
#include "core/target.h"

namespace amarena {

absl::Status CheckSupported(const Spec& s, const Target& t);

}  // namespace amarena

#endif  // AMARENA_RUNTIME_SUPPORTED_H_
