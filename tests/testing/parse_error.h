// ExpectParseError: the shape every notation error has (InvalidArgument, one
// line, quoting the text), plus the phrases it must contain.
#ifndef AMARENA_TESTS_TESTING_PARSE_ERROR_H_
#define AMARENA_TESTS_TESTING_PARSE_ERROR_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/matchers.h"

namespace amarena::testing {

// Checks the error shape: InvalidArgument, one line, quoting the text, then
// `what`.
inline void ExpectParseError(absl::string_view text,
                             const std::vector<std::string>& what) {
  absl::StatusOr<Spec> s = ParseSpec(text);
  ASSERT_THAT(s,
              testing::StatusIs(
                  absl::StatusCode::kInvalidArgument,
                  ::testing::StartsWith(absl::StrCat(
                      "cannot parse spec '",
                      absl::StrReplaceAll(text, {{"\t", "\\t"}, {"\n", "\\n"}}),
                      "': "))))
      << "text: " << text;
  std::string message(s.status().message());
  EXPECT_THAT(message, ::testing::Not(::testing::HasSubstr("\n"))) << text;
  for (const std::string& w : what)
    EXPECT_THAT(message, ::testing::HasSubstr(w)) << text;
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_PARSE_ERROR_H_
