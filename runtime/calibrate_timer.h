// How `amarena calibrate` (runtime/calibrate.cc) times a loop in core
// cycles, and how it spreads the samples of its short figures over the whole
// calibration. Internal to the runtime's calibration.
#ifndef AMARENA_RUNTIME_CALIBRATE_TIMER_H_
#define AMARENA_RUNTIME_CALIBRATE_TIMER_H_

#include <cstdint>
#include <functional>
#include <vector>

namespace amarena::calibrate_loops {

// Times runs in cycles of the clock they ran at. Each timed run is bracketed
// by two chains of dependent adds (one cycle each) that time the clock just
// before and just after it, and its cycles are its nanoseconds over the
// faster bracket's nanoseconds per cycle (an interrupt can only slow a
// bracket). So a clock that moves during a calibration (a turbo step) moves a
// run and its brackets alike: timed against one clock read at the start
// instead, the dense L2 line of the Intel Xeon guest read 1.52-1.79 cycles
// from one calibration to the next, and 1.59-1.65 bracketed.
class CycleTimer {
 public:
  // Runs last at least `min_run_ns`; brackets a quarter of `least_run_ns`,
  // the shortest run any figure asks for.
  CycleTimer(int64_t min_run_ns, int64_t least_run_ns);

  // Per unit of count: cycles, and nanoseconds.
  struct Figure {
    double cycles = 0;
    double ns = 0;
  };

  // How many units one timed run of a figure does: sized by the first Time,
  // so that later rounds of the same figure reuse it. A run lasts at least
  // `min_run_ns` (0: the timer's).
  struct RunCount {
    int64_t n = 1;
    bool sized = false;
    int64_t min_run_ns = 0;
  };

  // Appends `reps` timed runs of run(count->n) to `runs`, per unit of count,
  // count->n doubled first until one run lasts its least run time (the
  // first, short runs double as warm-up).
  // With `warm`, a count sized before is run once untimed first (sizing it
  // warms too): a later round of a figure whose working set fits a cache
  // then finds it there, not evicted by the figures timed in between.
  void Time(const std::function<void(int64_t)>& run, RunCount* count, int reps,
            std::vector<Figure>* runs, bool warm = false);

  // The first quartile of runs by cycles (of 7 or 8, the second least; of 4
  // or fewer, the least). What the core does per cycle is only ever slowed
  // by what else runs (an interrupt, a neighbour in a shared cache or on the
  // core's other hardware thread), so the low end is the figure, and the
  // second least of 7 is not one lucky run.
  static Figure FirstQuartile(std::vector<Figure> runs);
  // The median of runs by cycles (of 8, the fourth least). For the DRAM
  // passes, which other work also makes faster: on the Intel Xeon guest
  // (480 MiB of L3 in all, shared), one strided pass over the 512 MiB set
  // in four read 36-43 cycles a line against 47-48 for the rest, as what
  // the shared L3 kept of the set varied, so the first quartile moved by
  // 11 % from one calibration to the next.
  static Figure MedianOf(std::vector<Figure> runs);

  // The clock: the median over every bracket so far.
  double Ghz() const;

 private:
  static int64_t ChainNs(int64_t iters);

  int64_t min_run_ns_;
  int64_t chain_iters_ = 1 << 10;
  std::vector<double> ns_per_cycle_;
};

// Figures timed one run at a time, a round of all of them between the long
// passes of a calibration (each level's DRAM reads, each round of the DRAM
// runs and bands), so that a figure's runs spread over seconds. On an Intel
// Xeon guest (Emerald Rapids) whose cores' other hardware threads belong to
// other tenants, a figure's consecutive runs kept one rate for tens of
// milliseconds and changed it from one calibration to the next: L1 loads
// read 10.8 cycles a round in every run of one calibration and 15 in every
// run of the next (7 consecutive runs of 5 ms each; their first quartile
// spread 40 % over five calibrations).
class SampledFigures {
 public:
  explicit SampledFigures(CycleTimer* timer) : timer_(timer) {}

  // A figure of run(count) units a run, each run at least `min_run_ns`;
  // `warm` as in CycleTimer::Time. Returns its index.
  int Add(std::function<void(int64_t)> run, int64_t count, int64_t min_run_ns,
          bool warm);
  // One timed run of every figure.
  void Round();
  // A figure's first quartile over its runs so far (at least one Round).
  CycleTimer::Figure Get(int i) const;

 private:
  struct Entry {
    std::function<void(int64_t)> run;
    CycleTimer::RunCount count;
    bool warm = false;
    std::vector<CycleTimer::Figure> runs;
  };
  CycleTimer* timer_;
  std::vector<Entry> entries_;
};

}  // namespace amarena::calibrate_loops

#endif  // AMARENA_RUNTIME_CALIBRATE_TIMER_H_
