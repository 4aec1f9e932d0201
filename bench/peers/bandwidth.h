// Single-core DRAM read bandwidth: the ceiling for matrix-vector products
// (1x2048x16384 reads 128 MiB of B once per call, so it cannot beat this).
//
//   double gbs = MeasureDramReadGBs(size_t{1} << 30);  // GB/s, one thread
//
// A buffer far larger than the last-level cache (1 GiB against 32 MiB of L3 on
// the development machine) is summed with 256-bit loads, four independent
// accumulators, on the calling thread; the best of `passes` passes counts
// (the first touches every page, so it is never the best).
#ifndef AMARENA_BENCH_PEERS_BANDWIDTH_H_
#define AMARENA_BENCH_PEERS_BANDWIDTH_H_

#include <cstddef>

namespace amarena::bench {

double MeasureDramReadGBs(size_t bytes, int passes = 4);

}  // namespace amarena::bench

#endif  // AMARENA_BENCH_PEERS_BANDWIDTH_H_
