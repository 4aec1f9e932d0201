// Targets that do not depend on the host: an AVX2 machine, or an AVX-512 one
// with BF16, with fixed caches (or the given ones) and `workers` threads.
// Kernels for them can be searched and compiled (never run) on any x86 host,
// so tests of the search and of the generator see the same targets
// everywhere.
//
//   Target t = FixedTarget(Isa::kAvx512, /*workers=*/2);
#ifndef AMARENA_TESTS_TESTING_FIXED_TARGET_H_
#define AMARENA_TESTS_TESTING_FIXED_TARGET_H_

#include "core/target.h"

namespace amarena::testing {

inline constexpr CacheSizes kFixedCaches{
    .l1d = 48 << 10, .l2 = 2 << 20, .l3 = 32 << 20};

inline Target FixedTarget(Isa isa, int workers,
                          const CacheSizes& caches = kFixedCaches) {
  Target t =
      isa == Isa::kAvx512 ? Target::Avx512(caches) : Target::Avx2(caches);
  t.bf16_dot = isa == Isa::kAvx512;
  t.workers = workers;
  return t;
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_FIXED_TARGET_H_
