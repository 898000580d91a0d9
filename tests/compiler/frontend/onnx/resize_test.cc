// The Resize and GridSample converters on what the conformance cases leave out: a
// constant roi and sizes (the static image.resize2d, the roi its input), cubic with sizes
// and extents known only at run time, GridSample over symbolic extents, and the errors
// of import. Expected values are ONNX's reference's (resize.py, gridsample.py).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/passes/type_infer.h"
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

using ::dynvm::compiler::onnx_frontend::testing::AddIntAttr;
using ::dynvm::compiler::onnx_frontend::testing::AddIntsConstant;
using ::dynvm::compiler::onnx_frontend::testing::AddNode;
using ::dynvm::compiler::onnx_frontend::testing::AddValue;
using ::dynvm::compiler::onnx_frontend::testing::ExpectError;
using ::dynvm::compiler::onnx_frontend::testing::Import;
using ::dynvm::compiler::onnx_frontend::testing::ImportAndCompile;
using ::dynvm::compiler::onnx_frontend::testing::MainText;
using ::dynvm::compiler::onnx_frontend::testing::Model;
using ::testing::HasSubstr;
using ::testing::Not;

void AddStringAttr(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

void AddFloatAttr(onnx::NodeProto* node, const std::string& name, float value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

void AddFloatsConstant(onnx::GraphProto* g, const std::string& name, const std::vector<float>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

NDArray F32(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  absl::StatusOr<NDArray> t = NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator());
  EXPECT_TRUE(t.ok()) << t.status();
  std::copy(values.begin(), values.end(), (*t)->data_as<float>());
  return *t;
}

NDArray I64(const std::vector<int64_t>& values) {
  absl::StatusOr<NDArray> t =
      NDArrayObj::Empty({static_cast<int64_t>(values.size())}, DType::kI64, MakeNaiveAllocator());
  EXPECT_TRUE(t.ok()) << t.status();
  std::copy(values.begin(), values.end(), (*t)->data_as<int64_t>());
  return *t;
}

// Runs main on `inputs`: the result's shape, and its elements within 1e-5 of `want`.
void ExpectRun(vm::VirtualMachine& machine, const std::vector<Value>& inputs, const std::vector<int64_t>& shape,
               const std::vector<float>& want) {
  absl::StatusOr<Value> got = machine.Invoke("main", inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  const NDArrayObj& y = *got->As<NDArrayObj>();
  ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()), shape);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y.data_as<float>()[i], want[i], 1e-5) << "element " << i;
}

// ONNX's test_resize_tf_crop_and_resize with the roi and sizes constants: a static resize.
TEST(ResizeConvertersTest, CropAndResizeWithConstantRoi) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"1", "1", "4", "4"});
  AddFloatsConstant(g, "roi", {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f});
  AddIntsConstant(g, "sizes", {1, 1, 3, 3});
  onnx::NodeProto* node = AddNode(g, "Resize", {"x", "roi", "", "sizes"}, {"y"});
  AddStringAttr(node, "mode", "linear");
  AddStringAttr(node, "coordinate_transformation_mode", "tf_crop_and_resize");
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"1", "1", "3", "3"});
  absl::StatusOr<Module> module = Import(m);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT(MainText(*module), HasSubstr("image.resize2d("));
  EXPECT_THAT(MainText(*module), Not(HasSubstr("dyn.image.resize2d")));
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  ExpectRun(machine, {Value(F32({1, 1, 4, 4}, x))}, {1, 1, 3, 3},
            {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f});
}

// Cubic (ONNX's a = -0.75) to sizes given at run time, on data of run-time extents.
TEST(ResizeConvertersTest, CubicToRunTimeSizes) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "c", "h", "w"});
  AddValue(g->mutable_input(), "sizes", onnx::TensorProto::INT64, {"4"});
  AddStringAttr(AddNode(g, "Resize", {"x", "", "", "sizes"}, {"y"}), "mode", "cubic");
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n", "c", "", ""});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  const Value row(F32({1, 1, 1, 4}, {1, 2, 3, 4}));
  ExpectRun(machine, {row, Value(I64({1, 1, 1, 8}))}, {1, 1, 1, 8},
            {0.89453125f, 1.19140625f, 1.66796875f, 2.296875f, 2.703125f, 3.33203125f, 3.80859375f, 4.10546875f});
  ExpectRun(machine, {row, Value(I64({1, 1, 1, 4}))}, {1, 1, 1, 4}, {1, 2, 3, 4});
}

// GridSample over symbolic extents: the output type keeps them; ONNX's bilinear case.
TEST(ResizeConvertersTest, GridSampleOverSymbolicExtents) {
  onnx::ModelProto m = Model(16);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "c", "h", "w"});
  AddValue(g->mutable_input(), "grid", onnx::TensorProto::FLOAT, {"n", "ho", "wo", "2"});
  onnx::NodeProto* node = AddNode(g, "GridSample", {"x", "grid"}, {"y"});
  AddStringAttr(node, "padding_mode", "border");
  AddIntAttr(node, "align_corners", 1);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n", "c", "ho", "wo"});
  absl::StatusOr<Module> module = Import(m);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Module> typed = InferTypes(*module);
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::StatusOr<Expr> main = typed->Function("main");
  ASSERT_TRUE(main.ok() && main->body().checked_type()) << main.status();
  EXPECT_EQ(main->body().checked_type()->ToString(), "Tensor[(n, c, ho, wo), float32]");
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  const NDArray grid =
      F32({1, 2, 4, 2}, {-1, -1, -0.5f, -0.5f, -0.2f, -0.2f, 0, 0, 0, 0, -0.2f, -0.2f, 0.5f, 0.5f, 1, 1});
  ExpectRun(machine, {Value(F32({1, 1, 3, 2}, {0, 1, 2, 3, 4, 5})), Value(grid)}, {1, 1, 2, 4},
            {0, 1.25f, 2, 2.5f, 2.5f, 2, 3.75f, 5});
}

TEST(ResizeConvertersTest, ImportErrors) {
  const auto resize = [](int roi_type, const std::string& mode, const std::string& transform, bool exclude) {
    onnx::ModelProto m = Model(13);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"1", "1", "4", "4"});
    if (roi_type != 0) AddValue(g->mutable_input(), "roi", roi_type, {"8"});
    AddValue(g->mutable_input(), "sizes", onnx::TensorProto::INT64, {"4"});
    onnx::NodeProto* node = AddNode(g, "Resize", {"x", roi_type == 0 ? "" : "roi", "", "sizes"}, {"y"});
    AddStringAttr(node, "mode", mode);
    AddStringAttr(node, "coordinate_transformation_mode", transform);
    AddIntAttr(node, "exclude_outside", exclude);
    AddFloatAttr(node, "extrapolation_value", 1.5f);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"1", "1", "", ""});
    return m;
  };
  EXPECT_TRUE(Import(resize(onnx::TensorProto::FLOAT, "cubic", "tf_crop_and_resize", true)).ok());
  ExpectError(Import(resize(0, "linear", "tf_crop_and_resize", false)), absl::StatusCode::kInvalidArgument,
              "coordinate_transformation_mode 'tf_crop_and_resize' needs the roi (input 1)");
  ExpectError(Import(resize(onnx::TensorProto::DOUBLE, "linear", "tf_crop_and_resize", false)),
              absl::StatusCode::kUnimplemented, "a roi of dtype f64 (float32 is supported)");
  ExpectError(Import(resize(onnx::TensorProto::FLOAT, "nearest", "half_pixel", true)),
              absl::StatusCode::kUnimplemented, "exclude_outside = 1 with mode 'nearest'");

  onnx::ModelProto m = Model(16);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::DOUBLE, {"1", "1", "2", "2"});
  AddValue(g->mutable_input(), "grid", onnx::TensorProto::DOUBLE, {"1", "1", "1", "2"});
  AddNode(g, "GridSample", {"x", "grid"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::DOUBLE, {"1", "1", "1", "1"});
  ExpectError(Import(m), absl::StatusCode::kUnimplemented, "float32 is supported");
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
