// libFuzzer target: an executable file from a stranger. Loads it (header, FlatBuffers
// verifier, constants, bytecode verifier, kernel binding, native code), then runs every
// function whose arguments it can make (zeros; symbolic dims 2) within kArgumentBytes,
// under one step, time and memory budget for them all. Whatever the bytes, the result
// is a value or a status, never a crash, a hang or a read outside a buffer.
//
// Executables with native code are loaded (the ELF loader must refuse bad objects) but
// not run: native code is trusted as a shared library is (vm/executable.h), so running
// mutated machine code would only test the CPU.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"
#include "serializer/executable_file.h"
#include "vm/virtual_machine.h"

namespace dynvm {
namespace {

// Symbolic and unknown dims take this extent; static ones are as declared.
constexpr int64_t kDimExtent = 2;
// The most argument bytes a function is run with, and the memory, time and steps one
// input's runs may take in all: small, so that every input is quick.
constexpr int64_t kArgumentBytes = int64_t{1} << 20;
constexpr int64_t kMemoryBytes = int64_t{4} << 20;
constexpr absl::Duration kTime = absl::Seconds(1);
constexpr int64_t kSteps = 4096;

// A value of `spec` (zeros, ones) taking at most `budget` more tensor bytes, or none.
std::optional<Value> MakeArgument(const vm::ValueSpec& spec,
                                  const std::shared_ptr<Allocator>& allocator,
                                  int64_t& budget) {
  switch (spec.kind) {
    case vm::ValueSpec::Kind::kAny:
    case vm::ValueSpec::Kind::kInt: return Value::Int(1);
    case vm::ValueSpec::Kind::kFloat: return Value::Float(1.0);
    case vm::ValueSpec::Kind::kBool: return Value::Bool(true);
    case vm::ValueSpec::Kind::kTensor: {
      Shape shape;
      for (const vm::DimSpec& dim : spec.dims) {
        shape.push_back(dim.extent < 0 ? kDimExtent : dim.extent);
      }
      const int64_t element_bytes = static_cast<int64_t>(DTypeSize(spec.dtype));
      absl::StatusOr<int64_t> count = ShapeNumElements(shape);
      if (!count.ok() || *count > budget / element_bytes) return std::nullopt;
      budget -= *count * element_bytes;
      absl::StatusOr<NDArray> tensor = NDArrayObj::Empty(shape, spec.dtype, allocator);
      if (!tensor.ok()) return std::nullopt;
      std::fill_n(static_cast<char*>((*tensor)->data()), (*tensor)->nbytes(), 0);
      return Value(*std::move(tensor));
    }
    case vm::ValueSpec::Kind::kTuple: {
      std::vector<Value> fields;
      for (const vm::ValueSpec& field : spec.fields) {
        std::optional<Value> value = MakeArgument(field, allocator, budget);
        if (!value) return std::nullopt;
        fields.push_back(*std::move(value));
      }
      return Value(ADTObj::Tuple(fields));
    }
  }
  return std::nullopt;
}

void RunEveryFunction(std::shared_ptr<const vm::Executable> executable) {
  AllocatorOptions allocator_options;
  allocator_options.max_allocation_bytes = kMemoryBytes;
  auto allocator = MakePooledAllocator(allocator_options);
  vm::VmOptions options;
  options.max_call_depth = 64;
  options.max_steps = kSteps;
  options.allocator = allocator;
  vm::VirtualMachine machine(executable, options);
  vm::InvokeLimits limits;
  limits.deadline = absl::Now() + kTime;
  limits.max_memory_bytes = kMemoryBytes;
  const std::vector<vm::Function>& functions = executable->functions();
  for (uint32_t i = 0; i < functions.size(); ++i) {
    int64_t budget = kArgumentBytes;
    std::vector<Value> args;
    for (const vm::ValueSpec& param : functions[i].params) {
      std::optional<Value> arg = MakeArgument(param, allocator, budget);
      if (!arg) break;
      args.push_back(*std::move(arg));
    }
    if (args.size() != functions[i].params.size()) continue;
    // Any status will do; an error must leave the VM usable for the next function.
    (void)machine.Invoke(i, args, limits);
  }
}

}  // namespace
}  // namespace dynvm

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dynvm;
  // Trusted, so that the native-code loader (the ELF checks) is fuzzed too; what the
  // code would do is what trust means, so an executable with native code is not run.
  absl::StatusOr<std::shared_ptr<const vm::Executable>> executable = serializer::LoadExecutableFromMemory(
      {data, size}, kernels::DefaultRegistry(), vm::LoadOptions{.trust_native_code = true});
  if (!executable.ok()) return 0;
  if ((*executable)->spec().native.object.empty()) RunEveryFunction(*std::move(executable));
  return 0;
}
