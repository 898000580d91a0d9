// The detection converters (NonMaxSuppression, RoiAlign) on what the conformance cases
// leave out: box counts known only at run time, omitted optional inputs, opset 10's
// RoiAlign (no coordinate_transformation_mode: output_half_pixel), errors when the model
// runs (a bad batch index) and when it is imported. Selections are exact, and so are the
// RoiAlign values here (quarters of small integers).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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
using ::dynvm::compiler::onnx_frontend::testing::AddNode;
using ::dynvm::compiler::onnx_frontend::testing::AddValue;
using ::dynvm::compiler::onnx_frontend::testing::ExpectError;
using ::dynvm::compiler::onnx_frontend::testing::Import;
using ::dynvm::compiler::onnx_frontend::testing::ImportAndCompile;
using ::dynvm::compiler::onnx_frontend::testing::Model;
using ::testing::HasSubstr;

template <typename T>
NDArray Tensor(const std::vector<int64_t>& shape, const std::vector<T>& values, DType dtype) {
  absl::StatusOr<NDArray> t = NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator());
  EXPECT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->num_elements(), static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), (*t)->data_as<T>());
  return *t;
}
NDArray F32(const std::vector<int64_t>& shape, const std::vector<float>& v) { return Tensor(shape, v, DType::kF32); }
NDArray I64(const std::vector<int64_t>& shape, const std::vector<int64_t>& v) { return Tensor(shape, v, DType::kI64); }

// Runs main on `inputs`; the result's shape and elements (as T).
template <typename T>
void ExpectRun(vm::VirtualMachine& machine, const std::vector<Value>& inputs, const std::vector<int64_t>& shape,
               const std::vector<T>& want) {
  absl::StatusOr<Value> got = machine.Invoke("main", inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  const NDArrayObj& y = *got->As<NDArrayObj>();
  ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()), shape);
  EXPECT_EQ(std::vector<T>(y.data_as<T>(), y.data_as<T>() + y.num_elements()), want);
}

// Three boxes per batch: two overlapping (IoU 0.82) and one apart.
NDArray Boxes(int64_t batches) {
  std::vector<float> v;
  for (int64_t b = 0; b < batches; ++b) v.insert(v.end(), {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11});
  return F32({batches, 3, 4}, v);
}

// NonMaxSuppression over boxes and classes counted at run time, scalars as inputs; the
// score threshold omitted (so negative scores compete).
TEST(DetectionConvertersTest, NonMaxSuppressionOverRunTimeExtents) {
  onnx::ModelProto m = Model(11);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "boxes", onnx::TensorProto::FLOAT, {"b", "n", "4"});
  AddValue(g->mutable_input(), "scores", onnx::TensorProto::FLOAT, {"b", "c", "n"});
  AddValue(g->mutable_input(), "max", onnx::TensorProto::INT64, {"1"});
  AddValue(g->mutable_input(), "iou", onnx::TensorProto::FLOAT, {"1"});
  AddNode(g, "NonMaxSuppression", {"boxes", "scores", "max", "iou"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::INT64, {"", "3"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  ExpectRun<int64_t>(machine, {Value(Boxes(1)), Value(F32({1, 2, 3}, {0.5f, 0.9f, 0.1f, -1, -2, -3})),
                               Value(I64({1}, {3})), Value(F32({1}, {0.5f}))},
                     {4, 3}, {0, 0, 1, 0, 0, 2, 0, 1, 0, 0, 1, 2});
  ExpectRun<int64_t>(machine, {Value(Boxes(2)), Value(F32({2, 1, 3}, {0.5f, 0.9f, 0.1f, 0.7f, 0.6f, 0.8f})),
                               Value(I64({1}, {1})), Value(F32({1}, {0.9f}))},
                     {2, 3}, {0, 0, 1, 1, 0, 2});
  ExpectRun<int64_t>(machine, {Value(F32({1, 0, 4}, {})), Value(F32({1, 2, 0}, {})), Value(I64({1}, {3})),
                               Value(F32({1}, {0.5f}))},
                     {0, 3}, {});
}

// Without iou_threshold (0: any overlap suppresses); without max_output_boxes_per_class
// nothing is selected.
TEST(DetectionConvertersTest, NonMaxSuppressionOmittedInputs) {
  for (const bool with_max : {true, false}) {
    onnx::ModelProto m = Model(10);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "boxes", onnx::TensorProto::FLOAT, {"1", "3", "4"});
    AddValue(g->mutable_input(), "scores", onnx::TensorProto::FLOAT, {"1", "1", "3"});
    if (with_max) AddValue(g->mutable_input(), "max", onnx::TensorProto::INT64, {"1"});
    AddNode(g, "NonMaxSuppression", {"boxes", "scores", with_max ? "max" : ""}, {"y"});
    AddValue(g->mutable_output(), "y", onnx::TensorProto::INT64, {"", "3"});
    const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
    ASSERT_NE(exe, nullptr);
    vm::VirtualMachine machine(exe);
    const Value boxes(Boxes(1)), scores(F32({1, 1, 3}, {0.5f, 0.9f, 0.1f}));
    const std::vector<Value> inputs =
        with_max ? std::vector<Value>{boxes, scores, Value(I64({1}, {5}))} : std::vector<Value>{boxes, scores};
    ExpectRun<int64_t>(machine, inputs, {with_max ? 2 : 0, 3},
                       with_max ? std::vector<int64_t>{0, 0, 1, 0, 0, 2} : std::vector<int64_t>{});
  }
}

// RoiAlign on a 2 x 2 image, one sample per bin: opset 10 samples the rois [0, 0, 1, 1]
// and [1, 0, 2, 1] at (y, x) = (0.5, 0.5) and (0.5, 1.5) (clamped to x = 1), opset 16's
// default half_pixel at (0, 0) and (0, 1); a bad batch index is an error when the model
// runs.
TEST(DetectionConvertersTest, RoiAlignOpsets) {
  for (const int64_t opset : {10, 16}) {
    onnx::ModelProto m = Model(opset);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"1", "1", "2", "2"});
    AddValue(g->mutable_input(), "rois", onnx::TensorProto::FLOAT, {"r", "4"});
    AddValue(g->mutable_input(), "batch", onnx::TensorProto::INT64, {"r"});
    AddIntAttr(AddNode(g, "RoiAlign", {"x", "rois", "batch"}, {"y"}), "sampling_ratio", 1);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"r", "1", "1", "1"});
    const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
    ASSERT_NE(exe, nullptr);
    vm::VirtualMachine machine(exe);
    const NDArray x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
    ExpectRun<float>(machine, {Value(x), Value(F32({2, 4}, {0, 0, 1, 1, 1, 0, 2, 1})), Value(I64({2}, {0, 0}))},
                     {2, 1, 1, 1}, opset == 10 ? std::vector<float>{2.5f, 3} : std::vector<float>{1, 2});
    absl::StatusOr<Value> bad = machine.Invoke("main", {Value(x), Value(F32({1, 4}, {0, 0, 1, 1})),
                                                        Value(I64({1}, {1}))});
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr("batch index 1 of roi 0 out of range [0, 1)"));
  }
}

TEST(DetectionConvertersTest, ImportErrors) {
  const auto roi_align = [](int elem_type, const std::string& mode) {
    onnx::ModelProto m = Model(16);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", elem_type, {"1", "1", "2", "2"});
    AddValue(g->mutable_input(), "rois", elem_type, {"1", "4"});
    AddValue(g->mutable_input(), "batch", onnx::TensorProto::INT64, {"1"});
    onnx::NodeProto* node = AddNode(g, "RoiAlign", {"x", "rois", "batch"}, {"y"});
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name("coordinate_transformation_mode");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(mode);
    AddValue(g->mutable_output(), "y", elem_type, {"1", "1", "1", "1"});
    return m;
  };
  ExpectError(Import(roi_align(onnx::TensorProto::FLOAT, "corner")), absl::StatusCode::kInvalidArgument,
              "coordinate_transformation_mode 'corner': expected half_pixel or output_half_pixel");
  ExpectError(Import(roi_align(onnx::TensorProto::DOUBLE, "half_pixel")), absl::StatusCode::kUnimplemented,
              "float32 only");
  onnx::ModelProto m = Model(11);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "boxes", onnx::TensorProto::FLOAT, {"1", "3", "4"});
  AddValue(g->mutable_input(), "scores", onnx::TensorProto::FLOAT, {"1", "1", "3"});
  AddIntAttr(AddNode(g, "NonMaxSuppression", {"boxes", "scores"}, {"y"}), "center_point_box", 2);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::INT64, {"", "3"});
  ExpectError(Import(m), absl::StatusCode::kInvalidArgument, "center_point_box must be 0 or 1, got 2");
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
