// The project's one pair of status-propagation macros.
//
//   absl::StatusOr<int> ParseCount(std::string_view s);
//   absl::Status Use(std::string_view s) {
//     DYNVM_ASSIGN_OR_RETURN(int n, ParseCount(s));
//     DYNVM_RETURN_IF_ERROR(Check(n));
//     return absl::OkStatus();
//   }
#ifndef DYNVM_BASE_STATUS_MACROS_H_
#define DYNVM_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define DYNVM_STATUS_CONCAT_INNER_(a, b) a##b
#define DYNVM_STATUS_CONCAT_(a, b) DYNVM_STATUS_CONCAT_INNER_(a, b)

// Returns `expr` from the enclosing function when it is not OK.
#define DYNVM_RETURN_IF_ERROR(expr)                    \
  do {                                                 \
    ::absl::Status dynvm_status_ = (expr);             \
    if (!dynvm_status_.ok()) return dynvm_status_;     \
  } while (false)

// Evaluates `rexpr` (a StatusOr); returns its status on error, else moves the value
// into `lhs`, which may be a declaration (`auto x`) or an existing lvalue.
#define DYNVM_ASSIGN_OR_RETURN(lhs, rexpr) \
  DYNVM_ASSIGN_OR_RETURN_IMPL_(DYNVM_STATUS_CONCAT_(dynvm_statusor_, __LINE__), lhs, rexpr)

#define DYNVM_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // DYNVM_BASE_STATUS_MACROS_H_
