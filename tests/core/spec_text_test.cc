// Tests for core/spec_text.h: the one notation round-trips, and every bad text
// is refused with a one-line InvalidArgument that names what is wrong.
#include "core/spec_text.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
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

// A valid Spec in canonical form, drawn so that the corner cases of the
// notation come up often: dims of 1 (1x1 operands lose their layout), batches,
// mixed dtypes, every level and layout, every vector width, serial and budgets.
Spec RandomValidSpec(std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto dim = [&] { return pick(0, 3) == 0 ? 1 : pick(1, 300); };
  static constexpr uint8_t kWidths[] = {1, 4, 8, 16};

  Spec s;
  s.kind = static_cast<Kind>(pick(0, 3));
  s.m = dim();
  s.n = dim();
  if (s.IsMatmul()) {
    s.k = dim();
    if (pick(0, 3) == 0) s.b = pick(2, 8);
  }
  for (int i = 0; i < s.NumOperands(); ++i) {
    TensorAux& a = s.aux[i];
    a.dtype = static_cast<DType>(pick(0, 1));
    a.level = static_cast<Level>(pick(0, kNumLevels - 1));
    const Order order = static_cast<Order>(pick(0, 1));
    a.layout = order;
    if (a.level == Level::kVRF) {
      a.vector_width = kWidths[pick(0, 3)];
    } else if (a.level == Level::kGL && pick(0, 3) == 0) {
      // A view of a wider matrix (often dense again once canonical).
      const TensorSpec t = s.Operand(i);
      const int64_t inner = a.layout.InnerExtent(t.rows, t.cols);
      a.layout = a.layout.WithLd(inner + pick(0, 40));
    } else if (pick(0, 3) == 0) {
      a.layout = Layout::Panels(order, pick(1, 64));
      if (a.layout.row_major() && pick(0, 2) == 0) a.layout = a.layout.Paired();
      if (a.layout.row_major() && pick(0, 2) == 0)
        a.layout = a.layout.InSections(2 << pick(0, 2));
    }
  }
  s.serial = pick(0, 1) == 1;
  if (pick(0, 1) == 1) {
    s.budget =
        Budget{static_cast<int32_t>(pick(0, 64)),
               static_cast<int32_t>(pick(0, 64)), pick(0, int64_t{1} << 20),
               pick(0, int64_t{1} << 20), pick(0, int64_t{1} << 24)};
  }
  return Canonical(s);
}

// Canonical texts: each prints back exactly as written.
const char* const kCanonicalTexts[] = {
    "matmul 256x256x256 f32",
    "matmul 1x2048x16384 bf16*bf16->f32 b=col",
    "matmul 4x1x16 f32 accum a=l1 b=l1 c=vrf,v8 serial "
    "budget=vrf:3,gpr:2,l1:0,l2:0,l3:0",
    "zero 4x16 f32 out=vrf,v8",
    "move 4x16 f32 src=l1 dst=vrf,v8",
    "matmul 2x3x4x5 f32",
    "matmul 1x1x1 f32",
    "matmul 1x1x1 bf16 accum a=l1 b=l1 c=l1",
    "matmul 7x1x1 f32 a=col c=col",
    "matmul 6x256x16 f32*bf16->bf16 a=l1,col b=l1 c=vrf,v1 "
    "budget=vrf:0,gpr:0,l1:0,l2:0,l3:0",
    "matmul 8x3x5x7 bf16 a=col b=col c=col serial",
    "zero 8x8 bf16 out=l1,col",
    "zero 1x1 f32 out=vrf,v1",
    "move 16x4 bf16->f32 src=l1,col dst=vrf,v16",
    "move 3x5 f32 src=vrf,v4 dst=l1,col serial "
    "budget=vrf:64,gpr:64,l1:0,l2:0,l3:0",
    "matmul 6x256x16 f32 accum a=l1 b=l2,p16 c=vrf,v8",
    "matmul 64x64x64 f32 a=l3,col b=l2,p24 "
    "budget=vrf:16,gpr:10,l1:512,l2:16384,l3:524288",
    "move 256x64 f32 dst=l2,p16 budget=vrf:16,gpr:9,l1:512,l2:8192,l3:0",
    "move 64x256 f32 src=l1,col,p6 dst=vrf,v8",
    "matmul 16x2048x16384 bf16*bf16->f32 b=p32x2",
    "matmul 4x2x64 bf16*bf16->f32 accum a=l1 b=l1,p32x2 c=vrf,v16",
    "matmul 3x1x20 bf16*bf16->f32 accum a=l1 b=l1,p32x2 c=vrf,v16",
    "move 7x100 bf16 src=l1 dst=l1,p32x2",
    "matmul 1x2048x16384 bf16*bf16->f32 b=p32s2",
    "matmul 1x2048x16384 bf16*bf16->f32 b=p128x2s2",
    "matmul 16x7x100 bf16*bf16->f32 accum a=l1 b=l1,p16s4 c=vrf,v8",
    "matmul 1x2048x16384 f32*bf16->f32",
    "matmul 1x2048x16384 f32*bf16->f32 b=col",
    "matmul 7x13x100 f32*bf16->f32 accum a=col b=p16x2s2 c=col",
    "matmul 4x1x16 f32*bf16->f32 accum a=l1 b=l1 c=vrf,v8",
    "matmul 64x64x64 f32 lda=4096 ldc=100",
    "matmul 7x13x5 bf16*bf16->f32 accum a=col b=col c=col lda=8 ldb=14 "
    "ldc=20 serial",
    "matmul 100x7x13 f32 b=p16 c=col lda=8 ldc=101",
    "matmul 1x64x8 f32 a=col lda=5",
    "zero 4x16 f32 ldout=20",
    "move 16x4 bf16->f32 src=col dst=l1 ldsrc=17",
};

TEST(SpecTextTest, CanonicalTextsPrintBackUnchanged) {
  for (const char* text : kCanonicalTexts) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_THAT(s, IsOk()) << text;
    EXPECT_EQ(PrintSpec(*s), text);
    EXPECT_EQ(*s, Canonical(*s)) << text;
  }
}

TEST(SpecTextTest, ParsesTheDocumentedExamples) {
  absl::StatusOr<Spec> s = ParseSpec(
      "matmul 4x1x16 f32 accum a=l1 b=l1 c=vrf,v8 serial "
      "budget=vrf:3,gpr:2,l1:512,l2:0,l3:0");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->kind, Kind::kMatmulAccum);
  EXPECT_EQ(s->b, 1);
  EXPECT_EQ(s->m, 4);
  EXPECT_EQ(s->k, 1);
  EXPECT_EQ(s->n, 16);
  EXPECT_EQ(s->aux[0],
            (TensorAux{DType::kF32, Level::kL1, Order::kRowMajor, 0}));
  EXPECT_EQ(s->aux[1],
            (TensorAux{DType::kF32, Level::kL1, Order::kRowMajor, 0}));
  EXPECT_EQ(s->aux[2],
            (TensorAux{DType::kF32, Level::kVRF, Order::kRowMajor, 8}));
  EXPECT_TRUE(s->serial);
  // Nothing is farther out than L1, so no cache budget can be spent.
  EXPECT_EQ(s->budget, (Budget{3, 2, 0, 0, 0}));

  s = ParseSpec("matmul 1x2048x16384 bf16*bf16->f32 b=col");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(*s,
            Spec::Matmul(1, 2048, 16384, {.dtype = DType::kBF16},
                         {.dtype = DType::kBF16, .layout = Order::kColMajor},
                         {.dtype = DType::kF32}));
  EXPECT_FALSE(s->serial);
  EXPECT_FALSE(s->budget.has_value());

  // f32 activations times bf16 weights.
  s = ParseSpec("matmul 1x2048x16384 f32*bf16->f32 b=p32s2");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(*s,
            Spec::Matmul(
                1, 2048, 16384, {},
                {.dtype = DType::kBF16,
                 .layout = Layout::Panels(Order::kRowMajor, 32).InSections(2)},
                {}));

  s = ParseSpec("matmul 2x3x4x5 f32");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->b, 2);
  EXPECT_EQ(s->m, 3);
  EXPECT_EQ(s->k, 4);
  EXPECT_EQ(s->n, 5);

  s = ParseSpec("move 4x16 f32 src=l1 dst=vrf,v8");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(*s, Spec::Move(4, 16, {.level = Level::kL1},
                           {.level = Level::kVRF, .vector_width = 8}));
}

// Texts that parse but are not canonical, and what they print as.
TEST(SpecTextTest, NonCanonicalTextsPrintCanonically) {
  const std::pair<const char*, const char*> kCases[] = {
      {"  matmul\t256x256x256   f32 ", "matmul 256x256x256 f32"},
      {"matmul 1x256x256x256 f32", "matmul 256x256x256 f32"},
      {"matmul 4x4x4 f32*f32->f32", "matmul 4x4x4 f32"},
      {"move 4x4 bf16->bf16", "move 4x4 bf16"},
      {"matmul 1x1x1 f32 a=col b=l1,col", "matmul 1x1x1 f32 b=l1"},
      {"matmul 4x4x4 f32 serial accum", "matmul 4x4x4 f32 accum serial"},
      {"matmul 4x4x4 f32 c=v8,vrf", "matmul 4x4x4 f32 c=vrf,v8"},
      {"matmul 4x4x4 f32 c=col,vrf,v8", "matmul 4x4x4 f32 c=vrf,v8"},
      {"matmul 4x4x4 f32 a=gl,row", "matmul 4x4x4 f32"},
      {"matmul 4x4x4 f32 a=l1 a=col", "matmul 4x4x4 f32 a=l1,col"},
      {"zero 4x4 f32 out=vrf,v08", "zero 4x4 f32 out=vrf,v8"},
      {"matmul 4x4x4 f32 budget=l1:512,vrf:3,l3:8,gpr:1,l2:4",
       "matmul 4x4x4 f32 budget=vrf:3,gpr:1,l1:512,l2:4,l3:8"},
      {"matmul 4x4x4 f32 budget=vrf:3,gpr:1,l1:500,l2:5000,l3:70000",
       "matmul 4x4x4 f32 budget=vrf:3,gpr:1,l1:384,l2:4096,l3:65536"},
      {"matmul 4x4x4 f32 a=l2 b=l2 c=l2 budget=vrf:3,gpr:1,l1:8,l2:8,l3:8",
       "matmul 4x4x4 f32 a=l2 b=l2 c=l2 budget=vrf:3,gpr:1,l1:8,l2:0,l3:0"},
      {"matmul 1x1x16 f32 b=p16", "matmul 1x1x16 f32"},
      {"matmul 1x2x16 f32 b=p16", "matmul 1x2x16 f32 b=p16"},
      {"matmul 1x1x1 f32 b=l1,p8", "matmul 1x1x1 f32 b=l1"},
  };
  for (const auto& [text, canonical] : kCases) {
    absl::StatusOr<Spec> s = ParseSpec(text);
    ASSERT_THAT(s, IsOk()) << text;
    EXPECT_EQ(PrintSpec(*s), canonical) << text;
  }
}

TEST(SpecTextTest, FactorySpecsRoundTrip) {
  const TensorAux vrf8{DType::kF32, Level::kVRF, Order::kRowMajor, 8};
  const TensorAux l1_col{DType::kBF16, Level::kL1, Order::kColMajor, 0};
  const Spec kSpecs[] = {
      Spec::Matmul(256, 256, 256),
      Spec::Matmul(6, 1, 16, {.level = Level::kL1}, {.level = Level::kL1}, vrf8,
                   true),
      Spec::Matmul(1, 1, 1, l1_col, l1_col, l1_col),
      Spec::Zero(4, 16, vrf8),
      Spec::Zero(300, 1, l1_col),
      Spec::Move(4, 16, l1_col, vrf8),
  };
  for (const Spec& s : kSpecs) {
    std::string text = PrintSpec(s);
    absl::StatusOr<Spec> parsed = ParseSpec(text);
    ASSERT_THAT(parsed, IsOk()) << text;
    EXPECT_EQ(*parsed, s) << text;
  }
}

TEST(SpecTextTest, RandomSpecsRoundTrip) {
  std::mt19937_64 rng(20240521);
  for (int trial = 0; trial < 5000; ++trial) {
    Spec s = RandomValidSpec(rng);
    std::string text = PrintSpec(s);
    absl::StatusOr<Spec> parsed = ParseSpec(text);
    ASSERT_THAT(parsed, IsOk()) << "trial " << trial << ": " << text;
    ASSERT_EQ(*parsed, s) << "trial " << trial << ": " << text;
    ASSERT_EQ(PrintSpec(*parsed), text) << "trial " << trial;
  }
}

TEST(SpecTextTest, RejectsZeroDimension) {
  ExpectParseError("matmul 0x5x5 f32", {"dimension M is 0", "at least 1"});
  ExpectParseError("matmul 5x5x0 f32", {"dimension N is 0"});
  ExpectParseError("matmul 0x5x5x5 f32", {"dimension batch is 0"});
  ExpectParseError("matmul -5x5x5 f32", {"dimension M is -5"});
}

TEST(SpecTextTest, RejectsWrongNumberOfDimensions) {
  ExpectParseError("matmul 5x5 f32", {"'5x5' has 2 dimensions", "must have 3"});
  ExpectParseError("matmul 2x2x2x2x2 f32", {"has 5 dimensions"});
  ExpectParseError("zero 4x4x4 f32", {"has 3 dimensions", "must have 2"});
  ExpectParseError("move 4 f32", {"has 1 dimensions", "must have 2"});
}

TEST(SpecTextTest, RejectsNonNumericDimension) {
  ExpectParseError("matmul 4xax4 f32",
                   {"dimension K is 'a'", "positive integer"});
  ExpectParseError("matmul 4x4x4x f32", {"dimension N is ''"});
  ExpectParseError("matmul 4x+4x4 f32", {"dimension K is '+4'"});
}

TEST(SpecTextTest, RejectsUnknownOperation) {
  ExpectParseError("conv 3x3 f32", {"operation 'conv' is unknown", "matmul"});
  ExpectParseError("MATMUL 3x3x3 f32", {"operation 'MATMUL' is unknown"});
}

TEST(SpecTextTest, RejectsUnknownDType) {
  ExpectParseError("matmul 5x5x5 f64",
                   {"dtype 'f64' is unknown", "f32 or bf16"});
  ExpectParseError("matmul 5x5x5 f32*f16->f32", {"dtype 'f16' is unknown"});
  ExpectParseError("matmul 5x5x5 f32*bf16", {"dtype 'f32*bf16' is unknown"});
  ExpectParseError("matmul 5x5x5 f32*bf16*bf16->f32",
                   {"has 3 inputs, must have 2"});
  ExpectParseError("matmul 5x5x5 f32*f32->", {"dtype '' is unknown"});
  ExpectParseError("matmul 5x5x5 f32->f32", {"has 1 inputs", "must have 2"});
  ExpectParseError("move 5x5 f32*f32->f32", {"has 2 inputs", "must have 1"});
}

TEST(SpecTextTest, RejectsDimensionBeyondInt64) {
  ExpectParseError(
      "matmul 99999999999999999999x1x1 f32",
      {"dimension M is 99999999999999999999", "at most 2147483647"});
}

TEST(SpecTextTest, RejectsDimensionBeyondInt32) {
  ExpectParseError("matmul 1x3000000000x1 f32",
                   {"dimension K is 3000000000", "at most 2147483647"});
}

TEST(SpecTextTest, RejectsOperandTooLarge) {
  // A is 2e9 x 2e9 f32: 1.6e19 bytes, beyond int64 as well as the JIT's 2^31
  // - 1.
  ExpectParseError("matmul 2000000000x2000000000x1 f32",
                   {"operand a needs", "bytes", "at most 2147483647"});
  // B alone: 65536 x 8192 bf16 = 2^30 bytes fits; x 2 batches = 2^31 does not.
  EXPECT_THAT(ParseSpec("matmul 1x65536x8192 bf16"), IsOk());
  ExpectParseError("matmul 2x1x65536x8192 bf16", {"operand b needs"});
  ExpectParseError("zero 65536x8192 f32", {"operand out needs"});
}

TEST(SpecTextTest, OperandSizeCountsPanelPaddingAndSections) {
  // 300000 x 1100 f32 is 1.32e9 bytes plain, but in panels of 1024 the last
  // panel is padded to 2048 columns: 2.46e9 bytes, past 32-bit offsets.
  EXPECT_THAT(ParseSpec("matmul 4x300000x1100 f32"), IsOk());
  ExpectParseError("matmul 4x300000x1100 f32 b=p1024",
                   {"operand b needs 2.4576e+09 bytes", "at most 2147483647"});
  // 9 panels of 128 dealt round 8 sections take 16 slots: 3.28e9 bytes.
  EXPECT_THAT(ParseSpec("matmul 8x400000x1152 f32 b=p128"), IsOk());
  ExpectParseError("matmul 8x400000x1152 f32 b=p128s8",
                   {"operand b needs 3.2768e+09 bytes"});
}

// A leading dimension equal to the dense one, or of a single outer row, is
// none; options may come in any order.
TEST(SpecTextTest, RejectsEmptyText) {
  ExpectParseError("", {"text is empty"});
  ExpectParseError(" \t ", {"text is empty"});
}

TEST(SpecTextTest, RejectsMissingWords) {
  ExpectParseError("matmul 4x4x4", {"has 2 words", "at least 3"});
  ExpectParseError("zero", {"has 1 words"});
}

TEST(SpecTextTest, RejectsUnknownOption) {
  ExpectParseError("matmul 4x4x4 f32 fast", {"option 'fast' is unknown"});
  ExpectParseError("zero 4x4 f32 accum", {"accum", "only valid for matmul"});
}

TEST(SpecTextTest, RejectsBadOperand) {
  ExpectParseError("matmul 4x4x4 f32 out=l1",
                   {"operand 'out' is unknown", "a, b, c"});
  ExpectParseError("zero 4x4 f32 a=l1", {"operand 'a' is unknown", "out"});
  ExpectParseError("move 4x4 f32 c=l1", {"operand 'c' is unknown", "src, dst"});
  ExpectParseError("matmul 4x4x4 f32 a=dram", {"property 'dram' of operand a"});
  ExpectParseError("matmul 4x4x4 f32 a=", {"property '' of operand a"});
  ExpectParseError("matmul 4x4x4 f32 a=l1,,col", {"property '' of operand a"});
}

TEST(SpecTextTest, RejectsBadPanels) {
  ExpectParseError("matmul 4x4x4 f32 b=p0", {"panel width is 0", "1 to 1024"});
  ExpectParseError("matmul 4x4x4 f32 b=p2000", {"panel width is 2000"});
  ExpectParseError("matmul 4x4x4 f32 b=px", {"panel width is 'x'"});
  ExpectParseError("matmul 4x4x4 f32 c=vrf,v8,p8",
                   {"operand c is packed in vrf", "only in memory"});
}

// k-pair panels: `pPx2` only, and only row-major.
TEST(SpecTextTest, RejectsBadInterleave) {
  ExpectParseError("matmul 4x4x4 bf16 b=p32x3",
                   {"interleave is 3", "must be 2"});
  ExpectParseError("matmul 4x4x4 bf16 b=p32x", {"interleave is ''"});
  ExpectParseError("matmul 4x4x4 bf16 b=px2", {"panel width is 'x2'"});
  ExpectParseError("matmul 4x4x4 bf16 b=col,p32x2",
                   {"operand b is interleaved and column-major"});
}

// Sections: `pPsS` and `pPx2sS`, S 2, 4 or 8, row-major only.
TEST(SpecTextTest, RejectsBadSections) {
  ExpectParseError("matmul 4x4x64 bf16 b=p32s1",
                   {"sections are 1", "must be 2, 4 or 8"});
  ExpectParseError("matmul 4x4x64 bf16 b=p32s3", {"sections are 3"});
  ExpectParseError("matmul 4x4x64 bf16 b=p32s16", {"sections are 16"});
  ExpectParseError("matmul 4x4x64 bf16 b=p32s", {"sections is ''"});
  ExpectParseError("matmul 4x4x64 bf16 b=p32x2s", {"sections is ''"});
  ExpectParseError("matmul 4x4x64 bf16 b=ps2", {"panel width is 's2'"});
  ExpectParseError("matmul 4x4x64 bf16 b=col,p32s2",
                   {"operand b is in sections and column-major"});
}

// The pair layout survives where a plain panel would be simplified: one row
// of pairs is not a plain row.
TEST(SpecTextTest, InterleavedPanelsParse) {
  absl::StatusOr<Spec> s = ParseSpec("matmul 3x1x20 bf16*bf16->f32 b=p32x2");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->aux[1].layout, Layout::Panels(Order::kRowMajor, 32).Paired());
  s = ParseSpec("matmul 3x1x20 bf16*bf16->f32 b=p32");
  ASSERT_THAT(s, IsOk());
  EXPECT_FALSE(s->aux[1].layout.packed());
  s = ParseSpec("matmul 3x1x1 bf16*bf16->f32 b=p32x2");  // one element
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->aux[1], TensorAux{.dtype = DType::kBF16});
}

// `b=any` leaves B's layout to the runtime: the request carries the Spec with
// B plain row-major and the flag; anything else with it is refused.
TEST(SpecTextTest, RequestWithAnyB) {
  absl::StatusOr<SpecRequest> r =
      ParseRequest("matmul 1x2048x16384 bf16*bf16->f32 b=any");
  ASSERT_THAT(r, IsOk());
  EXPECT_TRUE(r->b_any);
  EXPECT_EQ(r->spec, *ParseSpec("matmul 1x2048x16384 bf16*bf16->f32"));
  r = ParseRequest("matmul 4x4x4 f32 b=col");
  ASSERT_THAT(r, IsOk());
  EXPECT_FALSE(r->b_any);
  EXPECT_EQ(r->spec, *ParseSpec("matmul 4x4x4 f32 b=col"));
  EXPECT_THAT(
      ParseRequest("matmul 4x4x4 f32 b=any b=col"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("b=any alone")));
  // One layout for a range of M: the Spec's M must lie in it.
  r = ParseRequest("matmul 1x2048x16384 f32 b=any m=1..64");
  ASSERT_THAT(r, IsOk());
  EXPECT_TRUE(r->b_any);
  EXPECT_EQ(r->m_lo, 1);
  EXPECT_EQ(r->m_hi, 64);
  EXPECT_EQ(r->spec, *ParseSpec("matmul 1x2048x16384 f32"));
  EXPECT_THAT(ParseRequest("matmul 1x8x8 f32 b=any m=2..64"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must contain the Spec's M (1)")));
  for (const char* bad : {"m=0..4", "m=4..2", "m=1-4", "m=..4", "m=1..x"})
    EXPECT_THAT(ParseRequest(absl::StrCat("matmul 1x8x8 f32 b=any ", bad)),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("must be LO..HI")))
        << bad;
  EXPECT_THAT(ParseRequest("zero 4x4 f32 b=any"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("b=any is for a matmul's B")));
  EXPECT_THAT(ParseRequest("matmul 4x4x4 f32 x=1 b=any"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("operand 'x' is unknown")));
  // Only alone, and only in a request.
  ExpectParseError("matmul 4x4x4 f32 b=any,l1",
                   {"property 'any' of operand b", "b=any"});
  ExpectParseError("matmul 4x4x4 f32 b=any", {"property 'any' of operand b"});
  ExpectParseError("matmul 4x4x4 f32 a=any", {"property 'any' of operand a"});
}

TEST(SpecTextTest, RejectsVrfWithoutVectorWidth) {
  ExpectParseError("matmul 4x4x4 f32 c=vrf",
                   {"operand c", "vector width", "vrf"});
  ExpectParseError("zero 4x4 f32 out=l1,v8", {"operand out", "vector width"});
  ExpectParseError("matmul 4x4x4 f32 c=vrf,v3",
                   {"vector width is 3", "1, 4, 8 or 16"});
  ExpectParseError("matmul 4x4x4 f32 c=vrf,v32", {"vector width is 32"});
  ExpectParseError("matmul 4x4x4 f32 c=vrf,vx", {"vector width is 'x'"});
}

TEST(SpecTextTest, RejectsBadBudget) {
  ExpectParseError("matmul 4x4x4 f32 budget=vrf:3",
                   {"incomplete", "vrf:R,gpr:G,l1:LINES,l2:LINES,l3:LINES"});
  ExpectParseError("matmul 4x4x4 f32 budget=vrf:3,gpr:1,l1:512,l2:8",
                   {"incomplete"});
  ExpectParseError("matmul 4x4x4 f32 budget=vrf:65,gpr:1,l1:512,l2:8,l3:8",
                   {"budget vrf is 65", "must be at most 64"});
  ExpectParseError("matmul 4x4x4 f32 budget=vrf:6,gpr:65,l1:512,l2:8,l3:8",
                   {"budget gpr is 65", "must be at most 64"});
  ExpectParseError("matmul 4x4x4 f32 budget=vrf:3,gpu:1", {"'gpu:1'"});
  ExpectParseError("matmul 4x4x4 f32 budget=vrf:-1,l1:512",
                   {"budget vrf is -1", "must be at least 0"});
  ExpectParseError("matmul 4x4x4 f32 budget=vrf:3,l1:x", {"budget l1 is 'x'"});
  ExpectParseError("matmul 4x4x4 f32 budget=vrf,l1:4", {"budget vrf is ''"});
}

// An error message is one line even when the text itself spans several (the
// tokenizer accepts newlines as separators).
//
TEST(SpecTextTest, ErrorIsOneLineForMultiLineText) {
  absl::StatusOr<Spec> s = ParseSpec("matmul 0x5x5\nf32");
  ASSERT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          AllOf(StartsWith("cannot parse spec '"),
                                HasSubstr("dimension M is 0"))));
  EXPECT_THAT(std::string(s.status().message()), Not(HasSubstr("\n")));
}

// The grammar gives zero a single dtype T; the T->T form is for matmul and
// move.
TEST(SpecTextTest, RejectsArrowDTypesForZero) {
  ExpectParseError("zero 4x4 f32->bf16", {"dtypes 'f32->bf16'"});
}

}  // namespace
}  // namespace amarena
