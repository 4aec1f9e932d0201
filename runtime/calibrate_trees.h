// What `amarena calibrate` finds by timing whole trees rather than its
// loops: whether the vector-matrix kernels prefetch a B they stream from
// memory, and how (CostParams::stream_prefetch, stream_prefetch_zmm). Its
// loop emulating those kernels (calibrate_dram.cc) read the choice
// otherwise than the kernels ran on the Zen 4 guest (AVX2 picks 1.15-1.23x
// as fast without prefetches, where the emulation kept prefetcht1), so the
// search's own pick is compiled with each choice and timed. Internal to the
// runtime's calibration.
#ifndef AMARENA_RUNTIME_CALIBRATE_TREES_H_
#define AMARENA_RUNTIME_CALIBRATE_TREES_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/target.h"
#include "jit/cpu_features.h"

namespace amarena {

// The f32 vector-matrix product timed (a 128 MiB B, more than any L3 share
// of the machines seen), and the gain over the standing choice a choice
// must show to replace it (PrefetchTiming::chosen).
inline constexpr char kPrefetchTreeSpec[] = "matmul 1x2048x16384 f32";
inline constexpr int64_t kPrefetchTreeFloats = int64_t{2048} * 16384;
inline constexpr double kPrefetchTreeGain = 1.05;

struct PrefetchTiming {
  Isa isa = Isa::kAvx2;
  // Median microseconds per call with stream prefetch choice 0, 1 and
  // kStreamPrefetchL2 (CostParams::stream_prefetch).
  std::array<double, 3> us{};
  // Per choice, against the standing one: the median of the rounds' time
  // ratios, and the rounds it was faster in (of `rounds`).
  std::array<double, 3> ratio{};
  std::array<int, 3> faster{};
  int rounds = 0;
  int64_t standing = 0;  // the choice the table had
  // The one faster than the standing choice in every round and by
  // kPrefetchTreeGain in the median of the rounds' time ratios (the lowest
  // such median), else the standing one.
  int64_t chosen = 0;
};

// Times kPrefetchTreeSpec's pick under `prices` (the search's pick does not
// depend on the choice), compiled with each choice, for AVX2 and, where
// `cpu` has it, AVX-512: `rounds` rounds alternating the choices (the order
// reversed every other round), one call each after a warm-up, in the
// thread's CPU time. `b` holds at least 2048 x 16384 floats (its contents
// are overwritten: kPrefetchTreeFloats).
absl::StatusOr<std::vector<PrefetchTiming>> TimeStreamPrefetch(
    const CpuFeatures& cpu, const CostParams& prices, float* b, int rounds);

}  // namespace amarena

#endif  // AMARENA_RUNTIME_CALIBRATE_TREES_H_
