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

namespace {

// The median of `v` (sorted in place).
double MedianOf(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

void TimeAllRounds(std::vector<std::unique_ptr<Operands>>& sets,
                   const bench::BatchTimerOptions& topt,
                   std::vector<Measured>& all, int rounds, double slow,
                   std::mt19937_64& rng) {
  const Measured& pick = all.front();
  // Far slower trees than the pick keep their first round only: their rank
  // is not in doubt, and at 1024^3 a few random trees that take seconds a
  // call took most of the run.
  auto too_slow = [&](const Measured& m) {
    return slow > 0 && &m != &pick && pick.status == "ok" &&
           !pick.rounds.empty() &&
           m.rounds.front() > slow * pick.rounds.front();
  };
  // In a fixed order the pick always followed the last random tree.
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      Measured& m = all[i];
      if (m.status == "ok" && (r == 0 || !too_slow(m)))
        TimeRound(sets, topt, m);
    }
  }
  for (Measured& m : all)
    if (m.status == "ok") m.time.median_ns = MedianOf(m.rounds);
}

std::vector<size_t> HeadToHead(std::vector<std::unique_ptr<Operands>>& sets,
                               const bench::BatchTimerOptions& topt,
                               std::vector<Measured>& all, int contenders,
                               const std::vector<size_t>& also, int rounds,
                               std::mt19937_64& rng) {
  std::vector<size_t> finalists;
  if (rounds <= 0 || all.front().status != "ok") return finalists;
  std::vector<size_t> by_time;
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].status == "ok") by_time.push_back(i);
  std::sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) {
    return all[a].time.median_ns < all[b].time.median_ns;
  });
  finalists.push_back(0);
  for (size_t i = 0; i < by_time.size() && static_cast<int>(i) < contenders;
       ++i)
    finalists.push_back(by_time[i]);
  for (size_t i : also)
    if (all[i].status == "ok" &&
        std::find(finalists.begin(), finalists.end(), i) == finalists.end())
      finalists.push_back(i);
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(finalists.begin(), finalists.end(), rng);
    for (size_t i : finalists) TimeRound(sets, topt, all[i], true);
  }
  std::sort(finalists.begin(), finalists.end());
  for (size_t i : finalists) all[i].confirm_ns = MedianOf(all[i].confirm);
  return finalists;
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
