// PackMatrix against the Layout's addressing and the scalar Relayout: every
// B layout a kernel can read (plain, col, pP, col,pP, pPx2, pPsS, pPx2sS),
// f32 and bf16, a K x N or N x K source with a leading dimension of its own,
// on shapes of 1, primes and non-multiples of the panel and of the 64-unit
// tiles; vectorized and portable, serial and spread over tasks. Then the
// kernel's PackB and the C API: a kernel run on B packed from N x K is
// correct, and bad arguments are refused by name.
#include "runtime/pack.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "amarena/amarena.h"
#include "runtime/runtime.h"

namespace amarena {
namespace {

std::vector<Layout> AllBLayouts() {
  std::vector<Layout> ls = {Layout(Order::kRowMajor), Layout(Order::kColMajor)};
  for (int64_t p : {1, 7, 8, 16, 32, 64, 80}) {
    ls.push_back(Layout::Panels(Order::kRowMajor, p));
    ls.push_back(Layout::Panels(Order::kColMajor, p));
    ls.push_back(Layout::Panels(Order::kRowMajor, p).Paired());
    for (int64_t s : {2, 4, 8}) {
      ls.push_back(Layout::Panels(Order::kRowMajor, p).InSections(s));
      ls.push_back(Layout::Panels(Order::kRowMajor, p).Paired().InSections(s));
    }
  }
  return ls;
}

// The source: element (i, j) of the matrix is a distinct non-zero pattern,
// at the place `source` and `ld` say; the gaps between rows hold other
// values (never to be read into the result).
std::vector<uint8_t> MakeSource(int64_t rows, int64_t cols, int64_t es,
                                PackSource source, int64_t ld) {
  const int64_t outer = source == PackSource::kSame ? rows : cols;
  std::vector<uint8_t> src(static_cast<size_t>(outer * ld * es), 0xEE);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const uint32_t v = static_cast<uint32_t>(i * 7919 + j * 31 + 1);
      const int64_t at = source == PackSource::kSame ? i * ld + j : j * ld + i;
      std::memcpy(&src[static_cast<size_t>(at * es)], &v,
                  static_cast<size_t>(es));
    }
  return src;
}

// What Layout::Offset says the packed matrix is: zeros but for each element.
std::vector<uint8_t> Expected(int64_t rows, int64_t cols, int64_t es,
                              const std::vector<uint8_t>& src,
                              PackSource source, int64_t ld, const Layout& to) {
  std::vector<uint8_t> out(
      static_cast<size_t>(to.StoredElements(rows, cols) * es), 0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t at = source == PackSource::kSame ? i * ld + j : j * ld + i;
      std::memcpy(&out[static_cast<size_t>(to.Offset(rows, cols, i, j) * es)],
                  &src[static_cast<size_t>(at * es)], static_cast<size_t>(es));
    }
  return out;
}

// Runs the tasks last first: a task that depended on another's output, or
// wrote outside its own tile, would show.
void Backwards(size_t n, absl::FunctionRef<void(size_t)> task) {
  for (size_t t = n; t-- > 0;) task(t);
}

struct Shape {
  int64_t rows, cols;
};
constexpr Shape kShapes[] = {
    {1, 1},    {1, 7},   {7, 1},    {2, 3},    {13, 7},   {7, 13},  {100, 37},
    {37, 100}, {64, 64}, {65, 129}, {130, 67}, {31, 211}, {3, 300}, {257, 17}};

TEST(PackTest, MatchesLayoutOffsetsForEveryLayoutAndSource) {
  const ParallelFor backwards = Backwards;
  int checked = 0;
  for (const Layout& to : AllBLayouts())
    for (int64_t es : {2, 4})
      for (const Shape& sh : kShapes)
        for (PackSource source : {PackSource::kSame, PackSource::kTransposed})
          for (int64_t extra : {0, 3}) {
            const int64_t ld =
                (source == PackSource::kSame ? sh.cols : sh.rows) + extra;
            const std::vector<uint8_t> src =
                MakeSource(sh.rows, sh.cols, es, source, ld);
            const std::vector<uint8_t> want =
                Expected(sh.rows, sh.cols, es, src, source, ld, to);
            for (int mode = 0; mode < 3; ++mode) {
              // Poisoned, so that padding left unwritten shows.
              std::vector<uint8_t> got(want.size(), 0xAB);
              PackMatrix({.rows = sh.rows,
                          .cols = sh.cols,
                          .es = es,
                          .src = src.data(),
                          .source = source,
                          .src_ld = ld},
                         to, got.data(), mode == 2 ? &backwards : nullptr,
                         /*vectorized=*/mode != 1);
              ASSERT_TRUE(got == want)
                  << "layout '" << to.Text() << "' es=" << es << " " << sh.rows
                  << "x" << sh.cols
                  << " source=" << (source == PackSource::kSame ? "KxN" : "NxK")
                  << " ld=" << ld << " mode=" << mode;
              ++checked;
            }
          }
  EXPECT_GT(checked, 10000);
}

// The scalar packer the runtime had (Relayout) gives the same bytes from a
// dense K x N source.
TEST(PackTest, MatchesRelayoutFromDenseRowMajor) {
  for (const Layout& to : AllBLayouts())
    for (const Shape& sh : {Shape{13, 7}, Shape{100, 37}, Shape{129, 250}}) {
      const std::vector<uint8_t> src =
          MakeSource(sh.rows, sh.cols, 2, PackSource::kSame, sh.cols);
      std::vector<uint8_t> want(
          static_cast<size_t>(to.StoredElements(sh.rows, sh.cols) * 2));
      Relayout(sh.rows, sh.cols, 2, Layout(), src.data(), to, want.data());
      std::vector<uint8_t> got(want.size(), 0xAB);
      PackMatrix({.rows = sh.rows,
                  .cols = sh.cols,
                  .es = 2,
                  .src = src.data(),
                  .src_ld = sh.cols},
                 to, got.data());
      EXPECT_TRUE(got == want) << to.Text() << " " << sh.rows << "x" << sh.cols;
    }
}

class PackKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (amarena_runtime_create(2, &rt_) != AMARENA_OK)
      GTEST_SKIP() << amarena_last_error();  // a CPU without AVX2+FMA
  }
  void TearDown() override { amarena_runtime_destroy(rt_); }
  amarena_runtime* rt_ = nullptr;
};

// B packed from its transpose, with a padded leading dimension, is what the
// scalar packer makes from B; the kernel run on it matches the reference.
TEST_F(PackKernelTest, KernelRunsOnWeightsPackedFromTransposedSource) {
  for (const char* text :
       {"matmul 7x13x40 f32 b=p32", "matmul 5x37x70 bf16*bf16->f32 b=p32x2",
        "matmul 3x100x130 bf16*bf16->f32 b=p16x2s2", "matmul 9x17x23 f32 b=col",
        "matmul 1x64x96 f32 b=p16s4"}) {
    SCOPED_TRACE(text);
    amarena_kernel* k = nullptr;
    ASSERT_EQ(amarena_kernel_get(rt_, text, &k), AMARENA_OK)
        << amarena_last_error();
    absl::StatusOr<Spec> spec = ParseSpec(amarena_kernel_spec(k));
    ASSERT_TRUE(spec.ok()) << spec.status();
    const TensorSpec b = spec->Operand(1);
    const int64_t es = SizeOf(b.aux.dtype), ld = b.rows + 5;
    Operands ops(*spec);
    FillRandom(*spec, ops, 7);
    // B as N x K, from the packed B FillRandom made.
    std::vector<uint8_t> bt(static_cast<size_t>(b.cols * ld * es), 0);
    for (int64_t i = 0; i < b.rows; ++i)
      for (int64_t j = 0; j < b.cols; ++j)
        std::memcpy(&bt[static_cast<size_t>((j * ld + i) * es)],
                    static_cast<const char*>(ops.ptr(1)) + b.Offset(i, j) * es,
                    static_cast<size_t>(es));
    const size_t need = amarena_kernel_b_bytes(k);
    std::vector<uint8_t> packed(need, 0xAB);
    ASSERT_EQ(amarena_kernel_pack_b_from(k, bt.data(), AMARENA_B_NXK,
                                         static_cast<size_t>(ld), packed.data(),
                                         need),
              AMARENA_OK)
        << amarena_last_error();
    // Every element where B's layout puts it (FillRandom's padding is not
    // zero, so the buffers are compared element by element).
    for (int64_t i = 0; i < b.rows; ++i)
      for (int64_t j = 0; j < b.cols; ++j)
        ASSERT_EQ(std::memcmp(packed.data() + b.Offset(i, j) * es,
                              static_cast<const char*>(ops.ptr(1)) +
                                  b.Offset(i, j) * es,
                              static_cast<size_t>(es)),
                  0)
            << "B[" << i << "][" << j << "]";
    std::memcpy(ops.ptr(1), packed.data(), need);
    std::vector<uint8_t> before = ops.Snapshot(2);
    void* run[3] = {ops.ptr(0), packed.data(), ops.ptr(2)};
    ASSERT_EQ(amarena_kernel_run(k, run), AMARENA_OK) << amarena_last_error();
    Verdict v = CheckAgainstReference(*spec, ops, before);
    EXPECT_TRUE(v.ok) << v.max_rel_err << " > " << v.tolerance;
    amarena_kernel_release(k);
  }
}

TEST_F(PackKernelTest, RefusesBadArgumentsByName) {
  amarena_kernel* k = nullptr;
  ASSERT_EQ(amarena_kernel_get(rt_, "matmul 3x4x40 f32 b=p32", &k), AMARENA_OK);
  const size_t need = amarena_kernel_b_bytes(k);
  std::vector<float> src(4 * 40 + 400), out(need / sizeof(float));
  auto expect_error = [&](amarena_status s, const char* words) {
    EXPECT_EQ(s, AMARENA_INVALID_ARGUMENT);
    EXPECT_NE(std::string(amarena_last_error()).find(words), std::string::npos)
        << amarena_last_error();
  };
  expect_error(amarena_kernel_pack_b_from(nullptr, src.data(), AMARENA_B_KXN,
                                          40, out.data(), need),
               "kernel is null");
  expect_error(amarena_kernel_pack_b_from(k, nullptr, AMARENA_B_KXN, 40,
                                          out.data(), need),
               "src is null");
  expect_error(amarena_kernel_pack_b_from(k, src.data(), AMARENA_B_KXN, 40,
                                          nullptr, need),
               "out is null");
  expect_error(amarena_kernel_pack_b_from(k, src.data(), AMARENA_B_KXN, 39,
                                          out.data(), need),
               "src_ld is 39, must be at least 40");
  expect_error(amarena_kernel_pack_b_from(k, src.data(), AMARENA_B_NXK, 3,
                                          out.data(), need),
               "src_ld is 3, must be at least 4");
  expect_error(amarena_kernel_pack_b_from(k, src.data(), AMARENA_B_KXN, 40,
                                          out.data(), need - 1),
               "must have at least");
  expect_error(amarena_kernel_pack_b_from(k, src.data(),
                                          static_cast<amarena_b_source>(7), 40,
                                          out.data(), need),
               "source is 7");
  expect_error(amarena_kernel_pack_b_from(k, src.data(), AMARENA_B_KXN, 40,
                                          src.data() + 8, need),
               "overlaps");
  EXPECT_EQ(amarena_kernel_pack_b_from(k, src.data(), AMARENA_B_NXK, 4,
                                       out.data(), need),
            AMARENA_OK)
      << amarena_last_error();
  amarena_kernel_release(k);
  ASSERT_EQ(amarena_kernel_get(rt_, "zero 4x4 f32", &k), AMARENA_OK);
  expect_error(amarena_kernel_pack_b_from(k, src.data(), AMARENA_B_KXN, 4,
                                          out.data(), need),
               "must be a matmul");
  amarena_kernel_release(k);
}

}  // namespace
}  // namespace amarena
