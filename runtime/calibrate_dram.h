// The DRAM figures of `amarena calibrate` (runtime/calibrate.cc): a large
// matrix read sequentially, as runs down column bands, as bands of a few rows
// in pieces of each length, and with the broadcast kernel's prefetches.
// Internal to the runtime's calibration.
#ifndef AMARENA_RUNTIME_CALIBRATE_DRAM_H_
#define AMARENA_RUNTIME_CALIBRATE_DRAM_H_

#include <array>
#include <cstdint>
#include <functional>

#include "core/target.h"
#include "runtime/calibrate.h"

namespace amarena {

struct DramFigures {
  // Per CostParams::kDramBandBytes length: how many times longer a band in
  // pieces of it took than one in pieces of the first length (the median of
  // the rounds' ratios).
  std::array<double, CostParams::kDramBandSteps> band_slower{};
};

// Reads the `set_bytes` at `set` (twice L3 or more, where memory allows)
// over `rounds` rounds after a warm-up, half of it a pass, and fills `c`'s
// dram_* and stream_* figures (dram_run_bytes by HalfRateRun with
// `prior_run_bytes`); calls `between` after each round (the warm-up's too).
DramFigures MeasureDram(const float* set, int64_t set_bytes, int rounds,
                        int64_t prior_run_bytes, Calibration& c,
                        const std::function<void()>& between);

}  // namespace amarena

#endif  // AMARENA_RUNTIME_CALIBRATE_DRAM_H_
