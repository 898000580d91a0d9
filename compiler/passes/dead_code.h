// Dead code elimination: `let %x = value; body` where %x is not used becomes `body`.
//
//   let %unused = exp(%x);           becomes      nn.relu(%x)
//   nn.relu(%x)
//
// Requires: nothing; keeps checked types. Every operator but the reference ones is
// pure, so an unused value is never needed; a call of a function is treated the same
// way (a function whose only effect would be not to terminate or to fail is not a
// program worth keeping that behaviour of, as in Relay) unless the code uses
// references (effects.h): then such calls, and ref_write, stay. Lets freed by
// removing others go too.
#ifndef DYNVM_COMPILER_PASSES_DEAD_CODE_H_
#define DYNVM_COMPILER_PASSES_DEAD_CODE_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

absl::StatusOr<Module> EliminateDeadCode(const Module& module);
absl::StatusOr<Expr> EliminateDeadCode(const Expr& expr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_DEAD_CODE_H_
