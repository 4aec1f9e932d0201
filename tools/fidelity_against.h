// `amarena fidelity --against`: the picks of other CPUs' shipped price
// tables for the same Spec, searched with this host's caches and priced with
// its prices, to be timed beside the host's own pick (tools/
// fidelity_command.cc).
#ifndef AMARENA_TOOLS_FIDELITY_AGAINST_H_
#define AMARENA_TOOLS_FIDELITY_AGAINST_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/impl.h"
#include "core/price_table.h"
#include "core/spec.h"
#include "core/target.h"

namespace amarena::tools {

// Another price table's pick for the same Spec, timed beside the host's.
struct OtherPick {
  std::string label;
  ImplPtr tree;      // rebuilt under the host's prices (its cost is the host's)
  size_t index = 0;  // its entry among the measured trees
};

// The shipped tables `names` asks for ("all": every one but `host_label`),
// or InvalidArgument naming an unknown label and the known ones.
absl::StatusOr<std::vector<const PriceTable*>> AgainstTables(
    const std::vector<std::string>& names, const std::string& host_label);

// The tree the search picks for `root` under `table`'s prices and the
// host's caches, replayed under the host's target so that its model cost
// is comparable with the other trees'.
absl::StatusOr<ImplPtr> PickUnder(const PriceTable& table, const Spec& root,
                                  const Target& host);

}  // namespace amarena::tools

#endif  // AMARENA_TOOLS_FIDELITY_AGAINST_H_
