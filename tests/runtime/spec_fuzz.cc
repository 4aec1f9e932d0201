// A seeded fuzz of Spec text through the C API and the `amarena run` command:
// strings built from the notation's own pieces (operations, dims from 0 to
// past 2^63, dtypes, options, layouts, budgets), mixed with byte-level
// mutations. Every string goes to amarena_kernel_get; every kernel that comes
// back runs on operands of the sizes its Spec names (zeros; up to
// --max-operand-mib, default 16, in all). Every --cli-every'th string that was
// refused or run also goes to `amarena run` as a process of its own. An abort,
// a crash or a hang ends this program (or its child) with a signal, which is
// the failure; statuses are counted and printed.
//
//   spec_fuzz --count 100000 --seed 1 --amarena build/tools/amarena
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "amarena/amarena.h"
#include "core/reference.h"
#include "core/spec_text.h"

namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  std::string Next() {
    // Half the strings are what a caller would plausibly write, so they
    // reach the search, the JIT and a run; half anything the pieces make.
    std::string s = Pick(0, 1) == 0 ? Plausible() : Structured();
    // One string in eight gets a few byte-level mutations on top.
    if (Pick(0, 7) == 0)
      for (int64_t i = Pick(1, 3); i > 0; --i) Mutate(s);
    return s;
  }

 private:
  int64_t Pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  template <typename T>
  const T& One(const std::vector<T>& v) {
    return v[static_cast<size_t>(Pick(0, static_cast<int64_t>(v.size()) - 1))];
  }

  std::string Dim() {
    static const std::vector<std::string> odd = {
        "0",          "-1",         "1e3",
        "",           "07",         "2147483647",
        "2147483648", "4294967297", "99999999999999999999",
        "300000",     "65536",      "+5",
        " 3",         "x"};
    switch (Pick(0, 19)) {
      case 0:
        return One(odd);
      case 1:
      case 2:
        return absl::StrCat(Pick(1, 300));
      default:
        return absl::StrCat(Pick(1, 24));
    }
  }

  std::string Plausible() {
    static const std::vector<std::string> usual = {
        "a=col",  "b=col",     "c=col",    "b=p16",     "b=p32x2",
        "b=p8s2", "b=any",     "accum",    "serial",    "b=p4",
        "b=p128", "b=p64x2s4", "lda=301",  "ldb=307",   "ldc=311",
        "ldc=2",  "alpha=0.5", "alpha=-0", "alpha=nan", "alpha=1e39"};
    std::string s = absl::StrCat("matmul ", Dim(), "x", Dim(), "x", Dim(),
                                 Pick(0, 1) ? " f32" : " bf16*bf16->f32");
    for (int64_t i = Pick(0, 2); i > 0; --i)
      absl::StrAppend(&s, " ", One(usual));
    return s;
  }

  std::string Structured() {
    static const std::vector<std::string> ops = {
        "matmul", "matmul", "matmul", "matmul", "matmul", "matmul",
        "matmul", "zero",   "move",   "conv",   ""};
    static const std::vector<std::string> dtypes = {"f32",
                                                    "f32",
                                                    "bf16*bf16->f32",
                                                    "bf16*bf16->f32",
                                                    "bf16",
                                                    "f16",
                                                    "f32*bf16->f32",
                                                    "bf16*bf16->bf16",
                                                    "f32*f32->bf16",
                                                    "f32*bf16->bf16",
                                                    "f32*f32->f32",
                                                    "int8",
                                                    "f32->f32",
                                                    "bf16*bf16",
                                                    "*->",
                                                    "f32 f32",
                                                    ""};
    static const std::vector<std::string> props = {
        "row",  "col",   "gl",      "l1",       "l2",     "l3",
        "vrf",  "v8",    "v16",     "p16",      "p32",    "p4x2",
        "p8x2", "p64s2", "p32x2s4", "p128x2s8", "p1024",  "p3",
        "p0",   "p2048", "p16s3",   "p16x3",    "any",    "p",
        "x2",   "s2",    "v0",      "v3",       "col,p16"};
    static const std::vector<std::string> names = {"a",   "b",   "c", "out",
                                                   "src", "dst", "d", ""};
    std::string s = One(ops);
    const std::string op = s;
    int64_t ndims = op == "matmul" ? (Pick(0, 5) == 0 ? 4 : 3) : 2;
    if (Pick(0, 19) == 0) ndims = Pick(0, 5);
    s += " ";
    for (int64_t i = 0; i < ndims; ++i)
      absl::StrAppend(&s, i ? "x" : "", Dim());
    absl::StrAppend(&s, " ", One(dtypes));
    for (int64_t i = Pick(0, 3); i > 0; --i) {
      switch (Pick(0, 15)) {
        case 0:
          s += " accum";
          break;
        case 1:
          s += " serial";
          break;
        case 2:
          absl::StrAppend(&s, " budget=vrf:", Pick(-1, 40),
                          ",gpr:", Pick(-1, 16), ",l1:", Pick(0, 1024),
                          ",l2:", Pick(0, 40000), ",l3:", Pick(0, 600000));
          break;
        case 3:
        case 4:
        case 5: {
          absl::StrAppend(&s, " ", One(names), "=", One(props));
          if (Pick(0, 3) == 0) absl::StrAppend(&s, ",", One(props));
          break;
        }
        default:
          absl::StrAppend(&s, " ", One(names), "=", One(props));
      }
    }
    return s;
  }

  void Mutate(std::string& s) {
    static const std::string bytes = "x0123456789=,*->:; \t\n\xff\x01pvsab";
    const int64_t at = s.empty() ? 0 : Pick(0, static_cast<int64_t>(s.size()));
    switch (Pick(0, 2)) {
      case 0:
        s.insert(static_cast<size_t>(at), 1,
                 bytes[static_cast<size_t>(Pick(0, bytes.size() - 1))]);
        break;
      case 1:
        if (!s.empty() && at < static_cast<int64_t>(s.size()))
          s.erase(static_cast<size_t>(at), 1);
        break;
      default:
        if (!s.empty() && at < static_cast<int64_t>(s.size()))
          s[static_cast<size_t>(at)] =
              bytes[static_cast<size_t>(Pick(0, bytes.size() - 1))];
    }
  }

  std::mt19937_64 rng_;
};

// Runs `k` on zeroed operands of the sizes its Spec names, if they are
// small; `ran` says whether it did.
amarena_status RunOnZeros(const amarena_kernel* k, size_t max_bytes,
                          bool& ran) {
  ran = false;
  absl::StatusOr<amarena::Spec> s = amarena::ParseSpec(amarena_kernel_spec(k));
  if (!s.ok()) {
    std::fprintf(stderr, "kernel spec does not parse: %s\n",
                 amarena_kernel_spec(k));
    std::abort();
  }
  size_t total = 0;
  std::vector<size_t> bytes;
  // What each operand spans over the batch: (b - 1) batch strides and one
  // matrix (a batch stride may exceed a matrix with a leading dimension).
  for (int i = 0; i < s->NumOperands(); ++i) {
    bytes.push_back(static_cast<size_t>(s->BatchedBytes(i)));
    total += bytes.back();
  }
  if (total > max_bytes) return AMARENA_OK;  // created, too big to run here
  ran = true;
  std::vector<std::vector<float>> bufs;
  std::vector<void*> ptrs;
  for (size_t b : bytes) {
    bufs.emplace_back((b + 3) / 4 + 1, 0.0f);
    ptrs.push_back(bufs.back().data());
  }
  return amarena_kernel_run(k, ptrs.data());
}

// `amarena run SPEC --reps 1` in a child process: its exit code, or 128 +
// the signal that ended it.
int RunCli(const std::string& amarena, const std::string& spec) {
  pid_t pid = fork();
  if (pid == 0) {
    // The child's output is not wanted; its fate is.
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    alarm(600);  // a hang, not a slow search
    execl(amarena.c_str(), amarena.c_str(), "run", spec.c_str(), "--reps", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t count = 1000, seed = 1, cli_every = 0, max_mib = 16, shown = 0;
  std::string amarena;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    bool ok = true;
    if (flag == "--count") {
      ok = absl::SimpleAtoi(argv[i + 1], &count);
    } else if (flag == "--seed") {
      ok = absl::SimpleAtoi(argv[i + 1], &seed);
    } else if (flag == "--cli-every") {
      ok = absl::SimpleAtoi(argv[i + 1], &cli_every);
    } else if (flag == "--max-operand-mib") {
      ok = absl::SimpleAtoi(argv[i + 1], &max_mib);
    } else if (flag == "--print") {  // the first N strings and statuses
      ok = absl::SimpleAtoi(argv[i + 1], &shown);
    } else if (flag == "--amarena") {
      amarena = argv[i + 1];
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "spec_fuzz: bad flag %s %s\n", argv[i], argv[i + 1]);
      return 2;
    }
  }
  // The sanitizer run samples its sweeps (tests/testing/random_specs.h
  // SweepStride); the fuzz runs the first 1/N of its strings there.
  if (const char* v = std::getenv("AMARENA_TEST_SWEEP_STRIDE")) {
    int64_t stride = 1;
    if (absl::SimpleAtoi(v, &stride) && stride > 1) count /= stride;
  }
  Generator gen(static_cast<uint64_t>(seed));
  std::map<int, int64_t> got, ran, cli;
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0 && i % 10000 == 0) {  // progress, in case a run is cut short
      std::printf("spec_fuzz: %lld strings so far, %lld kernels made\n",
                  static_cast<long long>(i),
                  static_cast<long long>(got[AMARENA_OK]));
      std::fflush(stdout);
    }
    const std::string spec = gen.Next();
    amarena_kernel* k = nullptr;
    const amarena_status st = amarena_kernel_get(nullptr, spec.c_str(), &k);
    ++got[st];
    if (i < shown)
      std::printf("%d '%s': %s\n", st, spec.c_str(), amarena_last_error());
    if (st == AMARENA_INTERNAL)
      std::printf("internal error for '%s': %s\n", spec.c_str(),
                  amarena_last_error());
    // `amarena run` checks against the double-precision reference, so only
    // strings refused or run here go there too (not huge valid matmuls).
    bool small = true;
    if (st == AMARENA_OK) {
      const amarena_status r =
          RunOnZeros(k, static_cast<size_t>(max_mib) << 20, small);
      ++ran[r];
      if (r != AMARENA_OK)
        std::printf("run failed for '%s': %s\n", spec.c_str(),
                    amarena_last_error());
      amarena_kernel_release(k);
    }
    if (!amarena.empty() && cli_every > 0 && i % cli_every == 0 && small) {
      const int rc = RunCli(amarena, spec);
      ++cli[rc];
      if (rc >= 128)
        std::printf("amarena run '%s' ended by signal %d\n", spec.c_str(),
                    rc - 128);
    }
  }
  auto print = [](const char* what, const std::map<int, int64_t>& m) {
    std::printf("%s:", what);
    for (const auto& [code, n] : m)
      std::printf(" %d:%lld", code, static_cast<long long>(n));
    std::printf("\n");
  };
  std::printf("spec_fuzz: %lld strings, seed %lld\n",
              static_cast<long long>(count), static_cast<long long>(seed));
  print("amarena_kernel_get statuses", got);
  print("amarena_kernel_run statuses", ran);
  print("amarena run exit codes", cli);
  int64_t signals = 0;
  for (const auto& [rc, n] : cli) signals += rc >= 128 ? n : 0;
  const int64_t internal = got[AMARENA_INTERNAL];
  int64_t run_failed = 0;
  for (const auto& [code, n] : ran) run_failed += code != AMARENA_OK ? n : 0;
  // Runs on operands of the right size never fail; internal errors are bugs.
  const bool pass = signals == 0 && internal == 0 && run_failed == 0;
  std::printf("%s\n", pass ? "spec_fuzz: passed" : "spec_fuzz: FAILED");
  return pass ? 0 : 1;
}
