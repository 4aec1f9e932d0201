#include "runtime/calibrate_trees.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "jit/compile.h"
#include "runtime/calibrate_loops.h"
#include "runtime/host.h"
#include "search/search.h"

namespace amarena {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

absl::StatusOr<std::vector<PrefetchTiming>> TimeStreamPrefetch(
    const CpuFeatures& cpu, const CostParams& prices, float* b, int rounds) {
  AMARENA_ASSIGN_OR_RETURN(Spec spec, ParseSpec(kPrefetchTreeSpec));
  const int64_t b_floats = spec.k * spec.n;
  std::fill(b, b + b_floats, 0.5f);
  std::vector<float> a(static_cast<size_t>(spec.k), 1.0f);
  std::vector<float> c(static_cast<size_t>(spec.n));
  void* ops[3] = {a.data(), b, c.data()};

  std::vector<Isa> isas = {Isa::kAvx2};
  if (cpu.avx512f) isas.push_back(Isa::kAvx512);
  std::vector<PrefetchTiming> out;
  for (Isa isa : isas) {
    AMARENA_ASSIGN_OR_RETURN(Target target, TargetFor(cpu, isa));
    target.SetPrices(prices);  // the budgets follow the prices' shares
    PrefetchTiming t;
    t.isa = isa;
    t.standing = target.StreamPrefetch(4);
    // One tree (the pick), compiled with each choice.
    Searcher searcher(target);
    AMARENA_ASSIGN_OR_RETURN(ImplPtr tree, searcher.Solve(target.Bind(spec)));
    std::array<std::unique_ptr<CompiledKernel>, 3> kernels;
    for (int64_t choice = 0; choice < 3; ++choice) {
      CostParams with_choice = prices;
      with_choice.stream_prefetch = choice;
      with_choice.stream_prefetch_zmm = kStreamPrefetchInherit;
      Target with = target;
      with.SetPrices(with_choice);
      AMARENA_ASSIGN_OR_RETURN(
          kernels[choice],
          Compile(*tree, with, absl::StrCat("amarena_calibrate_prefetch_",
                                            choice)));
      AMARENA_RETURN_IF_ERROR((*kernels[choice])(ops));  // the warm-up
    }
    std::array<std::vector<double>, 3> ns;
    for (int round = 0; round < std::max(1, rounds); ++round)
      for (int i = 0; i < 3; ++i) {
        const int choice = round % 2 == 0 ? i : 2 - i;
        const int64_t t0 = calibrate_loops::ThreadNs();
        AMARENA_RETURN_IF_ERROR((*kernels[choice])(ops));
        ns[choice].push_back(
            static_cast<double>(calibrate_loops::ThreadNs() - t0));
      }
    for (int i = 0; i < 3; ++i) t.us[i] = Median(ns[i]) / 1e3;
    // Round by round against the standing choice (the same round, so a
    // drifting load on the host falls on both): faster in every round, and
    // by kPrefetchTreeGain in the median ratio.
    int64_t best = t.standing;
    double best_ratio = 1 / kPrefetchTreeGain;
    t.rounds = static_cast<int>(ns[0].size());
    for (int64_t choice = 0; choice < 3; ++choice) {
      std::vector<double> ratio;
      for (size_t r = 0; r < ns[choice].size(); ++r) {
        ratio.push_back(ns[choice][r] / ns[t.standing][r]);
        t.faster[choice] += ratio.back() < 1;
      }
      const double median = Median(ratio);
      t.ratio[choice] = median;
      if (choice != t.standing && t.faster[choice] == t.rounds &&
          median <= best_ratio) {
        best = choice;
        best_ratio = median;
      }
    }
    t.chosen = best;
    out.push_back(t);
  }
  return out;
}

}  // namespace amarena
