// Type inference: the type of every expression of a module, with symbolic dims.
//
//   def @main(%x: Tensor[(n, 768), float32], %w: Tensor[(3072, 768), float32]) {
//     let %y = nn.dense(%x, %w);     // %y: Tensor[(n, 3072), float32]
//     nn.relu(%y)                    // the result: Tensor[(n, 3072), float32]
//   }
//
// Requires: nothing (runs on what the front ends produce). Every other pass runs after
// it and keeps types.
//
// What it does. First, operators and constructors used as values become function
// literals that call them (eta_expand.h). Operator calls take their type from the operator's relation
// (compiler/ops/op_registry.h); everything else by unification over type variables:
// unannotated parameters of fn literals and lets get fresh variables that their uses
// determine (a literal passed to a function is typed after the other arguments, its
// unannotated parameters taking the types the callee expects; a let-bound literal with
// unannotated parameters is typed at its first call, from the arguments), generic functions and constructors are instantiated afresh at each use,
// and the branches of an if or a match are joined (a dim on which they disagree
// becomes `?`). A def's symbolic dims are its own: at each call they are renamed and
// bound to the caller's extents by unification, so `@double(%x)` with `@double` over
// `Tensor[(n)]` and `%x: Tensor[(m + 1)]` has type `Tensor[(m + 1)]`; a symbol only
// the result mentions becomes `?`. A def's parameters need annotations; a def that is called before its
// body is inferred (recursion) needs a result type. Sharing is kept: a node used twice
// is typed once, and the result has the same sharing.
//
// Errors are InvalidArgument naming the function and what did not fit:
//   in @main: add: operands have dtypes float32 and int32, expected one dtype
#ifndef DYNVM_COMPILER_PASSES_TYPE_INFER_H_
#define DYNVM_COMPILER_PASSES_TYPE_INFER_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

// `module` with the checked type of every expression set.
absl::StatusOr<Module> InferTypes(const Module& module);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_TYPE_INFER_H_
