// The notation's alpha (matmul ... alpha=X) and bf16 outputs (T*T->bf16):
// canonical printing, round trips, identity (hash and packing) and every
// refusal.
#include <bit>
#include <cmath>
#include <random>
#include <string>

#include "absl/hash/hash.h"
#include "core/spec.h"
#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/matchers.h"
#include "tests/testing/parse_error.h"

namespace amarena {
namespace {

using ::amarena::testing::ExpectParseError;
using ::amarena::testing::IsOk;

TEST(SpecTextAlphaTest, PrintsCanonically) {
  const std::pair<const char*, const char*> cases[] = {
      {"matmul 64x64x64 f32 alpha=0.5", "matmul 64x64x64 f32 alpha=0.5"},
      {"matmul 64x64x64 f32 alpha=1", "matmul 64x64x64 f32"},
      {"matmul 64x64x64 f32 alpha=1.0", "matmul 64x64x64 f32"},
      {"matmul 64x64x64 f32 alpha=-0", "matmul 64x64x64 f32 alpha=0"},
      {"matmul 64x64x64 f32 alpha=2.50e0 accum",
       "matmul 64x64x64 f32 accum alpha=2.5"},
      {"matmul 8x4x2 f32 a=col alpha=-3 accum",
       "matmul 8x4x2 f32 accum alpha=-3 a=col"},
      {"matmul 64x64x64 bf16*bf16->bf16", "matmul 64x64x64 bf16"},
      {"matmul 64x64x64 f32*bf16->bf16", "matmul 64x64x64 f32*bf16->bf16"},
      {"matmul 64x64x64 f32*f32->bf16 alpha=0.1",
       "matmul 64x64x64 f32*f32->bf16 alpha=0.1"},
  };
  for (const auto& [text, canonical] : cases) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_THAT(s, IsOk()) << text;
    EXPECT_EQ(PrintSpec(*s), canonical) << text;
  }
  absl::StatusOr<Spec> s = ParseSpec("matmul 4x4x4 f32 alpha=0.1");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->alpha, 0.1f);
  s = ParseSpec("matmul 4x4x4 f32*bf16->bf16");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->aux[2].dtype, DType::kBF16);
  EXPECT_EQ(s->aux[1].dtype, DType::kBF16);
  EXPECT_EQ(s->aux[0].dtype, DType::kF32);
}

// Every float prints as text that reads back as the same float, and two
// Specs are equal (and hash and pack equal) exactly when their alphas are.
TEST(SpecTextAlphaTest, RoundTripsEveryFloat) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<uint32_t> bits;
  int tried = 0;
  while (tried < 2000) {
    const float a = std::bit_cast<float>(bits(rng));
    if (!std::isfinite(a)) continue;
    ++tried;
    Spec s = Spec::Matmul(3, 5, 7);
    s.alpha = a;
    s = Canonical(s);
    const std::string text = PrintSpec(s);
    absl::StatusOr<Spec> back = ParseSpec(text);
    ASSERT_THAT(back, IsOk()) << text;
    EXPECT_EQ(*back, s) << text;
    EXPECT_EQ(std::bit_cast<uint32_t>(back->alpha),
              std::bit_cast<uint32_t>(s.alpha))
        << text;
    EXPECT_EQ(PackProblem(*back), PackProblem(s)) << text;
    EXPECT_EQ(absl::HashOf(*back), absl::HashOf(s)) << text;
  }
}

TEST(SpecTextAlphaTest, AlphaIsPartOfTheIdentity) {
  Spec plain = Spec::Matmul(16, 16, 16);
  Spec half = plain;
  half.alpha = 0.5f;
  half = Canonical(half);
  EXPECT_NE(plain, half);
  EXPECT_NE(PackProblem(plain), PackProblem(half));
  EXPECT_NE(absl::HashOf(plain), absl::HashOf(half));
  // alpha = 1 packs as a Spec always has: nothing in the last word.
  EXPECT_EQ(PackProblem(plain)[6], 0u);
  // Other kinds have no alpha: Canonical sets it to 1.
  Spec zero = Spec::Zero(4, 4, {});
  zero.alpha = 3.0f;
  EXPECT_EQ(Canonical(zero).alpha, 1.0f);
  EXPECT_EQ(Canonical(zero), Spec::Zero(4, 4, {}));
  // -0 is 0.
  Spec minus = plain;
  minus.alpha = -0.0f;
  Spec nought = plain;
  nought.alpha = 0.0f;
  EXPECT_EQ(PackProblem(Canonical(minus)), PackProblem(Canonical(nought)));
}

TEST(SpecTextAlphaTest, RejectsBadAlpha) {
  ExpectParseError("matmul 4x4x4 f32 alpha=x",
                   {"alpha is 'x'", "must be a finite number"});
  ExpectParseError("matmul 4x4x4 f32 alpha=", {"alpha is ''"});
  ExpectParseError("matmul 4x4x4 f32 alpha=nan", {"alpha is 'nan'", "finite"});
  ExpectParseError("matmul 4x4x4 f32 alpha=inf", {"alpha is 'inf'", "finite"});
  ExpectParseError("matmul 4x4x4 f32 alpha=-inf", {"alpha is '-inf'"});
  ExpectParseError("matmul 4x4x4 f32 alpha=1e39", {"alpha is '1e39'"});
  ExpectParseError("matmul 4x4x4 f32 alpha=0.5x", {"alpha is '0.5x'"});
  ExpectParseError("matmul 4x4x4 f32 alpha=+2", {"alpha is '+2'"});
  ExpectParseError("zero 4x4 f32 alpha=2",
                   {"option alpha is only valid for matmul", "zero"});
  ExpectParseError("move 4x4 f32 alpha=2",
                   {"option alpha is only valid for matmul", "move"});
}

TEST(SpecTextAlphaTest, RejectsBadOutputDTypes) {
  ExpectParseError("matmul 4x4x4 f32*f32->f16",
                   {"dtype 'f16' is unknown", "f32 or bf16"});
  ExpectParseError("matmul 4x4x4 f32*f32->", {"dtype '' is unknown"});
  ExpectParseError("zero 4x4 f32->bf16", {"has an arrow"});
}

}  // namespace
}  // namespace amarena
