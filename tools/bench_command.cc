// amarena bench SPEC [--vs LIBS] [--threads N] [--json]: amarena's kernel for
// one `matmul MxKxN f32` Spec against peer libraries, on this machine. Each
// implementation is run once and checked against the reference before it is
// timed (a wrong one is reported, not timed, and makes the exit status 1);
// a library that is not installed or cannot do the configuration is listed
// as skipped with the reason. The ISA cap (AMARENA_MAX_ISA) applies to every
// library that can be capped. Peers are dlopened (bench/peers/peer.h), so
// this command works, reporting them unavailable, when they are not installed.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/batch_timer.h"
#include "bench/peers/check.h"
#include "bench/peers/peer.h"
#include "core/spec_text.h"
#include "jit/cpu_features.h"
#include "jit/peak.h"
#include "runtime/host.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace amarena::tools {
namespace {

using bench::IsaCap;

struct Outcome {
  std::string name, choice, detail, status;  // status: ok, skipped, error
  std::string message;
  double gflops = 0, median_ns = 0, min_ns = 0;
  int64_t reps = 0, calls_per_rep = 0;
};

// Median time per call, in batches of calls (bench/batch_timer.h) filling
// about 0.3 s.
void Time(bench::PreparedGemm& g, double flops, Outcome* out) {
  const bench::BatchTiming t = bench::TimeBatches([&] { g.Run(); });
  out->median_ns = t.median_ns;
  out->min_ns = t.min_ns;
  out->gflops = out->median_ns > 0 ? flops / out->median_ns : 0;
  out->reps = t.batches;
  out->calls_per_rep = t.batch;
}

Outcome Measure(bench::Peer& peer, IsaCap cap, const bench::Reference& ref,
                int threads) {
  Outcome o;
  o.name = peer.name();
  auto fail = [&](const absl::Status& s) {
    o.status = absl::IsUnimplemented(s) || absl::IsUnavailable(s) ? "skipped"
                                                                  : "error";
    o.message = std::string(s.message());
    return o;
  };
  if (absl::Status s = peer.Init(cap); !s.ok()) return fail(s);
  o.choice = peer.CpuChoice();
  absl::StatusOr<std::unique_ptr<bench::PreparedGemm>> g =
      peer.Prepare(ref.problem(), threads, ref.a(), ref.b(), ref.c());
  if (!g.ok()) return fail(g.status());
  o.detail = (*g)->Detail();
  if (absl::Status s = bench::VerifyOnce(**g, ref); !s.ok()) return fail(s);
  o.status = "ok";
  Time(**g, ref.problem().Flops(), &o);
  return o;
}

}  // namespace

int BenchCommand(const BenchOptions& opt) {
  auto bad = [](const std::string& msg) {
    std::fprintf(stderr, "amarena: %s\n", msg.c_str());
    return 2;
  };
  absl::StatusOr<Spec> spec = ParseSpec(opt.spec);
  if (!spec.ok()) return bad(std::string(spec.status().message()));
  if (PrintSpec(*spec) !=
      absl::StrCat("matmul ", spec->m, "x", spec->k, "x", spec->n, " f32"))
    return bad(absl::StrCat(
        "cannot bench ", opt.spec, ": the Spec is '", PrintSpec(*spec),
        "', must be a plain 'matmul MxKxN f32' (row-major, "
        "not accumulating), the problem every peer solves"));
  absl::StatusOr<std::optional<Isa>> max_isa = MaxIsaFromEnv();
  if (!max_isa.ok()) return bad(std::string(max_isa.status().message()));
  int threads = opt.threads;
  if (threads == 0) {
    absl::StatusOr<int> t = ThreadsFromEnv();
    if (!t.ok()) return bad(std::string(t.status().message()));
    threads = *t;
  }
  std::vector<std::string> names = {"amarena"};
  for (absl::string_view v : absl::StrSplit(opt.vs, ',', absl::SkipEmpty())) {
    if (v == "all") {
      for (const std::string& n : bench::PeerNames())
        if (n != "amarena") names.push_back(n);
      continue;
    }
    if (v == "amarena") continue;
    if (v == "onednn") {  // both of oneDNN's entry points
      names.push_back("onednn_sgemm");
      names.push_back("onednn_matmul");
      continue;
    }
    if (bench::MakePeer(v) == nullptr) {
      std::string known;
      for (const std::string& n : bench::PeerNames())
        if (n != "amarena")
          absl::StrAppend(&known, known.empty() ? "" : ",", n);
      return bad(absl::StrCat("--vs names '", v, "', must be a list of ", known,
                              " (onednn: both oneDNN rows; or all)"));
    }
    names.push_back(std::string(v));
  }

  const IsaCap cap = max_isa->value_or(Isa::kAvx512) == Isa::kAvx2
                         ? IsaCap::kAvx2
                         : IsaCap::kBest;
  const bool zmm = cap == IsaCap::kBest && DetectCpu().avx512f;
  // The peak is measured before and after the libraries and the better of the
  // two kept: on a busy machine one short measurement can be preempted and
  // come out low.
  PeakResult peak = MeasureFmaPeak(zmm ? 512 : 256, 0.3);
  const bench::Problem problem{spec->m, spec->k, spec->n};
  const bench::Reference ref(problem, /*seed=*/42);

  std::vector<Outcome> results;
  for (const std::string& n : names) {
    std::unique_ptr<bench::Peer> peer = bench::MakePeer(n);
    results.push_back(Measure(*peer, cap, ref, threads));
  }
  peak.gflops =
      std::max(peak.gflops, MeasureFmaPeak(zmm ? 512 : 256, 0.3).gflops);
  const double peak_all = peak.gflops * threads;
  double amarena = results[0].status == "ok" ? results[0].gflops : 0;

  std::printf("spec:     %s\n", PrintSpec(*spec).c_str());
  std::printf(
      "isa cap:  %s, %d thread%s; FMA peak %.1f GFLOP/s (%s, %d x "
      "one core's %.1f)\n",
      std::string(bench::Name(cap)).c_str(), threads, threads > 1 ? "s" : "",
      peak_all, zmm ? "zmm" : "ymm", threads, peak.gflops);
  std::printf("%-14s %10s %7s %11s  %s\n", "library", "GFLOP/s", "% peak",
              "vs amarena", "CPU choice / status");
  bool wrong = false;
  for (const Outcome& o : results) {
    if (o.status != "ok") {
      wrong |= o.status == "error";
      std::printf("%-14s %10s %7s %11s  %s: %s\n", o.name.c_str(), "-", "-",
                  "-", o.status.c_str(), o.message.c_str());
      continue;
    }
    std::printf("%-14s %10.2f %6.1f%% %10.2fx  %s%s%s\n", o.name.c_str(),
                o.gflops, peak_all > 0 ? 100 * o.gflops / peak_all : 0,
                amarena > 0 ? o.gflops / amarena : 0, o.choice.c_str(),
                o.detail.empty() ? "" : " | ", o.detail.c_str());
  }
  for (const Outcome& o : results)
    if (o.status == "ok" && o.gflops > peak_all) {
      std::printf(
          "note:     a rate above the measured peak means the peak probe "
          "(20 ms runs) was preempted: the machine is busy, rerun when "
          "quiet\n");
      break;
    }
  if (opt.json) {
    std::string arr = "[";
    for (const Outcome& o : results) {
      JsonLine j;
      j.Add("library", o.name);
      j.Add("status", o.status);
      if (o.status == "ok") {
        j.Add("gflops", o.gflops);
        j.Add("median_ns", o.median_ns);
        j.Add("min_ns", o.min_ns);
        j.Add("reps", o.reps);
        j.Add("calls_per_rep", o.calls_per_rep);
        j.Add("pct_peak", peak_all > 0 ? 100 * o.gflops / peak_all : 0.0);
        j.Add("cpu_choice", o.choice);
        j.Add("detail", o.detail);
      } else {
        j.Add("message", o.message);
      }
      absl::StrAppend(&arr, arr.size() > 1 ? "," : "", j.str());
    }
    arr += "]";
    JsonLine j;
    j.Add("spec", PrintSpec(*spec));
    j.Add("isa_cap", bench::Name(cap));
    j.Add("threads", static_cast<int64_t>(threads));
    j.Add("peak_gflops", peak_all);
    j.AddRaw("results", arr);
    std::printf("%s\n", j.str().c_str());
  }
  return wrong ? 1 : 0;
}

}  // namespace amarena::tools
