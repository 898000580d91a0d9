// Tests of nn.layer_norm and nn.batch_norm (kernels/nn/normalization.cc) against plain
// double-precision references written from Relay's definitions, on random shapes and
// axes (extents 0 and 1, inner axes), every center/scale combination, inputs with a
// large mean, and their errors.
//
// Tolerances: with inputs, gamma and beta in [-1, 1], layer_norm's float mean and
// variance over n <= 1000 elements are within ~1e-6 relative, so outputs (of order 1-3)
// are within 5e-5 absolute plus 1e-5 relative. batch_norm is one fused multiply-add
// per element after folding the statistics in double: 1e-5 absolute and relative.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

struct Slices {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t at(int64_t o, int64_t j, int64_t i) const { return (o * n + j) * inner + i; }
};

Slices SlicesOf(const std::vector<int64_t>& shape, int axis) {
  Slices s;
  for (int i = 0; i < axis; ++i) s.outer *= shape[i];
  s.n = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i) s.inner *= shape[i];
  return s;
}

std::vector<double> LayerNormReference(const std::vector<double>& x,
                                       const std::vector<int64_t>& shape, int axis,
                                       const std::vector<double>& gamma,
                                       const std::vector<double>& beta, double eps, bool center,
                                       bool scale) {
  const Slices s = SlicesOf(shape, axis);
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < s.n; ++j) mean += x[s.at(o, j, i)];
      mean /= s.n;
      for (int64_t j = 0; j < s.n; ++j)
        var += (x[s.at(o, j, i)] - mean) * (x[s.at(o, j, i)] - mean);
      var /= s.n;
      for (int64_t j = 0; j < s.n; ++j) {
        double v = (x[s.at(o, j, i)] - mean) / std::sqrt(var + eps);
        if (scale) v *= gamma[j];
        if (center) v += beta[j];
        y[s.at(o, j, i)] = v;
      }
    }
  }
  return y;
}

std::vector<int64_t> RandomShape(std::mt19937& rng, int min_rank, int max_rank) {
  std::vector<int64_t> shape(RandomInt(rng, min_rank, max_rank));
  for (int64_t& d : shape) {
    const int64_t r = RandomInt(rng, 0, 9);
    d = r == 0 ? 0 : r < 3 ? 1 : RandomInt(rng, 2, 21);
  }
  return shape;
}

TEST(LayerNormTest, RandomShapesAxesAndFlags) {
  std::mt19937 rng(21);
  for (int iter = 0; iter < 120; ++iter) {
    const std::vector<int64_t> shape = RandomShape(rng, 1, 4);
    const int rank = static_cast<int>(shape.size());
    const int64_t axis = RandomInt(rng, -rank, rank - 1);
    const int norm_axis = static_cast<int>(axis < 0 ? axis + rank : axis);
    const bool center = rng() % 2, scale = rng() % 2;
    const double eps = iter % 3 == 0 ? 1e-12 : 1e-5;
    NDArray x = RandomTensor(shape, DType::kF32, rng);
    NDArray gamma = RandomTensor({shape[norm_axis]}, DType::kF32, rng);
    NDArray beta = RandomTensor({shape[norm_axis]}, DType::kF32, rng);
    SCOPED_TRACE(::testing::Message() << ShapeToString(x->shape()) << " axis " << axis << " center "
                                      << center << " scale " << scale);
    absl::StatusOr<std::vector<NDArray>> out = RunKernel(
        "nn.layer_norm",
        {{"axis", axis}, {"epsilon", eps}, {"center", int64_t{center}}, {"scale", int64_t{scale}}},
        {x, gamma, beta});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectClose((*out)[0],
                LayerNormReference(Values(x), shape, norm_axis, Values(gamma), Values(beta), eps,
                                   center, scale),
                5e-5, 1e-5);
  }
}

TEST(LayerNormTest, BertShapes) {
  std::mt19937 rng(22);
  for (int64_t seq : {1, 7, 128}) {
    NDArray x = RandomTensor({seq, 768}, DType::kF32, rng, -3, 3);
    NDArray gamma = RandomTensor({768}, DType::kF32, rng);
    NDArray beta = RandomTensor({768}, DType::kF32, rng);
    absl::StatusOr<std::vector<NDArray>> out =
        RunKernel("nn.layer_norm", {{"epsilon", 1e-12}}, {x, gamma, beta});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectClose((*out)[0],
                LayerNormReference(Values(x), {seq, 768}, 1, Values(gamma), Values(beta), 1e-12,
                                   true, true),
                5e-5, 1e-5);
  }
}

TEST(LayerNormTest, LargeMeanKeepsTheVariance) {
  // Rows of 1000 + U(-1, 1): E[x^2] - E[x]^2 in float would lose the variance entirely
  // (1e6 carries 0.06 of rounding); the centred second pass keeps it. The float mean is
  // off by ~1e-4, which the output sees relative to the spread (~0.58): tolerance 2e-3.
  std::mt19937 rng(23);
  NDArray x = RandomTensor({4, 1000}, DType::kF32, rng, 999.0, 1001.0);
  NDArray gamma = TensorOf<float>({1000}, std::vector<float>(1000, 1.0f));
  NDArray beta = TensorOf<float>({1000}, std::vector<float>(1000, 0.0f));
  absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.layer_norm", {}, {x, gamma, beta});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectClose(
      (*out)[0],
      LayerNormReference(Values(x), {4, 1000}, 1, Values(gamma), Values(beta), 1e-5, true, true),
      2e-3, 0);
}

TEST(LayerNormTest, InPlace) {
  std::mt19937 rng(24);
  NDArray x = RandomTensor({6, 37}, DType::kF32, rng);
  NDArray gamma = RandomTensor({37}, DType::kF32, rng);
  NDArray beta = RandomTensor({37}, DType::kF32, rng);
  const std::vector<double> want =
      LayerNormReference(Values(x), {6, 37}, 1, Values(gamma), Values(beta), 1e-5, true, true);
  ASSERT_TRUE(CallWithOutputs("nn.layer_norm", {}, {x, gamma, beta}, {x}).ok());
  ExpectClose(x, want, 5e-5, 1e-5);
}

TEST(LayerNormTest, EmptyTensorsWithHugeExtents) {
  // 0 x 2^40 x 2^40 has no elements, but the product of its last two extents overflows.
  const int64_t huge = int64_t{1} << 40;
  NDArray x = Empty({0, huge, huge}), p = Empty({0});
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel("nn.layer_norm", {{"axis", int64_t{0}}}, {x, p, p});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0]->num_elements(), 0);
  out = RunKernel("nn.batch_norm", {{"axis", int64_t{0}}}, {x, p, p, p, p});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0]->num_elements(), 0);
}

TEST(LayerNormTest, Errors) {
  NDArray x = Empty({2, 3}), p = Empty({3});
  ExpectInvalid(RunKernel("nn.layer_norm", {}, {Empty({2, 3}, DType::kI64), p, p}),
                "unsupported dtype i64 for nn.layer_norm data: expected f32");
  ExpectInvalid(RunKernel("nn.layer_norm", {}, {x, Empty({3}, DType::kF64), p}),
                "unsupported dtype f64 for nn.layer_norm gamma: expected f32");
  ExpectInvalid(RunKernel("nn.layer_norm", {}, {x, p, Empty({2})}),
                "nn.layer_norm: beta has shape [2], expected [3]");
  ExpectInvalid(RunKernel("nn.layer_norm", {{"axis", int64_t{0}}}, {x, p, p}),
                "nn.layer_norm: gamma has shape [3], expected [2]");
  ExpectInvalid(RunKernel("nn.layer_norm", {{"axis", int64_t{2}}}, {x, p, p}),
                "nn.layer_norm: axis 2 out of range for rank 2");
  ExpectInvalid(RunKernel("nn.layer_norm", {{"epsilon", -1.0}}, {x, p, p}),
                "attribute 'epsilon' must be finite and non-negative, got -1");
  ExpectInvalid(RunKernel("nn.layer_norm", {{"center", int64_t{2}}}, {x, p, p}),
                "attribute 'center' must be 0 or 1, got 2");
  ExpectInvalid(RunKernel("nn.layer_norm", {{"eps", 1e-5}}, {x, p, p}), "unknown attribute 'eps'");
  ExpectInvalid(RunKernel("nn.layer_norm", {}, {x, p}), "takes 3 inputs and 1 outputs, not 2");
  ExpectInvalid(CallWithOutputs("nn.layer_norm", {}, {x, p, p}, {Empty({2, 4})}),
                "nn.layer_norm: output 0 has shape [2, 4], expected [2, 3]");
}

std::vector<double> BatchNormReference(const std::vector<double>& x,
                                       const std::vector<int64_t>& shape, int axis,
                                       const std::vector<std::vector<double>>& params, double eps,
                                       bool center, bool scale) {
  const Slices s = SlicesOf(shape, axis);
  const std::vector<double>& gamma = params[0];
  const std::vector<double>& beta = params[1];
  const std::vector<double>& mean = params[2];
  const std::vector<double>& var = params[3];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t c = 0; c < s.n; ++c) {
      for (int64_t i = 0; i < s.inner; ++i) {
        double v = (x[s.at(o, c, i)] - mean[c]) / std::sqrt(var[c] + eps);
        if (scale) v *= gamma[c];
        if (center) v += beta[c];
        y[s.at(o, c, i)] = v;
      }
    }
  }
  return y;
}

TEST(BatchNormTest, RandomShapesAxesAndFlags) {
  std::mt19937 rng(25);
  for (int iter = 0; iter < 120; ++iter) {
    const std::vector<int64_t> shape = RandomShape(rng, 1, 5);
    const int rank = static_cast<int>(shape.size());
    const int64_t axis = iter % 4 == 0 ? RandomInt(rng, -rank, rank - 1) : std::min(1, rank - 1);
    const int norm_axis = static_cast<int>(axis < 0 ? axis + rank : axis);
    const bool center = rng() % 2, scale = rng() % 2;
    const int64_t channels = shape[norm_axis];
    NDArray x = RandomTensor(shape, DType::kF32, rng, -3, 3);
    std::vector<NDArray> inputs = {x, RandomTensor({channels}, DType::kF32, rng),
                                   RandomTensor({channels}, DType::kF32, rng),
                                   RandomTensor({channels}, DType::kF32, rng),
                                   RandomTensor({channels}, DType::kF32, rng, 0.1, 2.0)};
    SCOPED_TRACE(::testing::Message() << ShapeToString(x->shape()) << " axis " << axis);
    Attrs attrs = {{"epsilon", 1e-3}, {"center", int64_t{center}}, {"scale", int64_t{scale}}};
    if (axis != 1) attrs["axis"] = axis;
    absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.batch_norm", attrs, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectClose((*out)[0],
                BatchNormReference(
                    Values(x), shape, norm_axis,
                    {Values(inputs[1]), Values(inputs[2]), Values(inputs[3]), Values(inputs[4])},
                    1e-3, center, scale),
                1e-5, 1e-5);
  }
}

TEST(BatchNormTest, Errors) {
  NDArray x = Empty({2, 3, 4}), p = Empty({3});
  ExpectInvalid(RunKernel("nn.batch_norm", {}, {x, p, p, Empty({4}), p}),
                "nn.batch_norm: moving_mean has shape [4], expected [3]");
  ExpectInvalid(RunKernel("nn.batch_norm", {}, {x, p, p, p, Empty({3}, DType::kI32)}),
                "unsupported dtype i32 for nn.batch_norm moving_var: expected f32");
  ExpectInvalid(RunKernel("nn.batch_norm", {}, {Empty({}), p, p, p, p}),
                "nn.batch_norm: axis 1 out of range for rank 0");
  ExpectInvalid(RunKernel("nn.batch_norm", {{"momentum", 0.1}}, {x, p, p, p, p}),
                "unknown attribute 'momentum'");
  ExpectInvalid(RunKernel("nn.batch_norm", {}, {x, p, p, p, p}, {}, /*num_outputs=*/3),
                "takes 5 inputs and 1 outputs, not 5 and 3");
}

}  // namespace
}  // namespace dynvm::kernels::testing
