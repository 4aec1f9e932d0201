// amarena run SPEC: search, JIT, run on random inputs, check against the
// reference, time it, and print the chosen Impl tree.
#include <cstdio>
#include <vector>

#include "bench/batch_timer.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "runtime/runtime.h"
#include "search/replay.h"
#include "tools/commands.h"
#include "tools/json.h"

namespace amarena::tools {

int RunCommand(const RunOptions& opt) {
  absl::StatusOr<KernelPtr> k =
      opt.schedule.empty()
          ? Runtime::Default().Get(opt.spec)
          : Runtime::Default().GetScheduled(opt.spec, opt.schedule);
  if (!k.ok()) {
    std::fprintf(stderr, "amarena: %s\n",
                 std::string(k.status().message()).c_str());
    return 2;
  }
  const Kernel& kernel = **k;
  const Spec& spec = kernel.spec();

  Operands ops(spec);
  FillRandom(spec, ops, /*seed=*/42);
  std::vector<uint8_t> before = ops.Snapshot(spec.OutputIndex());
  if (absl::Status run = kernel.Run(ops.ptrs()); !run.ok()) {
    std::fprintf(stderr, "amarena: %s\n", std::string(run.message()).c_str());
    return 2;
  }
  Verdict v = CheckAgainstReference(spec, ops, before);

  // It ran once already: its scratch is allocated.
  bench::BatchTimerOptions topt;
  topt.warm_up = false;
  if (opt.reps > 0) topt.min_batches = topt.max_batches = opt.reps;
  const bench::BatchTiming t =
      bench::TimeBatches([&] { (void)kernel.Run(ops.ptrs()); }, topt);
  const double median_ns = t.median_ns;
  double flops = 2.0 * static_cast<double>(spec.Macs());
  double gflops = median_ns > 0 ? flops / median_ns : 0;

  std::printf("spec:     %s\n", PrintSpec(spec).c_str());
  std::printf("kernel:   %s (%s, %d thread%s, %zu bytes of code)\n",
              kernel.name().c_str(), std::string(Name(kernel.isa())).c_str(),
              kernel.threads(), kernel.threads() > 1 ? "s" : "",
              kernel.code_size());
  std::printf("impl:\n%s", PrintImpl(kernel.impl()).c_str());
  std::printf("schedule: %s\n", EncodeDecisions(kernel.impl()).c_str());
  if (kernel.source() == KernelSource::kSchedule) {
    std::printf("replay:   %.2f ms (the given schedule)\n", kernel.synth_ms());
  } else if (kernel.source() == KernelSource::kDatabase) {
    std::printf("search:   %.2f ms (from the search database)\n",
                kernel.synth_ms());
  } else {
    std::printf("search:   %.2f ms, %lld specs solved\n", kernel.synth_ms(),
                static_cast<long long>(kernel.specs_solved()));
  }
  std::printf("jit:      %.3f ms\n", kernel.jit_ms());
  std::printf("check:    %s (max relative error %.3g, tolerance %.3g)\n",
              v.ok ? "matches reference" : "MISMATCH", v.max_rel_err,
              v.tolerance);
  std::printf(
      "speed:    %.2f GFLOP/s (%.3f us a call: median of %lld batches of "
      "%lld calls; fastest batch %.3f us a call)\n",
      gflops, median_ns / 1000, static_cast<long long>(t.batches),
      static_cast<long long>(t.batch), t.min_ns / 1000);
  if (opt.json) {
    JsonLine j;
    j.Add("spec", PrintSpec(spec));
    j.Add("ok", v.ok);
    j.Add("max_rel_err", v.max_rel_err);
    j.Add("gflops", gflops);
    j.Add("median_ns", median_ns);
    j.Add("min_ns", t.min_ns);
    j.Add("reps", t.batches);
    j.Add("calls_per_rep", t.batch);
    j.Add("synth_ms", kernel.synth_ms());
    j.Add("jit_ms", kernel.jit_ms());
    j.Add("specs_solved", kernel.specs_solved());
    j.Add("source", Name(kernel.source()));
    j.Add("isa", Name(kernel.isa()));
    j.Add("threads", static_cast<int64_t>(kernel.threads()));
    j.Add("kernel", kernel.name());
    j.Add("schedule", EncodeDecisions(kernel.impl()));
    j.Add("cost", kernel.impl().cost.main);
    std::printf("%s\n", j.str().c_str());
  }
  return v.ok ? 0 : 1;
}

}  // namespace amarena::tools
