// What the host CPU offers, read through Xbyak's CPUID wrapper (which also
// checks that the OS saves the wide registers, XCR0), plus cache sizes from the
// OS.
//
//   CpuFeatures f = DetectCpu();
//   if (!f.avx2 || !f.fma) ...   // amarena needs both
#ifndef AMARENA_JIT_CPU_FEATURES_H_
#define AMARENA_JIT_CPU_FEATURES_H_

#include <cstdint>
#include <string>

namespace amarena {

struct CpuFeatures {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512_bf16 = false,
       avx512_vnni = false;
  int64_t l1d_bytes = 32 * 1024;
  int64_t l2_bytes = 512 * 1024;
  int64_t l3_bytes = 8 * 1024 * 1024;
  std::string brand;
  // CPUID vendor string and display family and model (leaf 1, with the
  // extended fields folded in as the vendors' manuals say): what a price
  // table is matched by (core/price_table.h).
  std::string vendor;
  int family = 0;
  int model = 0;

  // e.g. "avx2 fma avx512f avx512bw avx512vl avx512_bf16 avx512_vnni"
  std::string FeatureList() const;
};

CpuFeatures DetectCpu();

}  // namespace amarena

#endif  // AMARENA_JIT_CPU_FEATURES_H_
