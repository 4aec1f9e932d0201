// Select a microkernel.
// Applies to: any Spec for which a kernel in core/kernels.h says `applies` and
// whose
//   scratch registers fit the VRF budget.
// Yields: a Kernel leaf; no sub-Specs.
#include "core/status_macros.h"
#include "search/rewrites/registry.h"

namespace amarena {

void SelectKernel(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  AMARENA_CHECK(s.budget.has_value());
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

}  // namespace amarena
