// Ahead-of-time native kernels: lowers the fused groups of an executable to machine
// code with LLVM and embeds the code in it (ExecutableSpec::native), so the runtime
// runs them without LLVM (vm/native/native_module.h loads the code).
//
//   DYNVM_ASSIGN_OR_RETURN(vm::ExecutableSpec spec, CompileModule(module, options));
//   DYNVM_ASSIGN_OR_RETURN(NativeCodegenStats stats,
//                          GenerateNativeKernels(spec, {.cpu = "x86-64-v3"}));
//
// Every fused program in the kernel table is compiled: the elementwise chains of
// `fused_elementwise` entries (renamed `native.fused_elementwise`, so that profiles and
// vm_dis show which run native code) and the `prologue` and `epilogue` programs of
// nn.softmax, nn.layer_norm and the reductions. Entries with the same program text
// share one kernel; ExecutableSpec::native maps each text to its functions
// (compiler/llvm/fused_kernel.h). The object is one ELF relocatable for x86-64,
// position independent; the features of the target CPU it may use are recorded, and
// the runtime refuses to load it on a CPU without them.
#ifndef DYNVM_COMPILER_LLVM_NATIVE_CODEGEN_H_
#define DYNVM_COMPILER_LLVM_NATIVE_CODEGEN_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vm/executable.h"

namespace dynvm::compiler {

// What to generate code for.
struct NativeTarget {
  // An LLVM CPU name: "native" (this machine), "x86-64", "x86-64-v2", "x86-64-v3",
  // "x86-64-v4", "skylake", "znver3", ...
  std::string cpu = "native";
};

// What GenerateNativeKernels did (vm_compile --stats prints it).
struct NativeCodegenStats {
  int entries = 0;  // kernel-table entries that now run native code
  int kernels = 0;  // distinct programs compiled
  size_t object_bytes = 0;
  std::string cpu;                    // the CPU name "native" resolved to
  std::vector<std::string> features;  // what the code requires of the CPU
  int vector_width = 0;               // f32 lanes per vector
};

// Generates native code for the fused groups of `spec` (see above). InvalidArgument
// for an unknown CPU name or a CPU that is not x86-64; `spec` is unchanged on error.
absl::StatusOr<NativeCodegenStats> GenerateNativeKernels(vm::ExecutableSpec& spec,
                                                         const NativeTarget& target);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_LLVM_NATIVE_CODEGEN_H_
