// amarena cpu: detected features, cache sizes, the cost model's prices and
// where they come from, and the measured FMA peak (ymm and zmm), so every
// speed can be read as a fraction of peak from the same run.
#include <cstdio>

#include "jit/cpu_features.h"
#include "jit/peak.h"
#include "runtime/host.h"
#include "runtime/prices.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace amarena::tools {

int CpuCommand(bool json) {
  CpuFeatures f = DetectCpu();
  PeakResult ymm = MeasureFmaPeak(256);
  PeakResult zmm = MeasureFmaPeak(512);
  absl::StatusOr<Target> t = TargetFor(f);
  absl::StatusOr<ChosenPrices> prices = HostPrices();
  if (t.ok() && prices.ok()) t->SetPrices(prices->table.cost);
  if (prices.ok() && !prices->unusable_stored.empty())
    std::fprintf(stderr, "amarena: warning: %s\n",
                 prices->unusable_stored.c_str());
  std::printf("cpu:       %s\n", f.brand.c_str());
  std::printf("features:  %s\n", f.FeatureList().c_str());
  std::printf(
      "caches:    L1d %lld KiB, L2 %lld KiB, L3 %lld KiB per core "
      "(L2 %lld KiB, L3 %lld KiB in all)\n",
      static_cast<long long>(f.l1d_bytes / 1024),
      static_cast<long long>(f.l2_bytes / 1024),
      static_cast<long long>(f.l3_bytes / 1024),
      static_cast<long long>(f.l2_total_bytes / 1024),
      static_cast<long long>(f.l3_total_bytes / 1024));
  std::printf("identity:  %s family %d model %d\n", f.vendor.c_str(),
              f.family, f.model);
  std::printf("prices:    %s\n",
              prices.ok() ? prices->Describe().c_str()
                          : std::string(prices.status().message()).c_str());
  if (prices.ok())
    std::printf("           %s\n",
                CostParamsText(prices->table.cost).c_str());
  std::printf("target:    %s\n",
              t.ok() ? t->Fingerprint().c_str()
                     : std::string(t.status().message()).c_str());
  std::printf(
      "fma peak:  ymm %.1f GFLOP/s, zmm %s GFLOP/s (one thread)\n", ymm.gflops,
      zmm.available ? absl::StrFormat("%.1f", zmm.gflops).c_str() : "n/a");
  if (json) {
    JsonLine j;
    j.Add("brand", f.brand);
    j.Add("features", f.FeatureList());
    j.Add("l1d_bytes", f.l1d_bytes);
    j.Add("l2_bytes", f.l2_bytes);
    j.Add("l3_bytes", f.l3_bytes);
    j.Add("vendor", f.vendor);
    j.Add("family", static_cast<int64_t>(f.family));
    j.Add("model", static_cast<int64_t>(f.model));
    j.Add("l2_total_bytes", f.l2_total_bytes);
    j.Add("l3_total_bytes", f.l3_total_bytes);
    j.Add("supported", t.ok());
    if (t.ok()) j.Add("target", t->Fingerprint());
    if (prices.ok()) {
      j.Add("prices_source", prices->SourceName());
      j.Add("prices_label", prices->table.label);
      j.Add("prices", prices->Describe());
      j.Add("prices_hash", PricesHash(prices->table.cost));
    } else {
      j.Add("prices_error", prices.status().message());
    }
    j.Add("peak_gflops_ymm", ymm.gflops);
    j.Add("peak_gflops_zmm", zmm.available ? zmm.gflops : 0.0);
    std::printf("%s\n", j.str().c_str());
  }
  return 0;
}

}  // namespace amarena::tools
