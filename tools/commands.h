// The `amarena` subcommands. Each returns the process exit status:
// 0 success, 1 a kernel did not match the reference, 2 bad input or an error.
#ifndef AMARENA_TOOLS_COMMANDS_H_
#define AMARENA_TOOLS_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace amarena::tools {

struct RunOptions {
  std::string spec;
  // Timed batches (bench/batch_timer.h); 0: as many as fit in about 0.3 s
  // (at least 5).
  int64_t reps = 0;
  std::string schedule;  // non-empty: this tree, not the search's
  bool json = false;
};
int RunCommand(const RunOptions& opt);

int CpuCommand(bool json);

// Measures this host's prices; `save`: stores them in the search database.
// Unless `fresh`, the table stored for this CPU (if any) is the standing one
// (CalibrationOptions::standing).
int CalibrateCommand(bool json, bool save, bool fresh);

struct ExplainOptions {
  // Non-empty: replay those decisions instead of searching.
  std::string schedule;
  bool asm_listing = false;  // print the machine code
  bool code_size = false;    // print the code's size
  bool json = false;
  // "avx2" or "avx512": that target on this host's caches, prices and
  // threads, whatever the CPU runs; empty: the host's.
  std::string isa;
};
int ExplainCommand(const std::string& spec, const ExplainOptions& options);

// action: stats, path, check or clear.
int DbCommand(const std::string& action, bool json);

int PrecomputeCommand(const std::vector<std::string>& specs, bool json);

struct BenchOptions {
  std::string spec;
  std::string vs;   // comma list of peers (bench/peers/peer.h), or "all"
  int threads = 0;  // 0: AMARENA_NUM_THREADS, else the CPUs we may run on
  bool json = false;
};
// Exit status 1 when any implementation, amarena or a peer, gave a wrong
// result.
int BenchCommand(const BenchOptions& opt);

struct FidelityOptions {
  std::string spec;
  int trees = 50;      // distinct trees to measure, at most
  int k = 10;          // of which the cheapest under the model
  int per_cost = 2;    // of those, at most this many per cost (0: any)
  int decisions = 20;  // the best trees per decision, at most ...
  int levels = 2;      // ... at the first this many levels of the best
  uint64_t seed = 1;   // random trees and operand values
  std::string json;    // non-empty: write the JSON report to this file
  bool cold = false;   // operands out of cache for each call
  bool warm = false;   // --warm: says the default out loud
  double ms = 200;     // timing budget per tree, in ms
  int rounds = 3;      // timing rounds over all the trees
  double slow = 8;     // trees this many times slower than the pick: 1 round
  // Rounds of the head-to-head that gives the regret: the pick, the
  // `contenders` fastest other trees of the rounds above, and the other
  // tables' picks, timed afresh (0: the regret of the rounds above).
  int confirm = 5;
  int contenders = 5;
  // Shipped price tables whose picks are timed beside the host's, each with
  // its regret ("all": every shipped table but the host's own).
  std::vector<std::string> against;
};
// Exit status 1 when any tree gave a wrong result.
int FidelityCommand(const FidelityOptions& opt);
// Registers `fidelity` and its flags on `app`, filling `opt` when parsed.
CLI::App* AddFidelityCommand(CLI::App& app, FidelityOptions* opt);

}  // namespace amarena::tools

#endif  // AMARENA_TOOLS_COMMANDS_H_
