// libFuzzer target: an executable file from a stranger. Loads it (header, FlatBuffers
// verifier, constants, bytecode verifier, kernel binding, native code), then runs every
// function whose signature it can fill, within a step, time and memory budget. Whatever
// the bytes, the result is a value or a status, never a crash, a hang or a read outside
// a buffer.
//
// Executables with native code are loaded (the ELF loader must refuse bad objects) but
// not run: native code is trusted as a shared library is (vm/executable.h), so running
// mutated machine code would only test the CPU.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "kernels/kernel.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "serializer/executable_file.h"
#include "vm/virtual_machine.h"

namespace dynvm {
namespace {

// Symbolic and unknown dims take this extent, static ones are capped at it: small
// tensors keep each run short.
constexpr int64_t kDimExtent = 2;
constexpr size_t kMaxBytes = size_t{64} << 20;

// A value of `spec` (zeros, ones), or none when the spec cannot be filled.
std::optional<Value> MakeArgument(const vm::ValueSpec& spec,
                                  const std::shared_ptr<Allocator>& allocator) {
  switch (spec.kind) {
    case vm::ValueSpec::Kind::kAny:
    case vm::ValueSpec::Kind::kInt: return Value::Int(1);
    case vm::ValueSpec::Kind::kFloat: return Value::Float(1.0);
    case vm::ValueSpec::Kind::kBool: return Value::Bool(true);
    case vm::ValueSpec::Kind::kTensor: {
      Shape shape;
      for (const vm::DimSpec& dim : spec.dims) {
        shape.push_back(dim.extent < 0 ? kDimExtent : std::min(dim.extent, kDimExtent));
      }
      absl::StatusOr<NDArray> tensor = NDArrayObj::Empty(shape, spec.dtype, allocator);
      if (!tensor.ok()) return std::nullopt;
      std::fill_n(static_cast<char*>((*tensor)->data()), (*tensor)->nbytes(), 0);
      return Value(*std::move(tensor));
    }
    case vm::ValueSpec::Kind::kTuple: {
      std::vector<Value> fields;
      for (const vm::ValueSpec& field : spec.fields) {
        std::optional<Value> value = MakeArgument(field, allocator);
        if (!value) return std::nullopt;
        fields.push_back(*std::move(value));
      }
      return Value(ADTObj::Tuple(fields));
    }
  }
  return std::nullopt;
}

void RunEveryFunction(std::shared_ptr<const vm::Executable> executable) {
  auto allocator = MakePooledAllocator({.max_allocation_bytes = kMaxBytes});
  vm::VirtualMachine machine(executable, {.max_call_depth = 64,
                                          .max_steps = 4096,
                                          .timeout = absl::Seconds(1),
                                          .max_memory_bytes = kMaxBytes,
                                          .allocator = allocator});
  const std::vector<vm::Function>& functions = executable->functions();
  for (uint32_t i = 0; i < functions.size(); ++i) {
    std::vector<Value> args;
    for (const vm::ValueSpec& param : functions[i].params) {
      std::optional<Value> arg = MakeArgument(param, allocator);
      if (!arg) break;
      args.push_back(*std::move(arg));
    }
    if (args.size() != functions[i].params.size()) continue;
    // Any status will do; an error must leave the VM usable for the next function.
    (void)machine.Invoke(i, args);
  }
}

}  // namespace
}  // namespace dynvm

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dynvm;
  absl::StatusOr<std::shared_ptr<const vm::Executable>> executable =
      serializer::LoadExecutableFromMemory({data, size}, kernels::DefaultRegistry());
  if (!executable.ok()) return 0;
  if ((*executable)->spec().native.object.empty()) RunEveryFunction(*std::move(executable));
  return 0;
}
