// The rewrites the search may apply, in the order it enumerates them, and
// everything that turns their actions into text and back: the one list the
// search, replay and the stored decisions all go through.
//
// A Rewrite is a value in its own file (or beside its siblings: loops.cc,
// moves.cc) with
//   - `enumerate`: every Candidate it offers for a Spec;
//   - `keyword`: the first word of its actions' descriptors ("tile");
//   - `owns`: which Actions are its;
//   - `describe` / `parse`: an action to its descriptor and back.
// An action is applied by enumerating its owner's candidates for the Spec and
// taking the equal one (ApplyAction), so replay accepts the actions the search
// could have chosen (and the placements it leaves out only as not worth it,
// which a followed remainder re-applies: moves.cc). Adding a rewrite is one
// such value and one line in the list in registry.cc.
//
//   std::vector<Candidate> cands = EnumerateCandidates(spec, target);
//   std::string d = Describe(cands[0].action);      // "tile m 8"
//   absl::StatusOr<Action> a = ParseAction(d);      // == cands[0].action
//   absl::StatusOr<Candidate> c = ApplyAction(spec, *a, target);
#ifndef AMARENA_SEARCH_REWRITES_REGISTRY_H_
#define AMARENA_SEARCH_REWRITES_REGISTRY_H_

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/target.h"
#include "search/action.h"

namespace amarena {

struct Rewrite {
  // As docs/search.md names it: "to-registers".
  absl::string_view name;
  // The first word of each of its descriptors, unique among rewrites: "regs"
  // for to-registers, as stored decisions spell it.
  absl::string_view keyword;
  // Appends every Candidate it offers for a bound Spec.
  void (*enumerate)(const Spec&, const Target&, std::vector<Candidate>&);
  // Optional: appends only the candidate equal to the action, if offered
  // (ApplyAction, without making every other candidate). Null: ApplyAction
  // filters `enumerate`.
  void (*enumerate_one)(const Spec&, const Target&, const Action&,
                        std::vector<Candidate>&) = nullptr;
  // Whether an action is one of its. Exactly one rewrite owns each action.
  bool (*owns)(const Action&);
  // The descriptor of one of its actions: "tile m 8".
  std::string (*describe)(const Action&);
  // One of its actions from a descriptor split at spaces (words[0] is its
  // keyword); InvalidArgument saying what is wrong (ParseAction names the
  // descriptor).
  absl::StatusOr<Action> (*parse)(std::span<const absl::string_view> words);
};

// A rewrite's `enumerate` and `enumerate_one` from one function that makes
// every candidate when `only` is null, else just `only`'s.
template <void (*kOffer)(const Spec&, const Target&, std::vector<Candidate>&,
                         const Action* only)>
void EnumerateAll(const Spec& s, const Target& t, std::vector<Candidate>& out) {
  kOffer(s, t, out, nullptr);
}
template <void (*kOffer)(const Spec&, const Target&, std::vector<Candidate>&,
                         const Action* only)>
void EnumerateOne(const Spec& s, const Target& t, const Action& a,
                  std::vector<Candidate>& out) {
  kOffer(s, t, out, &a);
}

// Every rewrite, in the order the search enumerates them.
std::span<const Rewrite* const> Rewrites();

// All candidates for a Spec, from every rewrite in registry order.
std::vector<Candidate> EnumerateCandidates(const Spec& s, const Target& t);
// The same into `out`, replacing what it held (a caller that enumerates
// often keeps its capacity).
void EnumerateCandidates(const Spec& s, const Target& t,
                         std::vector<Candidate>& out);

// The action's descriptor, by the rewrite that owns it: "tile m 8",
// "parallel tile n 512", "split k 64", "to-accum", "view 0 l2",
// "pack 1 l3 p32", "regs 2 vrf v16", "select broadcast_fma".
// ParseAction(Describe(a)) == a for every action a rewrite produces.
std::string Describe(const Action& a);
// InvalidArgument for text no rewrite parses.
absl::StatusOr<Action> ParseAction(absl::string_view descriptor);

// The candidate a stored action stands for, re-derived from the Spec by the
// rewrite that owns it (NotFound if it no longer offers it there).
absl::StatusOr<Candidate> ApplyAction(const Spec& s, const Action& a,
                                      const Target& t);

// `owns` for a rewrite that owns every action of one kind.
template <ActionKind kKind>
bool OwnsKind(const Action& a) {
  return a.kind == kKind;
}

// For parse functions: a count in 0..max ("16" in "p16" after the prefix).
std::optional<int64_t> ParseCount(absl::string_view s, int64_t max);

}  // namespace amarena

#endif  // AMARENA_SEARCH_REWRITES_REGISTRY_H_
