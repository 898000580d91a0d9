// The quantization converters (compiler/frontend/onnx/ops/quantize.cc) on what the
// conformance cases leave out: halves rounded to even and saturation at both ends,
// per-axis parameters along a negative axis or along an extent known only at run time,
// an all-zero DynamicQuantizeLinear, per-row and per-column QLinearMatMul parameters,
// inner dimensions and convolutions long enough to need several exact f32 runs, a bias
// past 2^24, extents of 1 — all against references computed here with the converters'
// own f32 operations in the same order, so compared exactly (tolerance 0); and the clear
// errors of bad dtypes, shapes and convolutions past the exact bound.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "onnx/onnx_pb.h"
#include "tests/compiler/frontend/onnx/model_builder.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

using ::dynvm::compiler::onnx_frontend::testing::AddIntAttr;
using ::dynvm::compiler::onnx_frontend::testing::AddIntsAttr;
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
  AddIntsAttr(AddNode(g, "ConvInteger", {"x", "w", "x_zp", "w_zp"}, {"y"}), "pads", {1, 1});
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

// DequantizeLinear of uint8 [2, n] along axis -1, whose extent (and so the scale's and
// zero point's) is known only at run time, for n = 1 and 5.
TEST(QuantizeConvertersTest, DequantizeLinearAlongAnExtentKnownAtRunTime) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "q", onnx::TensorProto::UINT8, {"2", "n"});
  AddValue(g->mutable_input(), "scale", onnx::TensorProto::FLOAT, {"n"});
  AddValue(g->mutable_input(), "zp", onnx::TensorProto::UINT8, {"n"});
  AddIntAttr(AddNode(g, "DequantizeLinear", {"q", "scale", "zp"}, {"x"}), "axis", -1);
  AddValue(g->mutable_output(), "x", onnx::TensorProto::FLOAT, {"2", "n"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(3);
  for (const int64_t n : {1, 5}) {
    SCOPED_TRACE(n);
    std::vector<uint8_t> q(2 * n), zp(n);
    std::vector<float> scale(n);
    for (auto& v : q) v = static_cast<uint8_t>(rng() % 256);
    for (auto& v : zp) v = static_cast<uint8_t>(rng() % 256);
    for (auto& v : scale) v = 0.001f * static_cast<float>(1 + rng() % 1000);
    absl::StatusOr<Value> got = machine.Invoke(
        "main", {Value(Tensor<uint8_t>({2, n}, q, DType::kU8, allocator)),
                 Value(Tensor<float>({n}, scale, DType::kF32, allocator)),
                 Value(Tensor<uint8_t>({n}, zp, DType::kU8, allocator))});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& x = *got->As<NDArrayObj>();
    for (int64_t i = 0; i < 2 * n; ++i) {
      const float want = (static_cast<float>(q[i]) - static_cast<float>(zp[i % n])) * scale[i % n];
      EXPECT_EQ(x.data_as<float>()[i], want) << "element " << i;
    }
  }
}

// DynamicQuantizeLinear over a length known at run time: all zeros (an empty range,
// taken as 1 wide), one negative element, and mixed signs.
TEST(QuantizeConvertersTest, DynamicQuantizeLinearOfZerosAndSingleElements) {
  onnx::ModelProto m = Model(11);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n"});
  AddNode(g, "DynamicQuantizeLinear", {"x"}, {"y", "scale", "zp"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::UINT8, {"n"});
  AddValue(g->mutable_output(), "scale", onnx::TensorProto::FLOAT, {});
  AddValue(g->mutable_output(), "zp", onnx::TensorProto::UINT8, {});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const std::vector<std::vector<float>> cases = {{0.0f, 0.0f, 0.0f}, {-7.5f}, {3.0f, -1.25f, 0.5f, 2.75f, -0.3f}};
  for (const std::vector<float>& x : cases) {
    SCOPED_TRACE(x.size());
    const int64_t n = static_cast<int64_t>(x.size());
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(Tensor<float>({n}, x, DType::kF32, allocator))});
    ASSERT_TRUE(got.ok()) << got.status();
    const ADTObj& outputs = *got->As<ADTObj>();
    const float lo = std::min(0.0f, *std::min_element(x.begin(), x.end()));
    const float hi = std::max(0.0f, *std::max_element(x.begin(), x.end()));
    const float scale = (hi - lo == 0.0f ? 1.0f : hi - lo) / 255.0f;
    const float zp = std::clamp(std::nearbyint((0.0f - lo) / scale), 0.0f, 255.0f);  // ties to even
    EXPECT_EQ(outputs.fields()[1].As<NDArrayObj>()->data_as<float>()[0], scale);
    EXPECT_EQ(outputs.fields()[2].As<NDArrayObj>()->data_as<uint8_t>()[0], static_cast<uint8_t>(zp));
    const NDArrayObj& y = *outputs.fields()[0].As<NDArrayObj>();
    for (int64_t i = 0; i < n; ++i) {
      const float want = std::clamp(std::nearbyint(x[i] / scale) + zp, 0.0f, 255.0f);
      EXPECT_EQ(y.data_as<uint8_t>()[i], static_cast<uint8_t>(want)) << "element " << i;
    }
  }
}

// QLinearMatMul of int8 [batch, 2, 300] (batch at run time; the inner dimension needs
// two exact runs) by int8 [300, 3], a's scale and zero point per row, b's per column,
// to uint8 with a per-tensor y.
TEST(QuantizeConvertersTest, QLinearMatMulPerRowAndPerColumn) {
  constexpr int64_t kRows = 2, kInner = 300, kCols = 3;
  onnx::ModelProto m = Model(10);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "a", onnx::TensorProto::INT8, {"batch", "2", "300"});
  AddValue(g->mutable_input(), "a_scale", onnx::TensorProto::FLOAT, {"2"});
  AddValue(g->mutable_input(), "a_zp", onnx::TensorProto::INT8, {"2"});
  AddValue(g->mutable_input(), "b", onnx::TensorProto::INT8, {"300", "3"});
  AddValue(g->mutable_input(), "b_scale", onnx::TensorProto::FLOAT, {"3"});
  AddValue(g->mutable_input(), "b_zp", onnx::TensorProto::INT8, {"3"});
  AddValue(g->mutable_input(), "y_scale", onnx::TensorProto::FLOAT, {});
  AddValue(g->mutable_input(), "y_zp", onnx::TensorProto::UINT8, {});
  AddNode(g, "QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::UINT8, {"batch", "2", "3"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(11);
  const std::vector<float> a_scale = {0.02f, 0.5f}, b_scale = {0.01f, 0.03f, 0.2f}, y_scale = {3.0f};
  const std::vector<int8_t> a_zp = {-128, 5}, b_zp = {127, 0, -20};
  const std::vector<uint8_t> y_zp = {128};
  for (const int64_t batch : {1, 3}) {
    SCOPED_TRACE(batch);
    std::vector<int8_t> a(batch * kRows * kInner), b(kInner * kCols);
    for (auto& v : a) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    for (auto& v : b) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    absl::StatusOr<Value> got = machine.Invoke(
        "main", {Value(Tensor<int8_t>({batch, kRows, kInner}, a, DType::kI8, allocator)),
                 Value(Tensor<float>({kRows}, a_scale, DType::kF32, allocator)),
                 Value(Tensor<int8_t>({kRows}, a_zp, DType::kI8, allocator)),
                 Value(Tensor<int8_t>({kInner, kCols}, b, DType::kI8, allocator)),
                 Value(Tensor<float>({kCols}, b_scale, DType::kF32, allocator)),
                 Value(Tensor<int8_t>({kCols}, b_zp, DType::kI8, allocator)),
                 Value(Tensor<float>({}, y_scale, DType::kF32, allocator)),
                 Value(Tensor<uint8_t>({}, y_zp, DType::kU8, allocator))});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    for (int64_t i = 0; i < batch * kRows; ++i) {
      const int64_t r = i % kRows;
      for (int64_t c = 0; c < kCols; ++c) {
        int64_t acc = 0;
        for (int64_t k = 0; k < kInner; ++k) {
          acc += (int64_t{a[i * kInner + k]} - a_zp[r]) * (int64_t{b[k * kCols + c]} - b_zp[c]);
        }
        const float scaled = static_cast<float>(acc) * (a_scale[r] * b_scale[c] / y_scale[0]);
        const float want = std::clamp(std::nearbyint(scaled) + y_zp[0], 0.0f, 255.0f);
        EXPECT_EQ(y.data_as<uint8_t>()[i * kCols + c], static_cast<uint8_t>(want)) << "row " << i << ", column " << c;
      }
    }
  }
}

// QLinearConv 3 x 3 over 40 input channels (360 products per output: two runs of input
// channels), uint8 x on an H x W known at run time (1 x 1 and 4 x 5) padded by 1, int8 w
// with a scale and zero point per output channel, and an int32 bias past 2^24.
TEST(QuantizeConvertersTest, QLinearConvSplitsLongSumsByInputChannel) {
  constexpr int64_t kIn = 40, kOut = 2, kTaps = 9;
  onnx::ModelProto m = Model(10);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::UINT8, {"1", "40", "h", "w"});
  AddValue(g->mutable_input(), "x_scale", onnx::TensorProto::FLOAT, {});
  AddValue(g->mutable_input(), "x_zp", onnx::TensorProto::UINT8, {});
  AddValue(g->mutable_input(), "w", onnx::TensorProto::INT8, {"2", "40", "3", "3"});
  AddValue(g->mutable_input(), "w_scale", onnx::TensorProto::FLOAT, {"2"});
  AddValue(g->mutable_input(), "w_zp", onnx::TensorProto::INT8, {"2"});
  AddValue(g->mutable_input(), "y_scale", onnx::TensorProto::FLOAT, {});
  AddValue(g->mutable_input(), "y_zp", onnx::TensorProto::UINT8, {});
  AddValue(g->mutable_input(), "bias", onnx::TensorProto::INT32, {"2"});
  AddIntsAttr(AddNode(g, "QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"},
                      {"y"}),
              "pads", {1, 1, 1, 1});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::UINT8, {"1", "2", "h", "w"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(13);
  const std::vector<float> x_scale = {0.05f}, w_scale = {0.01f, 0.002f}, y_scale = {40.0f};
  const std::vector<uint8_t> x_zp = {3}, y_zp = {100};
  const std::vector<int8_t> w_zp = {-128, 9};
  const std::vector<int32_t> bias = {(1 << 25) + 1, -1000};
  std::vector<int8_t> w(kOut * kIn * kTaps);
  for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  for (const auto& [h, wd] : {std::pair<int64_t, int64_t>{1, 1}, {4, 5}}) {
    SCOPED_TRACE(absl::StrFormat("%d x %d", h, wd));
    std::vector<uint8_t> x(kIn * h * wd);
    for (auto& v : x) v = static_cast<uint8_t>(rng() % 256);
    absl::StatusOr<Value> got = machine.Invoke(
        "main", {Value(Tensor<uint8_t>({1, kIn, h, wd}, x, DType::kU8, allocator)),
                 Value(Tensor<float>({}, x_scale, DType::kF32, allocator)),
                 Value(Tensor<uint8_t>({}, x_zp, DType::kU8, allocator)),
                 Value(Tensor<int8_t>({kOut, kIn, 3, 3}, w, DType::kI8, allocator)),
                 Value(Tensor<float>({kOut}, w_scale, DType::kF32, allocator)),
                 Value(Tensor<int8_t>({kOut}, w_zp, DType::kI8, allocator)),
                 Value(Tensor<float>({}, y_scale, DType::kF32, allocator)),
                 Value(Tensor<uint8_t>({}, y_zp, DType::kU8, allocator)),
                 Value(Tensor<int32_t>({kOut}, bias, DType::kI32, allocator))});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    for (int64_t o = 0; o < kOut; ++o) {
      for (int64_t p = 0; p < h * wd; ++p) {
        int64_t acc = bias[o];
        for (int64_t c = 0; c < kIn; ++c) {
          for (int64_t t = 0; t < kTaps; ++t) {
            const int64_t r = p / wd + t / 3 - 1, s = p % wd + t % 3 - 1;
            if (r < 0 || r >= h || s < 0 || s >= wd) continue;
            acc += (int64_t{x[(c * h + r) * wd + s]} - x_zp[0]) * (int64_t{w[(o * kIn + c) * kTaps + t]} - w_zp[o]);
          }
        }
        const float scaled = static_cast<float>(acc) * (x_scale[0] * w_scale[o] / y_scale[0]);
        const float want = std::clamp(std::nearbyint(scaled) + y_zp[0], 0.0f, 255.0f);
        EXPECT_EQ(y.data_as<uint8_t>()[o * h * wd + p], static_cast<uint8_t>(want)) << "channel " << o << ", " << p;
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
}

TEST(QuantizeConvertersTest, BadInputsAreClearErrors) {
  onnx::ModelProto mq = Model(13);
  onnx::GraphProto* g = mq.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"4"});
  AddValue(g->mutable_input(), "scale", onnx::TensorProto::FLOAT, {"2", "2"});
  AddNode(g, "QuantizeLinear", {"x", "scale"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::UINT8, {"4"});
  ExpectError(Import(mq), absl::StatusCode::kInvalidArgument, "y_scale must be a scalar, 1-D or of rank 1, got");
  onnx::ModelProto md = Model(11);
  g = md.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::DOUBLE, {"4"});
  AddNode(g, "DynamicQuantizeLinear", {"x"}, {"y", "s", "zp"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::UINT8, {"4"});
  ExpectError(Import(md), absl::StatusCode::kInvalidArgument, "x must be float32, got float64");
  onnx::ModelProto mm = Model(10);
  g = mm.mutable_graph();
  for (const char* name : {"b_scale", "y_scale"}) AddValue(g->mutable_input(), name, onnx::TensorProto::FLOAT, {});
  for (const char* name : {"a_zp", "b_zp", "y_zp"}) AddValue(g->mutable_input(), name, onnx::TensorProto::UINT8, {});
  AddValue(g->mutable_input(), "a", onnx::TensorProto::UINT8, {"4", "2", "3"});
  AddValue(g->mutable_input(), "a_scale", onnx::TensorProto::FLOAT, {"4", "2"});
  AddValue(g->mutable_input(), "b", onnx::TensorProto::UINT8, {"3", "2"});
  AddNode(g, "QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::UINT8, {"4", "2", "2"});
  ExpectError(Import(mm), absl::StatusCode::kInvalidArgument, "a_scale must be a scalar, 1-D or of rank 3, got");
  onnx::ModelProto mb = Model(10);
  g = mb.mutable_graph();
  for (const char* name : {"x_scale", "w_scale", "y_scale"}) {
    AddValue(g->mutable_input(), name, onnx::TensorProto::FLOAT, {});
  }
  for (const char* name : {"x_zp", "w_zp", "y_zp"}) AddValue(g->mutable_input(), name, onnx::TensorProto::UINT8, {});
  AddValue(g->mutable_input(), "x", onnx::TensorProto::UINT8, {"1", "1", "3", "3"});
  AddValue(g->mutable_input(), "w", onnx::TensorProto::UINT8, {"2", "1", "1", "1"});
  AddValue(g->mutable_input(), "bias", onnx::TensorProto::FLOAT, {"2"});
  AddNode(g, "QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::UINT8, {"1", "2", "3", "3"});
  ExpectError(Import(mb), absl::StatusCode::kInvalidArgument, "B must be a 1-D int32 tensor, got");
  // 17 x 17 = 289 taps: no run of input channels sums at most 256 products.
  onnx::ModelProto mc = Model(10);
  g = mc.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::UINT8, {"1", "1", "20", "20"});
  AddValue(g->mutable_input(), "w", onnx::TensorProto::UINT8, {"1", "1", "17", "17"});
  AddNode(g, "ConvInteger", {"x", "w"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::INT32, {"1", "1", "4", "4"});
  ExpectError(Import(mc), absl::StatusCode::kUnimplemented,
              "a convolution summing 289 products per output over 289 taps with group 1 (f32 sums at most 256 "
              "products exactly; longer sums are split by input channel, for group 1 and at most 256 taps)");
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
