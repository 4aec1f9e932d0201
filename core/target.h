// Target: what the CPU offers the search and the JIT — ISA, vector register
// file, cache sizes and the cost model's prices. Built from detected features
// (runtime/host.h); plain numbers here, so core/ and search/ never touch CPUID.
//
//   Target t = Target::Avx2(/*l1d_bytes=*/48 * 1024);
//   Spec root = t.Bind(*ParseSpec("matmul 64x64x64 f32"));  // budget = whole
//   target
#ifndef AMARENA_CORE_TARGET_H_
#define AMARENA_CORE_TARGET_H_

#include <cstdint>
#include <string>

#include "core/spec.h"

namespace amarena {

enum class Isa : uint8_t { kAvx2, kAvx512 };
absl::string_view Name(Isa isa);

// Prices of the affine cost model, in units of 1/6 of a core cycle so that
// every throughput below is an integer. Derivation (Zen 4/5 class core, from
// vendor optimisation guides, to be recalibrated on the host by
// microbenchmarks):
//   two FMA pipes          -> one vector FMA every 0.5 cycle     = 3 units
//   three loads per cycle  -> one load every 1/3 cycle           = 2 units
//   two stores per cycle   -> one store every 0.5 cycle          = 3 units
//   loop back-edge (add, dec/jnz fused, overlapped by OoO)       = 2 units
//   a 64-byte line brought into L1 from farther out: ~2 cycles   = 12 units
//     (L2-class bandwidth; DRAM and L2/L3 are not told apart yet)
// Versioned: bump kCostModelVersion whenever a price or formula changes, since
// persisted search results depend on it.
struct CostParams {
  int64_t fma = 3;
  int64_t load = 2;
  int64_t store = 3;
  int64_t loop_iteration = 2;
  int64_t line_into_l1 = 12;
};
inline constexpr int kCostModelVersion = 1;

struct Target {
  Isa isa = Isa::kAvx2;
  // Vector registers the kernels may use: 16 ymm with AVX2 (one physical file
  // shared by scalar floats and vectors).
  int vector_registers = 16;
  // f32 lanes of the widest vector the emitter uses.
  int f32_lanes = 8;
  // L1 data cache in lines, rounded down to a power of two (48 KiB -> 512
  // lines).
  int64_t l1_lines = 512;
  CostParams cost;

  static Target Avx2(int64_t l1d_bytes);

  Budget MaxBudget() const { return Budget{vector_registers, l1_lines}; }
  // The root Spec of a search: the user's Spec with its own budget if it names one,
  // else the target's whole budget.
  Spec Bind(Spec s) const;
  // Short text identifying everything that changes search results or code.
  std::string Fingerprint() const;
};

}  // namespace amarena

#endif  // AMARENA_CORE_TARGET_H_
