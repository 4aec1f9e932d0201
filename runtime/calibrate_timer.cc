#include "runtime/calibrate_timer.h"

#include <algorithm>
#include <utility>

#include "runtime/calibrate_loops.h"

namespace amarena::calibrate_loops {

CycleTimer::CycleTimer(int64_t min_run_ns, int64_t least_run_ns)
    : min_run_ns_(min_run_ns) {
  while (ChainNs(chain_iters_) < std::min(min_run_ns, least_run_ns) / 4)
    chain_iters_ *= 2;
}

void CycleTimer::Time(const std::function<void(int64_t)>& run,
                      RunCount* count, int reps, std::vector<Figure>* runs,
                      bool warm) {
  if (count->sized && warm) run(count->n);
  const int64_t min_ns = count->min_run_ns > 0 ? count->min_run_ns
                                               : min_run_ns_;
  while (!count->sized) {
    const int64_t start = ThreadNs();
    run(count->n);
    count->sized = ThreadNs() - start >= min_ns;
    if (!count->sized) count->n *= 2;
  }
  const int64_t n = count->n;
  const double adds = static_cast<double>(chain_iters_ * kAddsPerIter);
  for (int rep = 0; rep < reps; ++rep) {
    const double before = static_cast<double>(ChainNs(chain_iters_)) / adds;
    const int64_t start = ThreadNs();
    run(n);
    const double ns =
        static_cast<double>(ThreadNs() - start) / static_cast<double>(n);
    const double after = static_cast<double>(ChainNs(chain_iters_)) / adds;
    ns_per_cycle_.push_back(before);
    ns_per_cycle_.push_back(after);
    runs->push_back({ns / std::min(before, after), ns});
  }
}

CycleTimer::Figure CycleTimer::FirstQuartile(std::vector<Figure> runs) {
  const size_t i = (runs.size() - 1) / 4;
  std::nth_element(
      runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(i), runs.end(),
      [](const Figure& a, const Figure& b) { return a.cycles < b.cycles; });
  return runs[i];
}

CycleTimer::Figure CycleTimer::MedianOf(std::vector<Figure> runs) {
  const size_t i = (runs.size() - 1) / 2;
  std::nth_element(
      runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(i), runs.end(),
      [](const Figure& a, const Figure& b) { return a.cycles < b.cycles; });
  return runs[i];
}

double CycleTimer::Ghz() const { return 1 / Median(ns_per_cycle_); }

int64_t CycleTimer::ChainNs(int64_t iters) {
  const int64_t start = ThreadNs();
  AddChain(iters);
  return ThreadNs() - start;
}

int SampledFigures::Add(std::function<void(int64_t)> run, int64_t count,
                        int64_t min_run_ns, bool warm) {
  Entry e;
  e.run = std::move(run);
  e.count.n = count;
  e.count.min_run_ns = min_run_ns;
  e.warm = warm;
  entries_.push_back(std::move(e));
  return static_cast<int>(entries_.size()) - 1;
}

void SampledFigures::Round() {
  for (Entry& e : entries_) timer_->Time(e.run, &e.count, 1, &e.runs, e.warm);
}

CycleTimer::Figure SampledFigures::Get(int i) const {
  return CycleTimer::FirstQuartile(entries_[static_cast<size_t>(i)].runs);
}

}  // namespace amarena::calibrate_loops
