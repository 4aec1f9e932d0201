// amarena fidelity SPEC: how well the cost model ranks trees on this
// machine. Collects distinct valid trees for one Spec (the search's best, the
// next cheapest under the model, the best tree per decision at the top of
// the best tree, and random ones: search/alternatives.h), compiles each,
// checks it once against the reference, times it on one thread
// (bench/batch_timer.h) in a few rounds over all the trees, and reports
// Spearman's rho between model cost and measured time and the regret of the
// model's pick (its time over the fastest measured tree's, minus one, both
// timed afresh in a head-to-head of the pick and the rounds' fastest).
// docs/fidelity.md says how to read them.
//
// A tree that fails to compile is skipped and counted; a tree that computes a
// wrong result is an error: reported on stderr with its decisions, never
// timed, and the exit status is 1.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "bench/batch_timer.h"
#include "core/price_table.h"
#include "core/reference.h"
#include "core/spec_text.h"
#include "jit/compile.h"
#include "jit/cpu_features.h"
#include "runtime/host.h"
#include "runtime/operand_check.h"
#include "runtime/prices.h"
#include "runtime/supported.h"
#include "search/alternatives.h"
#include "search/replay.h"
#include "search/search.h"
#include "tools/commands.h"
#include "tools/fidelity_against.h"
#include "tools/fidelity_timing.h"
#include "tools/json.h"
#include "tools/rank_correlation.h"

namespace amarena::tools {
namespace {

// Where the random trees explore: each tree takes the next of these chances
// of a random action per node, so the sample spans trees near the best and
// far from it.
constexpr double kExplore[] = {1.0, 0.5, 0.25, 0.1};

}  // namespace

CLI::App* AddFidelityCommand(CLI::App& app, FidelityOptions* opt) {
  CLI::App* fid_cmd = app.add_subcommand(
      "fidelity",
      "how well the cost model ranks trees here: time the search's best, the "
      "next cheapest, the best per decision and random trees (the rest, up "
      "to --trees) for one Spec on one thread; Spearman rho of cost against "
      "time, and the regret of the model's pick (docs/fidelity.md)");
  fid_cmd->add_option("spec", opt->spec, "the Spec")->required();
  fid_cmd->add_option("--trees", opt->trees, "distinct trees, at most (50)")
      ->check(CLI::Range(1, 100000));
  fid_cmd
      ->add_option("--k", opt->k,
                   "of which the cheapest under the model, the search's best "
                   "first (10)")
      ->check(CLI::Range(1, 100000));
  fid_cmd
      ->add_option("--per-cost", opt->per_cost,
                   "of those, at most this many of one model cost (2; 0: "
                   "any, the exact k cheapest)")
      ->check(CLI::Range(0, 100000));
  fid_cmd
      ->add_option("--decisions", opt->decisions,
                   "then at most this many of the best trees per decision "
                   "(another action at one node of the best tree), "
                   "cheapest first (20)")
      ->check(CLI::Range(0, 100000));
  fid_cmd
      ->add_option("--levels", opt->levels,
                   "the nodes whose decisions vary: the first this many "
                   "levels of the best tree (2)")
      ->check(CLI::Range(1, 1000));
  fid_cmd->add_option("--seed", opt->seed,
                      "random trees, inputs and the order of rounds (1)");
  fid_cmd->add_option("--json", opt->json, "write the report as JSON to FILE");
  fid_cmd->add_option("--ms", opt->ms, "timing budget per tree in ms (200)")
      ->check(CLI::Range(0.0, 1e6));
  fid_cmd
      ->add_option("--rounds", opt->rounds,
                   "timing rounds over all the trees, each tree's time the "
                   "median of its rounds (3)")
      ->check(CLI::Range(1, 1000));
  fid_cmd
      ->add_option("--slow", opt->slow,
                   "a tree whose first round is this many times the pick's "
                   "time is timed in that round only (8; 0: every round)")
      ->check(CLI::Range(0.0, 1e6));
  fid_cmd
      ->add_option("--confirm", opt->confirm,
                   "rounds of a head-to-head of the pick, the fastest "
                   "--contenders trees and the --against picks, timed "
                   "afresh, that the regret comes from (5; 0: the regret of "
                   "the rounds of all trees)")
      ->check(CLI::Range(0, 1000));
  fid_cmd
      ->add_option("--contenders", opt->contenders,
                   "the fastest trees besides the pick in the head-to-head "
                   "(5)")
      ->check(CLI::Range(1, 1000));
  CLI::Option* cold_flag = fid_cmd->add_flag(
      "--cold", opt->cold,
      "each call on operands out of cache (sets spanning twice the L3)");
  fid_cmd
      ->add_flag("--warm", opt->warm,
                 "operands stay in cache between calls (the default)")
      ->excludes(cold_flag);
  fid_cmd
      ->add_option("--against", opt->against,
                   "shipped price tables (labels, or all) whose picks are "
                   "timed beside this host's, each with its regret")
      ->delimiter(',');
  return fid_cmd;
}

int FidelityCommand(const FidelityOptions& opt) {
  auto bad = [](const std::string& msg) {
    std::fprintf(stderr, "amarena: %s\n", msg.c_str());
    return 2;
  };
  absl::StatusOr<Spec> parsed = ParseSpec(opt.spec);
  if (!parsed.ok()) return bad(std::string(parsed.status().message()));
  absl::StatusOr<Target> host = HostTarget();
  if (!host.ok()) return bad(std::string(host.status().message()));
  Target target = *host;
  target.workers = 1;  // one thread: no parallel loops to time
  if (absl::Status s = CheckSupported(*parsed, target); !s.ok())
    return bad(std::string(s.message()));
  const Spec root = target.Bind(*parsed);
  // Priced as the runtime prices this root; cold operands (new ones each
  // call) come from DRAM whatever their size.
  target = target.ForRoot(root);
  if (opt.cold) target.dram_operands = true;
  // The report's file is opened first, so a path that cannot be written
  // fails before minutes of timing.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> json_file(nullptr,
                                                            &std::fclose);
  if (!opt.json.empty()) {
    json_file.reset(std::fopen(opt.json.c_str(), "w"));
    if (json_file == nullptr)
      return bad(absl::StrCat("cannot write the report to ", opt.json, ": ",
                              std::strerror(errno)));
  }

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  Searcher searcher(target);
  absl::StatusOr<ImplPtr> best = searcher.Solve(root);
  if (!best.ok()) return bad(std::string(best.status().message()));

  // The trees: the k cheapest under the model (the search's best first),
  // the cheapest `decisions` of the best trees per decision in the first
  // `levels` levels of the best tree, then random ones until there are
  // `trees` or the attempts run out (a small Spec has few trees).
  std::vector<Measured> all;
  absl::flat_hash_set<std::string> seen;
  auto add = [&](ImplPtr tree, std::string origin) {
    std::string text = EncodeDecisions(*tree);
    if (!seen.insert(text).second) return;
    Measured m;
    m.tree = std::move(tree);
    m.schedule = std::move(text);
    m.origin = std::move(origin);
    all.push_back(std::move(m));
  };
  add(*best, "best");
  absl::StatusOr<ChosenPrices> chosen = HostPrices();
  if (!chosen.ok()) return bad(std::string(chosen.status().message()));
  absl::StatusOr<std::vector<const PriceTable*>> against =
      AgainstTables(opt.against, chosen->table.label);
  if (!against.ok()) return bad(std::string(against.status().message()));
  std::vector<OtherPick> others;
  for (const PriceTable* table : *against) {
    absl::StatusOr<ImplPtr> pick = PickUnder(*table, root, target);
    if (!pick.ok()) return bad(std::string(pick.status().message()));
    OtherPick o{.label = table->label, .tree = *pick};
    const std::string text = EncodeDecisions(**pick);
    add(*pick, absl::StrCat("pick ", table->label));
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].schedule == text) o.index = i;
    others.push_back(std::move(o));
  }
  const int k = std::min(opt.k, opt.trees);
  std::vector<ImplPtr> cheapest =
      KBestTrees(searcher, root, target, k, opt.per_cost);
  for (size_t i = 1; i < cheapest.size(); ++i)
    add(cheapest[i], absl::StrCat("k-best ", i + 1));
  const int64_t k_found = static_cast<int64_t>(all.size());
  const std::vector<ImplPtr> alts =
      DecisionAlternatives(searcher, root, target, opt.levels);
  for (size_t i = 0;
       i < alts.size() &&
       static_cast<int>(all.size()) < std::min(opt.trees, k + opt.decisions);
       ++i)
    add(alts[i], "decision");
  const int64_t decisions_found = static_cast<int64_t>(all.size()) - k_found;
  std::mt19937_64 rng(opt.seed);
  for (int attempt = 0;
       static_cast<int>(all.size()) < opt.trees && attempt < 50 * opt.trees;
       ++attempt) {
    const double explore = kExplore[attempt % std::size(kExplore)];
    ImplPtr tree = RandomTree(searcher, root, target, rng,
                              RandomTreeOptions{.explore = explore});
    if (tree != nullptr) add(tree, absl::StrCat("random ", explore));
  }

  const double collect_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const CpuFeatures cpu = DetectCpu();
  std::printf("spec:     %s\n", PrintSpec(*parsed).c_str());
  std::printf("host:     %s (%s, one thread, %s operands)\n", cpu.brand.c_str(),
              std::string(Name(target.isa)).c_str(),
              opt.cold ? "cold" : "warm");
  std::printf(
      "trees:    %zu (%lld cheapest under the model, %lld per decision, %lld "
      "random), found in %.0f ms\n",
      all.size(), static_cast<long long>(k_found),
      static_cast<long long>(decisions_found),
      static_cast<long long>(all.size()) - k_found - decisions_found,
      collect_ms);

  std::fflush(stdout);  // the header before minutes of timing
  std::vector<std::unique_ptr<Operands>> sets =
      MakeOperandSets(root, opt.cold, opt.seed);
  const std::vector<uint8_t> before = sets[0]->Snapshot(root.OutputIndex());
  bench::BatchTimerOptions topt;
  const double flops = 2.0 * static_cast<double>(root.Macs());
  std::printf("%4s %14s %12s %12s %9s  %-12s %s\n", "#", "model cost",
              "median us", "min us", "GFLOP/s", "origin", "status");
  int64_t skipped = 0, wrong = 0;
  const ExpectedOutput expected(root, *sets[0], before);
  for (Measured& m : all) {
    Prepare(root, target, *sets[0], before, expected, m);
    skipped += m.status == "skipped";
    wrong += m.status == "wrong";
    if (m.status == "wrong")
      std::fprintf(stderr,
                   "amarena: WRONG RESULT from a tree for %s (%s): %s\n"
                   "  schedule: %s\n",
                   PrintSpec(root).c_str(), m.origin.c_str(), m.message.c_str(),
                   m.schedule.c_str());
  }
  const int rounds = std::max(1, opt.rounds);
  topt.budget_ns = opt.ms * 1e6 / rounds;
  topt.min_batches = (5 + rounds - 1) / rounds;
  // The first round times the pick first (the slow-tree rule compares with
  // it); --seed orders the rest.
  std::mt19937_64 shuffle(opt.seed);
  TimeAllRounds(sets, topt, all, rounds, opt.slow, shuffle);
  std::vector<size_t> also;
  for (const OtherPick& o : others) also.push_back(o.index);
  const std::vector<size_t> finalists =
      HeadToHead(sets, topt, all, opt.contenders, also, opt.confirm, shuffle);
  for (size_t i = 0; i < all.size(); ++i) {
    Measured& m = all[i];
    m.kernel.reset();
    if (m.status == "ok") {
      std::printf("%4zu %14lld %12.3f %12.3f %9.2f  %-12s ok\n", i,
                  static_cast<long long>(m.tree->cost.main),
                  m.time.median_ns / 1000, m.time.min_ns / 1000,
                  m.time.median_ns > 0 ? flops / m.time.median_ns : 0,
                  m.origin.c_str());
    } else {
      std::printf("%4zu %14lld %12s %12s %9s  %-12s %s: %s\n", i,
                  static_cast<long long>(m.tree->cost.main), "-", "-", "-",
                  m.origin.c_str(), m.status.c_str(), m.message.c_str());
    }
  }
  if (!finalists.empty()) {
    std::printf("head-to-head, %d rounds:", opt.confirm);
    for (size_t i : finalists)
      std::printf(" tree %zu %.3f us;", i, all[i].confirm_ns / 1000);
    std::printf("\n");
  }

  // Statistics over the timed trees.
  std::vector<double> costs, times, mins;
  const Measured* fastest = nullptr;
  double fastest_min = 0;
  for (const Measured& m : all) {
    if (m.status != "ok") continue;
    costs.push_back(static_cast<double>(m.tree->cost.main));
    times.push_back(m.time.median_ns);
    mins.push_back(m.time.min_ns);
    if (fastest_min == 0 || m.time.min_ns < fastest_min)
      fastest_min = m.time.min_ns;
    if (fastest == nullptr || m.time.median_ns < fastest->time.median_ns)
      fastest = &m;
  }
  const std::optional<double> rho = SpearmanRho(costs, times);
  // The same over each tree's fastest batch: on a loaded machine, where
  // other processes take more than half of some trees' batches, the median
  // is disturbed and the minimum is the better estimate.
  const std::optional<double> rho_min = SpearmanRho(costs, mins);
  const Measured& pick = all[0];
  // The same over the trees the model prices within kNear of its pick: how
  // well it ranks the trees that compete with the best, which the far
  // random trees (orders of magnitude slower) do not test.
  constexpr double kNear = 2.0;
  std::vector<double> near_costs, near_times;
  for (size_t i = 0; i < costs.size(); ++i)
    if (costs[i] <= kNear * static_cast<double>(pick.tree->cost.main)) {
      near_costs.push_back(costs[i]);
      near_times.push_back(times[i]);
    }
  const std::optional<double> rho_near = SpearmanRho(near_costs, near_times);
  std::optional<double> regret_screen, regret_min;
  if (pick.status == "ok" && fastest != nullptr) {
    regret_screen = pick.time.median_ns / fastest->time.median_ns - 1;
    regret_min = pick.time.min_ns / fastest_min - 1;
  }
  // With a head-to-head, the fastest is its fastest, and every regret is
  // measured there; without, the rounds' (the screen's).
  const Measured* winner = finalists.empty() ? fastest : &all[finalists[0]];
  for (size_t i : finalists)
    if (all[i].confirm_ns < winner->confirm_ns) winner = &all[i];
  auto regret_of = [&](const Measured& m) -> std::optional<double> {
    if (m.status != "ok" || winner == nullptr) return std::nullopt;
    if (finalists.empty()) return m.time.median_ns / winner->time.median_ns - 1;
    if (m.confirm.empty()) return std::nullopt;
    return m.confirm_ns / winner->confirm_ns - 1;
  };
  const std::optional<double> regret = regret_of(pick);

  std::printf("timed:    %zu, skipped (did not compile): %lld, wrong: %lld\n",
              costs.size(), static_cast<long long>(skipped),
              static_cast<long long>(wrong));
  if (rho)
    std::printf("rho:      %.3f (Spearman, model cost against median time)\n",
                *rho);
  else
    std::printf("rho:      undefined (fewer than two timed trees, or ties)\n");
  if (rho_near)
    std::printf(
        "rho near: %.3f (over the %zu trees within %.0fx the pick's "
        "cost)\n",
        *rho_near, near_costs.size(), kNear);
  else
    std::printf(
        "rho near: undefined (over the %zu trees within %.0fx the "
        "pick's cost)\n",
        near_costs.size(), kNear);
  if (rho_min)
    std::printf(
        "rho min:  %.3f (the same, against each tree's fastest "
        "batch)\n",
        *rho_min);
  if (regret && !finalists.empty())
    std::printf(
        "regret:   %.1f %% (the model's pick, %.3f us, against the "
        "fastest in the head-to-head, %.3f us)\n",
        100 * *regret, pick.confirm_ns / 1000, winner->confirm_ns / 1000);
  else if (regret)
    std::printf(
        "regret:   %.1f %% (the model's pick, %.3f us, against the "
        "fastest, %.3f us)\n",
        100 * *regret, pick.time.median_ns / 1000,
        fastest->time.median_ns / 1000);
  if (regret_screen && !finalists.empty())
    std::printf(
        "regret screen: %.1f %% (the same over the rounds of all trees, "
        "against their fastest, %.3f us)\n",
        100 * *regret_screen, fastest->time.median_ns / 1000);
  if (regret_min)
    std::printf("regret min: %.1f %% (the same, by fastest batches)\n",
                100 * *regret_min);
  // Each other table's pick against the same fastest tree: what the host's
  // own prices gain over another CPU's, measured in one run.
  std::string against_json = "[";
  for (const OtherPick& o : others) {
    const Measured& m = all[o.index];
    std::optional<double> r = regret_of(m), r_min;
    if (m.status == "ok" && fastest != nullptr)
      r_min = m.time.min_ns / fastest_min - 1;
    if (r)
      std::printf(
          "regret with %s prices: %.1f %% (min %.1f %%), its pick is tree "
          "%zu%s\n",
          o.label.c_str(), 100 * *r, 100 * *r_min, o.index,
          o.index == 0 ? ", the same as this host's" : "");
    else
      std::printf("regret with %s prices: undefined (tree %zu: %s)\n",
                  o.label.c_str(), o.index, m.status.c_str());
    JsonLine j;
    j.Add("prices", o.label);
    j.Add("tree", static_cast<int64_t>(o.index));
    j.Add("cost", o.tree->cost.main);
    j.Add("regret", r.value_or(NAN));
    j.Add("regret_min", r_min.value_or(NAN));
    absl::StrAppend(&against_json, against_json.size() > 1 ? ",\n" : "\n",
                    j.str());
  }
  against_json += others.empty() ? "]" : "\n]";
  std::printf("pick:     %s\n", pick.schedule.c_str());
  if (winner != nullptr)
    std::printf("fastest:  %s (%s, model cost %lld)\n",
                winner->schedule.c_str(), winner->origin.c_str(),
                static_cast<long long>(winner->tree->cost.main));

  if (!opt.json.empty()) {
    std::string arr = "[";
    for (const Measured& m : all)
      absl::StrAppend(&arr, arr.size() > 1 ? ",\n" : "\n", TreeJson(m, flops));
    arr += "\n]";
    JsonLine j;
    j.Add("spec", PrintSpec(*parsed));
    j.Add("budget", PrintPeak(*root.budget));
    j.Add("cpu", cpu.brand);
    j.Add("isa", Name(target.isa));
    j.Add("mode", opt.cold ? "cold" : "warm");
    j.Add("seed", static_cast<int64_t>(opt.seed));
    j.Add("k_best", k_found);
    j.Add("decision", decisions_found);
    j.Add("timed", static_cast<int64_t>(costs.size()));
    j.Add("skipped", skipped);
    j.Add("wrong", wrong);
    // JsonLine writes a non-finite double as null: undefined statistics.
    j.Add("rho", rho.value_or(NAN));
    j.Add("rho_near", rho_near.value_or(NAN));
    j.Add("near", static_cast<int64_t>(near_costs.size()));
    j.Add("regret", regret.value_or(NAN));
    j.Add("regret_screen", regret_screen.value_or(NAN));
    j.Add("confirm_rounds",
          static_cast<int64_t>(finalists.empty() ? 0 : opt.confirm));
    j.Add("rho_min", rho_min.value_or(NAN));
    j.Add("regret_min", regret_min.value_or(NAN));
    j.Add("prices", chosen->table.label);
    j.AddRaw("against", against_json);
    j.Add("pick", pick.schedule);
    j.Add("fastest", winner != nullptr ? winner->schedule : "");
    j.AddRaw("trees", arr);
    const std::string text = j.str() + "\n";
    const bool written = std::fwrite(text.data(), 1, text.size(),
                                     json_file.get()) == text.size();
    if (std::fclose(json_file.release()) != 0 || !written)
      return bad(absl::StrCat("cannot write the report to ", opt.json));
  }
  return wrong > 0 ? 1 : 0;
}

}  // namespace amarena::tools
