// The quantization converters (compiler/frontend/onnx/ops/quantize.cc) on what the
// conformance cases leave out: halves rounded to even and saturation at both ends,
// per-axis parameters along a negative axis, an inner dimension long enough to need
// several exact f32 runs, and rows known only at run time — all against integer
// references computed here, compared exactly; and the clear error of a bad dtype.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "onnx/onnx_pb.h"
#include "tests/compiler/frontend/onnx/model_builder.h"
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

template <typename T>
NDArray Tensor(const std::vector<int64_t>& shape, const std::vector<T>& values, DType dtype,
               const std::shared_ptr<Allocator>& allocator) {
  NDArray t = *NDArrayObj::Empty(shape, dtype, allocator);
  std::copy(values.begin(), values.end(), t->data_as<T>());
  return t;
}

// QuantizeLinear to int8 with a scale and zero point per slice of axis -2 of a
// [n, 3, 2] tensor (n at run time): x / scale lands on halves, which round to even,
// and beyond the int8 range, which saturates.
TEST(QuantizeConvertersTest, QuantizeLinearPerAxisRoundsHalvesToEvenAndSaturates) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "3", "2"});
  AddValue(g->mutable_input(), "scale", onnx::TensorProto::FLOAT, {"3"});
  AddValue(g->mutable_input(), "zp", onnx::TensorProto::INT8, {"3"});
  AddIntAttr(AddNode(g, "QuantizeLinear", {"x", "scale", "zp"}, {"y"}), "axis", -2);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::INT8, {"n", "3", "2"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const std::vector<float> scale = {0.5f, 2.0f, 1.0f};
  const std::vector<int8_t> zp = {0, -3, 100};
  for (const int64_t n : {1, 2}) {
    SCOPED_TRACE(n);
    std::vector<float> x;
    for (int64_t i = 0; i < n * 6; ++i) x.push_back((i % 2 == 0 ? 1.25f : -300.0f) + 0.5f * static_cast<float>(i));
    absl::StatusOr<Value> got =
        machine.Invoke("main", {Value(Tensor<float>({n, 3, 2}, x, DType::kF32, allocator)),
                                Value(Tensor<float>({3}, scale, DType::kF32, allocator)),
                                Value(Tensor<int8_t>({3}, zp, DType::kI8, allocator))});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    for (int64_t i = 0; i < n * 6; ++i) {
      const int64_t c = (i / 2) % 3;
      const double q = std::nearbyint(static_cast<double>(x[i]) / scale[c]) + zp[c];  // ties to even
      EXPECT_EQ(y.data_as<int8_t>()[i], static_cast<int8_t>(std::clamp(q, -128.0, 127.0))) << "element " << i;
    }
  }
}

// MatMulInteger over an inner dimension of 600 (three exact runs) with extreme uint8
// operands and zero points, rows known at run time, against an int64 reference.
TEST(QuantizeConvertersTest, MatMulIntegerIsExactOverLongInnerDimensions) {
  constexpr int64_t kInner = 600, kCols = 3;
  onnx::ModelProto m = Model(10);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "a", onnx::TensorProto::UINT8, {"rows", "600"});
  AddValue(g->mutable_input(), "b", onnx::TensorProto::UINT8, {"600", "3"});
  AddValue(g->mutable_input(), "a_zp", onnx::TensorProto::UINT8, {});
  AddValue(g->mutable_input(), "b_zp", onnx::TensorProto::UINT8, {"3"});
  AddNode(g, "MatMulInteger", {"a", "b", "a_zp", "b_zp"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::INT32, {"rows", "3"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(5);
  for (const int64_t rows : {1, 4}) {
    SCOPED_TRACE(rows);
    std::vector<uint8_t> a(rows * kInner), b(kInner * kCols);
    for (auto& v : a) v = rng() % 2 == 0 ? 255 : static_cast<uint8_t>(rng() % 256);
    for (auto& v : b) v = rng() % 2 == 0 ? 0 : static_cast<uint8_t>(rng() % 256);
    const std::vector<uint8_t> a_zp = {0}, b_zp = {255, 0, 17};
    absl::StatusOr<Value> got = machine.Invoke(
        "main", {Value(Tensor<uint8_t>({rows, kInner}, a, DType::kU8, allocator)),
                 Value(Tensor<uint8_t>({kInner, kCols}, b, DType::kU8, allocator)),
                 Value(Tensor<uint8_t>({}, a_zp, DType::kU8, allocator)),
                 Value(Tensor<uint8_t>({kCols}, b_zp, DType::kU8, allocator))});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    ASSERT_EQ(y.dtype(), DType::kI32);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < kCols; ++c) {
        int64_t want = 0;
        for (int64_t k = 0; k < kInner; ++k) {
          want += (int64_t{a[r * kInner + k]} - a_zp[0]) * (int64_t{b[k * kCols + c]} - b_zp[c]);
        }
        EXPECT_EQ(y.data_as<int32_t>()[r * kCols + c], want) << "row " << r << ", column " << c;
      }
    }
  }
}

// ConvInteger in 1-D over a length known at run time, with int8 operands, a per-tensor
// x zero point and a per-output-channel w zero point, padding 1 (x's zero point, so 0
// once shifted), against an int64 reference.
TEST(QuantizeConvertersTest, ConvIntegerPerChannelZeroPoints) {
  onnx::ModelProto m = Model(10);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::INT8, {"1", "2", "len"});
  AddValue(g->mutable_input(), "w", onnx::TensorProto::INT8, {"3", "2", "3"});
  AddValue(g->mutable_input(), "x_zp", onnx::TensorProto::INT8, {});
  AddValue(g->mutable_input(), "w_zp", onnx::TensorProto::INT8, {"3"});
  onnx::NodeProto* conv = AddNode(g, "ConvInteger", {"x", "w", "x_zp", "w_zp"}, {"y"});
  onnx::AttributeProto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  pads->add_ints(1);
  pads->add_ints(1);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::INT32, {"1", "3", "len"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(9);
  for (const int64_t len : {1, 7}) {
    SCOPED_TRACE(len);
    std::vector<int8_t> x(2 * len), w(3 * 2 * 3);
    for (auto& v : x) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    const std::vector<int8_t> x_zp = {-128}, w_zp = {127, 0, -5};
    absl::StatusOr<Value> got = machine.Invoke(
        "main", {Value(Tensor<int8_t>({1, 2, len}, x, DType::kI8, allocator)),
                 Value(Tensor<int8_t>({3, 2, 3}, w, DType::kI8, allocator)),
                 Value(Tensor<int8_t>({}, x_zp, DType::kI8, allocator)),
                 Value(Tensor<int8_t>({3}, w_zp, DType::kI8, allocator))});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    for (int64_t o = 0; o < 3; ++o) {
      for (int64_t t = 0; t < len; ++t) {
        int64_t want = 0;
        for (int64_t c = 0; c < 2; ++c) {
          for (int64_t k = 0; k < 3; ++k) {
            const int64_t p = t - 1 + k;
            if (p < 0 || p >= len) continue;
            want += (int64_t{x[c * len + p]} - x_zp[0]) * (int64_t{w[(o * 2 + c) * 3 + k]} - w_zp[o]);
          }
        }
        EXPECT_EQ(y.data_as<int32_t>()[o * len + t], want) << "channel " << o << ", position " << t;
      }
    }
  }
}

TEST(QuantizeConvertersTest, BadDTypesAreClearErrors) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "q", onnx::TensorProto::FLOAT, {"4"});
  AddValue(g->mutable_input(), "scale", onnx::TensorProto::FLOAT, {});
  AddNode(g, "DequantizeLinear", {"q", "scale"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"4"});
  ExpectError(Import(m), absl::StatusCode::kInvalidArgument,
              "(DequantizeLinear, opset 13): x must be uint8, int8 or int32, got float32");
  onnx::ModelProto mm = Model(10);
  g = mm.mutable_graph();
  AddValue(g->mutable_input(), "a", onnx::TensorProto::INT32, {"2", "2"});
  AddValue(g->mutable_input(), "b", onnx::TensorProto::UINT8, {"2", "2"});
  AddNode(g, "MatMulInteger", {"a", "b"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::INT32, {"2", "2"});
  ExpectError(Import(mm), absl::StatusCode::kInvalidArgument, "A must be uint8 or int8, got int32");
  // 3 x 10 x 10 = 300 products per output: past what f32 sums exactly.
  onnx::ModelProto mc = Model(10);
  g = mc.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::UINT8, {"1", "3", "12", "12"});
  AddValue(g->mutable_input(), "w", onnx::TensorProto::UINT8, {"1", "3", "10", "10"});
  AddNode(g, "ConvInteger", {"x", "w"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::INT32, {"1", "1", "3", "3"});
  ExpectError(Import(mc), absl::StatusCode::kUnimplemented,
              "a convolution summing 300 products per output (at most 256 are exact in f32)");
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
