// The C++17 wrapper (amarena/amarena.hpp) over the C API: ownership (moves,
// resets), status values with messages, runs checked against a naive loop,
// B packing, and the version. Built as C++17, with nothing from the source
// tree but the public headers.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "amarena/amarena.hpp"
#include "gtest/gtest.h"

namespace {

struct Matmul {
  Matmul(int m, int k, int n)
      : m(m), k(k), n(n), a(m * k), b(k * n), c(m * n, -1e30f) {
    for (int i = 0; i < m * k; ++i) a[i] = float(i % 13) - 6;
    for (int i = 0; i < k * n; ++i) b[i] = float(i % 5) * 0.5f - 1;
  }
  // The largest difference from a naive loop, relative to 1 + |want|.
  float Error() const {
    float worst = 0;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        float want = 0;
        for (int p = 0; p < k; ++p) want += a[i * k + p] * b[p * n + j];
        worst = std::fmax(
            worst, std::fabs(c[i * n + j] - want) / (1 + std::fabs(want)));
      }
    }
    return worst;
  }
  int m, k, n;
  std::vector<float> a, b, c;
};

TEST(AmarenaHppTest, VersionIsTheHeaders) {
  EXPECT_STREQ(amarena::Version(), AMARENA_VERSION_STRING);
  EXPECT_EQ(AMARENA_VERSION, AMARENA_VERSION_MAJOR * 10000 +
                                 AMARENA_VERSION_MINOR * 100 +
                                 AMARENA_VERSION_PATCH);
}

TEST(AmarenaHppTest, ProcessWideKernelRuns) {
  for (const char* spec : {"matmul 13x7x100 f32", "matmul 1x1x1 f32",
                           "matmul 7x13x17 f32", "matmul 100x31x13 f32"}) {
    SCOPED_TRACE(spec);
    amarena::Kernel k;
    ASSERT_FALSE(k);
    amarena::Status s = amarena::Kernel::Get(spec, &k);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(k);
    int m, kk, n;
    ASSERT_EQ(std::sscanf(spec, "matmul %dx%dx%d", &m, &kk, &n), 3);
    Matmul mm(m, kk, n);
    s = k.Run({mm.a.data(), mm.b.data(), mm.c.data()});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LT(mm.Error(), 1e-5f);
    EXPECT_EQ(k.operand_bytes(2), size_t(m) * n * sizeof(float));
    EXPECT_EQ(k.spec().rfind("matmul", 0), 0u) << k.spec();
    EXPECT_FALSE(k.name().empty());
    EXPECT_FALSE(k.isa().empty());
    EXPECT_EQ(k.source(), "search");
  }
}

// A batch sharing one B (sb=0): C[q] = A[q].B for q < 4.
TEST(AmarenaHppTest, BatchWithSharedWeightsRuns) {
  amarena::Kernel k;
  amarena::Status s = amarena::Kernel::Get("matmul 4x3x5x7 f32 sb=0", &k);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(k.batch(), 4);
  EXPECT_EQ(k.batch_stride_bytes(0), 3u * 5 * sizeof(float));
  EXPECT_EQ(k.batch_stride_bytes(1), 0u);
  EXPECT_EQ(k.batch_stride_bytes(2), 3u * 7 * sizeof(float));
  EXPECT_EQ(k.operand_bytes(0), 4u * 3 * 5 * sizeof(float));
  EXPECT_EQ(k.operand_bytes(1), 5u * 7 * sizeof(float));
  std::vector<Matmul> batch(4, Matmul(3, 5, 7));
  std::vector<float> a, c(4 * 3 * 7, -1e30f);
  for (int q = 0; q < 4; ++q) {
    for (float& x : batch[q].a) x += float(q);
    a.insert(a.end(), batch[q].a.begin(), batch[q].a.end());
  }
  s = k.Run({a.data(), batch[0].b.data(), c.data()});
  ASSERT_TRUE(s.ok()) << s.message();
  for (int q = 0; q < 4; ++q) {
    std::copy(c.begin() + q * 21, c.begin() + (q + 1) * 21, batch[q].c.begin());
    EXPECT_LT(batch[q].Error(), 1e-5f) << q;
  }
}

// alpha and a bf16 output in the Spec text: C = 0.5 A.B rounded to bf16,
// against a naive loop (within one bf16 rounding).
TEST(AmarenaHppTest, AlphaAndBf16Output) {
  amarena::Kernel k;
  amarena::Status s =
      amarena::Kernel::Get("matmul 7x13x17 f32*f32->bf16 alpha=0.5", &k);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(k.operand_bytes(2), 7u * 17u * 2u);
  Matmul mm(7, 13, 17);
  std::vector<uint16_t> c(7 * 17, 0xffff);
  s = k.Run({mm.a.data(), mm.b.data(), c.data()});
  ASSERT_TRUE(s.ok()) << s.message();
  for (int e = 0; e < 7 * 17; ++e) {
    uint32_t bits = uint32_t{c[e]} << 16;
    std::memcpy(&mm.c[e], &bits, 4);
    mm.c[e] *= 2;  // undo alpha (exact), so Error() compares with A.B
  }
  EXPECT_LT(mm.Error(), 1.0f / 128);
}

TEST(AmarenaHppTest, OwnRuntimePacksB) {
  amarena::Runtime rt;
  amarena::Status s = amarena::Runtime::Create(2, &rt);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(rt);
  amarena::Kernel k;
  s = rt.GetKernel(std::string("matmul 13x7x100 f32 b=any"), &k);
  ASSERT_TRUE(s.ok()) << s.message();
  Matmul mm(13, 7, 100);
  std::vector<unsigned char> packed(k.b_bytes());
  ASSERT_GE(packed.size(), mm.b.size() * sizeof(float));
  s = k.PackB(mm.b.data(), packed.data(), packed.size());
  ASSERT_TRUE(s.ok()) << s.message();
  s = k.Run({mm.a.data(), packed.data(), mm.c.data()});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LT(mm.Error(), 1e-5f);

  // Too little room for the packed B is an error naming the problem.
  s = k.PackB(mm.b.data(), packed.data(), packed.size() - 1);
  EXPECT_EQ(s.code(), AMARENA_INVALID_ARGUMENT);
  EXPECT_FALSE(s.message().empty());

  // Asking again is answered by this runtime's cache.
  amarena_cache_stats before{}, after{};
  ASSERT_TRUE(rt.GetCacheStats(&before).ok());
  amarena::Kernel again;
  ASSERT_TRUE(rt.GetKernel("matmul 13x7x100 f32 b=any", &again).ok());
  ASSERT_TRUE(rt.GetCacheStats(&after).ok());
  EXPECT_GE(before.misses, 1);
  EXPECT_GT(after.hits, before.hits);
  EXPECT_EQ(after.misses, before.misses);
}

// A runtime made from options (no database, one thread, a log callback)
// packs B from the transposed N x K source engines keep weights in.
TEST(AmarenaHppTest, OptionsRuntimePacksBFromTransposedSource) {
  amarena_runtime_options options;
  amarena_runtime_options_init(&options);
  options.db = "off";
  options.threads = 1;
  std::vector<std::string> logged;
  options.verbosity = 2;
  options.log = [](void* ctx, int, const char* msg) {
    static_cast<std::vector<std::string>*>(ctx)->push_back(msg);
  };
  options.log_ctx = &logged;
  amarena::Runtime rt;
  amarena::Status s = amarena::Runtime::Create(options, &rt);
  ASSERT_TRUE(s.ok()) << s.message();
  amarena::Kernel k;
  s = rt.GetKernel("matmul 7x37x29 f32 b=any", &k);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(logged.empty());  // verbosity 2: a line per kernel created

  Matmul mm(7, 37, 29);
  const size_t ld = 41;  // a pitch past the row: a slice of a wider matrix
  std::vector<float> bt(29 * ld, 1e30f);  // B transposed: N x K
  for (int kk = 0; kk < 37; ++kk)
    for (int j = 0; j < 29; ++j) bt[j * ld + kk] = mm.b[kk * 29 + j];
  std::vector<unsigned char> packed(k.b_bytes());
  s = k.PackBFrom(bt.data(), AMARENA_B_NXK, ld, packed.data(), packed.size());
  ASSERT_TRUE(s.ok()) << s.message();
  s = k.Run({mm.a.data(), packed.data(), mm.c.data()});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LT(mm.Error(), 1e-5f);

  // A source pitch shorter than its rows is an error naming src_ld.
  s = k.PackBFrom(bt.data(), AMARENA_B_NXK, 36, packed.data(), packed.size());
  EXPECT_EQ(s.code(), AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("src_ld"), std::string::npos) << s.message();

  // A bad option is a status naming the field.
  options.max_isa = "sse2";
  amarena::Runtime bad;
  s = amarena::Runtime::Create(options, &bad);
  EXPECT_EQ(s.code(), AMARENA_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("max_isa"), std::string::npos) << s.message();
  EXPECT_FALSE(bad);
}

TEST(AmarenaHppTest, BadInputIsAStatus) {
  amarena::Kernel k;
  amarena::Status s = amarena::Kernel::Get("matmul 0x7 f32", &k);
  EXPECT_EQ(s.code(), AMARENA_INVALID_ARGUMENT);
  EXPECT_FALSE(s.message().empty());
  EXPECT_FALSE(k);

  // An empty kernel does nothing and says so.
  float x = 0;
  s = k.Run({&x, &x, &x});
  EXPECT_EQ(s.code(), AMARENA_INVALID_ARGUMENT);
  EXPECT_EQ(k.operand_bytes(0), 0u);
  EXPECT_EQ(k.name(), "");

  // Sized runs check the buffers.
  ASSERT_TRUE(amarena::Kernel::Get("matmul 3x4x5 f32", &k).ok());
  Matmul mm(3, 4, 5);
  void* ops[3] = {mm.a.data(), mm.b.data(), mm.c.data()};
  size_t bytes[3] = {mm.a.size() * 4, mm.b.size() * 4, mm.c.size() * 4 - 4};
  s = k.RunSized(ops, bytes);
  EXPECT_EQ(s.code(), AMARENA_INVALID_ARGUMENT);
  bytes[2] += 4;
  EXPECT_TRUE(k.RunSized(ops, bytes).ok());
  EXPECT_LT(mm.Error(), 1e-5f);
}

TEST(AmarenaHppTest, MovesTransferOwnership) {
  amarena::Runtime rt;
  ASSERT_TRUE(amarena::Runtime::Create(1, &rt).ok());
  amarena::Kernel k;
  ASSERT_TRUE(rt.GetKernel("matmul 4x4x4 f32", &k).ok());
  const amarena_kernel* raw = k.get();

  amarena::Kernel moved(std::move(k));
  EXPECT_FALSE(k);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(moved.get(), raw);
  amarena::Kernel assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.get(), raw);
  EXPECT_FALSE(moved);  // NOLINT(bugprone-use-after-move)

  amarena::Runtime rt2(std::move(rt));
  EXPECT_FALSE(rt);  // NOLINT(bugprone-use-after-move)
  ASSERT_TRUE(rt2);

  // A kernel outliving its runtime fails cleanly rather than touching freed
  // memory.
  rt2.Reset();
  Matmul mm(4, 4, 4);
  amarena::Status s = assigned.Run({mm.a.data(), mm.b.data(), mm.c.data()});
  EXPECT_EQ(s.code(), AMARENA_FAILED_PRECONDITION);
  assigned.Reset();
  EXPECT_FALSE(assigned);
}

}  // namespace
