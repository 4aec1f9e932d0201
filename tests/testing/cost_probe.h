// Probes of the cost model for its tests: the Zen 4 guest's target (the
// host several pricing rules were measured on), and what ComposeCost charges
// for one candidate of a Spec on top of children that cost nothing.
//
//   const Target t = Zen4Target(Isa::kAvx512);
//   int64_t view = AloneCost(t.Bind(spec), t, "view 2 l1");
#ifndef AMARENA_TESTS_TESTING_COST_PROBE_H_
#define AMARENA_TESTS_TESTING_COST_PROBE_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "core/cost_model.h"
#include "core/price_table.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"

namespace amarena::testing {

// The Zen 4 guest's caches and shipped prices, for an AVX2 or AVX-512 target.
inline Target Zen4Target(Isa isa) {
  const CacheSizes caches{.l1d = 32 << 10, .l2 = 1 << 20, .l3 = 16 << 20};
  Target t =
      isa == Isa::kAvx512 ? Target::Avx512(caches) : Target::Avx2(caches);
  const PriceTable* zen4 = FindShipped("zen4-epyc-vm");
  EXPECT_NE(zen4, nullptr);
  if (zen4 != nullptr) t.SetPrices(zen4->cost);
  return t;
}

// The cost of the candidate `action` (as Describe writes it) of `s` with
// children that cost nothing: what the node itself adds. -1, and a test
// failure, when `s` has no such candidate.
inline int64_t AloneCost(const Spec& s, const Target& t,
                         absl::string_view action) {
  for (const Candidate& c : EnumerateCandidates(s, t)) {
    if (Describe(c.action) != action) continue;
    std::vector<Cost> free(c.expansion.children.size());
    return ComposeCost(s, c.expansion, free, t).main;
  }
  ADD_FAILURE() << "no candidate '" << action << "' for " << PrintSpec(s);
  return -1;
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_COST_PROBE_H_
