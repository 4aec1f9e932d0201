#include "search/replay.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/cost_model.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "search/rewrites/registry.h"

namespace amarena {

namespace {

void Encode(const ImplNode& n, std::string& out) {
  if (!out.empty()) out.push_back(';');
  out += Describe(ActionOf(n.how));
  for (const auto& c : n.children) Encode(*c, out);
}

// Trees are shallow (tens of levels); this bounds the recursion on hostile
// input all the same.
constexpr int kMaxDepth = 256;

absl::StatusOr<ImplPtr> Build(const Spec& s,
                              const std::vector<absl::string_view>& words,
                              size_t& next, const Target& t, const Fill& fill,
                              int depth) {
  if (next >= words.size())
    return absl::InvalidArgumentError(absl::StrCat(
        "stored decisions end before ", PrintSpec(s), " is implemented"));
  if (depth > kMaxDepth)
    return absl::InvalidArgumentError("stored decisions nest too deep");
  if (words[next] == kFillWord) {
    if (!fill)
      return absl::InvalidArgumentError(absl::StrCat(
          "'", kFillWord, "' stands for a search, which is not available here"));
    ++next;
    return fill(s);
  }
  AMARENA_ASSIGN_OR_RETURN(Action a, ParseAction(words[next++]));
  AMARENA_ASSIGN_OR_RETURN(Candidate c, ApplyAction(s, a, t));
  auto node = std::make_shared<ImplNode>();
  node->spec = s;
  std::vector<Cost> costs;
  for (const Spec& child : c.expansion.children) {
    AMARENA_ASSIGN_OR_RETURN(ImplPtr built,
                             Build(child, words, next, t, fill, depth + 1));
    costs.push_back(built->cost);
    node->children.push_back(std::move(built));
  }
  node->cost = ComposeCost(s, c.expansion, costs, t);
  node->how = c.expansion;
  return ImplPtr(std::move(node));
}

}  // namespace

std::string EncodeDecisions(const ImplNode& root) {
  std::string out;
  Encode(root, out);
  return out;
}

absl::StatusOr<ImplPtr> Replay(const Spec& root, absl::string_view decisions,
                               const Target& t, const Fill& fill) {
  if (!root.budget)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot replay decisions for ", PrintSpec(root),
                     ": budget is unset, must be bound to a target"));
  std::vector<absl::string_view> words = absl::StrSplit(decisions, ';');
  size_t next = 0;
  AMARENA_ASSIGN_OR_RETURN(ImplPtr tree, Build(root, words, next, t, fill, 0));
  if (next != words.size())
    return absl::InvalidArgumentError(absl::StrCat(
        "stored decisions for ", PrintSpec(root), " have ", words.size() - next,
        " left over after the tree is complete"));
  return tree;
}

}  // namespace amarena
