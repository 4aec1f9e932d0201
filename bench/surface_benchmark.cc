// The GEMM surface an inference engine calls, timed beside what it would
// otherwise do, one thread, through the public C++ API (amarena/amarena.hpp):
//
//   strided  a Spec with leading dimensions (a view into a larger matrix)
//            against the same Spec dense: the cost of the pitch;
//   mixed    f32 activations x bf16 weights (`f32*bf16->f32`, B pre-packed
//            with `b=any`) against converting the activations to bf16 and
//            running the bf16 x bf16 kernel, and against oneDNN's matmul with
//            f32 source and bf16 weights where oneDNN offers one;
//   batched  `matmul 16x128x64x128 f32` against 16 calls of the 128x64x128
//            kernel, 16 calls of libxsmm's kernel and oneDNN's batched
//            (3-D) matmul.
//
//   taskset -c 1 ./build/bench/surface_benchmark [--rounds 7] [--json FILE]
//
// Every variant is checked against a double-precision reference before it
// is timed; one that fails or is not offered prints why and is not timed.
// Variants of one comparison alternate round by round (TimeBatches, ~40 ms
// each; every other round in reverse order), so a shared machine's drifting
// load falls on all of them alike; the figure is the median over rounds of
// each round's median time per call.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "amarena/amarena.hpp"
#include "bench/batch_timer.h"
#include "bench/page_aligned.h"
#include "core/dtype.h"
#include "jit/cpu_features.h"
#include "oneapi/dnnl/dnnl.hpp"

#if AMARENA_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

namespace amarena::bench {
namespace {

// Every operand starts on a page, as in an engine (bench/page_aligned.h).
using Floats = std::vector<float, PageAligned<float>>;
using Halves = std::vector<uint16_t, PageAligned<uint16_t>>;

Floats Random(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  Floats v(n);
  for (float& x : v) x = d(g);
  return v;
}

// A matrix of rows x cols at pitch `ld` (elements) inside a vector.
struct View {
  int64_t rows, cols, ld;
  float At(const Floats& v, int64_t r, int64_t c) const {
    return v[static_cast<size_t>(r * ld + c)];
  }
};

// C (m x n at pitch ldc) against A.B in double, with a tolerance scaled by k.
bool MatchesProduct(const Floats& a, View av, const Floats& b, View bv,
                    const Floats& c, View cv) {
  for (int64_t i = 0; i < cv.rows; ++i)
    for (int64_t j = 0; j < cv.cols; ++j) {
      double want = 0, mag = 0;
      for (int64_t p = 0; p < av.cols; ++p) {
        const double t = double(av.At(a, i, p)) * bv.At(b, p, j);
        want += t;
        mag += std::fabs(t);
      }
      if (std::fabs(cv.At(c, i, j) - want) > 1e-5 * mag + 1e-6) return false;
    }
  return true;
}

struct Variant {
  std::string name;
  std::function<void()> call;
  std::string error;  // not timed when set
  double ns = 0;      // median over rounds
};

Variant Failed(std::string name, std::string why) {
  return {std::move(name), nullptr, std::move(why)};
}

// Odd rounds run the variants in reverse: the order within a round showed on
// a Zen 3 VM (f32 x bf16 on one buffer, 101 rounds: 0.980 and 0.960).
void TimeAlternating(std::vector<Variant>& vs, int rounds) {
  std::vector<std::vector<double>> ns(vs.size());
  BatchTimerOptions opt;
  opt.budget_ns = 4e7;
  opt.min_batches = 3;
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < vs.size(); ++j) {
      const size_t i = r % 2 == 0 ? j : vs.size() - 1 - j;
      if (vs[i].error.empty())
        ns[i].push_back(TimeBatches(vs[i].call, opt).median_ns);
    }
  for (size_t i = 0; i < vs.size(); ++i) {
    if (ns[i].empty()) continue;
    std::sort(ns[i].begin(), ns[i].end());
    vs[i].ns = ns[i][ns[i].size() / 2];
  }
}

struct Row {
  std::string section, name, error;
  double ns = 0, ratio = 0;  // ratio: the baseline's time over this one's
};
std::vector<Row> rows;

// Times `vs` and records them; vs[0] is amarena's, the ratios are each
// other variant's time over it (> 1: amarena is faster).
void Report(const std::string& section, std::vector<Variant> vs, int rounds) {
  TimeAlternating(vs, rounds);
  for (const Variant& v : vs) {
    Row r{section, v.name, v.error, v.ns, 0};
    if (v.error.empty() && vs[0].error.empty() && vs[0].ns > 0)
      r.ratio = v.ns / vs[0].ns;
    rows.push_back(r);
  }
}

// One amarena kernel with its operands, made and checked.
struct Gemm {
  Kernel k;
  Floats a, b, c;
  std::vector<void*> ops;
};

// `matmul MxKxN f32` with optional pitches (0: dense).
Variant AmarenaF32(const std::string& name, int64_t m, int64_t kk, int64_t n,
                   int64_t lda, int64_t ldb, int64_t ldc) {
  std::string spec = absl::StrCat("matmul ", m, "x", kk, "x", n, " f32");
  if (lda) absl::StrAppend(&spec, " lda=", lda);
  if (ldb) absl::StrAppend(&spec, " ldb=", ldb);
  if (ldc) absl::StrAppend(&spec, " ldc=", ldc);
  auto g = std::make_shared<Gemm>();
  Status s = Kernel::Get(spec, &g->k);
  if (!s.ok()) return Failed(name, s.message());
  lda = lda ? lda : kk, ldb = ldb ? ldb : n, ldc = ldc ? ldc : n;
  g->a = Random(static_cast<size_t>(m * lda), 1);
  g->b = Random(static_cast<size_t>(kk * ldb), 2);
  g->c.assign(static_cast<size_t>(m * ldc), 0.f);
  g->ops = {g->a.data(), g->b.data(), g->c.data()};
  s = g->k.Run(g->ops.data());
  if (!s.ok()) return Failed(name, s.message());
  if (!MatchesProduct(g->a, {m, kk, lda}, g->b, {kk, n, ldb}, g->c,
                      {m, n, ldc}))
    return Failed(name, "does not match the reference");
  return {absl::StrCat(name, ": ", spec),
          [g] { (void)g->k.Run(g->ops.data()); }, ""};
}

void Strided(int rounds) {
  struct Case {
    int64_t m, k, n, lda, ldb, ldc;
  };
  // Odd pitches a little past the row, and power-of-two pitches of a view
  // into a wide matrix (a KV cache, a slice of a fused weight).
  const Case cases[] = {
      {64, 64, 64, 4096, 4096, 4096},    {64, 64, 64, 67, 71, 73},
      {256, 256, 256, 1031, 1031, 1031}, {128, 768, 768, 1024, 1024, 1024},
      {1, 2048, 2048, 0, 4096, 0},       {49, 2048, 512, 2051, 515, 515}};
  for (const Case& c : cases) {
    std::vector<Variant> vs = {
        AmarenaF32("strided", c.m, c.k, c.n, c.lda, c.ldb, c.ldc),
        AmarenaF32("dense", c.m, c.k, c.n, 0, 0, 0)};
    Report("strided", std::move(vs), rounds);
  }
}

// The activations and weights of a 1 x 2048 x 16384 matrix-vector product.
struct MatVec {
  static constexpr int64_t k = 2048, n = 16384;
  Floats x = Random(k, 3), w = Random(k * n, 4);  // w: K x N
  Halves w16, x16;
  Floats y = Floats(n);
  // The packed weights, keyed by the kernel's Spec from its `b=` on (the
  // layout b=any chose): kernels with one layout read one buffer, not two
  // whose placement differs (on a Zen 3 VM, swapping which was allocated
  // first moved the ratio from 0.966 to 1.038).
  std::map<std::string, std::shared_ptr<Halves>> packed;
  MatVec() : w16(w.size()), x16(k) {
    for (size_t i = 0; i < w.size(); ++i) w16[i] = Bf16FromF32(w[i]);
    // The weights as the kernels see them, for the reference check.
    for (size_t i = 0; i < w.size(); ++i) w[i] = F32FromBf16(w16[i]);
  }
  // y against x.W, with x rounded to bf16 first when `x_bf16`.
  bool Check(bool x_bf16) const {
    Floats xs(x);
    if (x_bf16)
      for (float& v : xs) v = F32FromBf16(Bf16FromF32(v));
    return MatchesProduct(xs, {1, k, k}, w, {k, n, n}, y, {1, n, n});
  }
};

// amarena with B pre-packed (`b=any`); `convert` rounds the activations to
// bf16 on every call first, as an engine without f32 x bf16 must.
Variant AmarenaMatVec(std::shared_ptr<MatVec> mv, bool f32_activations) {
  const std::string spec = f32_activations
                               ? "matmul 1x2048x16384 f32*bf16->f32 b=any"
                               : "matmul 1x2048x16384 bf16*bf16->f32 b=any";
  const std::string name = f32_activations
                               ? "amarena f32*bf16->f32"
                               : "amarena bf16*bf16->f32 + convert x";
  struct State {
    std::shared_ptr<MatVec> mv;
    Kernel k;
    std::shared_ptr<Halves> packed;
    std::vector<void*> ops;
  };
  auto st = std::make_shared<State>();
  st->mv = mv;
  Status s = Kernel::Get(spec, &st->k);
  if (!s.ok()) return Failed(name, s.message());
  const std::string ks = st->k.spec();
  const size_t at = ks.find(" b=");
  std::shared_ptr<Halves>& packed =
      mv->packed[at == std::string::npos ? ks : ks.substr(at)];
  if (!packed) {
    auto p = std::make_shared<Halves>(st->k.b_bytes() / 2);
    s = st->k.PackB(mv->w16.data(), p->data(), st->k.b_bytes());
    if (!s.ok()) return Failed(name, s.message());
    packed = p;
  }
  st->packed = packed;
  void* a = f32_activations ? static_cast<void*>(mv->x.data())
                            : static_cast<void*>(mv->x16.data());
  st->ops = {a, st->packed->data(), mv->y.data()};
  auto call = [st, f32_activations] {
    MatVec& m = *st->mv;
    if (!f32_activations)
      for (int64_t i = 0; i < MatVec::k; ++i) m.x16[i] = Bf16FromF32(m.x[i]);
    (void)st->k.Run(st->ops.data());
  };
  call();
  if (!mv->Check(!f32_activations))
    return Failed(name, "does not match the reference");
  return {absl::StrCat(name, " (", spec, ")"), call, ""};
}

// A oneDNN matmul primitive with its arguments, run on one stream.
struct OneDnnMatmul {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::matmul prim;
  std::unordered_map<int, dnnl::memory> args;
  void Run() {
    prim.execute(strm, args);
    strm.wait();
  }
};

// oneDNN's matmul, src f32 and weights bf16 in the layout it picks.
Variant OneDnnMatVec(std::shared_ptr<MatVec> mv) {
  using dnnl::memory;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const std::string name = "oneDNN matmul f32 src, bf16 weights (pre-packed)";
  auto st = std::make_shared<OneDnnMatmul>();
  memory w;
  const int64_t k = MatVec::k, n = MatVec::n;
  memory::desc x_md({1, k}, dt::f32, tag::ab);
  memory::desc w_plain({k, n}, dt::bf16, tag::ab);
  memory::desc w_md({k, n}, dt::bf16, tag::any);
  memory::desc y_md({1, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(x_md, w_md, y_md),
                                      st->eng);
    st->prim = dnnl::matmul(pd);
    memory w_user(w_plain, st->eng, mv->w16.data());
    w = memory(pd.weights_desc(), st->eng);
    dnnl::reorder(w_user, w).execute(st->strm, w_user, w);
    st->strm.wait();
  } catch (const dnnl::error& e) {
    return Failed(name, absl::StrCat("not offered: ", e.what()));
  }
  st->args = {{DNNL_ARG_SRC, memory(x_md, st->eng, mv->x.data())},
              {DNNL_ARG_WEIGHTS, w},
              {DNNL_ARG_DST, memory(y_md, st->eng, mv->y.data())}};
  auto call = [st] { st->Run(); };
  call();
  if (!mv->Check(false)) return Failed(name, "does not match the reference");
  return {name, call, ""};
}

void Mixed(int rounds) {
  auto mv = std::make_shared<MatVec>();
  std::vector<Variant> vs = {AmarenaMatVec(mv, true), AmarenaMatVec(mv, false),
                             OneDnnMatVec(mv)};
  Report("f32 x bf16", std::move(vs), rounds);
}

// Batched: C[i] = A[i].B[i], i < 16, each 128x64 by 64x128, dense batches.
struct Batch {
  static constexpr int64_t b = 16, m = 128, k = 64, n = 128;
  Floats a = Random(b * m * k, 5), w = Random(b * k * n, 6);
  Floats c = Floats(b * m * n);
  bool Check() const {
    for (int64_t i = 0; i < b; ++i) {
      auto slice = [i](const Floats& v, int64_t size) {
        return Floats(v.begin() + i * size, v.begin() + (i + 1) * size);
      };
      if (!MatchesProduct(slice(a, m * k), {m, k, k}, slice(w, k * n),
                          {k, n, n}, slice(c, m * n), {m, n, n}))
        return false;
    }
    return true;
  }
};

Variant AmarenaBatched(std::shared_ptr<Batch> bt) {
  const std::string spec = "matmul 16x128x64x128 f32";
  const std::string name = absl::StrCat("amarena ", spec);
  auto k = std::make_shared<Kernel>();
  Status s = Kernel::Get(spec, k.get());
  if (!s.ok()) return Failed(name, s.message());
  auto call = [k, bt] {
    (void)k->Run({bt->a.data(), bt->w.data(), bt->c.data()});
  };
  call();
  if (!bt->Check()) return Failed(name, "does not match the reference");
  return {name, call, ""};
}

Variant AmarenaLoop(std::shared_ptr<Batch> bt) {
  const std::string name = "amarena matmul 128x64x128 f32, 16 calls";
  auto k = std::make_shared<Kernel>();
  Status s = Kernel::Get("matmul 128x64x128 f32", k.get());
  if (!s.ok()) return Failed(name, s.message());
  auto call = [k, bt] {
    for (int64_t i = 0; i < Batch::b; ++i)
      (void)k->Run({bt->a.data() + i * Batch::m * Batch::k,
                    bt->w.data() + i * Batch::k * Batch::n,
                    bt->c.data() + i * Batch::m * Batch::n});
  };
  call();
  if (!bt->Check()) return Failed(name, "does not match the reference");
  return {name, call, ""};
}

Variant LibxsmmLoop(std::shared_ptr<Batch> bt) {
  const std::string name = "libxsmm kernel, 16 calls";
#if AMARENA_HAVE_LIBXSMM
  libxsmm_init();
  // Column-major: C^T = B^T.A^T (m' = n, n' = m).
  const libxsmm_blasint m = Batch::n, n = Batch::m, k = Batch::k;
  const libxsmm_blasint lda = Batch::n, ldb = Batch::k, ldc = Batch::n;
  const float alpha = 1, beta = 0;
  const int flags = LIBXSMM_GEMM_FLAG_NONE,
            prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
  libxsmm_smmfunction f = libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha,
                                              &beta, &flags, &prefetch);
  if (f == nullptr) return Failed(name, "libxsmm_smmdispatch: no kernel");
  auto call = [f, bt] {
    for (int64_t i = 0; i < Batch::b; ++i)
      f(bt->w.data() + i * Batch::k * Batch::n,
        bt->a.data() + i * Batch::m * Batch::k,
        bt->c.data() + i * Batch::m * Batch::n);
  };
  call();
  if (!bt->Check()) return Failed(name, "does not match the reference");
  return {absl::StrCat(name, " (", libxsmm_get_target_arch(), ")"), call, ""};
#else
  (void)bt;
  return Failed(name, "built without libxsmm");
#endif
}

Variant OneDnnBatched(std::shared_ptr<Batch> bt) {
  using dnnl::memory;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const std::string name = "oneDNN batched (3-D) matmul";
  auto st = std::make_shared<OneDnnMatmul>();
  memory::desc a_md({Batch::b, Batch::m, Batch::k}, dt::f32, tag::abc);
  memory::desc b_md({Batch::b, Batch::k, Batch::n}, dt::f32, tag::abc);
  memory::desc c_md({Batch::b, Batch::m, Batch::n}, dt::f32, tag::abc);
  try {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md),
                                    st->eng);
    st->prim = dnnl::matmul(pd);
  } catch (const dnnl::error& e) {
    return Failed(name, absl::StrCat("not offered: ", e.what()));
  }
  st->args = {{DNNL_ARG_SRC, memory(a_md, st->eng, bt->a.data())},
              {DNNL_ARG_WEIGHTS, memory(b_md, st->eng, bt->w.data())},
              {DNNL_ARG_DST, memory(c_md, st->eng, bt->c.data())}};
  auto call = [st] { st->Run(); };
  call();
  if (!bt->Check()) return Failed(name, "does not match the reference");
  return {name, call, ""};
}

void Batched(int rounds) {
  auto bt = std::make_shared<Batch>();
  std::vector<Variant> vs = {AmarenaBatched(bt), AmarenaLoop(bt),
                             LibxsmmLoop(bt), OneDnnBatched(bt)};
  Report("batched", std::move(vs), rounds);
}

// `s` as a JSON string's contents.
std::string JsonEscaped(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += (static_cast<unsigned char>(ch) < 0x20) ? ' ' : ch;
  }
  return out;
}

void Print(FILE* json) {
  std::printf(
      "| comparison | variant | µs per call | its time / amarena's |\n");
  std::printf("|---|---|---|---|\n");
  for (const Row& r : rows) {
    if (!r.error.empty()) {
      std::printf("| %s | %s | — (%s) | |\n", r.section.c_str(), r.name.c_str(),
                  r.error.c_str());
      continue;
    }
    char ratio[32] = "";
    if (r.ratio > 0) std::snprintf(ratio, sizeof ratio, "%.3f", r.ratio);
    std::printf("| %s | %s | %.2f | %s |\n", r.section.c_str(), r.name.c_str(),
                r.ns / 1e3, ratio);
  }
  if (json == nullptr) return;
  std::fprintf(json, "{\"cpu\": \"%s\", \"rows\": [\n",
               JsonEscaped(DetectCpu().brand).c_str());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(
        json,
        "  {\"comparison\": \"%s\", \"variant\": \"%s\", \"ns\": %.1f, "
        "\"ratio\": %.4f, \"error\": \"%s\"}%s\n",
        r.section.c_str(), JsonEscaped(r.name).c_str(), r.ns, r.ratio,
        JsonEscaped(r.error).c_str(), i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(json, "]}\n");
}

}  // namespace
}  // namespace amarena::bench

int main(int argc, char** argv) {
  using namespace amarena::bench;
  int rounds = 7;
  const char* json_path = nullptr;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rounds") {
      rounds = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--json") {
      json_path = argv[i + 1];
    } else if (flag == "--only") {  // strided, mixed or batched
      only = argv[i + 1];
    } else {
      std::fprintf(stderr, "surface_benchmark: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "surface_benchmark: %s needs a value\n",
                 argv[argc - 1]);
    return 2;
  }
  omp_set_num_threads(1);  // oneDNN's threads; amarena's runtime: one thread
  setenv("AMARENA_NUM_THREADS", "1", /*overwrite=*/1);
  std::printf("surface_benchmark on %s, one thread, %d rounds\n\n",
              amarena::DetectCpu().brand.c_str(), rounds);
  if (only.empty() || only == "strided") Strided(rounds);
  if (only.empty() || only == "mixed") Mixed(rounds);
  if (only.empty() || only == "batched") Batched(rounds);
  FILE* json = json_path ? std::fopen(json_path, "w") : nullptr;
  if (json_path && json == nullptr) {
    std::fprintf(stderr, "surface_benchmark: cannot write %s\n", json_path);
    return 2;
  }
  Print(json);
  if (json) std::fclose(json);
  return 0;
}
