#include "runtime/calibrate_dram.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "runtime/calibrate_loops.h"

namespace amarena {

using namespace calibrate_loops;

// Where the rate of R-byte runs stops rising steeply: the knee below which
// runs stream clearly slower than a typical run. The curve is made monotone
// first (each length gets the best rate of any length up to it: a longer
// run never streams worse, whatever a prefetcher did in one pass), and the
// threshold is 90 % of its median or 50 %, whichever is lower. Every host
// measured so far has runs of 256 B to 4 KiB on a plateau near half the
// sequential rate and runs of 8-16 KiB climbing above it: a threshold of
// 50 % or of 90 % of the best rate then falls on the plateau, and the
// crossing jumped between 256 B and 2.6 KiB from one calibration to the next
// on a Zen 3 host; the median is a point of the plateau. The knee is the
// shortest measured length whose rate reaches the threshold (at least a
// line), not a length interpolated between two: what it is compared with (a
// panel's run, core/cost_model.cc SideBySideRuns) is a power of two, as the
// measured lengths are, and on an Intel Xeon host where 50 % fell halfway (in
// log2) between 128 B (43-45 %) and 256 B (55-57 %), an interpolated knee
// rounded to 128 in two calibrations of five and to 256 in three. A length
// whose rate lies within the noise of the threshold still flips the knee
// (the Emerald Rapids guest's 128 B runs: 45-51 % against 49.5), so a prior
// knee that the data cannot tell from the one read off stands.
int64_t HalfRateRun(const std::vector<std::pair<int64_t, double>>& runs,
                    int64_t prior) {
  if (runs.empty()) return kLine;
  std::vector<std::pair<int64_t, double>> env = runs;
  for (size_t i = 1; i < env.size(); ++i)
    env[i].second = std::max(env[i].second, env[i - 1].second);
  const double threshold =
      std::min(50.0, 0.9 * env[env.size() / 2].second);  // env is sorted
  // The shortest length reaching `t` (not reached past the median: the
  // threshold is at most it).
  auto reaching = [&](double t) {
    for (const auto& [bytes, pct] : env)
      if (pct >= t) return std::max<int64_t>(kLine, bytes);
    return std::max<int64_t>(kLine, env.back().first);
  };
  // Within the measurement's noise of the threshold, the knee is not
  // decided by this calibration: the prior stands when it is a length
  // between the knees of a threshold kKneeSlack lower and higher.
  const int64_t lo = reaching(threshold * (1 - kKneeSlack));
  const int64_t hi = reaching(threshold * (1 + kKneeSlack));
  const bool measured = std::any_of(env.begin(), env.end(), [&](auto& r) {
    return std::max<int64_t>(kLine, r.first) == prior;
  });
  if (measured && prior >= lo && prior <= hi) return prior;
  return reaching(threshold);
}

DramFigures MeasureDram(const float* set, int64_t set_bytes, int rounds,
                        int64_t prior_run_bytes, Calibration& c,
                        const std::function<void()>& between) {
  // Runs: a matrix of 32 KiB rows, the DRAM set up to 512 MiB, read half at
  // a time, the halves taking turns, so that a line is read again only
  // after half the set (the set is at least twice L3 where memory allows:
  // each pass then reads at least all of L3 between two reads of a line).
  // Reading the whole of a 256 MiB set each pass on an Intel Xeon guest
  // whose tenants share 260 MiB of L3, short runs read 8-10 % faster than
  // with a 512 MiB set, by a share that moved with the neighbours. A set of
  // only twice one core's share of L3 streamed partly from L3 in some
  // calibrations and not in others on the Zen 4 host (AMD's L3 keeps what
  // it keeps): the sequential rate read 17 or 25 GB/s on alternate
  // calibrations, and every run's percentage of it moved by a third. Each
  // round reads the matrix once at every run length, sequentially first, so
  // a neighbour's load that comes and goes weighs on all of them alike; a
  // length's figure is the median over the rounds of its share of the
  // sequential rate in the round (the first round, a warm-up, is dropped).
  const size_t pitch = static_cast<size_t>(c.dram_row_bytes) / sizeof(float);
  const size_t rows = static_cast<size_t>(
      std::min<int64_t>(set_bytes, int64_t{512} << 20) / c.dram_row_bytes / 2);
  int pass = 0;
  auto half = [&] { return set + (pass++ % 2) * rows * pitch; };
  std::vector<size_t> run_floats = {pitch};
  for (int64_t bytes : CostParams::kDramRunBytes)
    run_floats.push_back(static_cast<size_t>(bytes) / sizeof(float));
  std::vector<std::vector<double>> pass_ns(run_floats.size());
  for (int round = 0; round <= std::max(1, rounds); ++round) {
    for (size_t i = 0; i < run_floats.size(); ++i) {
      const int64_t t0 = ThreadNs();
      RunPass(half(), rows, pitch, run_floats[i]);
      if (round > 0)
        pass_ns[i].push_back(static_cast<double>(ThreadNs() - t0));
    }
    between();
  }
  const double seq_ns = Median(pass_ns[0]);
  c.dram_sequential_gbps =
      static_cast<double>(rows * pitch * sizeof(float)) / seq_ns;
  for (size_t i = 1; i < run_floats.size(); ++i) {
    std::vector<double> pct;
    for (size_t r = 0; r < pass_ns[i].size(); ++r)
      pct.push_back(100 * pass_ns[0][r] / pass_ns[i][r]);
    c.dram_runs.emplace_back(CostParams::kDramRunBytes[i - 1],
                             Median(std::move(pct)));
  }
  c.dram_run_bytes = HalfRateRun(c.dram_runs, prior_run_bytes);

  // Bands, and prefetching a stream: the same matrix read as the
  // vector-matrix kernels read a plain B (blocks of kBlockRows rows swept
  // across, a piece of every row in turn), in pieces of each band length,
  // and in pieces of kBlockRunBytes with the broadcast kernel's prefetches;
  // each round reads it sequentially first and every band's figure is the
  // median over the rounds of its share of the sequential rate, as above.
  constexpr int kBands = CostParams::kDramBandSteps;
  // + seq, prefetched (stream_prefetch 1 and kStreamPrefetchL2)
  std::array<std::vector<double>, kBands + 3> block_ns;
  for (int round = 0; round <= std::max(1, rounds); ++round) {
    for (int i = 0; i < kBands + 3; ++i) {
      const int64_t t0 = ThreadNs();
      if (i == 0)
        RunPass(half(), rows, pitch, pitch);
      else if (i <= kBands)
        BlockPass(half(), rows, pitch,
                  CostParams::kDramBandBytes[i - 1] / sizeof(float), false);
      else
        BlockPass(half(), rows, pitch, kBlockRunBytes / sizeof(float),
                  i == kBands + 1 ? 1 : static_cast<int>(kStreamPrefetchL2));
      if (round > 0)
        block_ns[i].push_back(static_cast<double>(ThreadNs() - t0));
    }
    between();
  }
  const double block_bytes = static_cast<double>(
      rows / kBlockRows * kBlockRows * pitch * sizeof(float));
  const double seq_bytes = static_cast<double>(rows * pitch * sizeof(float));
  c.dram_band_rows = static_cast<int64_t>(kBlockRows);
  for (int i = 1; i <= kBands; ++i) {
    std::vector<double> pct;
    for (size_t r = 0; r < block_ns[i].size(); ++r)
      pct.push_back(100 * (block_bytes / block_ns[i][r]) /
                    (seq_bytes / block_ns[0][r]));
    c.dram_bands.emplace_back(CostParams::kDramBandBytes[i - 1],
                              Median(std::move(pct)));
  }
  // Without prefetches, the stream is the band of kBlockRunBytes (the
  // second length).
  static_assert(CostParams::kDramBandBytes[1] == kBlockRunBytes);
  c.stream_gbps = block_bytes / Median(block_ns[2]);
  c.stream_prefetched_gbps = block_bytes / Median(block_ns[kBands + 1]);
  c.stream_prefetched_l2_gbps = block_bytes / Median(block_ns[kBands + 2]);
  // Each band's time over the shortest pieces' time, round by round.
  DramFigures f;
  for (int i = 0; i < kBands; ++i) {
    std::vector<double> slower;
    for (size_t r = 0; r < block_ns[1].size(); ++r)
      slower.push_back(block_ns[1 + i][r] / block_ns[1][r]);
    f.band_slower[static_cast<size_t>(i)] = Median(std::move(slower));
  }
  return f;
}

}  // namespace amarena
