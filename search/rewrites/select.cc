// select: Select a microkernel.
// Applies to: any batch-1 Spec for which a kernel in core/kernels.h says
//   `applies` and whose scratch registers fit the VRF budget.
// Yields: a Kernel leaf; no sub-Specs.
// Descriptor: "select KERNEL", the kernel's name ("select broadcast_fma").
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "search/rewrites/registry.h"

namespace amarena {

namespace {

void SelectKernel(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  AMARENA_CHECK(s.budget.has_value());
  if (s.b > 1) return;  // kernels compute one batch element (loops.cc)
  for (KernelId id : AllKernels()) {
    const KernelInfo& k = Info(id);
    if (!k.applies(s, t) || k.scratch_vregs(s, t) > s.budget->vrf) continue;
    Candidate c;
    c.action = Action{.kind = ActionKind::kSelect, .kernel = id};
    c.expansion.type = NodeType::kKernel;
    c.expansion.kernel = id;
    out.push_back(std::move(c));
  }
}

std::string DescribeSelect(const Action& a) {
  return absl::StrCat("select ", Info(a.kernel).name);
}

absl::StatusOr<Action> ParseSelect(std::span<const absl::string_view> words) {
  if (words.size() != 2)
    return absl::InvalidArgumentError("want 'select KERNEL'");
  for (KernelId id : AllKernels())
    if (Info(id).name == words[1])
      return Action{.kind = ActionKind::kSelect, .kernel = id};
  return absl::InvalidArgumentError("the kernel is unknown");
}

}  // namespace

extern const Rewrite kSelectRewrite = {.name = "select",
                                       .keyword = "select",
                                       .enumerate = SelectKernel,
                                       .owns = OwnsKind<ActionKind::kSelect>,
                                       .describe = DescribeSelect,
                                       .parse = ParseSelect};

}  // namespace amarena
