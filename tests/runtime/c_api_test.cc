// The C API's rules for running a kernel (amarena/amarena.h): operand sizes
// and the sized run, an output that overlaps an input, a kernel whose runtime
// is destroyed, and the status codes of a Spec no tree implements.
#include <cstring>
#include <string>
#include <vector>

#include "amarena/amarena.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"

namespace amarena {
namespace {

std::string LastError() { return amarena_last_error(); }

// A kernel from the process-wide runtime, released at the end of the scope.
class CApiTest : public ::testing::Test {
 protected:
  void Get(const char* text) {
    ASSERT_EQ(amarena_kernel_get(nullptr, text, &k_), AMARENA_OK)
        << LastError();
    spec_ = *ParseSpec(amarena_kernel_spec(k_));
  }
  void TearDown() override { amarena_kernel_release(k_); }

  amarena_kernel* k_ = nullptr;
  Spec spec_;
};

TEST_F(CApiTest, OperandBytesAndTheSizedRun) {
  Get("matmul 3x4x5 f32");
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 0), 48u);
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 1), 80u);
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 2), 60u);
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 3), 0u);
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, -1), 0u);
  EXPECT_EQ(amarena_kernel_operand_bytes(nullptr, 0), 0u);
  EXPECT_EQ(amarena_kernel_b_bytes(k_), 80u);

  Operands ops(spec_);
  FillRandom(spec_, ops, 1);
  const std::vector<uint8_t> before = ops.Snapshot(2);
  const size_t short_b[] = {48, 79, 60};
  EXPECT_EQ(amarena_kernel_run_sized(k_, ops.ptrs(), short_b),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("operand 1 (b) is 79 bytes, must be at least 80"),
            std::string::npos)
      << LastError();
  EXPECT_EQ(ops.Snapshot(2), before);  // refused before it ran
  EXPECT_EQ(amarena_kernel_run_sized(k_, ops.ptrs(), nullptr),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("operand_bytes is null"), std::string::npos);
  EXPECT_EQ(amarena_kernel_run_sized(nullptr, ops.ptrs(), short_b),
            AMARENA_INVALID_ARGUMENT);
  const size_t roomy[] = {48, 1000, 60};
  ASSERT_EQ(amarena_kernel_run_sized(k_, ops.ptrs(), roomy), AMARENA_OK)
      << LastError();
  EXPECT_TRUE(CheckAgainstReference(spec_, ops, before).ok);
}

TEST_F(CApiTest, PackedOperandBytesCountThePanels) {
  Get("matmul 3x4x40 f32 b=p32");
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 1),
            static_cast<size_t>(spec_.Operand(1).StoredElements() * 4));
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 1), 2u * 32 * 4 * 4);
}

// A batch spans its strides and one matrix; a shared B one matrix.
TEST_F(CApiTest, BatchedOperandBytesAndRun) {
  Get("matmul 3x4x5x6 f32 sb=0 sc=40");
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 0), 3u * 4 * 5 * 4);
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 1), 5u * 6 * 4);
  EXPECT_EQ(amarena_kernel_operand_bytes(k_, 2), (2u * 40 + 4 * 6) * 4);
  EXPECT_EQ(amarena_kernel_b_bytes(k_), 5u * 6 * 4);
  EXPECT_EQ(amarena_kernel_batch(k_), 3);
  EXPECT_EQ(amarena_kernel_batch_stride_bytes(k_, 0), 4u * 5 * 4);
  EXPECT_EQ(amarena_kernel_batch_stride_bytes(k_, 1), 0u);  // shared
  EXPECT_EQ(amarena_kernel_batch_stride_bytes(k_, 2), 40u * 4);
  EXPECT_EQ(amarena_kernel_batch_stride_bytes(k_, 3), 0u);
  EXPECT_EQ(amarena_kernel_batch_stride_bytes(nullptr, 0), 0u);
  EXPECT_EQ(amarena_kernel_batch(nullptr), 0);
  Operands ops(spec_);
  FillRandom(spec_, ops, 2);
  const std::vector<uint8_t> before = ops.Snapshot(2);
  const size_t short_c[] = {240, 120, 415};
  EXPECT_EQ(amarena_kernel_run_sized(k_, ops.ptrs(), short_c),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("operand 2 (c) is 415 bytes, must be at least "
                             "416"),
            std::string::npos)
      << LastError();
  const size_t exact[] = {240, 120, 416};
  ASSERT_EQ(amarena_kernel_run_sized(k_, ops.ptrs(), exact), AMARENA_OK)
      << LastError();
  EXPECT_TRUE(CheckAgainstReference(spec_, ops, before).ok);
}

// Shared weights laid out by the runtime: packed once, read by the batch.
TEST_F(CApiTest, SharedWeightsPackOnce) {
  Get("matmul 5x3x64x40 f32 b=any sb=0");
  EXPECT_TRUE(spec_.SharedB());
  const size_t bytes = amarena_kernel_b_bytes(k_);
  EXPECT_EQ(bytes, static_cast<size_t>(spec_.Operand(1).StoredBytes()));
  Spec plain = spec_;
  plain.aux[1].layout = Layout();
  plain = Canonical(plain);
  Operands ops(plain);
  FillRandom(plain, ops, 3);
  std::vector<uint8_t> packed(bytes);
  ASSERT_EQ(amarena_kernel_pack_b(k_, ops.ptr(1), packed.data(), bytes),
            AMARENA_OK)
      << LastError();
  void* run[] = {ops.ptr(0), packed.data(), ops.ptr(2)};
  const std::vector<uint8_t> before = ops.Snapshot(2);
  ASSERT_EQ(amarena_kernel_run(k_, run), AMARENA_OK) << LastError();
  EXPECT_TRUE(CheckAgainstReference(plain, ops, before).ok);
}

// Not implemented, so refused: one B per batch element laid out by the
// runtime.
TEST_F(CApiTest, BatchOfBIsNotPacked) {
  Get("matmul 2x3x4x5 f32");
  std::vector<float> b(4 * 5), out(2 * 4 * 5);
  EXPECT_EQ(amarena_kernel_pack_b(k_, b.data(), out.data(), out.size() * 4),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("packing a batch of B is not implemented"),
            std::string::npos)
      << LastError();
  amarena_kernel* any = nullptr;
  EXPECT_EQ(amarena_kernel_get(nullptr, "matmul 2x3x4x5 f32 b=any", &any),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("sb=0"), std::string::npos) << LastError();
  EXPECT_EQ(any, nullptr);
}

TEST_F(CApiTest, OutputOverlappingAnInputIsRefused) {
  Get("matmul 8x8x8 f32");
  std::vector<float> buf(256, 1.0f);
  float* p = buf.data();
  void* c_is_a[] = {p, p + 64, p};
  EXPECT_EQ(amarena_kernel_run(k_, c_is_a), AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("operand 2 (c) at [0x"), std::string::npos)
      << LastError();
  EXPECT_NE(LastError().find("overlaps operand 0 (a)"), std::string::npos);
  EXPECT_NE(LastError().find("must not overlap an input"), std::string::npos);
  // C's last element on B's first.
  void* c_ends_on_b[] = {p, p + 127, p + 64};
  EXPECT_EQ(amarena_kernel_run(k_, c_ends_on_b), AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("overlaps operand 1 (b)"), std::string::npos);
  const size_t sizes[] = {256, 256, 256};
  EXPECT_EQ(amarena_kernel_run_sized(k_, c_is_a, sizes),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(buf, std::vector<float>(256, 1.0f));  // nothing ran

  // A and B the same matrix: allowed, and right.
  Operands ops(spec_);
  FillRandom(spec_, ops, 2);
  std::memcpy(ops.ptr(1), ops.ptr(0), 256);
  const std::vector<uint8_t> before = ops.Snapshot(2);
  void* a_is_b[] = {ops.ptr(0), ops.ptr(0), ops.ptr(2)};
  ASSERT_EQ(amarena_kernel_run(k_, a_is_b), AMARENA_OK) << LastError();
  EXPECT_TRUE(CheckAgainstReference(spec_, ops, before).ok);
}

// alpha and a bf16 output are Spec text like any other: the kernel runs
// against the reference, a bf16 C's operand is 2 bytes an element, and a
// dtype combination not implemented is AMARENA_UNIMPLEMENTED naming it.
TEST_F(CApiTest, AlphaAndBf16Output) {
  for (const char* text :
       {"matmul 13x100x37 f32 alpha=0.5", "matmul 13x100x37 f32 accum alpha=-2",
        "matmul 13x100x37 bf16",  // bf16*bf16->bf16
        "matmul 13x100x37 f32*bf16->bf16 accum alpha=3"}) {
    amarena_kernel* k = nullptr;
    ASSERT_EQ(amarena_kernel_get(nullptr, text, &k), AMARENA_OK)
        << text << ": " << LastError();
    const Spec s = *ParseSpec(amarena_kernel_spec(k));
    EXPECT_EQ(PrintSpec(s).rfind(text, 0), 0u) << PrintSpec(s);  // + budget
    EXPECT_EQ(amarena_kernel_operand_bytes(k, 2),
              static_cast<size_t>(13 * 37 * SizeOf(s.aux[2].dtype)));
    Operands ops(s);
    FillRandom(s, ops, 4);
    const std::vector<uint8_t> before = ops.Snapshot(2);
    ASSERT_EQ(amarena_kernel_run(k, ops.ptrs()), AMARENA_OK) << LastError();
    EXPECT_TRUE(CheckAgainstReference(s, ops, before).ok) << text;
    amarena_kernel_release(k);
  }
  amarena_kernel* k = nullptr;
  EXPECT_EQ(amarena_kernel_get(nullptr, "matmul 4x4x4 bf16*f32->bf16", &k),
            AMARENA_UNIMPLEMENTED);
  EXPECT_NE(LastError().find("dtypes are bf16*f32->bf16"), std::string::npos)
      << LastError();
  EXPECT_EQ(amarena_kernel_get(nullptr, "matmul 4x4x4 f32 alpha=nan", &k),
            AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("alpha is 'nan'"), std::string::npos)
      << LastError();
}

TEST(CApiRuntimeTest, KernelOfADestroyedRuntimeIsAnErrorNotAHang) {
  amarena_runtime* rt = nullptr;
  ASSERT_EQ(amarena_runtime_create(2, &rt), AMARENA_OK);
  amarena_kernel* k = nullptr;
  ASSERT_EQ(amarena_kernel_get(rt, "matmul 256x256x256 f32", &k), AMARENA_OK)
      << LastError();
  const Spec s = *ParseSpec(amarena_kernel_spec(k));
  Operands ops(s);
  FillRandom(s, ops, 3);
  ASSERT_EQ(amarena_kernel_run(k, ops.ptrs()), AMARENA_OK) << LastError();
  amarena_runtime_destroy(rt);
  EXPECT_EQ(amarena_kernel_run(k, ops.ptrs()), AMARENA_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("its amarena_runtime is destroyed"),
            std::string::npos)
      << LastError();
  EXPECT_NE(LastError().find(amarena_kernel_name(k)), std::string::npos);
  const size_t sizes[] = {1 << 18, 1 << 18, 1 << 18};
  EXPECT_EQ(amarena_kernel_run_sized(k, ops.ptrs(), sizes),
            AMARENA_FAILED_PRECONDITION);
  EXPECT_NE(amarena_kernel_isa(k), nullptr);  // the rest of it still works
  amarena_kernel_release(k);
}

TEST(CApiRuntimeTest, NoTreeIsUnimplementedAnImpossibleBudgetInvalid) {
  amarena_kernel* k = nullptr;
  // Room for a kernel's registers and an L1 line, but no tree fits.
  EXPECT_EQ(
      amarena_kernel_get(
          nullptr, "matmul 3x5x7 f32 budget=vrf:2,gpr:0,l1:1,l2:0,l3:0", &k),
      AMARENA_UNIMPLEMENTED)
      << LastError();
  EXPECT_NE(LastError().find("no tree fits the budget"), std::string::npos)
      << LastError();
  EXPECT_EQ(k, nullptr);
  // No matmul kernel exists with one vector register.
  EXPECT_EQ(
      amarena_kernel_get(
          nullptr, "matmul 3x5x7 f32 budget=vrf:1,gpr:4,l1:8,l2:0,l3:0", &k),
      AMARENA_INVALID_ARGUMENT)
      << LastError();
  EXPECT_NE(LastError().find("must have at least vrf:2"), std::string::npos)
      << LastError();
  // Operands in GL and no L1 to bring them into.
  EXPECT_EQ(
      amarena_kernel_get(
          nullptr, "matmul 3x5x7 f32 budget=vrf:8,gpr:4,l1:0,l2:0,l3:0", &k),
      AMARENA_INVALID_ARGUMENT)
      << LastError();
  EXPECT_NE(LastError().find("must have at least l1:1"), std::string::npos)
      << LastError();
}

}  // namespace
}  // namespace amarena
