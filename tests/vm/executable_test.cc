// Tests of vm/executable.h: Create verifies then binds the kernel table (errors name the
// entry), the accessors, FunctionIndex, and ValueSpecToString.
#include "vm/executable.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/string_object.h"
#include "vm/bytecode.h"

namespace dynvm::vm {
namespace {

using ::testing::HasSubstr;

std::vector<uint32_t> RetZero() {
  std::vector<uint32_t> code;
  EXPECT_TRUE(EncodeInstruction(Instruction{Opcode::kLoadConsti, {0, 0}, {}}, &code).ok());
  EXPECT_TRUE(EncodeInstruction(Instruction{Opcode::kRet, {0}, {}}, &code).ok());
  return code;
}

Function Fn(std::string name, int num_params) {
  Function f;
  f.name = std::move(name);
  f.num_registers = static_cast<uint32_t>(num_params) + 1;
  f.params.resize(num_params);
  f.code = RetZero();
  return f;
}

ExecutableSpec Spec() {
  ExecutableSpec spec;
  spec.functions = {Fn("main", 2), Fn("helper", 1), Fn("other", 0)};
  spec.kernels = {KernelEntry{"add", {}, 2, 1}, KernelEntry{"minimum", {}, 2, 1}};
  spec.constants = {Value::Int(5), Value(MakeObject<StringObj>("msg"))};
  spec.producer = "test";
  return spec;
}

TEST(ExecutableTest, CreateBindsKernels) {
  absl::StatusOr<std::shared_ptr<const Executable>> exe =
      Executable::Create(Spec(), kernels::DefaultRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->kernel(0).name(), "add");
  EXPECT_EQ((*exe)->kernel(1).name(), "minimum");
  EXPECT_EQ((*exe)->kernel(1).num_inputs(), 2);
  EXPECT_EQ((*exe)->kernel(1).num_outputs(), 1);
  EXPECT_EQ((*exe)->functions().size(), 3u);
  EXPECT_EQ((*exe)->function(1).name, "helper");
  EXPECT_EQ((*exe)->constant(0).int_value(), 5);
  EXPECT_EQ((*exe)->constant(1).As<StringObj>()->value(), "msg");
  EXPECT_EQ((*exe)->spec().producer, "test");
}

TEST(ExecutableTest, FunctionIndex) {
  std::shared_ptr<const Executable> exe = *Executable::Create(Spec(), kernels::DefaultRegistry());
  EXPECT_EQ(exe->FunctionIndex("main"), 0u);
  EXPECT_EQ(exe->FunctionIndex("helper"), 1u);
  EXPECT_EQ(exe->FunctionIndex("other"), 2u);
  EXPECT_EQ(exe->FunctionIndex("missing"), std::nullopt);
  EXPECT_EQ(exe->FunctionIndex(""), std::nullopt);
  EXPECT_EQ(exe->FunctionIndex("Main"), std::nullopt);
}

TEST(ExecutableTest, UnknownKernelIsNotFoundNamingTheEntry) {
  ExecutableSpec spec = Spec();
  spec.kernels.push_back(KernelEntry{"conv2d", {}, 2, 1});
  absl::StatusOr<std::shared_ptr<const Executable>> exe =
      Executable::Create(std::move(spec), kernels::DefaultRegistry());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(exe.status().message(), HasSubstr("kernel table entry 2: no kernel named 'conv2d'"));
}

TEST(ExecutableTest, KernelArityAndAttributeErrorsAreInvalidArgument) {
  ExecutableSpec spec = Spec();
  spec.kernels[1].num_inputs = 3;
  absl::StatusOr<std::shared_ptr<const Executable>> exe =
      Executable::Create(std::move(spec), kernels::DefaultRegistry());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(exe.status().message(),
              HasSubstr("kernel table entry 1: kernel 'minimum' takes 2 inputs and 1 outputs, "
                        "not 3 and 1"));

  ExecutableSpec with_attrs = Spec();
  with_attrs.kernels[0].attrs["alpha"] = 1.0;
  exe = Executable::Create(std::move(with_attrs), kernels::DefaultRegistry());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(exe.status().message(),
              HasSubstr("kernel table entry 0: kernel 'add' takes no attributes, got 'alpha'"));
}

TEST(ExecutableTest, VerificationComesFirst) {
  ExecutableSpec spec = Spec();
  spec.functions[2].code.clear();
  spec.kernels.push_back(KernelEntry{"conv2d", {}, 2, 1});  // would be NotFound
  absl::StatusOr<std::shared_ptr<const Executable>> exe =
      Executable::Create(std::move(spec), kernels::DefaultRegistry());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(exe.status().message(), HasSubstr("function 'other': empty code"));
}

TEST(ExecutableTest, BindsAgainstTheGivenRegistry) {
  kernels::KernelRegistry registry;  // empty: add is unknown here
  absl::StatusOr<std::shared_ptr<const Executable>> exe = Executable::Create(Spec(), registry);
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(exe.status().message(), HasSubstr("kernel table entry 0: no kernel named 'add'"));
}

TEST(ExecutableTest, KeepsConstantsAlive) {
  String s = MakeObject<StringObj>("kept");
  ExecutableSpec spec = Spec();
  spec.constants.push_back(Value(s));
  std::shared_ptr<const Executable> exe =
      *Executable::Create(std::move(spec), kernels::DefaultRegistry());
  EXPECT_EQ(s->use_count(), 2);
  exe.reset();
  EXPECT_EQ(s->use_count(), 1);
}

TEST(ValueSpecToStringTest, AllKinds) {
  ValueSpec t;
  t.kind = ValueSpec::Kind::kTensor;
  t.dtype = DType::kF32;
  t.dims = {DimSpec::Symbol("n"), DimSpec::Constant(768), DimSpec::Any()};
  EXPECT_EQ(ValueSpecToString(t), "tensor f32[n, 768, ?]");
  t.dtype = DType::kBool;
  t.dims = {};
  EXPECT_EQ(ValueSpecToString(t), "tensor bool[]");
  ValueSpec v;
  EXPECT_EQ(ValueSpecToString(v), "any");
  v.kind = ValueSpec::Kind::kInt;
  EXPECT_EQ(ValueSpecToString(v), "int");
  v.kind = ValueSpec::Kind::kFloat;
  EXPECT_EQ(ValueSpecToString(v), "float");
  v.kind = ValueSpec::Kind::kBool;
  EXPECT_EQ(ValueSpecToString(v), "bool");
}

}  // namespace
}  // namespace dynvm::vm
