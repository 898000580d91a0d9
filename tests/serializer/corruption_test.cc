// Robustness of loading: every truncation (at each 64th byte) and 1,000 single-bit
// flips of valid executables are loaded; what loads is run, function by function. No
// input may crash or trip a sanitizer, every rejection carries a message, and a run
// that fails does so with a status.
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/api.h"
#include "serializer/executable_file.h"
#include "tools/asm/assembler.h"
#include "vm/virtual_machine.h"

namespace dynvm::serializer {
namespace {

std::string ValidFile(const std::string& program) {
  const std::string path = std::string(DYNVM_VM_PROGRAMS) + "/" + program;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<vm::ExecutableSpec> spec = tools::Assemble(text.str());
  EXPECT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::string> bytes = SerializeExecutable(*spec);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

// An argument that fits `spec` (symbolic and unknown dims become 2).
Value ArgumentFor(const vm::ValueSpec& spec) {
  switch (spec.kind) {
    case vm::ValueSpec::Kind::kFloat: return Value::Float(1.5);
    case vm::ValueSpec::Kind::kBool: return Value::Bool(true);
    case vm::ValueSpec::Kind::kTensor: {
      std::vector<int64_t> shape;
      for (const vm::DimSpec& dim : spec.dims) {
        shape.push_back(dim.extent >= 0 && dim.extent <= 1024 ? dim.extent : 2);
      }
      absl::StatusOr<NDArray> t = NDArrayObj::Empty(shape, spec.dtype, MakeNaiveAllocator());
      if (!t.ok()) return Value::Int(3);
      std::fill_n(static_cast<char*>((*t)->data()), (*t)->nbytes(), 0);
      return Value(*t);
    }
    default: return Value::Int(3);
  }
}

// Loads `bytes`; if that works, runs every function once. Returns whether it loaded.
bool LoadAndRun(const std::string& bytes) {
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = LoadExecutableFromMemory(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, kernels::DefaultRegistry());
  if (!exe.ok()) {
    EXPECT_FALSE(exe.status().message().empty());
    return false;
  }
  vm::VmOptions options;
  options.max_call_depth = 1000;
  options.max_steps = 100'000;
  vm::VirtualMachine machine(*exe, options);
  for (const vm::Function& function : (*exe)->functions()) {
    std::vector<Value> args;
    for (const vm::ValueSpec& param : function.params) args.push_back(ArgumentFor(param));
    absl::StatusOr<Value> out = machine.Invoke(function.name, args);
    if (!out.ok()) {
      EXPECT_FALSE(out.status().message().empty());
    }
  }
  return true;
}

class CorruptionTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CorruptionTest, TruncationsAreRejected) {
  const std::string valid = ValidFile(GetParam());
  ASSERT_FALSE(valid.empty());
  ASSERT_TRUE(LoadAndRun(valid));
  for (size_t size = 0; size < valid.size(); size += 64) {
    EXPECT_FALSE(LoadAndRun(valid.substr(0, size))) << "truncated to " << size << " bytes";
  }
}

TEST_P(CorruptionTest, BitFlipsNeverCrash) {
  const std::string valid = ValidFile(GetParam());
  ASSERT_FALSE(valid.empty());
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<size_t> position(0, valid.size() * 8 - 1);
  int loaded = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string bytes = valid;
    const size_t bit = position(rng);
    bytes[bit / 8] = static_cast<char>(bytes[bit / 8] ^ (1 << (bit % 8)));
    loaded += LoadAndRun(bytes);
  }
  // Flips in padding and weights load; flips in the header and structure do not.
  EXPECT_GT(loaded, 0);
  EXPECT_LT(loaded, 1000);
}

INSTANTIATE_TEST_SUITE_P(Programs, CorruptionTest,
                         ::testing::Values("list.s", "dynamic_shape.s", "misc.s", "recursion.s"),
                         [](const auto& info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

}  // namespace
}  // namespace dynvm::serializer
