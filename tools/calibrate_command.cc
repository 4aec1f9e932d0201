// amarena calibrate: measures the cost model's prices on this host
// (runtime/calibrate.h) and stores them in the search database for this CPU,
// where every later process finds them (runtime/prices.h).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/calibrate.h"
#include "runtime/prices.h"
#include "runtime/search_db.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace amarena::tools {

int CalibrateCommand(bool json, bool save, bool fresh) {
  // The table a previous calibration stored for this CPU: within noise of
  // it, a price stays (runtime/calibrate.h).
  std::optional<PriceTable> stored;
  const std::string db_path = DefaultDbPath();
  if (!fresh && !db_path.empty())
    stored = LoadStoredPrices(db_path, IdentityOf(DetectCpu()));
  CalibrationOptions options;
  if (stored) options.standing = &stored->cost;
  absl::StatusOr<Calibration> c = Calibrate(options);
  if (!c.ok()) {
    std::fprintf(stderr, "amarena: %s\n",
                 std::string(c.status().message()).c_str());
    return 2;
  }
  const PriceTable& t = c->table;
  std::printf("cpu:       %s\n", t.cpu.Describe().c_str());
  std::printf("clock:     %.3f GHz (dependent adds); %.3f from ymm FMAs at 2 "
              "a cycle\n",
              c->ghz, c->ghz_from_fma);
  std::printf("fma:       ymm %.2f/cycle, zmm %s/cycle, latency %.2f cycles\n",
              c->fma_ymm_per_cycle,
              c->fma_zmm_per_cycle > 0
                  ? absl::StrFormat("%.2f", c->fma_zmm_per_cycle).c_str()
                  : "n/a",
              c->fma_latency_cycles);
  std::printf("L1 ymm:    %.2f loads/cycle, %.2f stores/cycle, %.2f loads/cycle "
              "beside FMAs (%.3fx the time with B straddling lines)\n",
              c->loads_per_cycle, c->stores_per_cycle,
              c->loads_beside_fmas_per_cycle, c->split_beside_fmas_ratio);
  if (c->zmm_loads_per_cycle > 0)
    std::printf("L1 zmm:    %.2f loads/cycle, %.2f stores/cycle\n",
                c->zmm_loads_per_cycle, c->zmm_stores_per_cycle);
  std::printf("lines:     %-5s %10s %14s %16s\n", "level", "set",
              "dense cyc/line", "strided cyc/line");
  for (const Calibration::LevelReads& l : c->levels)
    std::printf("           %-5s %6lld KiB %14.3f %16.3f\n", l.name.c_str(),
                static_cast<long long>(l.bytes >> 10), l.dense_cycles,
                l.strided_cycles);
  std::printf("dram runs: sequential %.1f GB/s; %% of it by run length:",
              c->dram_sequential_gbps);
  for (const auto& [bytes, pct] : c->dram_runs)
    std::printf(" %lldB %.0f%%", static_cast<long long>(bytes), pct);
  std::printf("\n           half rate at %lld bytes\n",
              static_cast<long long>(c->dram_run_bytes));
  std::printf("dram bands: %lld rows side by side, %% of sequential by piece:",
              static_cast<long long>(c->dram_band_rows));
  for (const auto& [bytes, pct] : c->dram_bands)
    std::printf(" %lldB %.0f%%", static_cast<long long>(bytes), pct);
  std::printf("\n");
  std::printf(
      "stream:    %.1f GB/s; with prefetches %.1f GB/s (prefetcht0, same "
      "columns), %.1f GB/s (prefetcht1, a line along)\n",
      c->stream_gbps, c->stream_prefetched_gbps, c->stream_prefetched_l2_gbps);
  static constexpr const char* kChoice[] = {"none", "prefetcht0",
                                            "prefetcht1 a line along"};
  for (const PrefetchTiming& p : c->prefetch_trees)
    std::printf(
        "prefetch:  %s %s, us per call: none %.0f, prefetcht0 %.0f, "
        "prefetcht1 %.0f (time over %s's, round by round: %.3f, %.3f, "
        "%.3f): %s\n",
        std::string(Name(p.isa)).c_str(), kPrefetchTreeSpec, p.us[0], p.us[1],
        p.us[2], kChoice[p.standing], p.ratio[0], p.ratio[1], p.ratio[2],
        kChoice[p.chosen]);
  std::printf("prices:    %s (units of 1/6 cycle)\n",
              CostParamsText(t.cost).c_str());
  std::printf("clamped:   %s\n",
              c->clamped.empty() ? "none"
                                 : absl::StrJoin(c->clamped, " ").c_str());
  std::printf("settled:   %s\n",
              !c->had_standing ? "no table stored for this CPU: all as measured"
              : c->settled.empty()
                  ? "none (every price as measured)"
                  : absl::StrCat(absl::StrJoin(c->settled, " "),
                                 " kept the stored price (within ",
                                 options.settle_pct, " %)")
                        .c_str());
  std::printf("fingerprint prices hash: %s; %.1f s\n",
              PricesHash(t.cost).c_str(), c->seconds);

  std::string saved_to;
  int status = 0;
  if (save) {
    std::string path = DefaultDbPath();
    if (path.empty()) {
      std::printf("not saved: AMARENA_DB is off\n");
    } else if (absl::Status s = StorePrices(path, t); !s.ok()) {
      std::fprintf(stderr, "amarena: %s\n", std::string(s.message()).c_str());
      status = 2;
    } else {
      saved_to = path;
      std::printf("saved for this CPU in %s\n", path.c_str());
    }
  }
  if (json) {
    JsonLine j;
    j.AddRaw("table", PricesToJson(t));
    j.Add("ghz", c->ghz);
    j.Add("ghz_from_fma", c->ghz_from_fma);
    j.Add("fma_ymm_per_cycle", c->fma_ymm_per_cycle);
    j.Add("fma_zmm_per_cycle", c->fma_zmm_per_cycle);
    j.Add("fma_latency_cycles", c->fma_latency_cycles);
    j.Add("loads_per_cycle", c->loads_per_cycle);
    j.Add("stores_per_cycle", c->stores_per_cycle);
    j.Add("zmm_loads_per_cycle", c->zmm_loads_per_cycle);
    j.Add("zmm_stores_per_cycle", c->zmm_stores_per_cycle);
    j.Add("loads_beside_fmas_per_cycle", c->loads_beside_fmas_per_cycle);
    j.Add("split_beside_fmas_ratio", c->split_beside_fmas_ratio);
    for (const Calibration::LevelReads& l : c->levels) {
      j.Add(l.name + "_bytes", l.bytes);
      j.Add(l.name + "_dense_cycles", l.dense_cycles);
      j.Add(l.name + "_strided_cycles", l.strided_cycles);
    }
    j.Add("pitch_bytes", c->pitch_bytes);
    j.Add("dram_sequential_gbps", c->dram_sequential_gbps);
    for (const auto& [bytes, pct] : c->dram_runs)
      j.Add(absl::StrCat("dram_run_", bytes, "_pct"), pct);
    j.Add("dram_run_bytes", c->dram_run_bytes);
    for (const auto& [bytes, pct] : c->dram_bands)
      j.Add(absl::StrCat("dram_band_", bytes, "_pct"), pct);
    j.Add("stream_gbps", c->stream_gbps);
    j.Add("stream_prefetched_gbps", c->stream_prefetched_gbps);
    j.Add("stream_prefetched_l2_gbps", c->stream_prefetched_l2_gbps);
    for (const PrefetchTiming& p : c->prefetch_trees) {
      const std::string isa(Name(p.isa));
      for (int i = 0; i < 3; ++i) {
        j.Add(absl::StrCat("prefetch_", isa, "_", i, "_us"), p.us[i]);
        j.Add(absl::StrCat("prefetch_", isa, "_", i, "_ratio"), p.ratio[i]);
        j.Add(absl::StrCat("prefetch_", isa, "_", i, "_faster"),
              static_cast<int64_t>(p.faster[i]));
      }
      j.Add(absl::StrCat("prefetch_", isa, "_rounds"),
            static_cast<int64_t>(p.rounds));
      j.Add(absl::StrCat("prefetch_", isa, "_standing"), p.standing);
      j.Add(absl::StrCat("prefetch_", isa, "_chosen"), p.chosen);
    }
    j.Add("clamped", absl::StrJoin(c->clamped, " "));
    j.Add("standing", c->had_standing ? "stored" : "");
    j.Add("settled", absl::StrJoin(c->settled, " "));
    j.AddRaw("measured", PricesToJson(PriceTable{.label = "measured",
                                                 .cpu = t.cpu,
                                                 .cost = c->measured}));
    j.Add("prices_hash", PricesHash(t.cost));
    j.Add("saved_to", saved_to);
    j.Add("seconds", c->seconds);
    std::printf("%s\n", j.str().c_str());
  }
  return status;
}

}  // namespace amarena::tools
