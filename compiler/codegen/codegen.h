// Bytecode generation: a typed module (compiler/passes/type_infer.h) becomes the
// ExecutableSpec of the runtime (vm/executable.h), which the serializer writes as
// exe.fbs.
//
//   DYNVM_ASSIGN_OR_RETURN(Module typed, LiftLambdas(*InferTypes(parsed)));
//   DYNVM_ASSIGN_OR_RETURN(vm::ExecutableSpec spec, GenerateBytecode(*ToANormalForm(typed)));
//
// Covered: global functions of tensors and tuples, lets, operator calls, calls of
// globals, tuples and projections, if, constants, closures (function literals were
// lifted to globals before, passes/lambda_lift.h: a call of a closure's code allocates
// the closure; a let-bound closure of known code is allocated only where used as a
// value, and calls of it call the code directly, a tail call in tail position), constructors
// (alloc_adt with the constructor's tag) and match (each clause's pattern tested with
// get_tag/get_field in order, a fatal error when none matches). Calls of globals in tail
// position are tail calls: a loop written as recursion runs in one frame.
//
// Operator outputs are allocated by the caller of the kernel (destination passing):
//   static shape     a storage of the exact size and a tensor of the static shape;
//   symbolic shape   shape lowering: the dims are computed with integer instructions
//                    from the symbols, each bound once per call from a parameter's
//                    extent (`dim`), each distinct expression computed once per path;
//   `?` in a dim     the kernel's shape function at run time (invoke_shape_fn).
// Then per function the bytecode passes: memory planning (memory_plan.h), dead code
// removal and register allocation with kills (register_alloc.h).
//
// A function's signature comes from its parameters' and result's types: a dim that is
// a constant or a lone symbol is checked by the VM at each call, any other is `?`.
#ifndef DYNVM_COMPILER_CODEGEN_CODEGEN_H_
#define DYNVM_COMPILER_CODEGEN_CODEGEN_H_

#include "absl/status/statusor.h"
#include "compiler/codegen/memory_plan.h"
#include "compiler/ir/module.h"
#include "vm/executable.h"

namespace dynvm::compiler {

struct CodegenOptions {
  bool plan_memory = true;         // memory_plan.h
  bool allocate_registers = true;  // register_alloc.h, with dead code removal
};

// What the bytecode passes did, summed over the functions.
struct CodegenStats {
  MemoryPlanStats memory;
  int64_t registers_before = 0;  // a register per value
  int64_t registers_after = 0;   // frame sizes after register allocation
};

absl::StatusOr<vm::ExecutableSpec> GenerateBytecode(const Module& module,
                                                   const CodegenOptions& options = {},
                                                   CodegenStats* stats = nullptr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_CODEGEN_CODEGEN_H_
