#include "runtime/host.h"

#include "absl/strings/str_cat.h"

namespace amarena {

absl::StatusOr<Target> TargetFor(const CpuFeatures& cpu) {
  if (!cpu.avx2 || !cpu.fma)
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create kernels on this CPU (", cpu.brand, "): features are '",
        cpu.FeatureList(), "', must include avx2 and fma"));
  // The emitter generates AVX2+FMA code (ymm) on every CPU for now; AVX-512
  // hosts run it too.
  return Target::Avx2(
      {.l1d = cpu.l1d_bytes, .l2 = cpu.l2_bytes, .l3 = cpu.l3_bytes});
}

absl::StatusOr<Target> HostTarget() { return TargetFor(DetectCpu()); }

}  // namespace amarena
