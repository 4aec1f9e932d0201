#include "jit/peak.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "xbyak/xbyak.h"
#include "xbyak/xbyak_util.h"

namespace amarena {
namespace {

// Accumulator counts. Keeping two FMA pipes busy with a 4-cycle vfmadd231ps
// latency (Zen 4/5; Intel cores are the same) needs 2 x 4 = 8 independent
// chains; more accumulators give margin for a longer latency or a third pipe.
//   ymm: 12 accumulators + 2 sources = 14 of 16 registers.
//   zmm: 24 accumulators + 2 sources = 26 of 32 registers.
constexpr int kYmmAccumulators = 12;
constexpr int kZmmAccumulators = 24;

// void fma_peak(int64_t iters): iters x N independent vfmadd231ps, nothing else
// in the loop but the counter (dec + jnz fuse into one macro-op).
class FmaPeakLoop : public Xbyak::CodeGenerator {
 public:
  using Fn = void (*)(int64_t iters);

  // The buffer is allocated read-write and flipped to read-execute once
  // emitted: it is never writable and executable at once.
  FmaPeakLoop(int vector_bits, int accumulators)
      : Xbyak::CodeGenerator(4096, Xbyak::DontSetProtectRWE) {
    if (vector_bits == 512) {
      Emit<Xbyak::Zmm>(accumulators);
    } else {
      Emit<Xbyak::Ymm>(accumulators);
    }
    setProtectModeRE();
  }

  Fn fn() const { return getCode<Fn>(); }

 private:
  template <typename Vec>
  void Emit(int accumulators) {
    const Xbyak::Reg64 iters = rdi;  // SysV first argument
    const Vec x(accumulators), y(accumulators + 1);
    for (int i = 0; i < accumulators; ++i) {
      // vpxord is the AVX-512F zeroing idiom (vxorps zmm needs AVX512DQ).
      if constexpr (std::is_same_v<Vec, Xbyak::Zmm>) {
        vpxord(Vec(i), Vec(i), Vec(i));
      } else {
        vxorps(Vec(i), Vec(i), Vec(i));
      }
    }
    // Sources 1.0 and 0.5: normal numbers, so no denormal assists; each
    // accumulator grows by 0.5 per iteration until 0.5 is half an ulp (2^23),
    // then stays put, so it never overflows.
    mov(eax, 0x3f800000);
    vmovd(Xbyak::Xmm(x.getIdx()), eax);
    vbroadcastss(x, Xbyak::Xmm(x.getIdx()));
    mov(eax, 0x3f000000);
    vmovd(Xbyak::Xmm(y.getIdx()), eax);
    vbroadcastss(y, Xbyak::Xmm(y.getIdx()));

    Xbyak::Label loop, done;
    test(iters, iters);
    jle(done, T_NEAR);
    align(32);
    L(loop);
    for (int i = 0; i < accumulators; ++i) vfmadd231ps(Vec(i), x, y);
    dec(iters);
    jnz(loop, T_NEAR);
    L(done);
    vzeroupper();
    ret();
  }
};

double SecondsFor(FmaPeakLoop::Fn f, int64_t iters) {
  auto start = std::chrono::steady_clock::now();
  f(iters);
  std::chrono::duration<double> d = std::chrono::steady_clock::now() - start;
  return d.count();
}

bool CpuSupports(int vector_bits) {
  using Cpu = Xbyak::util::Cpu;
  Cpu cpu;
  if (vector_bits == 256) return cpu.has(Cpu::tAVX2) && cpu.has(Cpu::tFMA);
  if (vector_bits == 512) return cpu.has(Cpu::tAVX512F);
  return false;
}

}  // namespace

PeakResult MeasureFmaPeak(int vector_bits, double seconds) {
  if (!CpuSupports(vector_bits)) return {};
  const int accumulators =
      vector_bits == 512 ? kZmmAccumulators : kYmmAccumulators;
  const int lanes = vector_bits / 32;
  try {
    FmaPeakLoop code(vector_bits, accumulators);
    FmaPeakLoop::Fn f = code.fn();
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           start)
          .count();
    };

    // Calibrate: grow until a call is long enough to time (2 ms), then scale to
    // the 20 ms target. The growing calls also bring the core up to its full
    // clock.
    constexpr double kTargetSeconds = 0.02;
    int64_t iters = 1024;
    double t = SecondsFor(f, iters);
    while (t < 0.002) {
      iters *= 4;
      t = SecondsFor(f, iters);
    }
    iters = std::max<int64_t>(
        1, static_cast<int64_t>(iters * (kTargetSeconds / t)));

    // Best of the timed calls: interruptions only ever make a call slower.
    double best = std::numeric_limits<double>::infinity();
    for (int calls = 0; calls < 3 || elapsed() < seconds; ++calls) {
      best = std::min(best, SecondsFor(f, iters));
    }
    double flops = static_cast<double>(iters) * accumulators * lanes * 2;
    return {.gflops = flops / best / 1e9, .available = true};
  } catch (const Xbyak::Error&) {
    return {};
  }
}

}  // namespace amarena
