// The native code an executable carries (NativeCode, vm/executable_spec.h) made
// runnable: checked against this CPU's features, its ELF object loaded by NativeModule
// (vm/native/native_module.h), and each fused program's row functions found.
//
//   DYNVM_ASSIGN_OR_RETURN(NativePrograms programs, LoadNativeCode(spec.native));
//   const kernels::NativeElementwiseCode& rows = programs.at("t0 = exp(i0)");
#ifndef DYNVM_VM_NATIVE_NATIVE_CODE_H_
#define DYNVM_VM_NATIVE_NATIVE_CODE_H_

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/kernel.h"
#include "vm/executable_spec.h"

namespace dynvm::vm {

// Fused program text -> the row functions compiled for it.
using NativePrograms = absl::flat_hash_map<std::string, kernels::NativeElementwiseCode>;

// OK if a CPU for which `cpu_has` answers runs `code`: FailedPrecondition naming the
// features it lacks (the executable was compiled for another CPU: recompile with
// vm_compile --target-cpu), InvalidArgument for a feature name the runtime does not know.
absl::Status CheckNativeCodeRuns(const NativeCode& code,
                                 absl::FunctionRef<bool(std::string_view)> cpu_has);

// The row functions of every program of `code`, after checking that this CPU runs it
// (CheckNativeCodeRuns with the CPU's own features) and loading it; empty when there is
// no native code. InvalidArgument for a malformed object or a program without code. The
// functions keep the loaded code mapped (NativeElementwiseCode::owner).
absl::StatusOr<NativePrograms> LoadNativeCode(const NativeCode& code);

}  // namespace dynvm::vm

#endif  // DYNVM_VM_NATIVE_NATIVE_CODE_H_
