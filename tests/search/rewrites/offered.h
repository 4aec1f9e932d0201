// What the rewrites offer a Spec, as the decisions `explain` prints
// ("tile b 1", "view 0 l1"), for the tests of search/rewrites/.
//
//   EXPECT_TRUE(Offered("matmul 8x64x16 f32 serial", t).count("view 0 l1"));
#ifndef AMARENA_TESTS_SEARCH_REWRITES_OFFERED_H_
#define AMARENA_TESTS_SEARCH_REWRITES_OFFERED_H_

#include <set>
#include <string>

#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "search/rewrites/registry.h"

namespace amarena::testing {

// The described actions of every candidate for `text` bound to `t` (empty,
// with a failure, when the text does not parse).
inline std::set<std::string> Offered(const std::string& text, const Target& t) {
  absl::StatusOr<Spec> s = ParseSpec(text);
  EXPECT_TRUE(s.ok()) << text;
  std::set<std::string> out;
  if (!s.ok()) return out;
  for (const Candidate& c : EnumerateCandidates(t.Bind(*s), t))
    out.insert(Describe(c.action));
  return out;
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_SEARCH_REWRITES_OFFERED_H_
