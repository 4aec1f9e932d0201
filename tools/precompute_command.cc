// amarena precompute SPEC...: search each Spec for this machine and store the
// result in the search database, so that later processes (an inference
// engine loading a model, say) get its kernel by lookup. Specs already there
// cost a lookup.
#include <cstdio>
#include <string>
#include <vector>

#include "core/spec_text.h"
#include "runtime/runtime.h"
#include "runtime/search_db.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace amarena::tools {

int PrecomputeCommand(const std::vector<std::string>& specs, bool json) {
  Runtime& rt = Runtime::Default();
  if (rt.db() == nullptr) {
    std::fprintf(stderr,
                 "amarena: no search database to fill (AMARENA_DB=%s)\n",
                 DefaultDbPath().empty() ? "off" : DefaultDbPath().c_str());
    return 2;
  }
  int failed = 0, searched = 0, stored_before = 0;
  double search_ms = 0;
  for (const std::string& text : specs) {
    absl::StatusOr<KernelPtr> k = rt.Get(text);
    if (!k.ok()) {
      std::fprintf(stderr, "amarena: %s\n",
                   std::string(k.status().message()).c_str());
      ++failed;
      continue;
    }
    bool had = (*k)->source() == KernelSource::kDatabase;
    (had ? stored_before : searched) += 1;
    search_ms += (*k)->synth_ms();
    std::printf("%-8s %8.2f ms  %s\n", had ? "stored" : "searched",
                (*k)->synth_ms(), PrintSpec((*k)->spec()).c_str());
  }
  std::printf("%d searched, %d already stored, %d failed; database %s\n",
              searched, stored_before, failed, rt.db()->path().c_str());
  if (json) {
    JsonLine j;
    j.Add("searched", static_cast<int64_t>(searched));
    j.Add("already_stored", static_cast<int64_t>(stored_before));
    j.Add("failed", static_cast<int64_t>(failed));
    j.Add("search_ms", search_ms);
    j.Add("db", rt.db()->path());
    std::printf("%s\n", j.str().c_str());
  }
  return failed ? 2 : 0;
}

}  // namespace amarena::tools
