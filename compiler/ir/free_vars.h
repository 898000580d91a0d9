// The free variables of an expression: those it uses but does not bind (by let, as a
// function parameter, or in a match pattern), in a fixed order (bottom-up, first use
// first). What a closure captures; what lambda lifting adds as parameters.
#ifndef DYNVM_COMPILER_IR_FREE_VARS_H_
#define DYNVM_COMPILER_IR_FREE_VARS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/expr.h"

namespace dynvm::compiler {

absl::StatusOr<std::vector<Expr>> FreeVars(const Expr& e);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_IR_FREE_VARS_H_
