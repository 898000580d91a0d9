// Common subexpression elimination: equal operator calls, tuples and projections of
// the same arguments become one node, used wherever they were.
//
//   %0 = nn.dense(%x, %w);               %0 = nn.dense(%x, %w);
//   %1 = nn.dense(%x, %w);      ->       add(%0, %0)
//   add(%0, %1)
//
// Requires: nothing; keeps checked types. Two calls are equal when their callee (the
// same operator, or the same function node), attributes and arguments (after CSE) are;
// constants are equal when they hold the same tensor. Reference operators are never
// merged, and no call of a function is when the code uses references (effects.h).
// A node is reused only inside the block it was first met in: one computed in a branch
// of an if is not reused by the other branch or after the if, which would move it out
// of its branch (to where it may fail on values that branch never sees).
#ifndef DYNVM_COMPILER_PASSES_CSE_H_
#define DYNVM_COMPILER_PASSES_CSE_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

absl::StatusOr<Module> EliminateCommonSubexpressions(const Module& module);
absl::StatusOr<Expr> EliminateCommonSubexpressions(const Expr& expr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_CSE_H_
