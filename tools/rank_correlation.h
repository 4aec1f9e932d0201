// Spearman's rank correlation, for `amarena fidelity`: how well one ordering
// (the cost model's) agrees with another (measured times).
//
//   std::optional<double> rho = SpearmanRho(costs, times);  // in [-1, 1]
//
// Ties get the average of the ranks they span (the values 5, 7, 7, 9 rank
// 1, 2.5, 2.5, 4), and rho is Pearson's correlation of the ranks, which is
// what the textbook formula 1 - 6 sum d^2 / (n (n^2 - 1)) reduces to when
// there are no ties.
#ifndef AMARENA_TOOLS_RANK_CORRELATION_H_
#define AMARENA_TOOLS_RANK_CORRELATION_H_

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

namespace amarena::tools {

// 1-based ranks of `v`, ties averaged.
inline std::vector<double> AverageRanks(std::span<const double> v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    // Positions i..j (0-based) hold one value: ranks i+1..j+1, averaged.
    const double r = (static_cast<double>(i + j) + 2) / 2;
    for (size_t p = i; p <= j; ++p) rank[order[p]] = r;
    i = j + 1;
  }
  return rank;
}

// nullopt when it is undefined: fewer than two pairs, sizes that differ, or
// one side all equal.
inline std::optional<double> SpearmanRho(std::span<const double> x,
                                         std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2) return std::nullopt;
  const std::vector<double> rx = AverageRanks(x), ry = AverageRanks(y);
  // Both rank lists have the same mean, (n + 1) / 2.
  const double mean = (static_cast<double>(x.size()) + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0 || syy == 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace amarena::tools

#endif  // AMARENA_TOOLS_RANK_CORRELATION_H_
