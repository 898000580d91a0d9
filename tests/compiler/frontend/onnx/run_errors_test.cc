// Errors a compiled ONNX model meets at run time name the ONNX node they come from: bad
// values only the data shows (an index out of range, k above the axis, a negative
// repeat) fail with the instruction, the node and the kernel's message, through the
// executable file (ImportAndCompile reloads what it compiles from its bytes).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "compiler/driver/compile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "onnx/onnx_pb.h"
#include "tests/compiler/frontend/onnx/model_builder.h"
#include "vm/executable.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

using ::dynvm::compiler::onnx_frontend::testing::AddNode;
using ::dynvm::compiler::onnx_frontend::testing::AddValue;
using ::dynvm::compiler::onnx_frontend::testing::ImportAndCompile;
using ::dynvm::compiler::onnx_frontend::testing::Model;
using ::testing::AllOf;
using ::testing::HasSubstr;

NDArray Ints(const std::vector<int64_t>& values) {
  NDArray t = *NDArrayObj::Empty({static_cast<int64_t>(values.size())}, DType::kI64, MakeNaiveAllocator());
  for (size_t i = 0; i < values.size(); ++i) t->data_as<int64_t>()[i] = values[i];
  return t;
}

NDArray Floats(const std::vector<int64_t>& shape) {
  NDArray t = *NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator());
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<float>()[i] = static_cast<float>(i);
  return t;
}

// The message of running `m` on `inputs`; "ok" when it runs.
std::string RunError(const onnx::ModelProto& m, const std::vector<NDArray>& inputs) {
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  if (exe == nullptr) return "does not compile";
  vm::VirtualMachine machine(exe);
  std::vector<Value> args(inputs.begin(), inputs.end());
  absl::StatusOr<Value> got = machine.Invoke("main", args);
  return got.ok() ? "ok" : std::string(got.status().message());
}

// x [n, 4] -> Relu -> Gather(rows) -> y: the index arrives at run time.
onnx::ModelProto GatherModel(const std::string& gather_name) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "4"});
  AddValue(g->mutable_input(), "rows", onnx::TensorProto::INT64, {"k"});
  AddNode(g, "Relu", {"x"}, {"r"}, "activation");
  onnx::NodeProto* gather = AddNode(g, "Gather", {"r", "rows"}, {"y"});
  gather->set_name(gather_name);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"k", "4"});
  return m;
}

TEST(OnnxRunErrorsTest, AnIndexOutOfRangeNamesTheNode) {
  const onnx::ModelProto m = GatherModel("pick_rows");
  EXPECT_EQ(RunError(m, {Floats({3, 4}), Ints({2, 0})}), "ok");
  EXPECT_THAT(RunError(m, {Floats({3, 4}), Ints({1, 7})}),
              AllOf(HasSubstr("function 'main', instruction"), HasSubstr("of ONNX node 'pick_rows' (Gather)"),
                    HasSubstr("7")));
}

// A node without a name is named by its first output.
TEST(OnnxRunErrorsTest, AnUnnamedNodeIsNamedByItsOutput) {
  EXPECT_THAT(RunError(GatherModel(""), {Floats({3, 4}), Ints({-4})}), HasSubstr("of ONNX node (Gather) making 'y'"));
}

// TopK's k arrives at run time: above the axis's extent, the shape function refuses it.
TEST(OnnxRunErrorsTest, KAboveTheAxisNamesTheNode) {
  onnx::ModelProto m = Model(11);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n"});
  AddValue(g->mutable_input(), "k", onnx::TensorProto::INT64, {"1"});
  AddNode(g, "TopK", {"x", "k"}, {"values", "indices"}, "best");
  AddValue(g->mutable_output(), "values", onnx::TensorProto::FLOAT, {""});
  AddValue(g->mutable_output(), "indices", onnx::TensorProto::INT64, {""});
  EXPECT_EQ(RunError(m, {Floats({5}), Ints({5})}), "ok");
  EXPECT_THAT(RunError(m, {Floats({5}), Ints({6})}), HasSubstr("of ONNX node 'best' (TopK)"));
}

// Tile's repeats arrive at run time: a negative one is refused.
TEST(OnnxRunErrorsTest, ANegativeRepeatNamesTheNode) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2", "3"});
  AddValue(g->mutable_input(), "repeats", onnx::TensorProto::INT64, {"2"});
  AddNode(g, "Tile", {"x", "repeats"}, {"y"}, "tiles");
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"", ""});
  EXPECT_EQ(RunError(m, {Floats({2, 3}), Ints({2, 1})}), "ok");
  EXPECT_THAT(RunError(m, {Floats({2, 3}), Ints({1, -2})}), HasSubstr("of ONNX node 'tiles' (Tile)"));
}

// A call standing for several nodes (an elementwise chain fused into one kernel, a
// MatMul taking its bias Add) names them all.
TEST(OnnxRunErrorsTest, FusedCallsNameEveryNode) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "4"});
  AddValue(g->mutable_input(), "w", onnx::TensorProto::FLOAT, {"4", "4"});
  AddValue(g->mutable_input(), "b", onnx::TensorProto::FLOAT, {"4"});
  AddNode(g, "MatMul", {"x", "w"}, {"xw"}, "project");
  AddNode(g, "Add", {"xw", "b"}, {"h"}, "bias");
  AddNode(g, "Mul", {"h", "h"}, {"h2"}, "square");
  AddNode(g, "Tanh", {"h2"}, {"y"}, "squash");
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n", "4"});
  absl::StatusOr<Module> mod = testing::Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(*mod, CompileOptions{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::string all = absl::StrJoin(spec->sources, " | ");
  for (const char* node : {"'project' (MatMul)", "'bias' (Add)", "'square' (Mul)", "'squash' (Tanh)"}) {
    EXPECT_THAT(all, HasSubstr(node));
  }
  EXPECT_LT(spec->sources.size(), 4u) << all;  // fewer calls than nodes
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
