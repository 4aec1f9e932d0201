#include "tools/fidelity_against.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "search/replay.h"
#include "search/search.h"

namespace amarena::tools {

absl::StatusOr<std::vector<const PriceTable*>> AgainstTables(
    const std::vector<std::string>& names, const std::string& host_label) {
  std::vector<const PriceTable*> out;
  auto push = [&](const PriceTable* t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  for (const std::string& name : names) {
    if (name == "all") {
      for (const PriceTable& t : ShippedPriceTables())
        if (t.label != host_label) push(&t);
      continue;
    }
    const PriceTable* t = FindShipped(name);
    if (t == nullptr) {
      std::string known;
      for (const PriceTable& k : ShippedPriceTables())
        absl::StrAppend(&known, known.empty() ? "" : ", ", k.label);
      return absl::InvalidArgumentError(
          absl::StrCat("--against: no shipped price table '", name,
                       "' (known: ", known, ", all)"));
    }
    push(t);
  }
  return out;
}

absl::StatusOr<ImplPtr> PickUnder(const PriceTable& table, const Spec& root,
                                  const Target& host) {
  Target other = host;
  other.SetPrices(table.cost);
  // The table's L3 share is its own: the root's budget (the host's whole
  // budget, unless the Spec names one) becomes the table's. The pick is
  // then priced with the host's prices under that budget.
  Spec other_root = root;
  if (root.budget == host.MaxBudget()) other_root.budget = other.MaxBudget();
  Searcher searcher(other);
  absl::StatusOr<ImplPtr> pick = searcher.Solve(other_root);
  if (!pick.ok()) return pick.status();
  Target priced = other;
  priced.cost = host.cost;
  return Replay(other_root, EncodeDecisions(**pick), priced);
}

}  // namespace amarena::tools
