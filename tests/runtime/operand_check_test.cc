// OperandBytes and CheckOperands (through Kernel::Check): sizes with panel
// padding, each refusal naming its operand, inputs that may alias and an
// output that may not, and sizes that are exactly what a kernel touches.
#include "runtime/operand_check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "core/reference.h"
#include "core/spec_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/runtime.h"
#include "tests/testing/isa_runtime.h"
#include "tests/testing/matchers.h"

namespace amarena {
namespace {

using ::amarena::testing::IsOk;
using ::amarena::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(OperandCheckTest, OperandBytesIncludePanelPadding) {
  const Spec plain = *ParseSpec("matmul 3x4x5 f32");
  EXPECT_EQ(OperandBytes(plain, 0), 3 * 4 * 4);
  EXPECT_EQ(OperandBytes(plain, 1), 4 * 5 * 4);
  EXPECT_EQ(OperandBytes(plain, 2), 3 * 5 * 4);
  EXPECT_EQ(OperandBytes(plain, 3), 0);
  EXPECT_EQ(OperandBytes(plain, -1), 0);
  // Two panels of 32 columns, the second half padding.
  EXPECT_EQ(OperandBytes(*ParseSpec("matmul 3x4x40 f32 b=p32"), 1),
            2 * 32 * 4 * 4);
  // k-pairs: 5 rows stored as 6.
  EXPECT_EQ(OperandBytes(*ParseSpec("matmul 3x5x40 bf16*bf16->f32 b=p32x2"), 1),
            2 * 32 * 6 * 2);
  EXPECT_EQ(OperandBytes(*ParseSpec("matmul 3x5x40 bf16*bf16->f32"), 2),
            3 * 40 * 4);
  EXPECT_EQ(OperandBytes(*ParseSpec("zero 4x6 f32"), 0), 4 * 6 * 4);
}

// A view of a wider matrix spans from its first element to its last: the
// last row (or column) needs only its own elements, not a whole pitch.
TEST(OperandCheckTest, OperandBytesWithLeadingDimensions) {
  const Spec s = *ParseSpec(
      "matmul 3x4x5 bf16*bf16->f32 b=col lda=10 ldb=7 ldc=4096");
  EXPECT_EQ(OperandBytes(s, 0), (2 * 10 + 4) * 2);
  EXPECT_EQ(OperandBytes(s, 1), (4 * 7 + 4) * 2);
  EXPECT_EQ(OperandBytes(s, 2), (2 * 4096 + 5) * 4);
  // A is 24 floats in a buffer of 24: accepted; one short: refused.
  absl::StatusOr<KernelPtr> k =
      testing::Rt(Isa::kAvx2, 1).Get("matmul 3x4x5 f32 lda=10");
  ASSERT_THAT(k, IsOk());
  std::vector<float> a(24), b(20), c(15);
  void* ops[] = {a.data(), b.data(), c.data()};
  const size_t sizes[] = {24 * 4, 20 * 4, 15 * 4};
  EXPECT_THAT((*k)->Check(ops, sizes), IsOk());
  const size_t short_a[] = {23 * 4, 20 * 4, 15 * 4};
  EXPECT_THAT((*k)->Check(ops, short_a),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("operand 0 (a) is 92 bytes, must be at least "
                                 "96")));
}

class KernelCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<KernelPtr> k =
        testing::Rt(Isa::kAvx2, 1).Get("matmul 16x16x16 f32");
    ASSERT_TRUE(k.ok()) << k.status();
    k_ = *k;
    ASSERT_EQ(k_->OperandBytes(0), 1024);
  }
  // Element e of one buffer of 1024 floats holding all three operands.
  void* At(int e) { return &buf_[static_cast<size_t>(e)]; }
  absl::Status Check(int a, int b, int c) {
    void* ops[] = {At(a), At(b), At(c)};
    return k_->Check(ops);
  }

  KernelPtr k_;
  std::vector<float> buf_ = std::vector<float>(1024);
};

TEST_F(KernelCheckTest, OutputMustNotOverlapAnInput) {
  EXPECT_THAT(Check(0, 256, 512), IsOk());
  // Inputs may alias each other; touching ranges do not overlap.
  EXPECT_THAT(Check(256, 256, 0), IsOk());
  EXPECT_THAT(Check(0, 512, 256), IsOk());
  EXPECT_THAT(Check(0, 256, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("operand 2 (c) at [0x"),
                             HasSubstr("overlaps operand 0 (a)"),
                             HasSubstr("must not overlap an input"))));
  // One element of C on the last of B.
  EXPECT_THAT(Check(0, 256, 511),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("overlaps operand 1 (b)")));
  // The first element of C on the last of A, the other way round.
  EXPECT_THAT(Check(257, 768, 2),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("overlaps operand 0 (a)")));
}

TEST_F(KernelCheckTest, NullMisalignedAndShortBuffersNameTheOperand) {
  void* null_b[] = {At(0), nullptr, At(512)};
  EXPECT_THAT(k_->Check(null_b),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("operand 1 (b) is null, must point at 1024 "
                                 "bytes")));
  void* odd_c[] = {At(0), At(256), static_cast<char*>(At(512)) + 1};
  EXPECT_THAT(k_->Check(odd_c), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("operand 2 (c) is at 0x")));
  EXPECT_THAT(k_->Check(nullptr), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("operands is null")));
  void* ops[] = {At(0), At(256), At(512)};
  const size_t exact[] = {1024, 1024, 1024};
  EXPECT_THAT(k_->Check(ops, exact), IsOk());
  const size_t short_c[] = {1024, 1024, 1023};
  EXPECT_THAT(k_->Check(ops, short_c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot run amarena_matmul_16x16x16_f32")));
  EXPECT_THAT(k_->Check(ops, short_c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("operand 2 (c) is 1023 bytes, must be at "
                                 "least 1024")));
}

// An operand of `bytes` bytes placed against an inaccessible page, at its
// end (`at_end`) or its start: a kernel that touches a byte beyond what
// OperandBytes says faults.
class Guarded {
 public:
  Guarded(size_t bytes, bool at_end) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    data_pages_ = (bytes + page - 1) / page * page;
    size_ = data_pages_ + 2 * page;
    base_ = static_cast<char*>(mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    mprotect(base_, page, PROT_NONE);
    mprotect(base_ + page + data_pages_, page, PROT_NONE);
    ptr_ = at_end ? base_ + page + data_pages_ - bytes : base_ + page;
  }
  ~Guarded() { munmap(base_, size_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  void* ptr() const { return ptr_; }

 private:
  char* base_ = nullptr;
  char* ptr_ = nullptr;
  size_t data_pages_ = 0, size_ = 0;
};

TEST(OperandCheckTest, KernelsTouchExactlyOperandBytes) {
  for (int threads : {1, 2})
    for (const char* text :
         {"matmul 37x29x53 f32", "matmul 37x29x53 f32 a=col b=col c=col",
          "matmul 20x64x100 f32 b=p16", "matmul 33x70x45 bf16*bf16->f32",
          "matmul 5x64x100 bf16*bf16->f32 b=col", "matmul 256x256x256 f32",
          "matmul 256x256x256 bf16*bf16->f32"})
      for (bool at_end : {true, false}) {
        SCOPED_TRACE(::testing::Message()
                     << text << " threads=" << threads << " at_end=" << at_end);
        absl::StatusOr<KernelPtr> k =
            testing::Rt(Isa::kAvx2, threads).Get(text);
        ASSERT_TRUE(k.ok()) << k.status();
        const Spec& s = (*k)->spec();
        Operands ops(s);
        FillRandom(s, ops, 3);
        const std::vector<uint8_t> before = ops.Snapshot(2);
        std::vector<std::unique_ptr<Guarded>> guarded;
        std::vector<void*> ptrs;
        std::vector<size_t> sizes;
        for (int i = 0; i < 3; ++i) {
          const size_t bytes = static_cast<size_t>((*k)->OperandBytes(i));
          guarded.push_back(std::make_unique<Guarded>(bytes, at_end));
          std::memcpy(guarded.back()->ptr(), ops.ptr(i), bytes);
          ptrs.push_back(guarded.back()->ptr());
          sizes.push_back(bytes);
        }
        ASSERT_THAT((*k)->Check(ptrs.data(), sizes.data()), IsOk());
        ASSERT_THAT((*k)->Run(ptrs.data()), IsOk());
        std::memcpy(ops.ptr(2), ptrs[2], sizes[2]);
        EXPECT_TRUE(CheckAgainstReference(s, ops, before).ok);
      }
}

}  // namespace
}  // namespace amarena
