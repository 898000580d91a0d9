// Tests of tools/serve/served_model.h's binding: a request's inputs matched to the
// parameters by their served names (input_<i> for an unnamed one) through
// codec/argument_binder.h, with the binder's messages.
#include "tools/serve/served_model.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "serializer/executable_file.h"
#include "tools/asm/assembler.h"

namespace dynvm::tools::serve {
namespace {

using ::testing::HasSubstr;

// main(tensor f32[n], y: tensor f32[n]): its first parameter has no name.
ServedModel Model() {
  absl::StatusOr<vm::ExecutableSpec> spec = Assemble(R"(
.func @main(tensor f32[n], y: tensor f32[n]) -> (tensor f32[n]) regs 2
  ret %1
.end
)");
  EXPECT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::ReloadExecutable(*spec, kernels::DefaultRegistry());
  EXPECT_TRUE(exe.ok()) << exe.status();
  absl::StatusOr<ServedModel> model = ServedModel::Create("m", *exe, "main");
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

InferInput Input(std::string name, int64_t length) {
  return {std::move(name), *NDArrayObj::Empty({length}, DType::kF32, MakeNaiveAllocator())};
}

std::string Error(std::vector<InferInput> inputs) {
  absl::StatusOr<std::vector<Value>> args = Model().BindInputs(std::move(inputs));
  EXPECT_FALSE(args.ok());
  EXPECT_EQ(args.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(args.status().message());
}

TEST(ServedModelTest, InputsBindByTheirServedNamesInAnyOrder) {
  ServedModel model = Model();
  EXPECT_EQ(model.input_names(), (std::vector<std::string>{"input_0", "y"}));
  std::vector<InferInput> inputs;
  inputs.push_back(Input("y", 2));
  inputs.push_back(Input("input_0", 2));
  const NDArrayObj* y = inputs[0].tensor.get();
  absl::StatusOr<std::vector<Value>> args = model.BindInputs(std::move(inputs));
  ASSERT_TRUE(args.ok()) << args.status();
  ASSERT_EQ(args->size(), 2u);
  EXPECT_EQ((*args)[1].As<NDArrayObj>(), y);
}

TEST(ServedModelTest, BadInputsGetTheBindersMessages) {
  std::vector<InferInput> unknown;
  unknown.push_back(Input("x", 2));
  EXPECT_EQ(Error(std::move(unknown)), "unknown input name 'x': 'main' has parameters input_0, y");
  std::vector<InferInput> missing;
  missing.push_back(Input("input_0", 2));
  EXPECT_EQ(Error(std::move(missing)), "missing input for 'main': 'y' (argument 1, tensor f32[n])");
  std::vector<InferInput> twice;
  twice.push_back(Input("y", 2));
  twice.push_back(Input("y", 2));
  EXPECT_EQ(Error(std::move(twice)),
            "input 'y' (argument 1 of 'main') given twice (again by request input 1 ('y'))");
  std::vector<InferInput> mismatched;
  mismatched.push_back(Input("input_0", 2));
  mismatched.push_back(Input("y", 3));
  EXPECT_THAT(Error(std::move(mismatched)), HasSubstr("dim 0 is 3 but n = 2"));
}

}  // namespace
}  // namespace dynvm::tools::serve
