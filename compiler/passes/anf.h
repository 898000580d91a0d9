// A-normal form: every operator call, function call, tuple, projection, if, match and
// function literal that is an operand of another expression is bound by a let to a
// fresh variable, in evaluation order (a callee, then the arguments left to right,
// before the call), so that operands are atoms: variables, constants, globals,
// operators and constructors. The DAG's sharing becomes variables: a node used several
// times is bound once and its variable used wherever the node was.
//
//   %0 = exp(%x);                              let %v0 = exp(%x);
//   %1 = nn.dense(%0, %w);           ->        let %v1 = nn.dense(%v0, %w);
//   add(%1, %0)                                add(%v1, %v0)
//
// Requires: nothing; keeps checked types (a fresh variable is typed with its value's
// checked type, so a typed module stays ready for code generation). Idempotent, and an
// expression already in A-normal form is returned as the same node.
//
// What stays unbound: the value of a let (the let binds it) and the result of a block,
// a block being a function body, an if branch or a match clause (after its lets). Those
// are ANF's tail positions: a call of a global that returns a function's result stays a
// tail call (codegen's tail_invoke, a loop written as recursion in one frame), and an
// if or a match that ends a function still returns from each branch. Existing lets are
// kept, their values put in A-normal form; a let that is an operand is flattened into
// the enclosing block (variables are unique, so nothing is captured). The body of a
// function marked Primitive=1 (a fused group) is left whole.
//
// Where a binding goes: into the lowest block that encloses every use of the node
// (Relay's scope tree), before its first use in evaluation order. A value used only
// inside a branch is bound inside the branch, which may not run:
//
//   if (%c) {                                  if (%c) {
//     nn.relu(exp(%x))               ->          let %v0 = exp(%x);
//   } else {                                     nn.relu(%v0)
//     %x                                       } else {
//   }                                            %x
//                                              }
//
// A node used in both branches of an if, and nowhere else, is bound once before the if,
// as Relay does: every path through the if evaluates it there, so this moves no
// evaluation onto a path that had none, while binding it in each branch would compute
// it twice in the code. (Operators are pure; a use nested deeper in one branch, in an
// inner if, a clause or a closure, is evaluated before the if on every path, the same
// speculation Relay makes.)
#ifndef DYNVM_COMPILER_PASSES_ANF_H_
#define DYNVM_COMPILER_PASSES_ANF_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

// Each function of `module` in A-normal form; the ADTs are unchanged.
absl::StatusOr<Module> ToANormalForm(const Module& module);
// `expr` in A-normal form, with `expr` itself as the outermost block (a function is
// kept as the root and its body converted). Fresh variables are named %v0, %v1... in
// evaluation order (the printer makes the names unique).
absl::StatusOr<Expr> ToANormalForm(const Expr& expr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_ANF_H_
