// What `amarena fidelity` keeps per tree, and how it prepares and times
// one: operand sets (warm or cold), a compile and one check against the
// reference, a round of batches with the CLI's one timer
// (bench/batch_timer.h), and the tree's JSON entry. The command itself,
// which collects the trees and reports the statistics, is
// fidelity_command.cc.
#ifndef AMARENA_TOOLS_FIDELITY_TIMING_H_
#define AMARENA_TOOLS_FIDELITY_TIMING_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/batch_timer.h"
#include "core/impl.h"
#include "core/reference.h"
#include "core/target.h"
#include "jit/compile.h"
#include "runtime/operand_check.h"

namespace amarena::tools {

struct Measured {
  ImplPtr tree;
  std::string schedule, origin;
  // status: "ok" (timed), "skipped" (did not compile), "wrong" (a wrong
  // result: never timed).
  std::string status, message;
  std::unique_ptr<CompiledKernel> kernel;  // while it is timed
  // The median of each round's median (the rounds interleave the trees, so
  // the load of a shared machine drifting over the run is spread over all of
  // them), the fastest batch of all, and the batches timed in all.
  std::vector<double> rounds;
  bench::BatchTiming time;
  // The confirmation rounds (a head-to-head of the pick, the fastest trees
  // of the rounds above and the other tables' picks, on fresh timings), and
  // their median; 0 for a tree not in them.
  std::vector<double> confirm;
  double confirm_ns = 0;
};

// Operand sets for the timed calls. Warm: one set, so a call finds what the
// previous left in cache. Cold: enough sets to span twice the last-level
// cache (at most 1 GiB in all), called in turn, so each call's operands have
// left the caches since their last use.
std::vector<std::unique_ptr<Operands>> MakeOperandSets(const Spec& s, bool cold,
                                                       uint64_t seed);

// Compiles the tree and checks it once against the reference (computed once
// for all the trees); m.status says how that went.
void Prepare(const Spec& spec, const Target& target, Operands& ops,
             const std::vector<uint8_t>& before, const ExpectedOutput& expected,
             Measured& m);

// One round of timing for a prepared tree: the per-call median and minimum
// of its batches go into m.rounds and m.time.min_ns, or with `confirming`
// the median into m.confirm.
void TimeRound(std::vector<std::unique_ptr<Operands>>& sets,
               const bench::BatchTimerOptions& topt, Measured& m,
               bool confirming = false);

// `rounds` rounds of TimeRound over every prepared tree, all[0] (the pick)
// first in the first round, the others in an order shuffled by `rng` each
// round after; a tree whose first round took more than `slow` times the
// pick's (slow > 0) keeps that round only. Sets each timed tree's
// time.median_ns to the median of its rounds.
void TimeAllRounds(std::vector<std::unique_ptr<Operands>>& sets,
                   const bench::BatchTimerOptions& topt,
                   std::vector<Measured>& all, int rounds, double slow,
                   std::mt19937_64& rng);

// The head-to-head the regret comes from: the fastest of many noisy medians
// is the luckiest as much as the fastest (on a shared host, 50 trees of
// equal speed would give a "fastest" a few per cent ahead of the rest), so
// the pick (all[0]), the `contenders` fastest other trees and the trees at
// `also` are timed afresh for `rounds` rounds (confirming), in an order
// shuffled each round; each one's confirm_ns is the median of those.
// Returns their indices in increasing order; none when the pick was not
// timed or rounds is 0.
std::vector<size_t> HeadToHead(std::vector<std::unique_ptr<Operands>>& sets,
                               const bench::BatchTimerOptions& topt,
                               std::vector<Measured>& all, int contenders,
                               const std::vector<size_t>& also, int rounds,
                               std::mt19937_64& rng);

// The tree's entry in the JSON report.
std::string TreeJson(const Measured& m, double flops);

}  // namespace amarena::tools

#endif  // AMARENA_TOOLS_FIDELITY_TIMING_H_
