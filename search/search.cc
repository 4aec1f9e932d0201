#include "search/search.h"

#include <algorithm>
#include <bit>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "core/cost_model.h"
#include "core/spec_text.h"
#include "core/status_macros.h"
#include "search/rewrites/registry.h"

namespace amarena {

absl::StatusOr<ImplPtr> Searcher::Solve(const Spec& root) {
  if (!root.budget)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot search ", PrintSpec(root),
                     ": budget is unset, must be bound to a target"));
  auto start = std::chrono::steady_clock::now();
  MemoEntry e = SolveExact(root);
  stats_.ms += std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - start)
                   .count();
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed))
    return absl::CancelledError(
        absl::StrCat("search for ", PrintSpec(root), " was cancelled"));
  if (!e.feasible) return NoTreeError(root);
  return Build(root);
}

std::optional<Cost> Searcher::BestCost(const Spec& s) {
  MemoEntry e = SolveExact(s);
  if (!e.feasible) return std::nullopt;
  return e.cost;
}

std::optional<Action> Searcher::BestAction(const Spec& s) {
  MemoEntry e = SolveExact(s);
  if (!e.feasible) return std::nullopt;
  return e.action;
}

namespace {

int CeilLog2(int64_t x) {
  return x <= 1 ? 0 : std::bit_width(static_cast<uint64_t>(x - 1));
}

// The fewest scratch vector registers any leaf computing `s`'s own kind (a
// matmul's as kMatmulAccum) takes, from the catalogue. Every tree for `s`
// holds such a leaf, and budgets only shrink down the tree.
int LeastScratchVregs(const Spec& s) {
  const Kind kind = s.IsMatmul() ? Kind::kMatmulAccum : s.kind;
  int least = -1;
  for (KernelId id : AllKernels()) {
    const KernelInfo& k = Info(id);
    if (k.kind == kind && (least < 0 || k.least_scratch_vregs < least))
      least = k.least_scratch_vregs;
  }
  return std::max(least, 0);
}

}  // namespace

Budget UsableBudget(const Spec& s, const Target& t) {
  Budget u;
  const int out = s.OutputIndex();
  const TensorSpec c = s.Operand(out);
  // Registers: the output tile (if not yet in registers, one per element at
  // worst; no other operand is ever bound to registers) plus the most scratch
  // any kernel takes at a leaf of a tree for `s`.
  int scratch = 0;
  for (KernelId id : AllKernels())
    scratch = std::max(scratch, Info(id).most_scratch_vregs(s, t));
  u.vrf = static_cast<int32_t>(std::min<int64_t>(
      (c.aux.level == Level::kVRF ? 0 : c.Elements()) + scratch, 1 << 20));
  // GPRs: a counted loop runs at least twice, so counted loops over one
  // dimension nest at most ceil(log2 extent) deep, the batch loop one more;
  // packing B adds its pointer and the loops of its copy, and so does a bf16
  // C's f32 buffer.
  int loops = CeilLog2(s.m) + CeilLog2(s.n) +
              (s.IsMatmul() ? CeilLog2(s.k) : 0) + (s.b > 1 ? 1 : 0);
  bool packable = s.IsMatmul() &&
                  (!s.aux[1].layout.packed() || s.aux[1].layout.paired()) &&
                  Faster(Level::kL1, s.aux[1].level);
  const bool c_buffer = s.IsMatmul() && s.aux[2].dtype == DType::kBF16 &&
                        Faster(Level::kL1, s.aux[2].level);
  u.gpr = loops + (packable ? 1 + loops : 0) + (c_buffer ? 1 + loops : 0);
  // Cache lines: an operand farther out than level X is placed in X at most
  // twice on a path (a view or buffer, and the source view of its copy); each
  // placement at most doubles the peak (budgets round to powers of two).
  for (Level x : kCacheLevels) {
    int placements = 0;
    int64_t most = 0;
    for (int i = 0; i < s.NumOperands(); ++i) {
      if (!Faster(x, s.aux[i].level)) continue;
      TensorSpec op = s.Operand(i);
      // A bf16 C may also be placed as its f32 buffer.
      placements += c_buffer && i == 2 ? 3 : 2;
      most = std::max(most, 2 * op.Lines() + op.OuterExtent());
    }
    u.Lines(x) = placements == 0 ? 0 : CeilPow2(most) << placements;
  }
  return u;
}

Spec ClampBudget(const Spec& s, const Budget& usable) {
  Spec c = s;
  Budget& b = *c.budget;
  b.vrf = std::min(b.vrf, usable.vrf);
  b.gpr = std::min(b.gpr, usable.gpr);
  for (Level l : kCacheLevels)
    b.Lines(l) = std::min(b.Lines(l), usable.Lines(l));
  return c;
}

// Budgets no tree can fit, known without search: an operand farther out than
// L1 must be brought into L1 (a view or buffer of at least one line), and
// the kernels for the Spec's kind take at least LeastScratchVregs registers.
bool ObviouslyInfeasible(const Spec& s) {
  AMARENA_CHECK(s.budget.has_value());
  const Budget& b = *s.budget;
  if (b.vrf < LeastScratchVregs(s)) return true;
  if (b.l1_lines == 0)
    for (int i = 0; i < s.NumOperands(); ++i)
      if (Faster(Level::kL1, s.aux[i].level)) return true;
  return false;
}

absl::Status NoTreeError(const Spec& root) {
  if (ObviouslyInfeasible(root)) {
    // The same two rules as ObviouslyInfeasible, each with its reason.
    const int least = LeastScratchVregs(root);
    const bool vrf = root.budget->vrf < least;
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot implement ", PrintSpec(root), ": budget is ",
        PrintPeak(*root.budget), ", must have at least ",
        vrf ? absl::StrCat("vrf:", least,
                           " (every kernel that computes it takes that many "
                           "scratch vector registers or more)")
            : "l1:1 (an operand outside L1 is brought into it)"));
  }
  return absl::UnimplementedError(
      absl::StrCat("cannot implement ", PrintSpec(root),
                   ": no tree fits the budget, must be larger (the "
                   "generator has no kernel within it)"));
}

MemoEntry Searcher::SolveExact(const Spec& spec) {
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed))
    return MemoEntry{};
  memo_.NoteAsked(spec);
  if (ObviouslyInfeasible(spec)) return MemoEntry{};
  // Budget beyond what any tree could use is the same problem: clamp it, so
  // one entry answers them all.
  const Budget usable = UsableBudget(spec, target_);
  Spec s = ClampBudget(spec, usable);
  if (const MemoEntry* hit = memo_.Find(s)) return *hit;
  // Solve at the most budget the Spec could be given first: its box then
  // answers every budget from its peak up, which is most of the budgets the
  // same Spec is reached with elsewhere in the tree.
  if (options_.solve_at_top) {
    Spec top = s;
    Budget most = Budget::Max(*s.budget, target_.MaxBudget());
    top.budget =
        Budget{std::min(most.vrf, usable.vrf), std::min(most.gpr, usable.gpr),
               std::min(most.l1_lines, usable.l1_lines),
               std::min(most.l2_lines, usable.l2_lines),
               std::min(most.l3_lines, usable.l3_lines)};
    if (top.budget != s.budget) {
      MemoEntry e = SolveExact(top);
      // Its box [peak, top] holds this budget when the peak fits it (and "no
      // tree fits" at the top holds for everything below).
      if (!e.feasible || e.cost.peak.FitsIn(*s.budget)) return e;
    }
  }
  ++stats_.specs_solved;

  // Best-first: order candidates by a lower bound on their cost, composed from
  // their children's lower bounds (the model is monotone, so this bounds every
  // tree under the candidate).
  std::vector<Candidate> cands = EnumerateCandidates(s, target_);
  // (bound, index): sorting these keeps the candidates themselves in place.
  std::vector<std::pair<int64_t, uint32_t>> ranked;
  ranked.reserve(cands.size());
  // Each candidate's children's lower bounds, kept for the partial sums below.
  std::vector<absl::InlinedVector<Cost, 3>> bounds(cands.size());
  for (size_t i = 0; i < cands.size(); ++i) {
    const Candidate& c = cands[i];
    for (const Spec& child : c.expansion.children)
      bounds[i].push_back(Cost{.main = LowerBound(child, target_), .peak = {}});
    int64_t bound = ComposeCost(s, c.expansion, bounds[i], target_).main;
    ranked.emplace_back(bound, static_cast<uint32_t>(i));
  }
  // Index order breaks ties in bound, so this is the stable order.
  std::sort(ranked.begin(), ranked.end());

  MemoEntry best;
  for (size_t r = 0; r < ranked.size(); ++r) {
    const Candidate& c = cands[ranked[r].second];
    // Strictly greater: a candidate that can only tie may still win the tie on
    // its action.
    if (options_.prune && best.feasible && ranked[r].first > best.cost.main) {
      stats_.candidates_pruned += static_cast<int64_t>(ranked.size() - r);
      break;
    }
    ++stats_.candidates_tried;
    const auto& children = c.expansion.children;
    absl::InlinedVector<Cost, 3>& costs = bounds[ranked[r].second];
    bool ok = true;
    for (size_t i = 0; i < children.size() && ok; ++i) {
      MemoEntry ce = SolveExact(children[i]);
      if (!ce.feasible) {
        ok = false;
        break;
      }
      costs[i] = ce.cost;
      // Children solved so far plus bounds for the rest: once that exceeds the
      // best, the rest need not be solved.
      if (options_.prune && best.feasible && i + 1 < children.size() &&
          ComposeCost(s, c.expansion, costs, target_).main > best.cost.main) {
        ++stats_.candidates_pruned;
        ok = false;
      }
    }
    if (!ok) continue;
    Cost cost = ComposeCost(s, c.expansion, costs, target_);
    if (!best.feasible || cost < best.cost ||
        (cost == best.cost && c.action < best.action)) {
      best = MemoEntry{.feasible = true, .cost = cost, .action = c.action};
    }
  }
  memo_.Insert(s, best);
  return best;
}

ImplPtr Searcher::Build(const Spec& s) {
  MemoEntry e = SolveExact(s);
  AMARENA_CHECK(e.feasible);
  absl::StatusOr<Candidate> c = ApplyAction(s, e.action, target_);
  AMARENA_CHECK(c.ok());
  auto node = std::make_shared<ImplNode>();
  node->spec = s;
  node->how = c->expansion;
  node->cost = e.cost;
  for (const Spec& child : c->expansion.children)
    node->children.push_back(Build(child));
  return node;
}

}  // namespace amarena
