// Lambda lifting and closure conversion: every function literal becomes a global
// function, so that the passes after it (fusion, memory planning, register allocation,
// tail calls) see only ordinary functions, and code generation never meets a literal.
//
//   def @main(%x: Tensor[(n), float32]) {
//     let %f = fn (%y: Tensor[(n), float32]) { add(%y, %x) };
//     let %g = fn (%z: Tensor[(n), float32]) { exp(%z) };
//     %g(%f(%x))
//   }
// becomes
//   def @main.fn0(%x1: Tensor[(n), float32], Closure=1) -> fn (Tensor[(n), float32]) -> ... {
//     fn (%y: Tensor[(n), float32]) -> Tensor[(n), float32] { add(%y, %x1) }
//   }
//   def @main.fn1(%z: Tensor[(n), float32]) -> Tensor[(n), float32] { exp(%z) }
//   def @main(%x: Tensor[(n), float32]) {
//     let %f = @main.fn0(%x);
//     @main.fn1(%f(%x))
//   }
//
// - A literal that captures nothing (its free variables, if any, are literals lifted
//   that way) becomes the global itself, generic over the enclosing def's type
//   parameters and its own. In its place stands the global (a closure of nothing when
//   used as a value); a let-bound one is replaced by its global at every use, so its
//   calls, recursive ones included, are direct calls.
// - A literal with free variables becomes a global marked Closure=1 whose parameters
//   are the captured values and whose body is the literal over them: calling it makes
//   the closure (IsClosureCode in expr.h; code generation gives it the captured values then the
//   literal's parameters, and calls a closure it knows to be made of it directly). A
//   let-bound one that calls itself (`let %loop = fn (...) { ... %loop(...) }`) finds
//   itself inside as a new closure of the same code and values: no reference cycle, and
//   its calls of itself are direct calls, tail calls in tail position.
//
// Every parameter and result of a lifted function is annotated with its inferred type,
// so the module types again as it did. Lifted functions are named `<def>.fn<i>`.
// Requires: a typed module (type_infer.h). The result is typed again.
#ifndef DYNVM_COMPILER_PASSES_LAMBDA_LIFT_H_
#define DYNVM_COMPILER_PASSES_LAMBDA_LIFT_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

absl::StatusOr<Module> LiftLambdas(const Module& module);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_LAMBDA_LIFT_H_
