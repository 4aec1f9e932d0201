// Random user-level Specs for tests: a fixed seed gives the same list
// everywhere.
//
//   for (const Spec& s : RandomMatmuls(/*count=*/200, /*max_dim=*/300,
//   /*seed=*/7)) ...
#ifndef AMARENA_TESTS_TESTING_RANDOM_SPECS_H_
#define AMARENA_TESTS_TESTING_RANDOM_SPECS_H_

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/spec.h"

namespace amarena::testing {

// f32 matmuls with dims uniform in 1..max_dim, random operand layouts, and
// every fourth one accumulating.
inline std::vector<Spec> RandomMatmuls(int count, int max_dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dim(1, max_dim);
  std::bernoulli_distribution col(0.25);
  std::vector<Spec> out;
  for (int i = 0; i < count; ++i) {
    TensorAux a, b, c;
    a.layout = col(rng) ? Order::kColMajor : Order::kRowMajor;
    b.layout = col(rng) ? Order::kColMajor : Order::kRowMajor;
    c.layout = col(rng) ? Order::kColMajor : Order::kRowMajor;
    int64_t m = dim(rng), k = dim(rng), n = dim(rng);
    out.push_back(Spec::Matmul(m, k, n, a, b, c, /*accum=*/i % 4 == 3));
  }
  return out;
}

// User-level Spec texts over everything a caller may ask for: f32 and
// bf16*bf16->f32, A and C row- or column-major, B plain (row- or
// column-major) or pre-packed in panels (`pP`), k-pair panels (`pPx2`, bf16
// only) and panels in sections (`pPsS`, `pPx2sS`), accumulating or not. Dims
// are mostly small and odd (1..max_dim, a third of them at most 16), so
// partial tiles, masked tails and unused panel slots all occur.
// `dtypes`, when given, replaces the dtype word of every text (for example
// "f32*bf16->f32"); B's k-pair panels occur where B is bf16. The draws are
// the same either way, so a seed gives the same shapes and layouts.
// Without `dtypes`, a quarter have a bf16 output (f32*f32->bf16,
// bf16*bf16->bf16) and a quarter an alpha (0.5, -2 or 3.25): drawn from a
// second generator, so the shapes and layouts are those the seed always
// gave.
inline std::vector<std::string> RandomSpecTexts(
    int count, int max_dim, uint64_t seed,
    absl::string_view dtypes = absl::string_view()) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto dim = [&] { return pick(0, 2) == 0 ? pick(1, 16) : pick(1, max_dim); };
  std::mt19937_64 extra_rng(seed * 0x9E3779B97F4A7C15ull + 1);
  auto extra = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(extra_rng);
  };
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    bool bf16 = pick(0, 1) == 1;
    const int64_t m = dim(), k = dim(), n = dim();
    const bool bf16_out = extra(0, 3) == 0;
    const int64_t alpha = extra(0, 11);  // 0..2: which alpha; else none
    std::string t =
        absl::StrCat("matmul ", m, "x", k, "x", n,
                     bf16 ? (bf16_out ? " bf16*bf16->bf16" : " bf16*bf16->f32")
                          : (bf16_out ? " f32*f32->bf16" : " f32"));
    if (!dtypes.empty()) {
      t = absl::StrCat("matmul ", m, "x", k, "x", n, " ", dtypes);
      bf16 = absl::StrContains(dtypes, "*bf16");
    }
    if (pick(0, 3) == 0) t += " a=col";
    switch (pick(0, 3)) {
      case 0:
        t += " b=col";
        break;
      case 1:
      case 2: {
        absl::StrAppend(&t, " b=p", int64_t{1} << pick(2, 7));
        if (bf16 && pick(0, 1) == 1) t += "x2";
        if (pick(0, 1) == 1) absl::StrAppend(&t, "s", int64_t{1} << pick(1, 3));
        break;
      }
      default:
        break;
    }
    if (pick(0, 3) == 0) t += " c=col";
    if (pick(0, 3) == 0) t += " accum";
    if (dtypes.empty() && alpha < 3)
      absl::StrAppend(&t, " alpha=",
                      alpha == 0   ? "0.5"
                      : alpha == 1 ? "-2"
                                   : "3.25");
    out.push_back(t);
  }
  return out;
}

// User-level Spec texts whose plain operands are views of wider matrices:
// f32 or bf16*bf16->f32, each of A, B and C row- or column-major and, two
// times in three, with a leading dimension (lda=, ldb=, ldc=) its row (or
// column) length plus 1, 13, a prime up to 61 or up to 300 more. Dims are
// 1, 7, 13, 100, a prime or anything in 1..max_dim; a quarter accumulate.
inline std::vector<std::string> RandomLdSpecTexts(int count, int max_dim,
                                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  static constexpr int64_t kDims[] = {1, 7, 13, 100, 2, 3, 5, 17, 31, 61, 97};
  static constexpr int64_t kPrimes[] = {2, 3, 5, 7, 11, 17, 19, 23, 31, 61};
  auto dim = [&] {
    return pick(0, 1) == 0 ? kDims[pick(0, std::size(kDims) - 1)]
                           : pick(1, max_dim);
  };
  auto extra = [&]() -> int64_t {
    switch (pick(0, 3)) {
      case 0:
        return 1;
      case 1:
        return 13;
      case 2:
        return kPrimes[pick(0, std::size(kPrimes) - 1)];
      default:
        return pick(1, 300);
    }
  };
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    const bool bf16 = pick(0, 1) == 1;
    const int64_t m = dim(), k = dim(), n = dim();
    std::string t = absl::StrCat("matmul ", m, "x", k, "x", n,
                                 bf16 ? " bf16*bf16->f32" : " f32");
    // Operand rows x cols: A m x k, B k x n, C m x n.
    const int64_t rows[] = {m, k, m}, cols[] = {k, n, n};
    const char* names[] = {"a", "b", "c"};
    for (int o = 0; o < 3; ++o) {
      const bool col = pick(0, 2) == 0;
      if (col) absl::StrAppend(&t, " ", names[o], "=col");
      if (pick(0, 2) != 0)
        absl::StrAppend(&t, " ld", names[o], "=",
                        (col ? rows[o] : cols[o]) + extra());
    }
    if (pick(0, 3) == 0) t += " accum";
    out.push_back(t);
  }
  return out;
}

// Batched user-level matmul texts (BxMxKxN): batch 1, 2, 3, 7, 16 or
// anything in 1..8; dims 1, 7, 13, a prime or anything in 1..max_dim; f32 or
// bf16*bf16->f32; A, B and C row- or column-major, sometimes with a leading
// dimension; B sometimes pre-packed in panels; a third share one B (sb=0);
// some give A's or C's batch stride away from the dense one (A's 0 or past
// it, C's past it), or place C's matrices side by side within ldc. A
// quarter accumulate.
inline std::vector<std::string> RandomBatchSpecTexts(int count, int max_dim,
                                                     uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  static constexpr int64_t kBatches[] = {1, 2, 3, 7, 16};
  static constexpr int64_t kDims[] = {1, 7, 13, 2, 3, 5, 17, 31};
  auto dim = [&] {
    return pick(0, 1) == 0 ? kDims[pick(0, std::size(kDims) - 1)]
                           : pick(1, max_dim);
  };
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    const bool bf16 = pick(0, 2) == 0;
    const int64_t b = pick(0, 1) == 0 ? kBatches[pick(0, 4)] : pick(1, 8);
    const int64_t m = dim(), k = dim(), n = dim();
    std::string t = absl::StrCat("matmul ", b, "x", m, "x", k, "x", n,
                                 bf16 ? " bf16*bf16->f32" : " f32");
    const bool a_col = pick(0, 3) == 0, c_col = pick(0, 3) == 0;
    const bool shared = b > 1 && pick(0, 2) == 0;
    if (a_col) t += " a=col";
    const int64_t b_shape = pick(0, 3);
    if (b_shape == 0) t += " b=col";
    if (b_shape == 1) absl::StrAppend(&t, " b=p", 8 << pick(0, 2));
    if (c_col) t += " c=col";
    // C side by side within ldc: ldc holds all b matrices' rows and more.
    const int64_t c_inner = c_col ? m : n, c_outer = c_col ? n : m;
    const bool side = b > 1 && pick(0, 4) == 0;
    if (side) {
      const int64_t gap = pick(0, 3);
      absl::StrAppend(&t, " ldc=", b * (c_inner + gap) + pick(0, 5),
                      " sc=", c_inner + gap);
    } else if (b > 1 && pick(0, 3) == 0) {
      absl::StrAppend(&t, " sc=", c_outer * c_inner + pick(1, 13));
    }
    if (pick(0, 3) == 0)
      absl::StrAppend(&t, " lda=", (a_col ? m : k) + pick(1, 13));
    if (b > 1 && pick(0, 3) == 0)
      absl::StrAppend(&t, " sa=", pick(0, 1) == 0 ? 0 : m * k * 2 + 17);
    if (shared) t += " sb=0";
    if (pick(0, 3) == 0) t += " accum";
    out.push_back(t);
  }
  return out;
}

// Distinct f32 matmuls, numbered from 0, small for small i (K grows by 16
// every 96): the first thousand are quick to search (well under a
// millisecond each with one Searcher shared), with trees of tens of nodes.
// For tests that need many different Specs stored.
inline Spec SmallMatmul(int i) {
  return Spec::Matmul(8 + 4 * (i % 12), 16 + 16 * (i / 96),
                      8 + 8 * ((i / 12) % 8));
}

// How sparsely the long random sweeps sample their list: every Nth entry,
// N = AMARENA_TEST_SWEEP_STRIDE (default 1: all of it). The sanitizer run of
// the suite sets it, since instrumented search and reference code is several
// times slower.
inline size_t SweepStride() {
  const char* v = std::getenv("AMARENA_TEST_SWEEP_STRIDE");
  long n = v ? std::strtol(v, nullptr, 10) : 1;
  return n >= 1 ? static_cast<size_t>(n) : 1;
}

// Specs that once made AVX-512 code write past its scratch area (bf16,
// k-pair panels in sections) or fail a generator check (bf16, C
// column-major): the sweeps over every ISA try them first.
inline const std::vector<std::string>& OnceFaultingSpecs() {
  static const std::vector<std::string> specs = {
      "matmul 77x94x313 bf16*bf16->f32 b=p4x2s8",
      "matmul 436x582x381 bf16*bf16->f32 b=p8x2s8 c=col",
      "matmul 64x64x64 bf16*bf16->f32 c=col",
      "matmul 16x64x1 bf16*bf16->f32 c=col accum"};
  return specs;
}

// How many Specs the random-Spec sweeps over user-level texts try:
// AMARENA_TEST_SWEEP_COUNT, else `fallback` (what CI runs; the `exhaustive`
// label runs them with 2000).
inline int SweepCount(int fallback) {
  const char* v = std::getenv("AMARENA_TEST_SWEEP_COUNT");
  long n = v ? std::strtol(v, nullptr, 10) : 0;
  return n >= 1 ? static_cast<int>(n) : fallback;
}

}  // namespace amarena::testing

#endif  // AMARENA_TESTS_TESTING_RANDOM_SPECS_H_
