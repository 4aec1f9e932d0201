// The random matmul shapes scripts/bench.sh times (peer_benchmark
// --random=N:SEED), so other benchmarks can cover the same ones.
//
//   for (const RandomShape& s : RandomShapes(20, 1)) ...  // s.m, s.k, s.n
#ifndef AMARENA_BENCH_RANDOM_SHAPES_H_
#define AMARENA_BENCH_RANDOM_SHAPES_H_

#include <cstdint>
#include <random>
#include <vector>

namespace amarena {

struct RandomShape {
  int64_t m = 0, k = 0, n = 0;
};

// N shapes from `seed`, each dimension uniform in 1..2048. std::mt19937_64
// and the arithmetic below give the same shapes on every host (no
// std::*_distribution, whose output is implementation-defined).
inline std::vector<RandomShape> RandomShapes(int n, uint64_t seed) {
  std::mt19937_64 g(seed);
  auto dim = [&g] { return static_cast<int64_t>(g() % 2048) + 1; };
  std::vector<RandomShape> out;
  for (int i = 0; i < n; ++i) {
    RandomShape s;
    s.m = dim();
    s.k = dim();
    s.n = dim();
    out.push_back(s);
  }
  return out;
}

}  // namespace amarena

#endif  // AMARENA_BENCH_RANDOM_SHAPES_H_
