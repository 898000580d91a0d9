// Bytecode generation: a typed module (compiler/passes/type_infer.h) becomes the
// ExecutableSpec of the runtime (vm/executable.h), which the serializer writes as
// exe.fbs.
//
//   DYNVM_ASSIGN_OR_RETURN(Module typed, InferTypes(parsed));
//   DYNVM_ASSIGN_OR_RETURN(vm::ExecutableSpec spec, GenerateBytecode(typed));
//
// This first generator covers global functions of tensors and tuples, lets, operator
// calls, calls of globals, tuples and projections, if, constants, and closures (a
// function literal becomes a function of its own, `<enclosing>$closure<i>`, taking the
// values it captures before its parameters; the literal allocates a closure of them),
// constructors (alloc_adt with the constructor's tag) and match (each clause's pattern
// tested with get_tag/get_field in order, a fatal error when none matches), with calls
// of globals in tail position as tail calls (a loop written as recursion runs in one
// frame). Each operator call allocates its outputs itself: with a static type, one
// storage of the exact size and a tensor of the static shape; otherwise the kernel's
// shape function at run time (InvokeShapeFn), the byte count from the shape, then the
// storage and the tensor. Every value gets its own register. Closures that call
// themselves are an Unimplemented error; memory planning, register reuse and
// shape lowering are passes still to come (docs/compiler.md).
//
// A function's signature comes from its parameters' and result's types: a dim that is
// a constant or a lone symbol is checked by the VM at each call, any other is `?`.
#ifndef DYNVM_COMPILER_CODEGEN_CODEGEN_H_
#define DYNVM_COMPILER_CODEGEN_CODEGEN_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"
#include "vm/executable.h"

namespace dynvm::compiler {

absl::StatusOr<vm::ExecutableSpec> GenerateBytecode(const Module& module);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_CODEGEN_CODEGEN_H_
