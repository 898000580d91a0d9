// The compiler's pipeline, shared by vm_compile and the tests: a parsed module
// through type inference and the optimisations to an ExecutableSpec.
//
//   CompileOptions options{.opt_level = 2};
//   options.after_pass = [](std::string_view pass, const Module& m) { ... };  // --dump-ir
//   DYNVM_ASSIGN_OR_RETURN(vm::ExecutableSpec spec, CompileModule(parsed, options));
//
// Passes, in order (docs/compiler.md): "typed" (type inference, always), "lifted"
// (function literals become global functions, always), "folded"
// (constant folding, opt_level >= 1), "simplified", "cse", "combined" (parallel dense
// layers), "packed_entry" (@main_packed, an encoder over packed sequences) and "dce"
// (>= 2), "fused" (operator fusion, >= 1 unless `fuse` is false),
// "anf" (A-normal form, always), then code generation, with memory planning and
// register allocation from opt_level 1. The result is verified before it is returned.
// With a `target_cpu`, the fused groups are then compiled to native code for it
// (compiler/llvm/native_codegen.h).
#ifndef DYNVM_COMPILER_DRIVER_COMPILE_H_
#define DYNVM_COMPILER_DRIVER_COMPILE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/module.h"
#include "compiler/llvm/native_codegen.h"
#include "compiler/passes/pack_tokens.h"
#include "vm/executable.h"

namespace dynvm::compiler {

struct CompileOptions {
  int opt_level = 2;  // 0..3
  bool fuse = true;   // vm_compile --no-fuse clears it
  // Called with the module after each pass runs (and with "parsed" before any).
  std::function<void(std::string_view pass, const Module& module)> after_pass;
  // If set, receives what the bytecode passes did.
  CodegenStats* codegen_stats = nullptr;
  // The CPU to generate native kernels for ("native", "x86-64-v3", ...: NativeTarget);
  // empty: none, every kernel is the library's. vm_compile's default is "native".
  std::string target_cpu;
  // If set (and native code is generated), receives what native codegen did.
  NativeCodegenStats* native_stats = nullptr;
  // If set (opt_level >= 2), receives whether @main_packed was derived, or why not
  // (compiler/passes/pack_tokens.h).
  PackedEntryOutcome* packed_entry = nullptr;
};

// The names of the passes CompileModule runs with `options`, in order.
std::vector<std::string_view> PassNames(const CompileOptions& options);

absl::StatusOr<vm::ExecutableSpec> CompileModule(const Module& module, const CompileOptions& options);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_DRIVER_COMPILE_H_
