// The notation's leading dimensions (lda=, ldb=, ldc= and the internal
// ldout=, ldsrc=, lddst=): canonical printing and every refusal.
#include <string>

#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/matchers.h"
#include "tests/testing/parse_error.h"

namespace amarena {
namespace {

using ::amarena::testing::ExpectParseError;
using ::amarena::testing::IsOk;
using ::amarena::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(SpecTextTest, LeadingDimensionsPrintCanonically) {
  const std::pair<const char*, const char*> cases[] = {
      {"matmul 64x64x64 f32 lda=64 ldb=64 ldc=64", "matmul 64x64x64 f32"},
      {"matmul 64x32x16 f32 ldc=100 lda=4096", "matmul 64x32x16 f32 lda=4096 "
                                               "ldc=100"},
      {"matmul 8x4x2 f32 lda=9 a=col", "matmul 8x4x2 f32 a=col lda=9"},
      {"matmul 1x64x64 f32 lda=100 ldc=70", "matmul 1x64x64 f32"},
      {"matmul 7x1x64 f32 a=col lda=7 ldb=65", "matmul 7x1x64 f32 a=col"},
      {"matmul 7x1x64 f32 ldb=65 c=col ldc=9",
       "matmul 7x1x64 f32 c=col ldc=9"},
  };
  for (const auto& [text, canonical] : cases) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_THAT(s, IsOk()) << text;
    EXPECT_EQ(PrintSpec(*s), canonical) << text;
  }
  absl::StatusOr<Spec> s = ParseSpec("matmul 100x7x13 f32 a=col lda=101");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->aux[0].layout.ld(), 101);
  // The last column needs only its 100 rows.
  EXPECT_EQ(s->Operand(0).StoredElements(), 6 * 101 + 100);
}

TEST(SpecTextTest, RejectsBadLeadingDimensions) {
  ExpectParseError("matmul 64x64x64 f32 lda=63",
                   {"lda is 63", "at least 64",
                    "rows of row-major a (64x64) are 64 elements long"});
  ExpectParseError("matmul 100x64x8 f32 a=col lda=99",
                   {"lda is 99", "at least 100",
                    "columns of column-major a (100x64) are 100 elements"});
  ExpectParseError("matmul 4x4x8 f32 ldb=7", {"ldb is 7", "at least 8"});
  ExpectParseError("matmul 4x4x4 f32 c=col ldc=3", {"ldc is 3"});
  ExpectParseError("matmul 4x4x4 f32 ldb=0", {"ldb is 0", "at least 1"});
  ExpectParseError("matmul 4x4x4 f32 ldb=-4", {"ldb is -4"});
  ExpectParseError("matmul 4x4x4 f32 ldb=x", {"ldb is 'x'"});
  ExpectParseError("matmul 4x4x4 f32 lda=", {"lda is ''"});
  ExpectParseError("matmul 4x4x4 f32 ldc=3000000000",
                   {"ldc is 3000000000", "at most 2147483647"});
  ExpectParseError("matmul 4x4x64 f32 b=p16 ldb=100",
                   {"ldb is for a plain", "b packed (p16)"});
  ExpectParseError("matmul 4x4x64 f32 ldb=100 b=p16x2s2",
                   {"ldb is for a plain", "b packed (p16x2s2)"});
  ExpectParseError("matmul 4x4x4 f32 c=l1 ldc=100",
                   {"ldc is for an operand in gl", "c in l1"});
  ExpectParseError("zero 4x4 f32 lda=5",
                   {"option lda is unknown", "must be ldout for zero"});
  ExpectParseError("move 4x4 f32 ldc=5",
                   {"option ldc is unknown", "must be ldsrc, lddst for move"});
  ExpectParseError("matmul 4x4x4 f32 ldout=5",
                   {"option ldout is unknown", "lda, ldb, ldc for matmul"});
  ExpectParseError("matmul 4x4x4 f32 ldd=5",
                   {"option ldd is unknown", "lda, ldb, ldc for matmul"});
  ExpectParseError("zero 4x4 f32 ldsrc=5",
                   {"option ldsrc is unknown", "ldout for zero"});
  // Its gaps count towards the operand's size.
  ExpectParseError("matmul 2x1x1 f32 lda=2000000000",
                   {"operand a needs 8e+09 bytes"});
  EXPECT_THAT(ParseRequest("matmul 4x4x4 f32 b=any ldb=8"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ldb is for a plain B, must not be given "
                                 "with b=any")));
  EXPECT_THAT(ParseRequest("matmul 4x4x4 f32 b=any lda=8 ldc=9"), IsOk());
}

}  // namespace
}  // namespace amarena
