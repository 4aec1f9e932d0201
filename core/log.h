// Where amarena's messages go: one function every warning and info line of
// the library passes through, so an engine can take them (a callback) or
// silence them, and nothing else writes to stderr. (A failed CHECK, a bug of
// ours, still prints its one line to stderr before it aborts.)
//
//   Logger log = DefaultLogger();                 // stderr, AMARENA_VERBOSE
//   log.Log(LogLevel::kWarning, "search database ... is read-only");
//   Logger mine{.sink = MySink, .ctx = engine, .verbosity = 2};
//
// Levels are what the C API's log callback receives: 1 warning (something
// the user may want to fix; the library carries on), 2 info (a line per
// kernel created, a stored result that no longer replays). A message is
// passed on when its level is at most the logger's verbosity: 0 silences
// everything, 1 (the default) passes warnings.
#ifndef AMARENA_CORE_LOG_H_
#define AMARENA_CORE_LOG_H_

#include "absl/strings/string_view.h"

namespace amarena {

enum class LogLevel : int { kWarning = 1, kInfo = 2 };

struct Logger {
  // Receives each message passed on: no "amarena:" prefix, no newline.
  // Null: stderr, one line each ("amarena: warning: ..." or "amarena: ...").
  void (*sink)(void* ctx, int level, const char* msg) = nullptr;
  void* ctx = nullptr;
  int verbosity = 1;

  bool On(LogLevel level) const { return static_cast<int>(level) <= verbosity; }
  void Log(LogLevel level, absl::string_view msg) const;
};

// The verbosity AMARENA_VERBOSE asks for: 2 when set and not "0" (a line per
// kernel), else 1.
int VerbosityFromEnv();

// stderr at VerbosityFromEnv(): what a runtime without a log callback uses,
// and what process-wide messages (the JIT's AMARENA_JIT_PROFILE and
// AMARENA_JIT_DUMP, which belong to no runtime) go through.
Logger DefaultLogger();

}  // namespace amarena

#endif  // AMARENA_CORE_LOG_H_
