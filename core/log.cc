#include "core/log.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace amarena {

void Logger::Log(LogLevel level, absl::string_view msg) const {
  if (!On(level)) return;
  const std::string text(msg);
  if (sink != nullptr) {
    sink(ctx, static_cast<int>(level), text.c_str());
    return;
  }
  // One write per line, so lines of threads logging at once do not mix.
  std::fprintf(stderr, "amarena: %s%s\n",
               level == LogLevel::kWarning ? "warning: " : "", text.c_str());
}

int VerbosityFromEnv() {
  const char* v = std::getenv("AMARENA_VERBOSE");
  return v != nullptr && *v != '\0' && absl::string_view(v) != "0" ? 2 : 1;
}

Logger DefaultLogger() { return Logger{.verbosity = VerbosityFromEnv()}; }

}  // namespace amarena
