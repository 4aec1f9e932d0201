// amarena explain SPEC: run the search only and show what it chose and why it
// costs what it does: one node per line with its Spec, cost and peak use per
// level, then the search statistics.
#include <cstdio>

#include "core/spec_text.h"
#include "runtime/host.h"
#include "search/search.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace amarena::tools {

int ExplainCommand(const std::string& text, bool json) {
  absl::StatusOr<Spec> spec = ParseSpec(text);
  absl::StatusOr<Target> target = HostTarget();
  absl::Status bad = !spec.ok() ? spec.status() : target.status();
  if (!bad.ok()) {
    std::fprintf(stderr, "amarena: %s\n", std::string(bad.message()).c_str());
    return 2;
  }
  Spec root = target->Bind(*spec);
  Searcher searcher(*target);
  absl::StatusOr<ImplPtr> impl = searcher.Solve(root);
  if (!impl.ok()) {
    std::fprintf(stderr, "amarena: %s\n",
                 std::string(impl.status().message()).c_str());
    return 2;
  }
  const SearchStats& st = searcher.stats();
  std::printf("%s", PrintImpl(**impl).c_str());
  std::printf(
      "search: %.2f ms, %lld Specs solved, %lld candidates costed, %d nodes\n",
      st.ms, static_cast<long long>(st.specs_solved),
      static_cast<long long>(st.candidates_tried), CountNodes(**impl));
  if (json) {
    JsonLine j;
    j.Add("spec", PrintSpec(root));
    j.Add("cost", (*impl)->cost.main);
    j.Add("peak_vrf", static_cast<int64_t>((*impl)->cost.peak_vrf));
    j.Add("peak_l1_lines", (*impl)->cost.peak_l1);
    j.Add("search_ms", st.ms);
    j.Add("specs_solved", st.specs_solved);
    j.Add("candidates", st.candidates_tried);
    j.Add("nodes", static_cast<int64_t>(CountNodes(**impl)));
    std::printf("%s\n", j.str().c_str());
  }
  return 0;
}

}  // namespace amarena::tools
