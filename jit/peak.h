// The machine's vector FMA peak, measured by running JIT'd code: a loop of
// independent vfmadd231ps on N accumulators, so nothing but the FMA pipes
// limits it. It is the ceiling that benchmarks report their kernels against,
// and what calibrates the cost model's `fma` price on the host.
//
//   PeakResult p = MeasureFmaPeak(/*vector_bits=*/256);
//   if (p.available) std::printf("%.1f GFLOP/s on one core\n", p.gflops);
//
// Single-threaded: it runs on the calling thread. Expected on a core with two
// FMA pipes at frequency F: 2 pipes x lanes x 2 flops per FMA x F. The Zen 5
// development VM measures about 127 GFLOP/s with ymm and 253 with zmm: 32 and
// 64 flops per cycle at about 4 GHz, so its pipes are 512 bits wide.
#ifndef AMARENA_JIT_PEAK_H_
#define AMARENA_JIT_PEAK_H_

namespace amarena {

struct PeakResult {
  // Best observed single-thread f32 FMA throughput, in 1e9 flops per second (an
  // FMA counts as two flops); 0 when !available.
  double gflops = 0;
  // False when the CPU lacks the instructions (AVX2+FMA for 256 bits, AVX-512F
  // for 512), vector_bits is neither 256 nor 512, or the code could not be
  // generated.
  bool available = false;
};

// Measures for `vector_bits` 256 (ymm) or 512 (zmm), spending about `seconds`
// of wall time (at least three timed calls of ~20 ms each, so never much less
// than 0.1 s).
PeakResult MeasureFmaPeak(int vector_bits, double seconds = 0.2);

}  // namespace amarena

#endif  // AMARENA_JIT_PEAK_H_
