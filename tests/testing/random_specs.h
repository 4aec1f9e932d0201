// Random user-level Specs for tests: a fixed seed gives the same list
// everywhere.
//
//   for (const Spec& s : RandomMatmuls(/*count=*/200, /*max_dim=*/300,
//   /*seed=*/7)) ...
#ifndef AMARENA_TESTS_TESTING_RANDOM_SPECS_H_
#define AMARENA_TESTS_TESTING_RANDOM_SPECS_H_

#include <cstdlib>
#include <random>
#include <vector>

#include "core/spec.h"

namespace amarena::testing {

// f32 matmuls with dims uniform in 1..max_dim, random operand layouts, and
// every fourth one accumulating.
inline std::vector<Spec> RandomMatmuls(int count, int max_dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dim(1, max_dim);
  std::bernoulli_distribution col(0.25);
  std::vector<Spec> out;
  for (int i = 0; i < count; ++i) {
    TensorAux a, b, c;
    a.layout = col(rng) ? Layout::kColMajor : Layout::kRowMajor;
    b.layout = col(rng) ? Layout::kColMajor : Layout::kRowMajor;
    c.layout = col(rng) ? Layout::kColMajor : Layout::kRowMajor;
    int64_t m = dim(rng), k = dim(rng), n = dim(rng);
    out.push_back(Spec::Matmul(m, k, n, a, b, c, /*accum=*/i % 4 == 3));
  }
  return out;
}

// Distinct f32 matmuls, numbered from 0, small for small i (K grows by 16
// every 96): the first thousand are quick to search (well under a
// millisecond each with one Searcher shared), with trees of tens of nodes.
// For tests that need many different Specs stored.
inline Spec SmallMatmul(int i) {
  return Spec::Matmul(8 + 4 * (i % 12), 16 + 16 * (i / 96),
                      8 + 8 * ((i / 12) % 8));
}

// How sparsely the long random sweeps sample their list: every Nth entry,
// N = AMARENA_TEST_SWEEP_STRIDE (default 1: all of it). The sanitizer run of
// the suite sets it, since instrumented search and reference code is several
// times slower.
inline size_t SweepStride() {
  const char* v = std::getenv("AMARENA_TEST_SWEEP_STRIDE");
  long n = v ? std::strtol(v, nullptr, 10) : 1;
  return n >= 1 ? static_cast<size_t>(n) : 1;
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_RANDOM_SPECS_H_
