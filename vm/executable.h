// Executable: the immutable, shareable unit the VM runs — functions of bytecode, a
// kernel table, constants, and the signatures of the functions' inputs and outputs.
//
// An `ExecutableSpec` is the plain, mutable description (what the assembler, compiler
// and serializer build and read). `Executable::Create` verifies a spec (vm/verifier.h)
// and binds its kernel table against a registry, once; the result is immutable and may
// be shared by any number of VirtualMachines on any number of threads.
//
//   ExecutableSpec spec = ...;                     // from vm_as, the compiler, or a file
//   absl::StatusOr<std::shared_ptr<const Executable>> exe =
//       Executable::Create(std::move(spec), kernels::DefaultRegistry());
#ifndef DYNVM_VM_EXECUTABLE_H_
#define DYNVM_VM_EXECUTABLE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/kernel.h"
#include "objects/dtype.h"
#include "objects/object.h"
#include "objects/value.h"

namespace dynvm::vm {

// One dimension of a signature: a constant extent, a named symbol (every occurrence of
// the same name in one call must have the same extent), or `?` (anything).
struct DimSpec {
  int64_t extent = -1;   // >= 0 for a constant; -1 for a symbol or `?`
  std::string symbol;    // the symbol's name; empty with extent -1 means `?`

  static DimSpec Constant(int64_t n) { return {n, ""}; }
  static DimSpec Symbol(std::string name) { return {-1, std::move(name)}; }
  static DimSpec Any() { return {-1, ""}; }
  bool operator==(const DimSpec&) const = default;
};

// The type of one input or output of a function.
struct ValueSpec {
  // Append only: part of the file format.
  enum class Kind : uint8_t { kAny = 0, kTensor = 1, kInt = 2, kFloat = 3, kBool = 4, kTuple = 5 };

  std::string name;          // the value's name (ONNX graph input or output name, `%x`, ...)
  Kind kind = Kind::kAny;
  DType dtype = DType::kF32; // tensors only
  std::vector<DimSpec> dims; // tensors only; the rank is dims.size()
  std::vector<ValueSpec> fields;  // tuples only: one spec per field, in order

  bool operator==(const ValueSpec&) const = default;
};

// How deep specs nest: a signature's own specs are at depth 1 and a tuple's fields one
// deeper; no tuple sits at this depth, so fields never go beyond it.
inline constexpr int kMaxSpecDepth = 8;

// "tensor f32[n, 768, ?]", "int", "any", "tuple(tensor f32[n], int)": the text of a
// spec (without its name), for messages and tools.
std::string ValueSpecToString(const ValueSpec& spec);

struct Function {
  std::string name;
  uint32_t num_registers = 0;     // the frame size; parameters are registers 0..n-1
  std::vector<ValueSpec> params;  // the parameters, in order
  std::vector<ValueSpec> results; // what Ret returns: one value (a tuple for several)
  std::vector<uint32_t> code;     // vm/bytecode.h

  uint32_t num_params() const { return static_cast<uint32_t>(params.size()); }
  // The outputs: the leaves of `results` depth-first, as FlattenValue (objects/adt.h)
  // lists the values returned — a tuple's fields in order, recursively; anything else
  // is one leaf (a result of kind `any` too, though its value may flatten to several).
  // An ONNX model's graph outputs, by name.
  std::vector<const ValueSpec*> outputs() const;
  bool operator==(const Function&) const = default;
};

// One entry of the kernel table, named by InvokePacked.
struct KernelEntry {
  std::string name;       // registry name, e.g. "add"
  kernels::Attrs attrs;   // bound once at load
  uint32_t num_inputs = 0;
  uint32_t num_outputs = 0;

  bool operator==(const KernelEntry&) const = default;
};

// Machine code generated ahead of time for the executable's fused programs
// (compiler/llvm): one ELF64 x86-64 relocatable object, which vm/native_module.h loads
// without LLVM. Every kernel whose attributes hold one of `programs` runs its code
// (kernels/native_elementwise.h). Native code is trusted as a shared library is: it
// runs as it is, unverified.
struct NativeCode {
  std::string cpu;                    // the CPU it was generated for ("haswell"), for messages
  std::vector<std::string> features;  // CPU features it requires (kernels::KnownCpuFeatures)
  std::string object;                 // the object file; empty: no native code
  // Fused program text -> the name of its row functions in `object` (`name`_contiguous
  // and `name`_strided).
  std::map<std::string, std::string> programs;

  bool operator==(const NativeCode&) const = default;
};

// OK if a CPU for which `cpu_has` answers runs `code`: FailedPrecondition naming the
// features it lacks (the executable was compiled for another CPU: recompile with
// vm_compile --target-cpu), InvalidArgument for a feature name the runtime does not know.
absl::Status CheckNativeCodeRuns(const NativeCode& code,
                                 absl::FunctionRef<bool(std::string_view)> cpu_has);

struct ExecutableSpec {
  std::vector<Function> functions;
  std::vector<KernelEntry> kernels;
  NativeCode native;
  // Tensors (NDArray), strings (StringObj), ints, floats or bools, loaded by LoadConst.
  std::vector<Value> constants;
  std::string producer = "dynvm";  // who made it, for diagnostics
  // Keeps memory alive that constants view (the mmap of the file they came from).
  ObjectRef<Object> backing;
};

class Executable {
 public:
  // Verifies `spec` and binds its kernels from `registry`. Fails with the first
  // problem found, naming the function and instruction (InvalidArgument) or the kernel
  // (NotFound / InvalidArgument).
  static absl::StatusOr<std::shared_ptr<const Executable>> Create(
      ExecutableSpec spec, const kernels::KernelRegistry& registry);

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
  std::vector<kernels::BoundKernel> bound_kernels_;
  absl::flat_hash_map<std::string, uint32_t> function_index_;
};

}  // namespace dynvm::vm

#endif  // DYNVM_VM_EXECUTABLE_H_
