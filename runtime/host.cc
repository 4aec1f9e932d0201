#include "runtime/host.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/prices.h"
#include "runtime/search_db.h"

namespace amarena {

absl::StatusOr<Target> TargetFor(const CpuFeatures& cpu,
                                 std::optional<Isa> max_isa) {
  if (!cpu.avx2 || !cpu.fma)
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create kernels on this CPU (", cpu.brand, "): features are '",
        cpu.FeatureList(), "', must include avx2 and fma"));
  const CacheSizes caches{
      .l1d = cpu.l1d_bytes, .l2 = cpu.l2_bytes, .l3 = cpu.l3_bytes};
  // AVX512BW too: the bf16 kernels broadcast and mask 16-bit words (every
  // AVX-512 core since Skylake-SP has it).
  if (cpu.avx512f && cpu.avx512bw &&
      max_isa.value_or(Isa::kAvx512) == Isa::kAvx512) {
    Target t = Target::Avx512(caches);
    t.bf16_dot = cpu.avx512_bf16;
    return t;
  }
  return Target::Avx2(caches);
}

absl::StatusOr<std::optional<Isa>> MaxIsaFromEnv() {
  const char* v = std::getenv("AMARENA_MAX_ISA");
  if (v == nullptr || *v == '\0') return std::optional<Isa>();
  absl::string_view s(v);
  if (s == "avx2") return std::optional<Isa>(Isa::kAvx2);
  if (s == "avx512") return std::optional<Isa>(Isa::kAvx512);
  return absl::InvalidArgumentError(absl::StrCat(
      "AMARENA_MAX_ISA is '", s, "', must be avx2 or avx512 (or unset)"));
}

absl::StatusOr<int> ThreadsFromEnv() {
  const char* v = std::getenv("AMARENA_NUM_THREADS");
  if (v == nullptr || *v == '\0') {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
      return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
  }
  int n = 0;
  if (!absl::SimpleAtoi(v, &n) || n < 1 || n > 1024)
    return absl::InvalidArgumentError(absl::StrCat(
        "AMARENA_NUM_THREADS is '", v, "', must be an integer from 1 to 1024"));
  return n;
}

absl::StatusOr<Target> HostTargetFor(const CpuFeatures& cpu,
                                     std::optional<Isa> max_isa,
                                     const std::string& db_path,
                                     const Logger& log) {
  AMARENA_ASSIGN_OR_RETURN(Target t, TargetFor(cpu, max_isa));
  // The prices: stored, shipped or forced (runtime/prices.h); never measured.
  AMARENA_ASSIGN_OR_RETURN(ChosenPrices prices, HostPrices(db_path));
  if (!prices.unusable_stored.empty())
    log.Log(LogLevel::kWarning, prices.unusable_stored);
  t.SetPrices(prices.table.cost);
  return t;
}

absl::StatusOr<Target> HostTargetFor(const CpuFeatures& cpu,
                                     std::optional<Isa> max_isa) {
  return HostTargetFor(cpu, max_isa, DefaultDbPath(), DefaultLogger());
}

absl::StatusOr<Target> HostTarget() {
  AMARENA_ASSIGN_OR_RETURN(std::optional<Isa> max_isa, MaxIsaFromEnv());
  AMARENA_ASSIGN_OR_RETURN(int threads, ThreadsFromEnv());
  AMARENA_ASSIGN_OR_RETURN(Target t, HostTargetFor(DetectCpu(), max_isa));
  t.workers = threads;
  return t;
}

}  // namespace amarena
