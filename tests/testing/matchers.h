// GoogleMock matchers for absl::Status and absl::StatusOr<T>. GoogleTest 1.12
// and Debian's Abseil 20220623 ship none, so tests share these two (link
// GTest::gmock).
//
//   EXPECT_THAT(ParseSpec("matmul 5x5x5 f32"), IsOk());
//   EXPECT_THAT(ParseSpec("conv 3x3 f32"),
//               StatusIs(absl::StatusCode::kInvalidArgument,
//               HasSubstr("'conv'")));
#ifndef AMARENA_TESTS_TESTING_MATCHERS_H_
#define AMARENA_TESTS_TESTING_MATCHERS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace amarena::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

}  // namespace internal

// Matches a Status or StatusOr whose code is `code` and whose message matches
// `message_matcher` (a string matcher, or a plain string for equality).
MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + absl::StatusCodeToString(code) +
               " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher,
                                                       negation)) {
  const absl::Status& s = ::amarena::testing::internal::GetStatus(arg);
  *result_listener << "whose status is " << s;
  if (s.code() != code) return false;
  return ::testing::ExplainMatchResult(
      message_matcher, std::string(s.message()), result_listener);
}

// Matches an OK Status or a StatusOr holding a value.
MATCHER(IsOk, negation ? "is not OK" : "is OK") {
  const absl::Status& s = ::amarena::testing::internal::GetStatus(arg);
  *result_listener << "whose status is " << s;
  return s.ok();
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_MATCHERS_H_
