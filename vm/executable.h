// Executable: the immutable, shareable unit the VM runs — functions of bytecode, a
// kernel table, constants, and the signatures of the functions' inputs and outputs.
//
// An `ExecutableSpec` (vm/executable_spec.h) is the plain, mutable description (what the
// assembler, compiler and serializer build and read). `Executable::Create` verifies a
// spec (vm/verifier.h), loads its native code (vm/native/native_code.h) when told to
// trust it, and binds its kernel table against a registry, once; the result is immutable
// and may be shared by any number of VirtualMachines on any number of threads.
//
// Trust. The verifier proves what the bytecode can do (docs/security.md); native code
// it cannot check, and it runs with the process's rights. So an executable's native
// code is loaded only with LoadOptions::trust_native_code; otherwise its fused programs
// run on the portable evaluator from the program text the bytecode keeps (the same
// results within float rounding: tests/compiler/llvm/native_codegen_test.cc), and
// native_code_ignored() says so, for a notice.
//
//   ExecutableSpec spec = ...;                     // from vm_as, the compiler, or a file
//   absl::StatusOr<std::shared_ptr<const Executable>> exe =
//       Executable::Create(std::move(spec), kernels::DefaultRegistry());
#ifndef DYNVM_VM_EXECUTABLE_H_
#define DYNVM_VM_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "kernels/kernel.h"
#include "objects/value.h"
#include "vm/executable_spec.h"  // IWYU pragma: export

namespace dynvm::vm {

struct LoadOptions {
  // Load and run the executable's native code (machine code the compiler made for its
  // fused programs). Only for executables from a source trusted as much as this process.
  bool trust_native_code = false;
};

class Executable {
 public:
  // Verifies `spec` and binds its kernels from `registry`. Fails with the first
  // problem found, naming the function and instruction (InvalidArgument) or the kernel
  // (NotFound / InvalidArgument).
  static absl::StatusOr<std::shared_ptr<const Executable>> Create(
      ExecutableSpec spec, const kernels::KernelRegistry& registry, const LoadOptions& options = {});

  // Whether the executable has native code that was not loaded (not trusted): its fused
  // programs run on the portable evaluator.
  bool native_code_ignored() const { return native_code_ignored_; }

  const ExecutableSpec& spec() const { return spec_; }
  const std::vector<Function>& functions() const { return spec_.functions; }
  const Function& function(uint32_t index) const { return spec_.functions[index]; }
  const kernels::BoundKernel& kernel(uint32_t index) const { return bound_kernels_[index]; }
  const Value& constant(uint32_t index) const { return spec_.constants[index]; }
  // The index of the function called `name`, if any.
  std::optional<uint32_t> FunctionIndex(std::string_view name) const;

 private:
  explicit Executable(ExecutableSpec spec) : spec_(std::move(spec)) {}

  ExecutableSpec spec_;
  bool native_code_ignored_ = false;
  std::vector<kernels::BoundKernel> bound_kernels_;
  absl::flat_hash_map<std::string, uint32_t> function_index_;
};

}  // namespace dynvm::vm

#endif  // DYNVM_VM_EXECUTABLE_H_
