// Tests for core/reference.h: the reference means what the Spec says (layouts,
// accumulation, zero, move), and CheckAgainstReference can fail as well as
// pass.
#include "core/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/matchers.h"

namespace amarena {
namespace {

using ::amarena::testing::IsOk;
using ::amarena::testing::StatusIs;
using ::testing::HasSubstr;

constexpr TensorAux kColMajor{.layout = Order::kColMajor};

float* F32(const Operands& ops, int i) {
  return static_cast<float*>(ops.ptr(i));
}

// Runs the reference on `ops` and returns the output's bytes from before the
// run.
std::vector<uint8_t> RunInPlace(const Spec& s, Operands& ops) {
  std::vector<uint8_t> before = ops.Snapshot(s.OutputIndex());
  EXPECT_THAT(RunReference(s, ops.ptrs()), IsOk());
  return before;
}

TEST(ReferenceTest, AcceptsItsOwnOutput) {
  const Spec kSpecs[] = {
      Spec::Matmul(5, 17, 9),
      Spec::Matmul(5, 17, 9, kColMajor, kColMajor, kColMajor),
      Spec::Matmul(5, 17, 9, {}, {}, {}, /*accum=*/true),
      Spec::Matmul(3, 64, 7, {.dtype = DType::kBF16}, {.dtype = DType::kBF16},
                   {}),
      Spec::Matmul(3, 64, 7, {.dtype = DType::kBF16}, {.dtype = DType::kBF16},
                   {.dtype = DType::kBF16}),
      Spec::Zero(6, 10, {}),
      Spec::Move(6, 10, {}, kColMajor),
  };
  for (const Spec& s : kSpecs) {
    Operands ops(s);
    FillRandom(s, ops, /*seed=*/1);
    std::vector<uint8_t> before = RunInPlace(s, ops);
    Verdict v = CheckAgainstReference(s, ops, before);
    EXPECT_TRUE(v.ok) << "max_rel_err " << v.max_rel_err << " tolerance "
                      << v.tolerance;
    EXPECT_GT(v.tolerance, 0);
  }
}

TEST(ReferenceTest, RejectsAPerturbedOutput) {
  Spec s = Spec::Matmul(8, 16, 8);
  Operands ops(s);
  FillRandom(s, ops, /*seed=*/2);
  std::vector<uint8_t> before = RunInPlace(s, ops);
  ASSERT_TRUE(CheckAgainstReference(s, ops, before).ok);

  // Terms are |a*b| <= 1, so the summed magnitude is at most k = 16: an error
  // of 1e-3 is at least 6e-5 relative, far above the tolerance (16 + 4) * 2^-23
  // = 2.4e-6.
  F32(ops, 2)[3 * 8 + 5] += 1e-3f;
  Verdict v = CheckAgainstReference(s, ops, before);
  EXPECT_FALSE(v.ok);
  EXPECT_GT(v.max_rel_err, v.tolerance);
}

TEST(ReferenceTest, RejectsNaN) {
  Spec s = Spec::Matmul(4, 4, 4);
  Operands ops(s);
  FillRandom(s, ops, /*seed=*/3);
  std::vector<uint8_t> before = RunInPlace(s, ops);
  F32(ops, 2)[0] = NAN;
  EXPECT_FALSE(CheckAgainstReference(s, ops, before).ok);
}

// The reference computed once judges an output exactly as
// CheckAgainstReference does: the same verdict and error, pass or fail,
// with leading dimensions, a batch and accumulation.
TEST(ReferenceTest, ExpectedOutputAgreesWithTheCheck) {
  const Spec kSpecs[] = {Spec::Matmul(7, 13, 5),
                         Spec::Matmul(5, 17, 9, {}, {}, {}, /*accum=*/true),
                         *ParseSpec("matmul 3x5x17x9 f32 lda=40 ldb=12 ldc=11"),
                         Spec::Matmul(3, 64, 7, {.dtype = DType::kBF16},
                                      {.dtype = DType::kBF16},
                                      {.dtype = DType::kBF16})};
  for (const Spec& s : kSpecs) {
    Operands ops(s);
    FillRandom(s, ops, /*seed=*/4);
    const std::vector<uint8_t> before = RunInPlace(s, ops);
    const ExpectedOutput expected(s, ops, before);
    for (bool perturb : {false, true}) {
      if (perturb) {
        const int o = s.OutputIndex();
        const TensorSpec out = s.Operand(o);
        if (out.aux.dtype == DType::kF32)
          F32(ops, o)[out.Offset(out.rows - 1, out.cols - 1)] += 0.5f;
        else
          static_cast<uint16_t*>(ops.ptr(o))[0] ^= 0x4000;  // exponent bit
      }
      const Verdict once = expected.Check(ops);
      const Verdict each = CheckAgainstReference(s, ops, before);
      EXPECT_EQ(once.ok, !perturb) << PrintSpec(s);
      EXPECT_EQ(once.ok, each.ok) << PrintSpec(s);
      EXPECT_EQ(once.max_rel_err, each.max_rel_err) << PrintSpec(s);
      EXPECT_EQ(once.tolerance, each.tolerance) << PrintSpec(s);
    }
  }
}

TEST(ReferenceTest, MatmulComputesTheProduct) {
  // A = [1 2; 3 4], B = [5 6; 7 8]: A.B = [19 22; 43 50].
  Spec s = Spec::Matmul(2, 2, 2);
  Operands ops(s);
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  std::copy(a, a + 4, F32(ops, 0));
  std::copy(b, b + 4, F32(ops, 1));
  std::fill(F32(ops, 2), F32(ops, 2) + 4, 100.0f);  // overwritten, not added to
  RunInPlace(s, ops);
  EXPECT_THAT(std::vector<float>(F32(ops, 2), F32(ops, 2) + 4),
              ::testing::ElementsAre(19, 22, 43, 50));
}

// C[q] = A[q].B[q]: two batch elements, the second's matrices one stride on;
// with sb=0 both read the one B; C's gap between its matrices is left alone.
TEST(ReferenceTest, BatchedMatmulComputesEachProduct) {
  Spec s = Spec::Matmul(2, 2, 2);
  s.b = 2;
  s.batch_stride = {Spec::kDenseBatch, 0, 5};
  s = Canonical(s);
  ASSERT_TRUE(s.SharedB());
  Operands ops(s);
  const float a[] = {1, 2, 3, 4, 0, 1, 1, 0}, b[] = {5, 6, 7, 8};
  std::copy(a, a + 8, F32(ops, 0));
  std::copy(b, b + 4, F32(ops, 1));
  std::fill(F32(ops, 2), F32(ops, 2) + 9, -1.0f);
  RunInPlace(s, ops);
  // [0 1; 1 0].B swaps B's rows.
  EXPECT_THAT(std::vector<float>(F32(ops, 2), F32(ops, 2) + 9),
              ::testing::ElementsAre(19, 22, 43, 50, -1, 7, 8, 5, 6));
}

TEST(ReferenceTest, AccumulatingMatmulAddsToThePreviousOutput) {
  Spec plain = Spec::Matmul(5, 11, 6);
  Spec accum = Spec::Matmul(5, 11, 6, {}, {}, {}, /*accum=*/true);
  Operands p(plain), q(accum);
  FillRandom(accum, q, /*seed=*/4);  // random A, B and previous C
  for (int i = 0; i < 2; ++i)
    std::copy_n(F32(q, i), i == 0 ? 5 * 11 : 11 * 6, F32(p, i));
  std::vector<uint8_t> before = RunInPlace(accum, q);
  RunInPlace(plain, p);

  const float* c0 = reinterpret_cast<const float*>(before.data());
  for (int e = 0; e < 5 * 6; ++e) {
    ASSERT_NE(c0[e], 0.0f);
    EXPECT_NEAR(F32(q, 2)[e], c0[e] + F32(p, 2)[e], 1e-5) << "element " << e;
  }
  EXPECT_TRUE(CheckAgainstReference(accum, q, before).ok);
  // Checked as if C had started at zero, the accumulated output is wrong.
  std::vector<uint8_t> zeros(before.size(), 0);
  EXPECT_FALSE(CheckAgainstReference(accum, q, zeros).ok);
}

TEST(ReferenceTest, AlphaScalesTheProductNotThePreviousOutput) {
  // A = [1 2; 3 4], B = [5 6; 7 8]: A.B = [19 22; 43 50]; C was 100.
  Spec s = Spec::Matmul(2, 2, 2, {}, {}, {}, /*accum=*/true);
  s.alpha = 0.5f;
  s = Canonical(s);
  Operands ops(s);
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  std::copy(a, a + 4, F32(ops, 0));
  std::copy(b, b + 4, F32(ops, 1));
  std::fill(F32(ops, 2), F32(ops, 2) + 4, 100.0f);
  std::vector<uint8_t> before = RunInPlace(s, ops);
  EXPECT_THAT(std::vector<float>(F32(ops, 2), F32(ops, 2) + 4),
              ::testing::ElementsAre(109.5, 111, 121.5, 125));
  EXPECT_TRUE(CheckAgainstReference(s, ops, before).ok);
  // The unscaled product is wrong for it.
  Spec plain = s;
  plain.alpha = 1.0f;
  EXPECT_FALSE(CheckAgainstReference(plain, ops, before).ok);
}

TEST(ReferenceTest, ColumnMajorIsTransposedStorage) {
  const int64_t m = 4, k = 7, n = 3;
  Spec row = Spec::Matmul(m, k, n);
  Spec col = Spec::Matmul(m, k, n, kColMajor, kColMajor, kColMajor);
  Operands r(row), c(col);
  FillRandom(row, r, /*seed=*/5);
  // Element (i, j) of a rows x cols matrix: row-major at i*cols + j,
  // column-major at j*rows + i.
  auto transpose_into = [](const float* src, float* dst, int64_t rows,
                           int64_t cols) {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) dst[j * rows + i] = src[i * cols + j];
  };
  transpose_into(F32(r, 0), F32(c, 0), m, k);
  transpose_into(F32(r, 1), F32(c, 1), k, n);
  RunInPlace(row, r);
  RunInPlace(col, c);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      // Same products summed in the same order: bit-identical.
      EXPECT_EQ(F32(c, 2)[j * m + i], F32(r, 2)[i * n + j]) << i << "," << j;
      EXPECT_EQ(col.Operand(2).Offset(i, j), j * m + i);
    }
  }
}

TEST(ReferenceTest, MixedLayoutsAgree) {
  // A column-major, B and C row-major: still A.B.
  Spec row = Spec::Matmul(3, 5, 4);
  Spec mixed = Spec::Matmul(3, 5, 4, kColMajor, {}, {});
  Operands r(row), x(mixed);
  FillRandom(row, r, /*seed=*/6);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t kk = 0; kk < 5; ++kk)
      F32(x, 0)[kk * 3 + i] = F32(r, 0)[i * 5 + kk];
  std::copy_n(F32(r, 1), 5 * 4, F32(x, 1));
  RunInPlace(row, r);
  RunInPlace(mixed, x);
  for (int e = 0; e < 3 * 4; ++e) EXPECT_EQ(F32(x, 2)[e], F32(r, 2)[e]) << e;
}

TEST(ReferenceTest, ZeroClearsAndMoveCopies) {
  Spec z = Spec::Zero(3, 5, {});
  Operands zo(z);
  FillRandom(z, zo, /*seed=*/7);
  RunInPlace(z, zo);
  for (int e = 0; e < 15; ++e) EXPECT_EQ(F32(zo, 0)[e], 0.0f);

  // Row-major source into a column-major destination: a transpose in memory.
  Spec mv = Spec::Move(3, 5, {}, kColMajor);
  Operands mo(mv);
  FillRandom(mv, mo, /*seed=*/8);
  RunInPlace(mv, mo);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j)
      EXPECT_EQ(F32(mo, 1)[j * 3 + i], F32(mo, 0)[i * 5 + j]);
}

TEST(ReferenceTest, Bf16OutputIsRoundedToNearest) {
  // 1 + 2^-8 lies halfway between the bf16 neighbours 1 and 1 + 2^-7; ties go
  // to even.
  Spec s = Spec::Move(1, 2, {}, {.dtype = DType::kBF16});
  Operands ops(s);
  F32(ops, 0)[0] = 1.0f + std::ldexp(1.0f, -8);
  F32(ops, 0)[1] = 1.0f + 3 * std::ldexp(1.0f, -9);
  RunInPlace(s, ops);
  EXPECT_EQ(ReadElement(ops.ptr(1), DType::kBF16, 0), 1.0f);
  EXPECT_EQ(ReadElement(ops.ptr(1), DType::kBF16, 1),
            1.0f + std::ldexp(1.0f, -7));
}

TEST(ReferenceTest, RefusesOperandsOutsideMemory) {
  Spec s = Spec::Zero(4, 16, {.level = Level::kVRF, .vector_width = 8});
  Operands ops(s);
  EXPECT_THAT(
      RunReference(s, ops.ptrs()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("cannot run reference for zero 4x16 f32 out=vrf,v8")));
}

TEST(ReferenceTest, FillRandomIsDeterministicAndInRange) {
  Spec s = Spec::Matmul(6, 6, 6);
  Operands x(s), y(s);
  FillRandom(s, x, /*seed=*/9);
  FillRandom(s, y, /*seed=*/9);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(x.Snapshot(i), y.Snapshot(i));
    for (int e = 0; e < 36; ++e) {
      EXPECT_GE(F32(x, i)[e], -1.0f);
      EXPECT_LT(F32(x, i)[e], 1.0f);
    }
  }
}

// Panels of 4 over 10 columns: element (i, j) at (j/4)*3*4 + i*4 + j%4, the
// last panel padded to 4; Relayout there and back is the identity and zeroes
// the padding.
TEST(ReferenceTest, PackedOffsetsAndRelayout) {
  TensorSpec plain{.rows = 3, .cols = 10, .aux = {}};
  TensorSpec packed = plain;
  packed.aux.layout = Layout::Panels(Order::kRowMajor, 4);
  EXPECT_EQ(packed.StoredElements(), 36);
  EXPECT_EQ(packed.Offset(2, 9), 2 * 12 + 2 * 4 + 1);
  std::vector<float> src(30), mid(36, 5.0f), back(30);
  for (int e = 0; e < 30; ++e) src[e] = static_cast<float>(e);
  Relayout(plain, src.data(), packed, mid.data());
  EXPECT_EQ(mid[packed.Offset(1, 6)], src[16]);
  EXPECT_EQ(mid[2 * 12 + 2 * 4 + 3], 0.0f);  // padding of the last panel
  Relayout(packed, mid.data(), plain, back.data());
  EXPECT_EQ(back, src);
}

// Panels of 4 over 3 rows x 10 columns in two sections (`p4s2`): 3 panels,
// slots 0 and 1 in the first section, 2 (and an unused one) in the second:
// panel 0 in slot 0, panel 1 in slot 2, panel 2 in slot 1. Relayout there
// and back is the identity and zeroes the unused slot.
TEST(ReferenceTest, SectionOffsetsAndRelayout) {
  TensorSpec plain{.rows = 3, .cols = 10, .aux = {}};
  TensorSpec sections = plain;
  sections.aux.layout = Layout::Panels(Order::kRowMajor, 4).InSections(2);
  EXPECT_EQ(sections.StoredElements(), 4 * 12);
  EXPECT_EQ(sections.Offset(1, 2), 1 * 4 + 2);
  EXPECT_EQ(sections.Offset(1, 6), 2 * 12 + 1 * 4 + 2);
  EXPECT_EQ(sections.Offset(2, 9), 1 * 12 + 2 * 4 + 1);
  std::vector<float> src(30), mid(48, 5.0f), back(30);
  for (int e = 0; e < 30; ++e) src[e] = static_cast<float>(e + 1);
  Relayout(plain, src.data(), sections, mid.data());
  for (int e = 36; e < 48; ++e) EXPECT_EQ(mid[e], 0.0f) << e;  // unused slot
  Relayout(sections, mid.data(), plain, back.data());
  EXPECT_EQ(back, src);
}

// k-pair panels of 4 over 5 rows x 10 columns (`p4x2`): rows stored as 3
// pairs (the last row's partner is padding), element (i, j) at
// (j/4)*6*4 + (i/2)*8 + (j%4)*2 + i%2; the last panel padded to 4. Relayout
// there and back is the identity and zeroes every padding element.
TEST(ReferenceTest, PairOffsetsAndRelayout) {
  TensorSpec plain{.rows = 5, .cols = 10, .aux = {.dtype = DType::kBF16}};
  TensorSpec pairs = plain;
  pairs.aux.layout = Layout::Panels(Order::kRowMajor, 4).Paired();
  EXPECT_EQ(pairs.StoredElements(), 3 * 4 * 6);
  EXPECT_EQ(pairs.Offset(0, 0), 0);
  EXPECT_EQ(pairs.Offset(1, 0), 1);
  EXPECT_EQ(pairs.Offset(0, 1), 2);
  EXPECT_EQ(pairs.Offset(3, 6), 24 + 8 + 4 + 1);
  EXPECT_EQ(pairs.Offset(4, 9), 48 + 16 + 2);
  std::vector<uint16_t> src(50), mid(72, 0x7fc0), back(50);  // mid: NaNs
  for (int e = 0; e < 50; ++e) src[e] = static_cast<uint16_t>(e + 1);
  Relayout(plain, src.data(), pairs, mid.data());
  std::vector<bool> used(72, false);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 10; ++j) {
      EXPECT_EQ(mid[pairs.Offset(i, j)], src[i * 10 + j]);
      used[pairs.Offset(i, j)] = true;
    }
  for (int e = 0; e < 72; ++e) {
    if (!used[e]) {
      EXPECT_EQ(mid[e], 0) << "padding element " << e;
    }
  }
  Relayout(pairs, mid.data(), plain, back.data());
  EXPECT_EQ(back, src);
  // Lines of the tile: 3 stored rows of a panel are 3 * 4 pairs * 4 bytes,
  // one line per panel.
  EXPECT_EQ(pairs.Lines(), 3);
}

}  // namespace
}  // namespace amarena
