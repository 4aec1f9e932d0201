// Two small macros for propagating absl::Status (Debian's Abseil 20220623 ships
// no ASSIGN_OR_RETURN).
//
//   AMARENA_RETURN_IF_ERROR(Validate(spec));
//   AMARENA_ASSIGN_OR_RETURN(Spec s, ParseSpec(text));
#ifndef AMARENA_CORE_STATUS_MACROS_H_
#define AMARENA_CORE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define AMARENA_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status amarena_status_ = (expr);           \
    if (!amarena_status_.ok()) return amarena_status_; \
  } while (0)

#define AMARENA_CONCAT_INNER_(a, b) a##b
#define AMARENA_CONCAT_(a, b) AMARENA_CONCAT_INNER_(a, b)

#define AMARENA_ASSIGN_OR_RETURN(lhs, expr)                                    \
  AMARENA_ASSIGN_OR_RETURN_IMPL_(AMARENA_CONCAT_(amarena_sor_, __LINE__), lhs, \
                                 expr)

#define AMARENA_ASSIGN_OR_RETURN_IMPL_(sor, lhs, expr) \
  auto sor = (expr);                                   \
  if (!sor.ok()) return std::move(sor).status();       \
  lhs = std::move(sor).value()

// Internal invariants: a failed CHECK is our bug, never the caller's.
#define AMARENA_CHECK(cond)                                                   \
  do {                                                                        \
    if (!(cond)) ::amarena::internal::CheckFailed(__FILE__, __LINE__, #cond); \
  } while (0)

// For callers with no way to report a Status (a benchmark's timed loop):
// aborts with the status's message.
#define AMARENA_CHECK_OK(expr)                                      \
  do {                                                              \
    ::absl::Status amarena_check_ = (expr);                         \
    if (!amarena_check_.ok())                                       \
      ::amarena::internal::CheckOkFailed(__FILE__, __LINE__, #expr, \
                                         amarena_check_);           \
  } while (0)

namespace amarena::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond);
[[noreturn]] void CheckOkFailed(const char* file, int line, const char* expr,
                                const absl::Status& s);
}  // namespace amarena::internal

#endif  // AMARENA_CORE_STATUS_MACROS_H_
