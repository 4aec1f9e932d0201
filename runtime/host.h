// The target for this machine: detected CPU features and cache sizes, turned
// into the Target the search and the JIT use. AVX-512 where the CPU has it,
// AVX2+FMA otherwise; AMARENA_MAX_ISA=avx2 caps it.
//
//   absl::StatusOr<Target> t = HostTarget();  // FailedPrecondition without
//                                             // AVX2+FMA
#ifndef AMARENA_RUNTIME_HOST_H_
#define AMARENA_RUNTIME_HOST_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/log.h"
#include "core/target.h"
#include "jit/cpu_features.h"

namespace amarena {

// The best target `cpu` supports, no wider than `max_isa` when given.
absl::StatusOr<Target> TargetFor(const CpuFeatures& cpu,
                                 std::optional<Isa> max_isa = std::nullopt);

// AMARENA_MAX_ISA: unset or empty = no cap; "avx2" or "avx512"; anything else
// is InvalidArgument naming the value.
absl::StatusOr<std::optional<Isa>> MaxIsaFromEnv();

// AMARENA_NUM_THREADS: unset or empty = the CPUs this process may run on; a
// positive integer; anything else is InvalidArgument naming the value.
absl::StatusOr<int> ThreadsFromEnv();

// TargetFor(cpu, max_isa) with the prices HostPrices(db_path) picks for
// this host: what runtimes made through the C API, benchmarks and tools that
// choose their own ISA cap and thread count build their targets with, so
// they run what a user's process would. A stored table passed over is a
// warning on `log`.
absl::StatusOr<Target> HostTargetFor(const CpuFeatures& cpu,
                                     std::optional<Isa> max_isa,
                                     const std::string& db_path,
                                     const Logger& log);
// The same at DefaultDbPath(), warnings on DefaultLogger().
absl::StatusOr<Target> HostTargetFor(const CpuFeatures& cpu,
                                     std::optional<Isa> max_isa);

// TargetFor(DetectCpu(), MaxIsaFromEnv()) with ThreadsFromEnv() workers and
// the prices HostPrices() picks (runtime/prices.h: AMARENA_PRICES, the table
// stored for this CPU, else a shipped one). TargetFor alone keeps the
// defaults.
absl::StatusOr<Target> HostTarget();

}  // namespace amarena

#endif  // AMARENA_RUNTIME_HOST_H_
