// The DRAM figures of `amarena calibrate` (runtime/calibrate.cc): a large
// matrix read sequentially, as runs down column bands, as bands of a few rows
// in pieces of each length, and with the broadcast kernel's prefetches.
// Internal to the runtime's calibration.
#ifndef AMARENA_RUNTIME_CALIBRATE_DRAM_H_
#define AMARENA_RUNTIME_CALIBRATE_DRAM_H_

#include <array>
#include <cstdint>

#include "core/target.h"
#include "runtime/calibrate.h"

namespace amarena {

struct DramFigures {
  // Per CostParams::kDramBandBytes length: how many times longer a band in
  // pieces of it took than one in pieces of the first length (the median of
  // the rounds' ratios).
  std::array<double, CostParams::kDramBandSteps> band_slower{};
};

// Reads the `set_bytes` at `set` (at least twice L3, `l3_bytes`) over `rounds`
// rounds after a warm-up, and fills `c`'s dram_* and stream_* figures.
DramFigures MeasureDram(const float* set, int64_t set_bytes, int64_t l3_bytes,
                        int rounds, Calibration& c);

}  // namespace amarena

#endif  // AMARENA_RUNTIME_CALIBRATE_DRAM_H_
