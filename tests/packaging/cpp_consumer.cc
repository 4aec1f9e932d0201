// A C++17 program built with `pkg-config --cflags --libs --static amarena`
// and the wrapper amarena/amarena.hpp: a runtime of its own, the kernel
// checked against a naive loop, and B packed once for a "b=any" kernel.
#include <cmath>
#include <cstdio>
#include <vector>

#include "amarena/amarena.hpp"

namespace {

constexpr int kM = 13, kK = 7, kN = 100;

bool Matches(const std::vector<float>& a, const std::vector<float>& b,
             const std::vector<float>& c) {
  for (int i = 0; i < kM; ++i) {
    for (int j = 0; j < kN; ++j) {
      float want = 0;
      for (int p = 0; p < kK; ++p) want += a[i * kK + p] * b[p * kN + j];
      if (std::fabs(c[i * kN + j] - want) > 1e-4f * (1 + std::fabs(want))) {
        std::fprintf(stderr, "c[%d][%d] = %g, want %g\n", i, j, c[i * kN + j],
                     want);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

int main() {
  std::vector<float> a(kM * kK), b(kK * kN), c(kM * kN, -1e30f);
  for (int i = 0; i < kM * kK; ++i) a[i] = float(i % 11) - 5;
  for (int i = 0; i < kK * kN; ++i) b[i] = float(i % 7) * 0.25f - 0.5f;

  amarena::Runtime rt;
  amarena::Status s = amarena::Runtime::Create(2, &rt);
  if (!s.ok()) {
    std::fprintf(stderr, "Runtime::Create: %s\n", s.message().c_str());
    return 1;
  }
  amarena::Kernel k;
  s = rt.GetKernel("matmul 13x7x100 f32", &k);
  if (s.ok()) s = k.Run({a.data(), b.data(), c.data()});
  if (!s.ok()) {
    std::fprintf(stderr, "matmul: %s\n", s.message().c_str());
    return 1;
  }
  if (!Matches(a, b, c)) return 1;

  amarena::Kernel w;
  s = rt.GetKernel("matmul 13x7x100 f32 b=any", &w);
  std::vector<unsigned char> packed(w.b_bytes());
  if (s.ok()) s = w.PackB(b.data(), packed.data(), packed.size());
  std::vector<float> c2(kM * kN, -1e30f);
  if (s.ok()) s = w.Run({a.data(), packed.data(), c2.data()});
  if (!s.ok()) {
    std::fprintf(stderr, "matmul b=any: %s\n", s.message().c_str());
    return 1;
  }
  if (!Matches(a, b, c2)) return 1;

  // Bad input is a status with a message, not a crash.
  amarena::Kernel bad;
  s = rt.GetKernel("matmul 0x7 f32", &bad);
  if (s.ok() || bad || s.message().empty()) {
    std::fprintf(stderr, "a malformed Spec was accepted\n");
    return 1;
  }
  std::printf("c++ consumer: amarena %s, %s ok\n", amarena::Version(),
              k.name().c_str());
  return 0;
}
