#include "tools/fidelity_timing.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "jit/cpu_features.h"
#include "runtime/host.h"
#include "tools/json.h"

namespace amarena::tools {

std::vector<std::unique_ptr<Operands>> MakeOperandSets(const Spec& s, bool cold,
                                                       uint64_t seed) {
  int64_t sets = 1;
  if (cold) {
    int64_t bytes = 0;
    for (int i = 0; i < s.NumOperands(); ++i) bytes += OperandBytes(s, i);
    const int64_t want = 2 * DetectCpu().l3_bytes;
    sets =
        std::clamp<int64_t>((want + bytes - 1) / std::max<int64_t>(bytes, 1), 2,
                            std::max<int64_t>(2, (int64_t{1} << 30) / bytes));
  }
  std::vector<std::unique_ptr<Operands>> out;
  for (int64_t i = 0; i < sets; ++i) {
    out.push_back(std::make_unique<Operands>(s));
    FillRandom(s, *out.back(), seed + static_cast<uint64_t>(i));
  }
  return out;
}

void Prepare(const Spec& spec, const Target& target, Operands& ops,
             const std::vector<uint8_t>& before, const ExpectedOutput& expected,
             Measured& m) {
  absl::StatusOr<std::unique_ptr<CompiledKernel>> k =
      Compile(*m.tree, target, KernelName(spec));
  if (!k.ok()) {
    m.status = "skipped";
    m.message = std::string(k.status().message());
    return;
  }
  // Every tree starts from the same output (accumulating Specs read it).
  const int out = spec.OutputIndex();
  std::memcpy(ops.ptr(out), before.data(), before.size());
  if (absl::Status run = (**k)(ops.ptrs()); !run.ok()) {
    m.status = "skipped";
    m.message = std::string(run.message());
    return;
  }
  Verdict v = expected.Check(ops);
  if (!v.ok) {
    m.status = "wrong";
    m.message = absl::StrCat("max relative error ", v.max_rel_err,
                             ", tolerance ", v.tolerance);
    return;
  }
  m.status = "ok";
  m.kernel = *std::move(k);
}

void TimeRound(std::vector<std::unique_ptr<Operands>>& sets,
               const bench::BatchTimerOptions& topt, Measured& m,
               bool confirming) {
  const CompiledKernel& kernel = *m.kernel;
  size_t next = 0;
  const bench::BatchTiming t = bench::TimeBatches(
      [&] {
        (void)kernel(sets[next]->ptrs());
        next = next + 1 == sets.size() ? 0 : next + 1;
      },
      topt);
  if (confirming) {
    m.confirm.push_back(t.median_ns);
    return;
  }
  m.rounds.push_back(t.median_ns);
  m.time.min_ns =
      m.rounds.size() == 1 ? t.min_ns : std::min(m.time.min_ns, t.min_ns);
  m.time.batch = t.batch;
  m.time.batches += t.batches;
}

std::string TreeJson(const Measured& m, double flops) {
  JsonLine j;
  j.Add("origin", m.origin);
  j.Add("status", m.status);
  j.Add("cost", m.tree->cost.main);
  if (m.status == "ok") {
    j.Add("median_ns", m.time.median_ns);
    j.Add("min_ns", m.time.min_ns);
    j.Add("gflops", m.time.median_ns > 0 ? flops / m.time.median_ns : 0.0);
    j.Add("rounds", static_cast<int64_t>(m.rounds.size()));
    j.Add("batch", m.time.batch);
    j.Add("batches", m.time.batches);
    if (!m.confirm.empty()) j.Add("confirm_median_ns", m.confirm_ns);
  } else {
    j.Add("message", m.message);
  }
  j.Add("schedule", m.schedule);
  return j.str();
}

}  // namespace amarena::tools
