// ExecutableSpec: the plain, mutable description of an executable — functions of
// bytecode, a kernel table, constants, native code, and the signatures of the
// functions' inputs and outputs. The assembler, the compiler and the serializer build
// and read it; the verifier (vm/verifier.h) checks it; Executable::Create
// (vm/executable.h) turns a verified one into the immutable, bound unit the VM runs.
//
//   ExecutableSpec spec;
//   spec.functions.push_back(Function{.name = "main", .num_registers = 2, ...});
//   absl::Status ok = VerifyExecutable(spec);
#ifndef DYNVM_VM_EXECUTABLE_SPEC_H_
#define DYNVM_VM_EXECUTABLE_SPEC_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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

// One function: its bytecode, frame size and signature.
// Where an instruction comes from in the model the compiler read: `source` indexes
// ExecutableSpec::sources. Run-time errors of the instruction at `pc` name it.
struct SourceEntry {
  uint32_t pc = 0;
  uint32_t source = 0;
  bool operator==(const SourceEntry&) const = default;
};

struct Function {
  std::string name;
  uint32_t num_registers = 0;     // the frame size; parameters are registers 0..n-1
  std::vector<ValueSpec> params;  // the parameters, in order
  std::vector<ValueSpec> results; // what Ret returns: one value (a tuple for several)
  std::vector<uint32_t> code;     // vm/bytecode.h
  // The instructions with a known source, by increasing pc (optional: a function
  // without it runs the same, its errors naming only the instruction).
  std::vector<SourceEntry> source_map = {};

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
// (compiler/llvm): one ELF64 x86-64 relocatable object, which vm/native/native_module.h loads
// without LLVM. Every kernel whose attributes hold one of `programs` runs its code
// (NativeElementwiseCode, kernels/kernel.h). Native code is trusted as a shared library is: it
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

// The whole executable, as the assembler, the compiler and the serializer build and
// read it, and as the verifier (vm/verifier.h) checks it.
struct ExecutableSpec {
  std::vector<Function> functions;
  std::vector<KernelEntry> kernels;
  NativeCode native;
  // Tensors (NDArray), strings (StringObj), ints, floats or bools, loaded by LoadConst.
  std::vector<Value> constants;
  std::string producer = "dynvm";  // who made it, for diagnostics
  // What the functions' source maps name: "ONNX node 'Gather_3' (Gather)".
  std::vector<std::string> sources;
  // Keeps memory alive that constants view (the mmap of the file they came from).
  ObjectRef<Object> backing;
};

// The source of the instruction at `pc` of `function`, if its source map has one.
const std::string* SourceAt(const ExecutableSpec& spec, const Function& function, uint32_t pc);

}  // namespace dynvm::vm

#endif  // DYNVM_VM_EXECUTABLE_SPEC_H_
