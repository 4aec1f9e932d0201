// The `amarena` subcommands. Each returns the process exit status:
// 0 success, 1 a kernel did not match the reference, 2 bad input or an error.
#ifndef AMARENA_TOOLS_COMMANDS_H_
#define AMARENA_TOOLS_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace amarena::tools {

struct RunOptions {
  std::string spec;
  int64_t reps = 0;  // 0: as many as fit in about 0.3 s (at least 3)
  std::string schedule;  // non-empty: this tree, not the search's
  bool json = false;
};
int RunCommand(const RunOptions& opt);

int CpuCommand(bool json);

// Measures this host's prices; `save`: stores them in the search database.
int CalibrateCommand(bool json, bool save);

// `schedule` non-empty: replay those decisions instead of searching.
int ExplainCommand(const std::string& spec, const std::string& schedule,
                   bool asm_listing, bool json);

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

}  // namespace amarena::tools

#endif  // AMARENA_TOOLS_COMMANDS_H_
