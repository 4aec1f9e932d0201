// Time to pack weights: a bf16 K x N matrix (default 4096 x 8192, 64 MiB)
// from an N x K or a K x N source into the layouts bf16 kernels read, on the
// calling thread (pin it: taskset -c 1 build/bench/pack_benchmark). Prints
// the median of 5 runs per layout and source, and the scalar Relayout once
// for comparison. Each result is checked on 4096 sampled elements and its
// padding; a wrong one is an error, not a number.
//
//   pack_benchmark [K N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/layout.h"
#include "runtime/pack.h"

namespace amarena {
namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Whether `got` holds source element (i, j) where `to` puts it, on samples.
bool Check(int64_t k, int64_t n, const std::vector<uint16_t>& src,
           PackSource source, const Layout& to,
           const std::vector<uint16_t>& got) {
  std::mt19937_64 rng(1);
  for (int s = 0; s < 4096; ++s) {
    const int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(k));
    const int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    const uint16_t want = src[static_cast<size_t>(
        source == PackSource::kSame ? i * n + j : j * k + i)];
    if (got[static_cast<size_t>(to.Offset(k, n, i, j))] != want) return false;
  }
  return true;
}

int Main(int argc, char** argv) {
  const int64_t k = argc > 2 ? std::atoll(argv[1]) : 4096;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 8192;
  if (k < 1 || n < 1) {
    std::fprintf(stderr, "usage: pack_benchmark [K N], both positive\n");
    return 2;
  }
  std::vector<uint16_t> src(static_cast<size_t>(k * n));
  std::mt19937 rng(7);
  for (uint16_t& v : src) v = static_cast<uint16_t>(rng() | 1);
  const Layout layouts[] = {
      Layout::Panels(Order::kRowMajor, 32).Paired(),
      Layout::Panels(Order::kRowMajor, 64).Paired().InSections(2),
      Layout::Panels(Order::kRowMajor, 32),
      Layout(Order::kRowMajor),
      Layout(Order::kColMajor),
  };
  std::printf(
      "packing a %lldx%lld bf16 B (%.0f MiB), median of 5, one thread\n",
      static_cast<long long>(k), static_cast<long long>(n),
      static_cast<double>(k * n * 2) / (1 << 20));
  int failures = 0;
  for (const Layout& to : layouts)
    for (PackSource source : {PackSource::kTransposed, PackSource::kSame}) {
      std::vector<uint16_t> out(static_cast<size_t>(to.StoredElements(k, n)));
      std::vector<double> times;
      for (int rep = 0; rep < 5; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        PackMatrix({.rows = k,
                    .cols = n,
                    .es = 2,
                    .src = src.data(),
                    .source = source,
                    .src_ld = source == PackSource::kSame ? n : k},
                   to, out.data());
        times.push_back(Seconds(std::chrono::steady_clock::now() - t0));
      }
      std::sort(times.begin(), times.end());
      const bool ok = Check(k, n, src, source, to, out);
      failures += !ok;
      std::printf("  b=%-10s from %s  %.4f s  (min %.4f)%s\n",
                  to.Text().empty() ? "row" : to.Text().c_str(),
                  source == PackSource::kSame ? "KxN" : "NxK", times[2],
                  times[0], ok ? "" : "  WRONG");
    }
  {
    const Layout to = layouts[0];
    std::vector<uint16_t> out(static_cast<size_t>(to.StoredElements(k, n)));
    auto t0 = std::chrono::steady_clock::now();
    Relayout(k, n, 2, Layout(), src.data(), to, out.data());
    std::printf("  scalar Relayout to b=%s from KxN  %.4f s (one run)\n",
                to.Text().c_str(),
                Seconds(std::chrono::steady_clock::now() - t0));
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace amarena

int main(int argc, char** argv) { return amarena::Main(argc, argv); }
