// The notation's batch: BxMxKxN and the batch strides sa=, sb=, sc= (sb=0:
// one B shared by the batch): canonical printing, round trips, the packed
// words that key the memo table, and every refusal.
#include <string>

#include "absl/hash/hash.h"
#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/matchers.h"
#include "tests/testing/parse_error.h"
#include "tests/testing/random_specs.h"

namespace amarena {
namespace {

using ::amarena::testing::ExpectParseError;
using ::amarena::testing::IsOk;
using ::amarena::testing::StatusIs;
using ::testing::HasSubstr;

TEST(SpecTextBatchTest, BatchesPrintCanonically) {
  const std::pair<const char*, const char*> cases[] = {
      {"matmul 1x64x64x64 f32", "matmul 64x64x64 f32"},
      {"matmul 4x64x32x16 f32", "matmul 4x64x32x16 f32"},
      {"matmul 4x64x32x16 f32 sb=0", "matmul 4x64x32x16 f32 sb=0"},
      // The dense strides are unsaid: M*K, K*N, M*N elements.
      {"matmul 4x64x32x16 f32 sa=2048 sb=512 sc=1024", "matmul 4x64x32x16 f32"},
      {"matmul 4x8x4x2 f32 sc=17 sa=0", "matmul 4x8x4x2 f32 sa=0 sc=17"},
      // With a leading dimension, dense is the outer rows times ld.
      {"matmul 3x8x4x2 f32 lda=5 sa=40", "matmul 3x8x4x2 f32 lda=5"},
      {"matmul 3x8x4x2 f32 lda=5 sa=39", "matmul 3x8x4x2 f32 lda=5 sa=39"},
      // Packed: the panels' stored elements (4 x 32 in one panel of 32).
      {"matmul 2x8x4x20 f32 b=p32 sb=128", "matmul 2x8x4x20 f32 b=p32"},
      {"matmul 2x8x4x2 f32 accum c=col sc=16 serial",
       "matmul 2x8x4x2 f32 accum c=col serial"},
  };
  for (const auto& [text, canonical] : cases) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_THAT(s, IsOk()) << text;
    EXPECT_EQ(PrintSpec(*s), canonical) << text;
    absl::StatusOr<Spec> again = ParseSpec(PrintSpec(*s));
    ASSERT_THAT(again, IsOk()) << text;
    EXPECT_EQ(*again, *s) << text;
  }
  absl::StatusOr<Spec> s = ParseSpec("matmul 3x8x4x2 f32 lda=5 sb=0 sc=100");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->b, 3);
  EXPECT_EQ(s->BatchStride(0), 8 * 5);
  EXPECT_EQ(s->BatchStride(1), 0);
  EXPECT_EQ(s->BatchStride(2), 100);
  EXPECT_TRUE(s->SharedB());
  // A spans its three views; B one matrix; C two strides and a matrix.
  EXPECT_EQ(s->BatchedElements(0), 2 * 40 + 7 * 5 + 4);
  EXPECT_EQ(s->BatchedElements(1), 8);
  EXPECT_EQ(s->BatchedElements(2), 2 * 100 + 16);
  EXPECT_EQ(s->Macs(), 3 * 8 * 4 * 2);
}

TEST(SpecTextBatchTest, StridesKeyTheProblem) {
  const char* const texts[] = {
      "matmul 4x8x4x2 f32",      "matmul 4x8x4x2 f32 sb=0",
      "matmul 4x8x4x2 f32 sa=0", "matmul 4x8x4x2 f32 sc=17",
      "matmul 4x8x4x2 f32 sb=9", "matmul 5x8x4x2 f32",
      "matmul 8x4x2 f32",
  };
  for (const char* x : texts) {
    for (const char* y : texts) {
      absl::StatusOr<Spec> sx = ParseSpec(x), sy = ParseSpec(y);
      ASSERT_THAT(sx, IsOk());
      ASSERT_THAT(sy, IsOk());
      EXPECT_EQ(PackProblem(*sx) == PackProblem(*sy), x == y)
          << x << " / " << y;
      EXPECT_EQ(absl::HashOf(*sx) == absl::HashOf(*sy), x == y)
          << x << " / " << y;
    }
  }
}

TEST(SpecTextBatchTest, WithoutLdsKeepsTheBatchStrides) {
  absl::StatusOr<Spec> s = ParseSpec("matmul 3x8x4x2 f32 lda=5 ldc=7");
  ASSERT_THAT(s, IsOk());
  const Spec bare = Canonical(WithoutLds(*s));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(bare.BatchStride(i), s->BatchStride(i)) << i;
  EXPECT_EQ(PrintSpec(bare), "matmul 3x8x4x2 f32 sa=40 sc=56");
}

TEST(SpecTextBatchTest, RandomBatchTextsRoundTrip) {
  for (const std::string& text : testing::RandomBatchSpecTexts(300, 64, 5)) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_THAT(s, IsOk()) << text;
    absl::StatusOr<Spec> again = ParseSpec(PrintSpec(*s));
    ASSERT_THAT(again, IsOk()) << text;
    EXPECT_EQ(*again, *s) << text;
  }
}

TEST(SpecTextBatchTest, RejectsBadBatches) {
  ExpectParseError("matmul 0x4x4x4 f32",
                   {"dimension batch is 0", "at least 1"});
  ExpectParseError("matmul 3000000000x4x4x4 f32",
                   {"dimension batch is 3000000000", "at most 2147483647"});
  ExpectParseError("matmul 2x2x4x4x4 f32", {"has 5 dimensions"});
  ExpectParseError("zero 2x4x4 f32", {"has 3 dimensions", "must have 2"});
  ExpectParseError("matmul 4x4x4 f32 sb=0",
                   {"option sb is for a batched matmul", "batch 1"});
  ExpectParseError("matmul 1x4x4x4 f32 sa=16", {"option sa", "batch 1"});
  ExpectParseError("matmul 2x4x4x4 f32 sb=-1", {"sb is -1", "at least 0"});
  ExpectParseError("matmul 2x4x4x4 f32 sa=x", {"sa is 'x'"});
  ExpectParseError("matmul 2x4x4x4 f32 sc=3000000000",
                   {"sc is 3000000000", "at most 2147483647"});
  // C's matrices must not overlap.
  ExpectParseError("matmul 2x4x4x4 f32 sc=0",
                   {"sc is 0", "at least 16", "must not overlap"});
  ExpectParseError("matmul 2x4x4x4 f32 sc=15", {"sc is 15", "at least 16"});
  ExpectParseError("matmul 3x4x4x4 f32 ldc=11 sc=4",
                   {"sc is 4", "side by side within ldc (11)"});
  ExpectParseError("matmul 3x4x4x4 f32 ldc=12 sc=3", {"sc is 3"});
  ExpectParseError("zero 4x4 f32 sb=0", {"operand 'sb' is unknown"});
  // The whole batch counts towards an operand's size.
  ExpectParseError("matmul 60000x100x100x100 f32",
                   {"operand a needs 2.4e+09 bytes"});
  ExpectParseError("matmul 3x100x100x100 f32 sa=1000000000",
                   {"operand a needs 8.00004e+09 bytes"});
  // Side by side within ldc, and inputs overlapping, are fine.
  EXPECT_THAT(ParseSpec("matmul 3x4x4x4 f32 ldc=12 sc=4"), IsOk());
  EXPECT_THAT(ParseSpec("matmul 3x4x4x4 f32 sa=1 sb=2"), IsOk());
  EXPECT_THAT(ParseSpec("matmul 60000x100x100x100 f32 sa=0 sb=0 ldc=100"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("operand c needs")));
}

TEST(SpecTextBatchTest, AnyLayoutOnlyForASharedB) {
  EXPECT_THAT(ParseRequest("matmul 4x8x64x64 f32 b=any"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is for one B shared by the batch (sb=0)")));
  absl::StatusOr<SpecRequest> r =
      ParseRequest("matmul 4x8x64x64 f32 b=any sb=0");
  ASSERT_THAT(r, IsOk());
  EXPECT_TRUE(r->b_any);
  EXPECT_TRUE(r->spec.SharedB());
}

}  // namespace
}  // namespace amarena
