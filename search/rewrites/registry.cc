#include "search/rewrites/registry.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/spec_text.h"
#include "core/status_macros.h"

namespace amarena {

// The rewrites, each a `const Rewrite` defined in its file under
// search/rewrites/, in the order the search enumerates them. That order only
// breaks ties between equal lower bounds (the sort is stable): cheap leaves
// first. Changing it can change which of two equal-cost trees is chosen.
#define AMARENA_REWRITES(X) \
  X(kSelectRewrite)         \
  X(kToRegistersRewrite)    \
  X(kViewRewrite)           \
  X(kPackRewrite)           \
  X(kToAccumRewrite)        \
  X(kTileRewrite)           \
  X(kParallelTileRewrite)   \
  X(kSplitRewrite)

#define AMARENA_DECLARE_REWRITE(r) extern const Rewrite r;
AMARENA_REWRITES(AMARENA_DECLARE_REWRITE)
#undef AMARENA_DECLARE_REWRITE

std::span<const Rewrite* const> Rewrites() {
#define AMARENA_ADDRESS_OF(r) &r,
  static const Rewrite* const kRewrites[] = {
      AMARENA_REWRITES(AMARENA_ADDRESS_OF)};
#undef AMARENA_ADDRESS_OF
  return kRewrites;
}

#undef AMARENA_REWRITES

namespace {

// A parallel loop runs only at the root: every Spec below it is serial. (So
// the lower bound, which counts one worker, holds for every Spec the search
// bounds; and below the root a Spec is one problem, whether or not a
// parallel loop is above it.) Every candidate, searched or applied, passes
// through here.
void MarkChildrenSerial(Candidate& c) {
  for (Spec& child : c.expansion.children) child.serial = true;
}

}  // namespace

std::vector<Candidate> EnumerateCandidates(const Spec& s, const Target& t) {
  std::vector<Candidate> out;
  EnumerateCandidates(s, t, out);
  return out;
}

void EnumerateCandidates(const Spec& s, const Target& t,
                         std::vector<Candidate>& out) {
  out.clear();
  out.reserve(48);
  for (const Rewrite* r : Rewrites()) r->enumerate(s, t, out);
  for (Candidate& c : out) MarkChildrenSerial(c);
}

namespace {

const Rewrite& Owner(const Action& a) {
  const Rewrite* owner = nullptr;
  for (const Rewrite* r : Rewrites())
    if (r->owns(a)) {
      owner = r;
      break;
    }
  // Actions come from the rewrites or from ParseAction, which only makes
  // actions some rewrite owns.
  AMARENA_CHECK(owner != nullptr);
  return *owner;
}

}  // namespace

std::string Describe(const Action& a) { return Owner(a).describe(a); }

absl::StatusOr<Action> ParseAction(absl::string_view text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("action descriptor '", text, "' is malformed: ", why));
  };
  const std::vector<absl::string_view> words =
      absl::StrSplit(text, ' ', absl::SkipEmpty());
  if (words.empty()) return bad("it is empty");
  for (const Rewrite* r : Rewrites()) {
    if (r->keyword != words[0]) continue;
    absl::StatusOr<Action> a = r->parse(words);
    if (!a.ok()) return bad(a.status().message());
    return a;
  }
  return bad(absl::StrCat("unknown action '", words[0], "'"));
}

absl::StatusOr<Candidate> ApplyAction(const Spec& s, const Action& a,
                                      const Target& t) {
  std::vector<Candidate> cands;
  const Rewrite& owner = Owner(a);
  if (owner.enumerate_one != nullptr) {
    owner.enumerate_one(s, t, a, cands);
  } else {
    owner.enumerate(s, t, cands);
  }
  for (Candidate& c : cands)
    if (c.action == a) {
      MarkChildrenSerial(c);
      return std::move(c);
    }
  return absl::NotFoundError(absl::StrCat(
      "action '", Describe(a), "' does not apply to ", PrintSpec(s)));
}

std::optional<int64_t> ParseCount(absl::string_view s, int64_t max) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(s, &v) || v < 0 || v > max) return std::nullopt;
  return v;
}

}  // namespace amarena
