// The target for this machine: detected CPU features and cache sizes, turned
// into the Target the search and the JIT use.
//
//   absl::StatusOr<Target> t = HostTarget();  // FailedPrecondition without
//   AVX2+FMA
#ifndef AMARENA_RUNTIME_HOST_H_
#define AMARENA_RUNTIME_HOST_H_

#include "absl/status/statusor.h"
#include "core/target.h"
#include "jit/cpu_features.h"

namespace amarena {

absl::StatusOr<Target> TargetFor(const CpuFeatures& cpu);
absl::StatusOr<Target> HostTarget();

}  // namespace amarena

#endif  // AMARENA_RUNTIME_HOST_H_
