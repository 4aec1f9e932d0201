// amarena_runtime_create_with_options: an engine's parallel-for runs every
// task of a kernel's parallel loop and of weight packing, and the results are
// right; a log callback gets the messages and nothing reaches stderr; the
// database path and the ISA cap are honoured; bad options are named.
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "amarena/amarena.h"
#include "jit/cpu_features.h"
#include "runtime/prices.h"
#include "tests/testing/temp_dir.h"

namespace amarena {
namespace {

using testing::TempDir;

// An engine's pool: two threads take the tasks in turn; every index run is
// counted, so a task run twice or never shows.
struct Pool {
  std::atomic<int> calls{0};
  std::mutex mu;
  std::vector<int> runs;  // per index of the latest call
  bool all_once = true;   // every call ran each of its tasks exactly once

  static void ParallelFor(void* ctx, void (*task)(void*, size_t),
                          void* task_ctx, size_t n) {
    auto* pool = static_cast<Pool*>(ctx);
    ++pool->calls;
    std::vector<std::atomic<int>> ran(n);
    auto worker = [&](size_t first) {
      for (size_t i = first; i < n; i += 2) {
        task(task_ctx, i);
        ++ran[i];
      }
    };
    std::thread other(worker, 1);
    worker(0);
    other.join();
    std::lock_guard<std::mutex> lock(pool->mu);
    for (size_t i = 0; i < n; ++i) pool->all_once &= ran[i].load() == 1;
  }
};

struct Messages {
  std::mutex mu;
  std::vector<std::pair<int, std::string>> got;
  static void Log(void* ctx, int level, const char* msg) {
    auto* m = static_cast<Messages*>(ctx);
    std::lock_guard<std::mutex> lock(m->mu);
    m->got.emplace_back(level, msg);
  }
  bool Has(int level, const std::string& words) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [l, s] : got)
      if (l == level && s.find(words) != std::string::npos) return true;
    return false;
  }
};

amarena_runtime_options Defaults() {
  amarena_runtime_options o;
  amarena_runtime_options_init(&o);
  o.db = "off";
  return o;
}

// Runs `k` on random inputs; whether the output matches the reference.
::testing::AssertionResult RunsCorrectly(amarena_kernel* k) {
  Spec spec = *ParseSpec(amarena_kernel_spec(k));
  Operands ops(spec);
  FillRandom(spec, ops, 3);
  std::vector<uint8_t> before = ops.Snapshot(2);
  void* run[3] = {ops.ptr(0), ops.ptr(1), ops.ptr(2)};
  if (amarena_kernel_run(k, run) != AMARENA_OK)
    return ::testing::AssertionFailure() << amarena_last_error();
  Verdict v = CheckAgainstReference(spec, ops, before);
  if (!v.ok)
    return ::testing::AssertionFailure()
           << v.max_rel_err << " > " << v.tolerance;
  return ::testing::AssertionSuccess();
}

class OptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    amarena_runtime* rt = nullptr;
    if (amarena_runtime_create(1, &rt) != AMARENA_OK)
      GTEST_SKIP() << amarena_last_error();  // a CPU without AVX2+FMA
    amarena_runtime_destroy(rt);
  }
};

TEST_F(OptionsTest, ParallelForRunsEveryTaskOfKernelsAndPacking) {
  Pool pool;
  amarena_runtime_options o = Defaults();
  o.threads = 2;
  o.parallel_for = Pool::ParallelFor;
  o.parallel_for_ctx = &pool;
  amarena_runtime* rt = nullptr;
  ASSERT_EQ(amarena_runtime_create_with_options(&o, &rt), AMARENA_OK)
      << amarena_last_error();
  amarena_kernel* k = nullptr;
  ASSERT_EQ(amarena_kernel_get(rt, "matmul 192x160x256 f32", &k), AMARENA_OK)
      << amarena_last_error();
  EXPECT_TRUE(RunsCorrectly(k));
  const int after_run = pool.calls.load();
  // Weight packing: 160 x 256 f32 from N x K is 12 tiles of 64 x 64.
  std::vector<float> w(256 * 160, 1.0f), packed(amarena_kernel_b_bytes(k) / 4);
  ASSERT_EQ(amarena_kernel_pack_b_from(k, w.data(), AMARENA_B_NXK, 160,
                                       packed.data(), packed.size() * 4),
            AMARENA_OK)
      << amarena_last_error();
  EXPECT_EQ(pool.calls.load(), after_run + 1);
  EXPECT_GE(after_run, 1) << "the kernel's parallel loop never reached the "
                             "engine's parallel_for";
  EXPECT_TRUE(pool.all_once);
  amarena_kernel_release(k);
  amarena_runtime_destroy(rt);
}

// Makes a runtime with `o` logging to `m`, gets, runs and checks an 8x8x8
// kernel, destroys the runtime, and returns what reached stderr meanwhile.
std::string StderrOfAKernelLoggedTo(amarena_runtime_options o, Messages& m) {
  o.log = Messages::Log;
  o.log_ctx = &m;
  ::testing::internal::CaptureStderr();
  amarena_runtime* rt = nullptr;
  EXPECT_EQ(amarena_runtime_create_with_options(&o, &rt), AMARENA_OK)
      << amarena_last_error();
  amarena_kernel* k = nullptr;
  EXPECT_EQ(amarena_kernel_get(rt, "matmul 8x8x8 f32", &k), AMARENA_OK);
  if (k != nullptr) {
    EXPECT_TRUE(RunsCorrectly(k));
  }
  amarena_kernel_release(k);
  amarena_runtime_destroy(rt);
  return ::testing::internal::GetCapturedStderr();
}

TEST_F(OptionsTest, ALogCallbackGetsTheMessagesAndStderrNothing) {
  TempDir dir;
  const std::string db = dir.path() + "/a-directory";  // refused: a warning
  ASSERT_EQ(mkdir(db.c_str(), 0700), 0);
  for (int verbosity : {0, 1, 2}) {
    SCOPED_TRACE(verbosity);
    Messages m;
    amarena_runtime_options o = Defaults();
    o.db = db.c_str();
    o.verbosity = verbosity;
    EXPECT_EQ(StderrOfAKernelLoggedTo(o, m), "");
    EXPECT_EQ(m.Has(AMARENA_LOG_WARNING, db), verbosity >= 1);
    EXPECT_EQ(m.Has(AMARENA_LOG_INFO, "kernel matmul 8x8x8 f32"),
              verbosity >= 2);
    if (verbosity == 0) {
      EXPECT_TRUE(m.got.empty());
    }
  }
}

// The runtime takes its prices from its own database: a table stored there
// for this CPU that cannot be read (written by an amarena whose prices had
// other fields) is passed over with a warning to the log callback, not to
// stderr, and the runtime still makes kernels with a shipped table.
TEST_F(OptionsTest, AnUnusableStoredPriceTableIsAWarningToTheLog) {
  TempDir dir;
  const std::string db = dir.path() + "/amarena.db";
  PriceTable t = *NearestShipped(IdentityOf(DetectCpu())).table;
  t.cpu = IdentityOf(DetectCpu());
  ASSERT_TRUE(StorePrices(db, t).ok());
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "UPDATE prices SET prices = 'fma 3'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(h);
  Messages m;
  amarena_runtime_options o = Defaults();
  o.db = db.c_str();
  EXPECT_EQ(StderrOfAKernelLoggedTo(o, m), "");
  EXPECT_TRUE(m.Has(AMARENA_LOG_WARNING, "run amarena calibrate")) << db;
}

TEST_F(OptionsTest, TheDatabasePathIsHonoured) {
  TempDir dir;
  const std::string db = dir.path() + "/sub/amarena.db";
  for (const char* want : {"search", "database"}) {
    amarena_runtime_options o = Defaults();
    o.db = db.c_str();
    amarena_runtime* rt = nullptr;
    ASSERT_EQ(amarena_runtime_create_with_options(&o, &rt), AMARENA_OK);
    amarena_kernel* k = nullptr;
    ASSERT_EQ(amarena_kernel_get(rt, "matmul 12x20x28 f32", &k), AMARENA_OK);
    EXPECT_STREQ(amarena_kernel_source(k), want);
    amarena_kernel_release(k);
    amarena_runtime_destroy(rt);
    struct stat st {};
    EXPECT_EQ(stat(db.c_str(), &st), 0) << db;
  }
}

// On an AVX-512 machine the cap is what makes the kernel AVX2; on an AVX2
// one it still must not be refused, and a cap of avx512 asks for nothing the
// CPU lacks.
TEST_F(OptionsTest, TheIsaCapIsHonoured) {
  for (const char* cap : {"avx2", "avx512"}) {
    amarena_runtime_options o = Defaults();
    o.max_isa = cap;
    amarena_runtime* rt = nullptr;
    ASSERT_EQ(amarena_runtime_create_with_options(&o, &rt), AMARENA_OK);
    amarena_kernel* k = nullptr;
    ASSERT_EQ(amarena_kernel_get(rt, "matmul 16x16x16 f32", &k), AMARENA_OK);
    if (std::string(cap) == "avx2") {
      EXPECT_STREQ(amarena_kernel_isa(k), "avx2");
    }
    EXPECT_TRUE(RunsCorrectly(k));
    amarena_kernel_release(k);
    amarena_runtime_destroy(rt);
  }
}

TEST_F(OptionsTest, BadOptionsAreNamed) {
  amarena_runtime* rt = nullptr;
  auto refused = [&](const amarena_runtime_options* o, const char* words) {
    EXPECT_EQ(amarena_runtime_create_with_options(o, &rt),
              AMARENA_INVALID_ARGUMENT);
    EXPECT_EQ(rt, nullptr);
    EXPECT_NE(std::string(amarena_last_error()).find(words), std::string::npos)
        << amarena_last_error();
  };
  refused(nullptr, "options is null");
  amarena_runtime_options o = Defaults();
  EXPECT_EQ(amarena_runtime_create_with_options(&o, nullptr),
            AMARENA_INVALID_ARGUMENT);
  o.struct_size = 8;
  refused(&o, "struct_size is 8");
  o = Defaults();
  o.threads = -1;
  refused(&o, "threads is -1");
  o = Defaults();
  o.parallel_for = Pool::ParallelFor;
  refused(&o, "threads is 0 with a parallel_for");
  o = Defaults();
  o.max_isa = "sse4";
  refused(&o, "max_isa is 'sse4'");
  o = Defaults();
  o.verbosity = 7;
  refused(&o, "verbosity is 7");
  amarena_runtime_options_init(nullptr);  // harmless
}

}  // namespace
}  // namespace amarena
