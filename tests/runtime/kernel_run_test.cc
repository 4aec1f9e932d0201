// Kernel::Run (over CompiledKernel::Run): one thread and two give the same
// bits whatever the caller's MXCSR; a kernel runs after its runtime is gone;
// scratch that cannot be allocated is a status, on any thread.
#include <immintrin.h>
#include <malloc.h>
#include <pthreadpool.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "amarena/amarena.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "gtest/gtest.h"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "tests/testing/check_kernel.h"
#include "tests/testing/isa_runtime.h"

namespace amarena {
namespace {

// MXCSR bit 15 (FTZ: subnormal results become zero) and bit 6 (DAZ:
// subnormal inputs read as zero).
constexpr uint32_t kFtzDaz = 0x8040;

// The calling thread's MXCSR for a scope.
class ScopedMxcsr {
 public:
  explicit ScopedMxcsr(uint32_t csr) : saved_(_mm_getcsr()) { _mm_setcsr(csr); }
  ~ScopedMxcsr() { _mm_setcsr(saved_); }

 private:
  uint32_t saved_;
};

bool HasParallelRoot(const Kernel& k) {
  return k.impl().how.type == NodeType::kLoop && k.impl().how.loop.parallel;
}

// Element e of a dense operand; `v` must be exact in its dtype.
void Put(const Spec& s, const Operands& ops, int i, int64_t e, float v) {
  if (s.aux[i].dtype == DType::kF32) {
    static_cast<float*>(ops.ptr(i))[e] = v;
  } else {
    static_cast<uint16_t*>(ops.ptr(i))[e] =
        static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16);
  }
}

// Inputs whose results depend on FTZ or DAZ. For K = 256 and IEEE
// arithmetic every partial sum is exact, so the result is known whatever the
// order of the sums: kSubnormalA (A = 2^-130, subnormal in f32 and bf16;
// B = 1) gives 256 * 2^-130 = 2^-122, or 0 under DAZ; kSubnormalProducts
// (A = B = 2^-70, normal) gives partial sums j * 2^-140, all subnormal, so
// 2^-132, or 0 under FTZ. kMixed spreads A over [2^-133, 2^-100) and B over
// [2^-30, 1) with random signs: results on both sides of 2^-126.
enum class Inputs { kSubnormalA, kSubnormalProducts, kMixed };

void Fill(const Spec& s, const Operands& ops, Inputs in) {
  std::mt19937 rng(5);
  for (int i = 0; i < 2; ++i)
    for (int64_t e = 0; e < s.Operand(i).Elements(); ++e) {
      float v = 0;
      switch (in) {
        case Inputs::kSubnormalA:
          v = i == 0 ? std::ldexp(1.0f, -130) : 1.0f;
          break;
        case Inputs::kSubnormalProducts:
          v = std::ldexp(1.0f, -70);
          break;
        case Inputs::kMixed: {
          const int exp = i == 0 ? -133 + static_cast<int>(rng() % 34)
                                 : -30 + static_cast<int>(rng() % 31);
          // Seven fraction bits: exact in bf16 (a bf16 subnormal keeps
          // fewer, and truncation is the same for both runs).
          const float mant = 1.0f + static_cast<float>(rng() % 128) / 128;
          v = std::ldexp(rng() % 2 ? mant : -mant, exp);
          break;
        }
      }
      Put(s, ops, i, e, v);
    }
  // C is overwritten: start it as NaNs.
  std::memset(ops.ptr(2), 0xff,
              static_cast<size_t>(s.Operand(2).Elements()) * sizeof(float));
}

// The output bytes of `k` run on `in` with the calling thread's MXCSR.
std::vector<uint8_t> RunOn(const Kernel& k, Inputs in) {
  Operands ops(k.spec());
  {
    // Inputs computed under the default MXCSR (ldexp must not flush them).
    ScopedMxcsr ieee(_mm_getcsr() & ~kFtzDaz);
    Fill(k.spec(), ops, in);
  }
  absl::Status run = k.Run(ops.ptrs());
  EXPECT_TRUE(run.ok()) << run;
  return ops.Snapshot(2);
}

TEST(KernelRunTest, OneAndTwoThreadsGiveTheSameBitsOnSubnormals) {
  const uint32_t ieee = _mm_getcsr() & ~kFtzDaz;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!testing::HasIsa(isa)) continue;
    for (const char* text :
         {"matmul 256x256x256 f32", "matmul 256x256x256 bf16*bf16->f32"}) {
      absl::StatusOr<KernelPtr> one = testing::Rt(isa, 1).Get(text);
      absl::StatusOr<KernelPtr> two = testing::Rt(isa, 2).Get(text);
      ASSERT_TRUE(one.ok() && two.ok()) << text;
      // vdpbf16ps treats subnormal inputs as zero and flushes subnormal
      // results whatever the MXCSR says (Intel SDM), so a bf16 kernel on an
      // AVX-512 BF16 target flushes under an IEEE caller too.
      const absl::StatusOr<Target>& target = testing::Rt(isa, 1).target();
      ASSERT_TRUE(target.ok()) << target.status();
      const bool dot_flushes =
          (*one)->spec().Operand(0).aux.dtype == DType::kBF16 &&
          target->bf16_dot;
      // Otherwise both run on the calling thread and prove nothing.
      ASSERT_TRUE(HasParallelRoot(**two)) << text << "\n"
                                          << PrintImpl((*two)->impl());
      // Flushing first: a pool thread left flushing would show in the IEEE
      // runs after it.
      for (uint32_t csr : {ieee | kFtzDaz, ieee}) {
        ScopedMxcsr scoped(csr);
        const bool flush = csr & kFtzDaz;
        for (Inputs in : {Inputs::kSubnormalA, Inputs::kSubnormalProducts,
                          Inputs::kMixed}) {
          SCOPED_TRACE(::testing::Message()
                       << Name(isa) << " " << text << " mxcsr=0x" << std::hex
                       << csr << " inputs=" << static_cast<int>(in));
          const std::vector<uint8_t> serial = RunOn(**one, in);
          const std::vector<uint8_t> parallel = RunOn(**two, in);
          EXPECT_TRUE(serial == parallel);
          if (in == Inputs::kMixed) continue;
          const float want =
              flush || dot_flushes
                  ? 0.0f
                  : std::ldexp(1.0f, in == Inputs::kSubnormalA ? -122 : -132);
          std::vector<float> got(serial.size() / sizeof(float));
          std::memcpy(got.data(), serial.data(), serial.size());
          EXPECT_EQ(std::count(got.begin(), got.end(), want),
                    static_cast<ptrdiff_t>(got.size()))
              << "C[0][0] is " << got[0] << ", must be " << want;
        }
      }
    }
  }
}

// A run leaves every thread of the engine's pool with the MXCSR it had.
TEST(KernelRunTest, PoolThreadsKeepTheirOwnMxcsr) {
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  {
    // The decisions hold a 64x1024 C block (256 KiB) in L2: give the target an
  // L2 of at least 1 MiB whatever the host's, so they replay on every CPU.
  CpuFeatures cpu = DetectCpu();
  cpu.l2_bytes = std::max<int64_t>(cpu.l2_bytes, 1 << 20);
  absl::StatusOr<Target> t = TargetFor(cpu, Isa::kAvx2);
    Runtime rt(t, pool);
    absl::StatusOr<KernelPtr> k = rt.Get("matmul 256x256x256 f32");
    ASSERT_TRUE(k.ok()) << k.status();
    ASSERT_TRUE(HasParallelRoot(**k));
    const uint32_t ieee = _mm_getcsr() & ~kFtzDaz;
    {
      // Several runs: in one, the caller may take every tile before the
      // worker wakes.
      ScopedMxcsr flush(ieee | kFtzDaz);
      for (int i = 0; i < 10; ++i) RunOn(**k, Inputs::kMixed);
    }
    std::vector<uint32_t> seen(64);
    pthreadpool_parallelize_1d(
        pool,
        [](void* p, size_t i) {
          static_cast<uint32_t*>(p)[i] = _mm_getcsr();
          usleep(200);  // so that both threads take some
        },
        seen.data(), seen.size(), 0);
    for (uint32_t csr : seen) EXPECT_EQ(csr & kFtzDaz, 0u) << std::hex << csr;
  }
  pthreadpool_destroy(pool);
}

// The kernel keeps the runtime's pool: it runs (not hangs) after the runtime
// is destroyed. In a child process with an alarm, so a hang fails the test.
TEST(KernelRunTest, AKernelRunsAfterItsRuntimeIsDestroyed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(60);
        KernelPtr k;
        {
          // The decisions hold a 64x1024 C block (256 KiB) in L2: give the target an
  // L2 of at least 1 MiB whatever the host's, so they replay on every CPU.
  CpuFeatures cpu = DetectCpu();
  cpu.l2_bytes = std::max<int64_t>(cpu.l2_bytes, 1 << 20);
  absl::StatusOr<Target> t = TargetFor(cpu, Isa::kAvx2);
          t->workers = 2;
          Runtime rt(t);
          k = *rt.Get("matmul 256x256x256 f32");
        }
        ::testing::AssertionResult ok =
            testing::KernelMatchesReference(k, k->spec());
        std::fprintf(stderr, "parallel=%d %s\n", HasParallelRoot(*k),
                     ok.message());
        std::_Exit(HasParallelRoot(*k) && ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "parallel=1");
}

// Bytes of address space the process has mapped (VmSize).
uint64_t MappedBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) << 10;
  return 0;
}

// Runs `run` with the address space capped 256 KiB above what is mapped, and
// every allocation of 64 KiB or more made by mmap (so no free heap can
// answer one): the scratch areas below (1 MiB and more, each with its guard
// pages) cannot be allocated, while the small allocations of an error path
// (a status message, a grown heap top) still can.
template <typename F>
auto WithoutRoomForScratch(F run) {
  mallopt(M_MMAP_THRESHOLD, 64 << 10);
  malloc_trim(0);
  rlimit old;
  getrlimit(RLIMIT_AS, &old);
  rlimit cap = old;
  cap.rlim_cur = MappedBytes() + (256 << 10);
  setrlimit(RLIMIT_AS, &cap);
  auto result = run();
  setrlimit(RLIMIT_AS, &old);
  return result;
}

// A 256x1024x1024 f32 tree that packs all of B into 4 MiB of scratch, in
// each task of a parallel loop over m with two threads (where the pool's
// worker and the caller both fail). Given as decisions, so the test does not
// depend on what the cost model picks. The run returns ResourceExhausted
// naming the scratch; once memory is back the same kernel runs and is right.
constexpr char kPackAllOfB[] =
    "pack 1 l3 p16;tile m 8;tile n 64;view 0 l1;view 1 l1 p16;select copy";
constexpr char kBlocked64Rows[] =
    "view 0 l2;view 2 l2;to-accum;tile n 512;tile m 1;view 0 l1;"
    "select mem_zero;split k 128;tile n 32;view 1 l1 p16;tile m 3;view 0 l1;"
    "view 2 l1;regs 2 vrf v8;select vector_load;split k 1;tile n 16;"
    "select broadcast_fma;select vector_store;view 0 l1;view 2 l1;"
    "regs 2 vrf v8;select vector_load;split k 1;tile n 16;"
    "select broadcast_fma;select vector_store";

void ExpectScratchExhaustedThenRecovers(int threads) {
  alarm(60);
  // The decisions hold a 64x1024 C block (256 KiB) in L2: give the target an
  // L2 of at least 1 MiB whatever the host's, so they replay on every CPU.
  CpuFeatures cpu = DetectCpu();
  cpu.l2_bytes = std::max<int64_t>(cpu.l2_bytes, 1 << 20);
  absl::StatusOr<Target> t = TargetFor(cpu, Isa::kAvx2);
  t->workers = threads;
  Runtime rt(t);
  const char* text = "matmul 256x1024x1024 f32";
  const Spec s = *ParseSpec(text);
  const std::string decisions =
      threads > 1 ? absl::StrCat("parallel tile m 64;", kPackAllOfB, ";",
                                 kBlocked64Rows)
                  : absl::StrCat(kPackAllOfB, ";tile m 64;", kBlocked64Rows);
  absl::StatusOr<KernelPtr> scheduled = rt.GetScheduled(text, decisions);
  if (!scheduled.ok()) {
    std::fprintf(stderr, "schedule: %s\n",
                 scheduled.status().ToString().c_str());
    std::_Exit(3);
  }
  KernelPtr k = *scheduled;
  Operands ops(s);
  FillRandom(s, ops, 1);
  const std::vector<uint8_t> before = ops.Snapshot(2);
  absl::Status run = WithoutRoomForScratch([&] { return k->Run(ops.ptrs()); });
  std::fprintf(stderr, "parallel=%d status=%s\n", HasParallelRoot(*k),
               run.ToString().c_str());
  if (!absl::IsResourceExhausted(run) ||
      run.message().find("could not be allocated") == absl::string_view::npos)
    std::_Exit(1);
  if (!k->Run(ops.ptrs()).ok() || !CheckAgainstReference(s, ops, before).ok)
    std::_Exit(2);
  std::_Exit(0);
}

TEST(KernelRunTest, ScratchThatCannotBeAllocatedIsResourceExhausted) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 4 MiB for all of B, and a line for the flag that says whether it has
  // been filled (jit/emit_buffers.cc ScratchNeeded).
  EXPECT_EXIT(ExpectScratchExhaustedThenRecovers(1),
              ::testing::ExitedWithCode(0),
              "parallel=0 status=RESOURCE_EXHAUSTED: cannot run "
              "amarena_matmul_256x1024x1024_f32.*: scratch of 4194368 bytes");
  EXPECT_EXIT(ExpectScratchExhaustedThenRecovers(2),
              ::testing::ExitedWithCode(0),
              "parallel=1 status=RESOURCE_EXHAUSTED: cannot run "
              "amarena_matmul_256x1024x1024_f32.*: scratch of 4194368 bytes");
}

// The same through the C API: AMARENA_RESOURCE_EXHAUSTED and the message.
TEST(KernelRunTest, CApiReportsScratchExhaustion) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(60);
        amarena_runtime* rt = nullptr;
        amarena_kernel* k = nullptr;
        if (amarena_runtime_create(2, &rt) != AMARENA_OK ||
            amarena_kernel_get(rt, "matmul 256x1024x1024 f32", &k) !=
                AMARENA_OK)
          std::_Exit(3);
        const Spec s = *ParseSpec(amarena_kernel_spec(k));
        Operands ops(s);
        FillRandom(s, ops, 1);
        amarena_status st = WithoutRoomForScratch(
            [&] { return amarena_kernel_run(k, ops.ptrs()); });
        std::fprintf(stderr, "status=%d %s\n", st, amarena_last_error());
        std::_Exit(st == AMARENA_RESOURCE_EXHAUSTED ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "status=4 cannot run .*scratch of");
}

}  // namespace
}  // namespace amarena
