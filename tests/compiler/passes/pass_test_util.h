// Running a pass on text: parse an expression (free variables allowed), apply the
// pass, print the result, so that tests state their effect as before/after text.
#ifndef DYNVM_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_
#define DYNVM_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"

namespace dynvm::compiler::testing {

// The printed result of `pass` on the expression `before`, or the error of parsing or
// of the pass.
inline std::string RunPass(std::string_view before,
                           const std::function<absl::StatusOr<Expr>(const Expr&)>& pass,
                           std::vector<NDArray> constants = {}) {
  absl::StatusOr<ParsedExpr> parsed = ParseExpr(before, Module(), constants);
  if (!parsed.ok()) return std::string(parsed.status().message());
  absl::StatusOr<Expr> after = pass(parsed->expr);
  if (!after.ok()) return std::string(after.status().message());
  std::vector<NDArray> printed_constants;
  return PrintExpr(*after, printed_constants);
}

}  // namespace dynvm::compiler::testing

#endif  // DYNVM_TESTS_COMPILER_PASSES_PASS_TEST_UTIL_H_
