// The signal converters (compiler/frontend/onnx/ops/signal.cc) on what the conformance
// cases leave out: lengths arriving at run time (a window's size, dft_length,
// frame_step, a window of dynamic length), extents of 1, zero-padding and truncation, a
// negative axis, complex signals, inverse and onesided transforms, against references
// computed here in double; and the clear error of each bad attribute or input.
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <tuple>
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
using ::dynvm::compiler::onnx_frontend::testing::AddNode;
using ::dynvm::compiler::onnx_frontend::testing::AddValue;
using ::dynvm::compiler::onnx_frontend::testing::ExpectError;
using ::dynvm::compiler::onnx_frontend::testing::Import;
using ::dynvm::compiler::onnx_frontend::testing::ImportAndCompile;
using ::dynvm::compiler::onnx_frontend::testing::MainText;
using ::dynvm::compiler::onnx_frontend::testing::Model;
using Complex = std::complex<double>;

NDArray I64Scalar(int64_t v, const std::shared_ptr<Allocator>& allocator) {
  NDArray t = *NDArrayObj::Empty({}, DType::kI64, allocator);
  t->data_as<int64_t>()[0] = v;
  return t;
}

// A float tensor of `shape` of values uniform in [-1, 1), the same for one `seed`.
NDArray Random(const std::vector<int64_t>& shape, int seed, const std::shared_ptr<Allocator>& allocator) {
  NDArray t = *NDArrayObj::Empty(shape, DType::kF32, allocator);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<float>()[i] = uniform(rng);
  return t;
}

// A scalar int64 initializer `name`.
void AddI64Scalar(onnx::GraphProto* g, const std::string& name, int64_t value) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(value);
}

std::vector<int64_t> ShapeOf(const NDArrayObj& t) { return {t.shape().begin(), t.shape().end()}; }

// The DFT of `x` (L = x.size() after padding or truncation to `length`) in double.
std::vector<Complex> ReferenceDft(std::vector<Complex> x, int64_t length, bool inverse) {
  x.resize(length);
  std::vector<Complex> y(length);
  const double sign = inverse ? 1 : -1;
  for (int64_t k = 0; k < length; ++k) {
    for (int64_t n = 0; n < length; ++n) {
      y[k] += x[n] * std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>(n * k % length) / length);
    }
    if (inverse) y[k] /= static_cast<double>(length);
  }
  return y;
}

// The tolerance of a transform of `x`: the tables and products are f32, so each output
// is within a few f32 ulps of the sum of the magnitudes it adds up.
double Tolerance(const std::vector<Complex>& x) {
  double sum = 0;
  for (const Complex& v : x) sum += std::abs(v);
  return 1e-6 + 1e-5 * sum;
}

TEST(OnnxSignalTest, WindowsOfSizesKnownAtRunTime) {
  struct Case {
    std::string op;
    int64_t periodic;
    double a0, a1, a2;
  };
  for (const Case& c : {Case{"HannWindow", 1, 0.5, 0.5, 0}, Case{"HammingWindow", 0, 25.0 / 46, 21.0 / 46, 0},
                        Case{"BlackmanWindow", 1, 0.42, 0.5, 0.08}, Case{"BlackmanWindow", 0, 0.42, 0.5, 0.08}}) {
    SCOPED_TRACE(absl::StrFormat("%s periodic %d", c.op, c.periodic));
    onnx::ModelProto m = Model(17);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "size", onnx::TensorProto::INT64, {});
    onnx::NodeProto* node = AddNode(g, c.op, {"size"}, {"w"});
    AddIntAttr(node, "periodic", c.periodic);
    AddIntAttr(node, "output_datatype", onnx::TensorProto::DOUBLE);
    AddValue(g->mutable_output(), "w", onnx::TensorProto::DOUBLE, {""});
    const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
    ASSERT_NE(exe, nullptr);
    auto allocator = MakePooledAllocator();
    vm::VirtualMachine machine(exe);
    // A symmetric window of size 1 divides by 0 in ONNX's definition too.
    for (const int64_t size : c.periodic ? std::vector<int64_t>{1, 2, 13} : std::vector<int64_t>{2, 13}) {
      SCOPED_TRACE(size);
      absl::StatusOr<Value> got = machine.Invoke("main", {Value(I64Scalar(size, allocator))});
      ASSERT_TRUE(got.ok()) << got.status();
      const NDArrayObj& w = *got->As<NDArrayObj>();
      ASSERT_EQ(w.dtype(), DType::kF64);
      ASSERT_EQ(ShapeOf(w), std::vector<int64_t>{size});
      const double period = static_cast<double>(c.periodic ? size : size - 1);
      for (int64_t n = 0; n < size; ++n) {
        const double angle = 2 * std::numbers::pi * static_cast<double>(n) / period;
        const double want = c.a0 - c.a1 * std::cos(angle) + c.a2 * std::cos(2 * angle);
        EXPECT_NEAR(w.data_as<double>()[n], want, 2e-6) << n;  // computed in f32
      }
    }
  }
}

TEST(OnnxSignalTest, WindowBadAttributes) {
  // (The output declares the dtype the attribute names, which ONNX's inference checks.)
  for (const auto& [attr, value, code, text] :
       {std::tuple{"periodic", int64_t{2}, absl::StatusCode::kInvalidArgument,
                   "attribute 'periodic' is 2: expected 0 or 1"},
        {"output_datatype", int64_t{onnx::TensorProto::STRING}, absl::StatusCode::kInvalidArgument,
         "'output_datatype' is 8: expected a numeric type"},
        {"output_datatype", int64_t{onnx::TensorProto::COMPLEX64}, absl::StatusCode::kUnimplemented,
         "attribute 'output_datatype'"}}) {
    SCOPED_TRACE(text);
    onnx::ModelProto m = Model(17);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "size", onnx::TensorProto::INT32, {});
    AddIntAttr(AddNode(g, "HannWindow", {"size"}, {"w"}), attr, value);
    const int elem_type = attr == std::string("output_datatype") ? static_cast<int>(value) : onnx::TensorProto::FLOAT;
    AddValue(g->mutable_output(), "w", elem_type, {""});
    ExpectError(Import(m), code, text);
  }
  onnx::ModelProto m = Model(17);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "size", onnx::TensorProto::FLOAT, {});
  AddNode(g, "HannWindow", {"size"}, {"w"});
  AddValue(g->mutable_output(), "w", onnx::TensorProto::FLOAT, {""});
  ExpectError(Import(m), absl::StatusCode::kInvalidArgument, "the size must be an int32 or int64 scalar");
}

// A complex DFT along a negative axis whose extent and dft_length both arrive at run
// time: padded, truncated, of length 1; forward and inverse.
TEST(OnnxSignalTest, ComplexDftOfLengthsKnownAtRunTime) {
  for (const int64_t inverse : {0, 1}) {
    SCOPED_TRACE(inverse);
    onnx::ModelProto m = Model(17);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"b", "n", "2"});
    AddValue(g->mutable_input(), "length", onnx::TensorProto::INT64, {});
    onnx::NodeProto* node = AddNode(g, "DFT", {"x", "length"}, {"y"});
    AddIntAttr(node, "axis", -2);
    AddIntAttr(node, "inverse", inverse);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"b", "", "2"});
    const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
    ASSERT_NE(exe, nullptr);
    auto allocator = MakePooledAllocator();
    vm::VirtualMachine machine(exe);
    for (const auto& [batch, n, length] : {std::tuple{1, 1, 1}, {2, 5, 8}, {3, 9, 4}, {1, 12, 12}, {2, 1, 3}}) {
      SCOPED_TRACE(absl::StrFormat("batch %d, n %d, length %d", batch, n, length));
      const NDArray x = Random({batch, n, 2}, n * 10 + length, allocator);
      absl::StatusOr<Value> got = machine.Invoke("main", {Value(x), Value(I64Scalar(length, allocator))});
      ASSERT_TRUE(got.ok()) << got.status();
      const NDArrayObj& y = *got->As<NDArrayObj>();
      ASSERT_EQ(ShapeOf(y), (std::vector<int64_t>{batch, length, 2}));
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<Complex> signal;
        for (int64_t i = 0; i < n; ++i) {
          const float* v = x->data_as<float>() + (b * n + i) * 2;
          signal.emplace_back(v[0], v[1]);
        }
        const std::vector<Complex> want = ReferenceDft(signal, length, inverse != 0);
        const double tolerance = Tolerance(signal);
        for (int64_t k = 0; k < length; ++k) {
          const float* v = y.data_as<float>() + (b * length + k) * 2;
          EXPECT_NEAR(v[0], want[k].real(), tolerance) << b << ", " << k;
          EXPECT_NEAR(v[1], want[k].imag(), tolerance) << b << ", " << k;
        }
      }
    }
  }
}

// A onesided real DFT along a middle axis of dynamic extent: the first n / 2 + 1 bins.
TEST(OnnxSignalTest, OnesidedRealDftAlongAMiddleAxis) {
  onnx::ModelProto m = Model(17);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2", "n", "3", "1"});
  onnx::NodeProto* node = AddNode(g, "DFT", {"x"}, {"y"});
  AddIntAttr(node, "onesided", 1);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"2", "", "3", "2"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  for (const int64_t n : {1, 2, 7, 10}) {
    SCOPED_TRACE(n);
    const NDArray x = Random({2, n, 3, 1}, static_cast<int>(n), allocator);
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(x)});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    const int64_t bins = n / 2 + 1;
    ASSERT_EQ(ShapeOf(y), (std::vector<int64_t>{2, bins, 3, 2}));
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t c = 0; c < 3; ++c) {
        std::vector<Complex> signal;
        for (int64_t i = 0; i < n; ++i) signal.emplace_back(x->data_as<float>()[(b * n + i) * 3 + c], 0.0);
        const std::vector<Complex> want = ReferenceDft(signal, n, /*inverse=*/false);
        for (int64_t k = 0; k < bins; ++k) {
          const float* v = y.data_as<float>() + ((b * bins + k) * 3 + c) * 2;
          EXPECT_NEAR(v[0], want[k].real(), Tolerance(signal)) << b << ", " << k << ", " << c;
          EXPECT_NEAR(v[1], want[k].imag(), Tolerance(signal)) << b << ", " << k << ", " << c;
        }
      }
    }
  }
}

// Lengths known at import need nothing at run time (no arange, no shape_of: the tables
// fold to constants): a onesided DFT zero-padded to a constant dft_length, and a window
// of that constant size.
TEST(OnnxSignalTest, ConstantLengthsFoldAtImport) {
  onnx::ModelProto m = Model(17);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"1", "3", "1"});
  AddI64Scalar(g, "length", 5);
  AddIntAttr(AddNode(g, "DFT", {"x", "length"}, {"y"}), "onesided", 1);
  AddNode(g, "BlackmanWindow", {"length"}, {"w"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"1", "3", "2"});
  AddValue(g->mutable_output(), "w", onnx::TensorProto::FLOAT, {"5"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string text = MainText(*mod);
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("arange"))) << text;
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("shape_of"))) << text;
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const NDArray x = Random({1, 3, 1}, 5, allocator);
  absl::StatusOr<Value> got = machine.Invoke("main", {Value(x)});
  ASSERT_TRUE(got.ok()) << got.status();
  const ADTObj& outputs = *got->As<ADTObj>();
  const NDArrayObj& y = *outputs.fields()[0].As<NDArrayObj>();
  ASSERT_EQ(ShapeOf(y), (std::vector<int64_t>{1, 3, 2}));
  std::vector<Complex> signal;
  for (int64_t i = 0; i < 3; ++i) signal.emplace_back(x->data_as<float>()[i], 0.0);
  const std::vector<Complex> want = ReferenceDft(signal, 5, /*inverse=*/false);
  for (int64_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(y.data_as<float>()[2 * k], want[k].real(), Tolerance(signal)) << k;
    EXPECT_NEAR(y.data_as<float>()[2 * k + 1], want[k].imag(), Tolerance(signal)) << k;
  }
  ASSERT_EQ(ShapeOf(*outputs.fields()[1].As<NDArrayObj>()), std::vector<int64_t>{5});
}

TEST(OnnxSignalTest, DftBadAttributesAndInputs) {
  struct Case {
    std::vector<std::string> dims;
    std::vector<std::pair<std::string, int64_t>> attrs;
    int64_t length;  // a constant dft_length, or 0 for none
    std::string text;
  };
  for (const Case& c : {
           Case{{"1", "8", "1"}, {{"axis", -1}}, 0, "axis -1 is the real/imaginary axis"},
           Case{{"1", "8", "1"}, {{"inverse", 2}}, 0, "'inverse' (2) must be 0 or 1"},
           Case{{"1", "8", "2"}, {{"onesided", 1}}, 0, "onesided output needs a real signal"},
           Case{{"1", "8", "3"}, {}, 0, "must be 1 (real) or 2 (complex)"},
           Case{{"1", "8", "1"}, {}, -4, "dft_length is -4: expected 1 or more"},
       }) {
    SCOPED_TRACE(c.text);
    onnx::ModelProto m = Model(17);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, c.dims);
    std::vector<std::string> inputs = {"x"};
    if (c.length != 0) {
      AddI64Scalar(g, "length", c.length);
      inputs.push_back("length");
    }
    onnx::NodeProto* node = AddNode(g, "DFT", inputs, {"y"});
    for (const auto& [name, value] : c.attrs) AddIntAttr(node, name, value);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"", "", ""});
    ExpectError(Import(m), absl::StatusCode::kInvalidArgument, c.text);
  }
}

// STFT of a complex signal (onesided 0) with a window of run-time length and a frame
// step given at run time; and of a real signal with a constant frame_length (onesided).
TEST(OnnxSignalTest, StftWithLengthsKnownAtRunTime) {
  for (const int64_t parts : {2, 1}) {
    SCOPED_TRACE(parts);
    onnx::ModelProto m = Model(17);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "signal", onnx::TensorProto::FLOAT, {"b", "t", std::to_string(parts)});
    AddValue(g->mutable_input(), "step", onnx::TensorProto::INT64, {});
    AddValue(g->mutable_input(), "window", onnx::TensorProto::FLOAT, {"w"});
    if (parts == 2) {
      AddIntAttr(AddNode(g, "STFT", {"signal", "step", "window"}, {"y"}), "onesided", 0);
    } else {
      AddI64Scalar(g, "frame_length", 6);
      AddNode(g, "STFT", {"signal", "step", "window", "frame_length"}, {"y"});
    }
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"b", "", "", "2"});
    const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
    ASSERT_NE(exe, nullptr);
    auto allocator = MakePooledAllocator();
    vm::VirtualMachine machine(exe);
    const std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> cases =
        parts == 2 ? std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{{1, 6, 6, 1}, {2, 20, 5, 3},
                                                                                 {1, 9, 1, 4}}
                   : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{{2, 17, 6, 4}, {1, 6, 6, 2}};
    for (const auto& [batch, total, length, step] : cases) {
      SCOPED_TRACE(absl::StrFormat("batch %d, %d samples, frames of %d every %d", batch, total, length, step));
      const NDArray signal = Random({batch, total, parts}, static_cast<int>(total), allocator);
      const NDArray window = Random({length}, static_cast<int>(length) + 100, allocator);
      absl::StatusOr<Value> got =
          machine.Invoke("main", {Value(signal), Value(I64Scalar(step, allocator)), Value(window)});
      ASSERT_TRUE(got.ok()) << got.status();
      const NDArrayObj& y = *got->As<NDArrayObj>();
      const int64_t frames = (total - length) / step + 1, bins = parts == 2 ? length : length / 2 + 1;
      ASSERT_EQ(ShapeOf(y), (std::vector<int64_t>{batch, frames, bins, 2}));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t f = 0; f < frames; ++f) {
          std::vector<Complex> frame;
          for (int64_t i = 0; i < length; ++i) {
            const float* v = signal->data_as<float>() + (b * total + f * step + i) * parts;
            frame.push_back(Complex(v[0], parts == 2 ? v[1] : 0.0) * static_cast<double>(window->data_as<float>()[i]));
          }
          const std::vector<Complex> want = ReferenceDft(frame, length, /*inverse=*/false);
          for (int64_t k = 0; k < bins; ++k) {
            const float* v = y.data_as<float>() + ((b * frames + f) * bins + k) * 2;
            EXPECT_NEAR(v[0], want[k].real(), Tolerance(frame)) << b << ", " << f << ", " << k;
            EXPECT_NEAR(v[1], want[k].imag(), Tolerance(frame)) << b << ", " << f << ", " << k;
          }
        }
      }
    }
  }
}

TEST(OnnxSignalTest, StftBadInputs) {
  struct Case {
    std::vector<std::string> inputs;
    int64_t step, frame_length;
    std::string text;
  };
  for (const Case& c : {Case{{"signal", "step"}, 2, 4, "either a window or a frame_length is required"},
                        Case{{"signal", "step", "", "frame_length"}, 0, 4, "frame_step is 0: expected 1 or more"},
                        Case{{"signal", "step", "", "frame_length"}, 2, 40, "the signal has 32 samples, fewer"}}) {
    SCOPED_TRACE(c.text);
    onnx::ModelProto m = Model(17);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "signal", onnx::TensorProto::FLOAT, {"1", "32", "1"});
    AddValue(g->mutable_input(), "window", onnx::TensorProto::FLOAT, {"8"});
    AddI64Scalar(g, "step", c.step);
    AddI64Scalar(g, "frame_length", c.frame_length);
    AddNode(g, "STFT", c.inputs, {"y"});
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"", "", "", ""});
    ExpectError(Import(m), absl::StatusCode::kInvalidArgument, c.text);
  }
}

// ONNX's reference MelWeightMatrix (onnx/backend/test/case/node/melweightmatrix.py), in
// double: [dft_length / 2 + 1, bands].
std::vector<double> ReferenceMel(int64_t bands, int64_t dft_length, int64_t rate, double lower, double upper) {
  const auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double step = (mel(upper) - mel(lower)) / static_cast<double>(bands + 2);
  std::vector<int64_t> edges;
  for (int64_t i = 0; i < bands + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + mel(lower)) / 2595) - 1);
    edges.push_back(static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / rate)));
  }
  std::vector<double> out((dft_length / 2 + 1) * bands, 0.0);
  for (int64_t i = 0; i < bands; ++i) {
    const int64_t l = edges[i], c = edges[i + 1], h = edges[i + 2];
    if (c == l) {
      out[c * bands + i] = 1;
    } else {
      for (int64_t j = l; j <= c; ++j) out[j * bands + i] = static_cast<double>(j - l) / static_cast<double>(c - l);
    }
    for (int64_t j = c; j < h; ++j) out[j * bands + i] = static_cast<double>(h - j) / static_cast<double>(h - c);
  }
  return out;
}

TEST(OnnxSignalTest, MelWeightMatrixOfSizesKnownAtRunTime) {
  onnx::ModelProto m = Model(17);
  onnx::GraphProto* g = m.mutable_graph();
  for (const char* name : {"bands", "dft_length", "rate"}) {
    AddValue(g->mutable_input(), name, onnx::TensorProto::INT64, {});
  }
  AddValue(g->mutable_input(), "lower", onnx::TensorProto::FLOAT, {});
  AddValue(g->mutable_input(), "upper", onnx::TensorProto::FLOAT, {});
  AddNode(g, "MelWeightMatrix", {"bands", "dft_length", "rate", "lower", "upper"}, {"w"});
  AddValue(g->mutable_output(), "w", onnx::TensorProto::FLOAT, {"", ""});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  for (const auto& [bands, dft_length, rate, lower, upper] :
       {std::tuple{int64_t{5}, int64_t{32}, int64_t{16000}, 100.0f, 7000.0f}, {1, 9, 8000, 0.0f, 4000.0f},
        {12, 64, 22050, 20.0f, 11025.0f}}) {
    SCOPED_TRACE(absl::StrFormat("%d bands, dft_length %d", bands, dft_length));
    NDArray lo = *NDArrayObj::Empty({}, DType::kF32, allocator), hi = *NDArrayObj::Empty({}, DType::kF32, allocator);
    lo->data_as<float>()[0] = lower;
    hi->data_as<float>()[0] = upper;
    absl::StatusOr<Value> got =
        machine.Invoke("main", {Value(I64Scalar(bands, allocator)), Value(I64Scalar(dft_length, allocator)),
                                Value(I64Scalar(rate, allocator)), Value(lo), Value(hi)});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& w = *got->As<NDArrayObj>();
    ASSERT_EQ(ShapeOf(w), (std::vector<int64_t>{dft_length / 2 + 1, bands}));
    const std::vector<double> want = ReferenceMel(bands, dft_length, rate, lower, upper);
    for (int64_t i = 0; i < w.num_elements(); ++i) {
      EXPECT_NEAR(w.data_as<float>()[i], want[i], 1e-6) << i;  // f64 rounded to f32
    }
  }
}

TEST(OnnxSignalTest, MelWeightMatrixBadInputs) {
  for (const auto& [bands, rate_type, text] :
       {std::tuple{int64_t{0}, int{onnx::TensorProto::INT64}, "num_mel_bins is 0: expected 1 or more"},
        {4, onnx::TensorProto::FLOAT, "sample_rate must be an int32 or int64 scalar"}}) {
    SCOPED_TRACE(text);
    onnx::ModelProto m = Model(17);
    onnx::GraphProto* g = m.mutable_graph();
    AddI64Scalar(g, "bands", bands);
    AddI64Scalar(g, "dft_length", 16);
    AddValue(g->mutable_input(), "rate", rate_type, {});
    AddValue(g->mutable_input(), "lower", onnx::TensorProto::FLOAT, {});
    AddValue(g->mutable_input(), "upper", onnx::TensorProto::FLOAT, {});
    AddNode(g, "MelWeightMatrix", {"bands", "dft_length", "rate", "lower", "upper"}, {"w"});
    AddValue(g->mutable_output(), "w", onnx::TensorProto::FLOAT, {"", ""});
    ExpectError(Import(m), absl::StatusCode::kInvalidArgument, text);
  }
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
