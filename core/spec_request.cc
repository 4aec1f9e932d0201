// What a user asks a runtime for (core/spec_text.h, SpecRequest): a Spec, or
// a matmul whose B layout amarena chooses (`b=any`, with an optional
// `m=LO..HI`). The Spec itself is read by ParseSpec.
#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/spec_text.h"
#include "core/status_macros.h"

namespace amarena {

absl::StatusOr<SpecRequest> ParseRequest(absl::string_view text) {
  std::vector<absl::string_view> toks =
      absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  const auto any = std::find(toks.begin(), toks.end(), "b=any");
  if (any == toks.end()) {
    AMARENA_ASSIGN_OR_RETURN(Spec s, ParseSpec(text));
    return SpecRequest{s, false};
  }
  toks.erase(any);
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot parse spec '", text, "': ", what));
  };
  if (std::any_of(toks.begin(), toks.end(), [](absl::string_view t) {
        return absl::StartsWith(t, "ldb=");
      }))
    return error(
        "option ldb is for a plain B, must not be given with b=any (B's "
        "layout is chosen: dense, packed or column-major)");
  int64_t m_lo = 0, m_hi = 0;
  const auto range = std::find_if(toks.begin(), toks.end(), [](auto t) {
    return absl::StartsWith(t, "m=");
  });
  if (range != toks.end()) {
    absl::string_view r = range->substr(2);
    const size_t dots = r.find("..");
    if (dots == absl::string_view::npos ||
        !absl::SimpleAtoi(r.substr(0, dots), &m_lo) ||
        !absl::SimpleAtoi(r.substr(dots + 2), &m_hi) || m_lo < 1 ||
        m_hi < m_lo || m_hi > (int64_t{1} << 30))
      return error(absl::StrCat("m range is '", r,
                                "', must be LO..HI with 1 <= LO <= HI"));
    toks.erase(range);
  }
  AMARENA_ASSIGN_OR_RETURN(Spec s, ParseSpec(absl::StrJoin(toks, " ")));
  if (m_lo != 0 && (s.m < m_lo || s.m > m_hi))
    return error(absl::StrCat("m range is ", m_lo, "..", m_hi,
                              ", must contain the Spec's M (", s.m, ")"));
  if (!s.IsMatmul())
    return error("option b=any is for a matmul's B, must not be given here");
  if (s.b > 1 && !s.SharedB())
    return error(absl::StrCat(
        "option b=any with batch ", s.b,
        " is for one B shared by the batch (sb=0), must not be given with a B "
        "per batch element (laying out a batch of B is not implemented)"));
  if (std::any_of(toks.begin(), toks.end(), [](absl::string_view t) {
        return absl::StartsWith(t, "b=");
      }))
    return error(
        "operand b has b=any and other properties, must be b=any "
        "alone (B in gl, its layout chosen)");
  return SpecRequest{s, true, m_lo, m_hi};
}

}  // namespace amarena
