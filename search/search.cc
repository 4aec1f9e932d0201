#include "search/search.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <functional>

#include "absl/strings/str_cat.h"
#include "core/cost_model.h"
#include "core/lower_bound.h"
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
  ImplPtr tree = Tree(root);
  if (tree == nullptr)
    return absl::InternalError(absl::StrCat(
        "search for ", PrintSpec(root),
        " chose a tree whose remainder does not fit its budget when built"));
  return tree;
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
  // Per kind, from the catalogue once: ObviouslyInfeasible asks on every
  // lookup.
  static const std::array<int, 4> kLeast = [] {
    std::array<int, 4> least{};
    for (int kind = 0; kind < 4; ++kind) {
      int l = -1;
      for (KernelId id : AllKernels()) {
        const KernelInfo& k = Info(id);
        if (static_cast<int>(k.kind) == kind &&
            (l < 0 || k.least_scratch_vregs < l))
          l = k.least_scratch_vregs;
      }
      least[kind] = std::max(l, 0);
    }
    return least;
  }();
  const Kind kind = s.IsMatmul() ? Kind::kMatmulAccum : s.kind;
  return kLeast[static_cast<int>(kind)];
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
  // placement at most doubles the peak (peaks round up onto the budget grid,
  // by less than twice).
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
  if (ObviouslyInfeasible(spec)) {
    memo_.NoteAsked(spec);
    return MemoEntry{};
  }
  return SolveExact(spec, KeyId(spec));
}

uint32_t Searcher::KeyId(const Spec& s, const MemoTable::Key& key) {
  auto [id, fresh] = memo_.Id(key);
  if (fresh) memo_.Info(id).usable = UsableBudget(s, target_);
  return id;
}

MemoEntry Searcher::SolveExact(const Spec& spec, uint32_t id) {
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed))
    return MemoEntry{};
  memo_.NoteAsked(spec);
  // Budget beyond what any tree could use is the same problem: clamp it, so
  // one entry answers them all.
  const Budget usable = memo_.Info(id).usable;
  Spec s = ClampBudget(spec, usable);
  if (const MemoEntry* hit = memo_.Find(id, *s.budget)) return *hit;
  // Solve at the most budget the Spec could be given first: its box then
  // answers every budget from its peak up, which is most of the budgets the
  // same Spec is reached with elsewhere in the tree. When that peak does not
  // fit, lower only the components it does not fit to this budget's and solve
  // there (the same way, from the top): the box found answers this budget
  // whenever its peak fits, and the budgets that differ from this one only in
  // the components left high, which the same Spec is often reached with too.
  if (options_.solve_at_top) {
    Budget most = Budget::Max(*s.budget, target_.MaxBudget());
    Budget upper{std::min(most.vrf, usable.vrf), std::min(most.gpr, usable.gpr),
                 std::min(most.l1_lines, usable.l1_lines),
                 std::min(most.l2_lines, usable.l2_lines),
                 std::min(most.l3_lines, usable.l3_lines)};
    const Budget& b = *s.budget;
    while (upper != b) {
      Spec at = s;
      at.budget = upper;
      MemoEntry e = SolveExact(at, id);
      // Its box [peak, upper] holds this budget when the peak fits it (and
      // "no tree fits" under `upper` holds for everything below).
      if (!e.feasible || e.cost.peak.FitsIn(b)) return e;
      const Budget& p = e.cost.peak;
      if (!options_.relax_budgets) break;
      if (p.vrf > b.vrf) upper.vrf = b.vrf;
      if (p.gpr > b.gpr) upper.gpr = b.gpr;
      for (Level l : kCacheLevels)
        if (p.Lines(l) > b.Lines(l)) upper.Lines(l) = b.Lines(l);
    }
  }
  ++stats_.specs_solved;

  // This depth's scratch: the solves of children below use deeper ones.
  if (scratch_.size() <= depth_)
    scratch_.push_back(std::make_unique<SolveScratch>());
  SolveScratch& scratch = *scratch_[depth_];
  struct Deeper {
    size_t& depth;
    ~Deeper() { --depth; }
  } deeper{++depth_};
  // Best-first: order candidates by a lower bound on their cost, composed from
  // their children's lower bounds (the model is monotone, so this bounds every
  // tree under the candidate).
  std::vector<Candidate>& cands = scratch.cands;
  EnumerateCandidates(s, target_, cands);
  // Bounds the key's first solve left (PriorBounds), when they hold here.
  const PriorBounds* prior = nullptr;
  if (reuse_bounds_) {
    const int32_t index = memo_.Info(id).bounds;
    if (index >= 0 && s.budget->FitsIn(prior_[index].budget))
      prior = &prior_[index];
  }
  std::vector<Tried>& tried = scratch.tried;
  tried.clear();
  tried.resize(cands.size());
  // (bound, index), a min-heap. A candidate first enters with its children's
  // LowerBounds; when it comes to the front, its children's keys are looked
  // up for floors (ChildBound) and it re-enters with the tighter bound, so
  // candidates pruned anyway cost no lookup.
  std::vector<std::pair<int64_t, uint32_t>>& heap = scratch.heap;
  heap.clear();
  size_t next_prior = 0;
  // Every child's key first, its bound slot prefetched: the slots are spread
  // over a table larger than L2, and the lookups below then find them on
  // their way in rather than each waiting in turn.
  for (size_t i = 0; i < cands.size(); ++i)
    for (const Spec& child : cands[i].expansion.children) {
      tried[i].keys.push_back(MemoTable::KeyOf(child));
      PrefetchBound(tried[i].keys.back());
    }
  for (size_t i = 0; i < cands.size(); ++i) {
    const Candidate& c = cands[i];
    Tried& t = tried[i];
    t.refined = !reuse_bounds_;
    bool none = false;
    for (size_t j = 0; j < c.expansion.children.size(); ++j) {
      const Spec& child = c.expansion.children[j];
      none |= ObviouslyInfeasible(child);
      t.bounds.push_back(Cost{
          .main = none ? 0 : CachedLowerBound(child, t.keys[j]),
          .peak = {}});
    }
    int64_t bound =
        none ? kNoTree : ComposeCost(s, c.expansion, t.bounds, target_).main;
    t.known = t.composed = bound;
    if (prior) {
      // The candidates here are those at the prior budget less the ones that
      // no longer fit, in the same order.
      const auto& entries = prior->entries;
      size_t j = next_prior;
      while (j < entries.size() && !(entries[j].first == c.action)) ++j;
      if (j < entries.size()) {
        t.from_prior = entries[j].second;
        bound = std::max(bound, entries[j].second);
        next_prior = j + 1;
      }
    }
    heap.emplace_back(bound, static_cast<uint32_t>(i));
  }
  // Solving children below adds to prior_: the pointer is done with.
  const bool had_prior = prior != nullptr;
  prior = nullptr;
  // Index order breaks ties in bound (the order only saves work: results
  // do not depend on it).
  std::make_heap(heap.begin(), heap.end(), std::greater<>());

  MemoEntry best;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const auto [bound, index] = heap.back();
    heap.pop_back();
    const Candidate& c = cands[index];
    // A candidate known to have no tree (a child has none).
    if (bound == kNoTree) {
      stats_.candidates_pruned += static_cast<int64_t>(heap.size() + 1);
      break;
    }
    // Strictly greater: a candidate that can only tie may still win the tie on
    // its action.
    if (options_.prune && best.feasible && bound > best.cost.main) {
      stats_.candidates_pruned += static_cast<int64_t>(heap.size() + 1);
      break;
    }
    Tried& t = tried[index];
    // The next candidate's children are looked up by key when it comes to
    // the front: their id slots start loading now.
    if (!heap.empty() && !tried[heap.front().second].refined)
      for (const MemoTable::Key& key : tried[heap.front().second].keys)
        memo_.PrefetchId(key);
    if (!t.refined) {
      t.refined = true;
      bool none = false;
      for (const MemoTable::Key& key : t.keys) memo_.PrefetchId(key);
      for (size_t i = 0; i < c.expansion.children.size(); ++i) {
        const auto [b, child_id] =
            ChildBound(c.expansion.children[i], t.keys[i]);
        t.ids.push_back(child_id);
        if (b == kNoTree) {
          none = true;
        } else {
          t.bounds[i].main = std::max(t.bounds[i].main, b);
        }
      }
      int64_t tighter =
          none ? kNoTree : ComposeCost(s, c.expansion, t.bounds, target_).main;
      t.known = tighter;
      heap.emplace_back(std::max(tighter, t.from_prior), index);
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
      continue;
    }
    if (t.ids.empty())
      for (size_t i = 0; i < c.expansion.children.size(); ++i)
        t.ids.push_back(KeyId(c.expansion.children[i], t.keys[i]));
    if (t.solved == 0) ++stats_.candidates_tried;
    const auto& children = c.expansion.children;
    absl::InlinedVector<Cost, 3>& costs = t.bounds;
    bool ok = true, suspended = false;
    for (size_t i = t.solved; i < children.size() && ok; ++i) {
      MemoEntry ce = i == 1 && RemainderFollows(c.expansion)
                         ? FollowRemainder(children[1], children[0])
                         : SolveExact(children[i], t.ids[i]);
      if (!ce.feasible) {
        ok = false;
        t.known = kNoTree;
        break;
      }
      costs[i] = ce.cost;
      t.solved = static_cast<uint8_t>(i + 1);
      // Children solved so far plus bounds for the rest: once that exceeds the
      // best, the rest need not be solved; once it exceeds another
      // candidate's bound, that one goes first.
      if (options_.prune && i + 1 < children.size()) {
        const int64_t partial =
            ComposeCost(s, c.expansion, costs, target_).main;
        t.known = partial;
        if (best.feasible && partial > best.cost.main) {
          ++stats_.candidates_pruned;
          ok = false;
        } else if (!heap.empty() && partial > heap.front().first) {
          heap.emplace_back(std::max(partial, t.from_prior), index);
          std::push_heap(heap.begin(), heap.end(), std::greater<>());
          suspended = true;
          break;
        }
      }
    }
    if (!ok || suspended) continue;
    Cost cost = ComposeCost(s, c.expansion, costs, target_);
    t.known = cost.main;
    if (!best.feasible || cost < best.cost ||
        (cost == best.cost && c.action < best.action)) {
      best = MemoEntry{.feasible = true, .cost = cost, .action = c.action};
    }
  }
  KeyInfo& info = memo_.Info(id);
  // The first solve of a key records what it learnt of each candidate beyond
  // its composed bound, for the key's later solves under less budget.
  if (reuse_bounds_ && !had_prior && info.bounds < 0) {
    PriorBounds p{.budget = *s.budget, .entries = {}};
    // Not a loop whose remainder follows its body: the remainder's cost is
    // the body's best tree re-applied, and under less budget the body's
    // best may change to one whose remainder costs less, so such a
    // candidate may cost less there than here.
    for (size_t i = 0; i < cands.size(); ++i)
      if (tried[i].known > tried[i].composed &&
          !RemainderFollows(cands[i].expansion))
        p.entries.emplace_back(cands[i].action, tried[i].known);
    info.bounds = static_cast<int32_t>(prior_.size());
    prior_bytes_ += static_cast<int64_t>(
        sizeof(PriorBounds) + p.entries.size() * sizeof(p.entries[0]));
    prior_.push_back(std::move(p));
  }
  // The first result is the key's floor: no budget that fits in this one
  // (the top, under solve_at_top) does better.
  if (!info.floor_budget) {
    info.floor = best.feasible ? best.cost.main : kNoTree;
    info.floor_budget = *s.budget;
  }
  memo_.Insert(id, *s.budget, best);
  return best;
}

void Searcher::PrefetchBound(const MemoTable::Key& key) {
  if (bound_cache_.empty()) bound_cache_.resize(kBoundSlots);
  __builtin_prefetch(&bound_cache_[absl::HashOf(key) & (kBoundSlots - 1)]);
}

int64_t Searcher::CachedLowerBound(const Spec& s,
                                   const MemoTable::Key& key) {
  if (bound_cache_.empty()) bound_cache_.resize(kBoundSlots);
  BoundSlot& slot = bound_cache_[absl::HashOf(key) & (kBoundSlots - 1)];
  if (slot.lower < 0 || !(slot.key == key)) {
    slot.key = key;
    slot.lower = LowerBound(s, target_);
  }
  return slot.lower;
}

std::pair<int64_t, uint32_t> Searcher::ChildBound(const Spec& child,
                                                  const MemoTable::Key& key) {
  if (ObviouslyInfeasible(child)) return {kNoTree, kNoId};
  const uint32_t id = KeyId(child, key);
  KeyInfo& info = memo_.Info(id);
  if (info.lower < 0) info.lower = CachedLowerBound(child, key);
  if (reuse_bounds_ && info.floor_budget &&
      ClampBudget(child, info.usable).budget->FitsIn(*info.floor_budget))
    return {std::max(info.lower, info.floor), id};
  return {info.lower, id};
}

ImplPtr Searcher::Tree(const Spec& s) {
  if (auto it = trees_.find(s); it != trees_.end()) return it->second;
  ImplPtr tree;
  MemoEntry e = SolveExact(s);
  if (e.feasible) {
    absl::StatusOr<Candidate> c = ApplyAction(s, e.action, target_);
    AMARENA_CHECK(c.ok());
    // The memo found a tree for every child when it chose this action,
    // under the budget it was solved at; a remainder followed under this
    // one may not fit (then nullptr, which Solve reports).
    tree = WithBestChildren(s, std::move(c->expansion));
  }
  trees_.emplace(s, tree);
  return tree;
}

ImplPtr Searcher::WithBestChildren(const Spec& s, Expansion how) {
  auto node = std::make_shared<ImplNode>();
  node->spec = s;
  node->how = how;
  const auto& kids = how.children;
  std::vector<Cost> costs;
  for (size_t i = 0; i < kids.size(); ++i) {
    ImplPtr child = i == 1 && RemainderFollows(how)
                        ? Follow(kids[1], node->children[0])
                        : Tree(kids[i]);
    if (child == nullptr) return nullptr;
    costs.push_back(child->cost);
    node->children.push_back(std::move(child));
  }
  node->cost = ComposeCost(s, how, costs, target_);
  return node;
}

}  // namespace amarena
