// The one timer of the CLI (`amarena run`, `amarena bench`, `amarena
// fidelity`): the time of one call of a short function, measured in batches
// of calls so that reading the clock stays a small fraction of what it
// measures.
//
// A pair of steady_clock reads costs about 20 ns; an 8x8x8 kernel runs in
// about as long, so timing single calls measures the clock as much as the
// kernel. The batch is grown (doubling) until one batch takes at least
// `min_batch_ns` (1 ms: the clock is then under 0.01 % of it), then batches
// are repeated until `budget_ns` is spent (at least `min_batches` of them),
// and the median and the fastest batch give the time per call. The median,
// not the mean: on a shared machine another process's time slice (whole
// milliseconds) lands in a few batches and should not decide the figure; the
// minimum is the least-disturbed batch. Pin the process (taskset -c N) for
// figures worth comparing.
//
//   BatchTiming t = TimeBatches([&] { kernel(ops); });
//   printf("%.1f ns per call (%lld batches of %lld)\n", t.median_ns, ...);
#ifndef AMARENA_BENCH_BATCH_TIMER_H_
#define AMARENA_BENCH_BATCH_TIMER_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace amarena::bench {

struct BatchTimerOptions {
  // A batch is grown until it lasts at least this long.
  double min_batch_ns = 1e6;
  // Time to spend on the timed batches, after the batch size is found.
  double budget_ns = 3e8;
  // Timed batches, at least (the budget may be overrun to reach them) ...
  int64_t min_batches = 5;
  // ... and at most (0: no cap; `amarena run --reps` sets both).
  int64_t max_batches = 0;
  // One untimed call first; off when the caller has just run it (`amarena
  // run` checks the kernel's output first).
  bool warm_up = true;
};

struct BatchTiming {
  double median_ns = 0;  // per call, in the median batch
  double min_ns = 0;     // per call, in the fastest batch
  int64_t batch = 0;     // calls per batch
  int64_t batches = 0;   // timed batches
};

// Calls `call` (a callable taking no arguments): once untimed (warm_up), then
// batches of 1, 2, 4, ... calls until one lasts min_batch_ns, which is the
// first timed batch, then the other batches: warm_up + (batch - 1) +
// batch * batches calls in all.
template <typename F>
BatchTiming TimeBatches(F&& call, const BatchTimerOptions& opt = {}) {
  using Clock = std::chrono::steady_clock;
  auto run = [&](int64_t n) {
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < n; ++i) call();
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  };
  if (opt.warm_up) call();  // scratch allocated, code and data in cache
  BatchTiming t;
  t.batch = 1;
  // Doubling stops at 2^40 calls, a bound a call taking no time at all
  // (which the optimiser could make of an empty lambda) still reaches fast.
  // The batch that ends it is a batch of the final size: the first sample.
  double first = 0;
  while ((first = run(t.batch)) < opt.min_batch_ns &&
         t.batch < (int64_t{1} << 40))
    t.batch *= 2;
  std::vector<double> ns = {first};
  double spent = first;
  while (static_cast<int64_t>(ns.size()) < opt.min_batches ||
         (spent < opt.budget_ns &&
          (opt.max_batches == 0 ||
           static_cast<int64_t>(ns.size()) < opt.max_batches))) {
    ns.push_back(run(t.batch));
    spent += ns.back();
  }
  std::sort(ns.begin(), ns.end());
  t.batches = static_cast<int64_t>(ns.size());
  t.median_ns = ns[ns.size() / 2] / static_cast<double>(t.batch);
  t.min_ns = ns.front() / static_cast<double>(t.batch);
  return t;
}

}  // namespace amarena::bench

#endif  // AMARENA_BENCH_BATCH_TIMER_H_
