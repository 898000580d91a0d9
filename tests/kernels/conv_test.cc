// Tests of nn.conv2d and nn.conv1d (kernels/nn/conv.cc) against a naive convolution
// written here (seven nested loops in double), on random geometries: batch, channels
// and outputs of 0 and 1, groups and depthwise, strides, dilations, asymmetric padding,
// with and without bias; on shapes big enough to split output pixels into several tiles;
// and their errors.
//
// Tolerance: each output is a float GEMM sum of patch-size products, so its error is
// bounded by a few eps times the sum of the magnitudes of its terms (bias included):
// |got - want| <= 1e-5 * sum |terms| + 1e-6.
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

struct ConvCase {
  int64_t batch, channels, height, width, outputs, kernel_h, kernel_w, groups;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool bias = false;

  int64_t OutH() const {
    return (height + pad_top + pad_bottom - dilation_h * (kernel_h - 1) - 1) / stride_h + 1;
  }
  int64_t OutW() const {
    return (width + pad_left + pad_right - dilation_w * (kernel_w - 1) - 1) / stride_w + 1;
  }
  bool Fits() const {
    return height + pad_top + pad_bottom >= dilation_h * (kernel_h - 1) + 1 &&
           width + pad_left + pad_right >= dilation_w * (kernel_w - 1) + 1;
  }
};

// The naive convolution and, per output, the sum of the magnitudes of its terms.
void NaiveConv(const ConvCase& c, const std::vector<double>& in, const std::vector<double>& w,
               const std::vector<double>& bias, std::vector<double>* out,
               std::vector<double>* magnitude) {
  const int64_t oh_n = c.OutH(), ow_n = c.OutW();
  const int64_t cg = c.channels / c.groups, og = c.outputs / c.groups;
  out->assign(c.batch * c.outputs * oh_n * ow_n, 0.0);
  magnitude->assign(out->size(), 0.0);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t o = 0; o < c.outputs; ++o) {
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          const int64_t at = ((n * c.outputs + o) * oh_n + oh) * ow_n + ow;
          double sum = c.bias ? bias[o] : 0.0, mag = c.bias ? std::fabs(bias[o]) : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t ch = o / og * cg + ci;
            for (int64_t kh = 0; kh < c.kernel_h; ++kh) {
              for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
                const int64_t ih = oh * c.stride_h - c.pad_top + kh * c.dilation_h;
                const int64_t iw = ow * c.stride_w - c.pad_left + kw * c.dilation_w;
                if (ih < 0 || ih >= c.height || iw < 0 || iw >= c.width) continue;
                const double term = in[((n * c.channels + ch) * c.height + ih) * c.width + iw] *
                                    w[((o * cg + ci) * c.kernel_h + kh) * c.kernel_w + kw];
                sum += term;
                mag += std::fabs(term);
              }
            }
          }
          (*out)[at] = sum;
          (*magnitude)[at] = mag;
        }
      }
    }
  }
}

// Runs the case as nn.conv2d, or as nn.conv1d when `one_d` (height 1, kernel_h 1).
void CheckConv(std::mt19937& rng, const ConvCase& c, bool one_d = false) {
  SCOPED_TRACE(::testing::Message()
               << (one_d ? "conv1d" : "conv2d") << " n" << c.batch << " c" << c.channels << " "
               << c.height << "x" << c.width << " o" << c.outputs << " k" << c.kernel_h << "x"
               << c.kernel_w << " g" << c.groups << " s" << c.stride_h << "," << c.stride_w << " d"
               << c.dilation_h << "," << c.dilation_w << " p" << c.pad_top << "," << c.pad_left
               << "," << c.pad_bottom << "," << c.pad_right << " bias " << c.bias);
  const int64_t cg = c.channels / c.groups;
  std::vector<int64_t> data_shape = {c.batch, c.channels, c.height, c.width};
  std::vector<int64_t> weight_shape = {c.outputs, cg, c.kernel_h, c.kernel_w};
  Attrs attrs = {{"groups", c.groups}};
  if (one_d) {
    data_shape.erase(data_shape.begin() + 2);
    weight_shape.erase(weight_shape.begin() + 2);
    attrs["strides"] = std::vector<int64_t>{c.stride_w};
    attrs["dilation"] = std::vector<int64_t>{c.dilation_w};
    attrs["padding"] = std::vector<int64_t>{c.pad_left, c.pad_right};
  } else {
    attrs["strides"] = std::vector<int64_t>{c.stride_h, c.stride_w};
    attrs["dilation"] = std::vector<int64_t>{c.dilation_h, c.dilation_w};
    attrs["padding"] = std::vector<int64_t>{c.pad_top, c.pad_left, c.pad_bottom, c.pad_right};
  }
  std::vector<NDArray> inputs = {RandomTensor(data_shape, DType::kF32, rng),
                                 RandomTensor(weight_shape, DType::kF32, rng)};
  if (c.bias) inputs.push_back(RandomTensor({c.outputs}, DType::kF32, rng));
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel(one_d ? "nn.conv1d" : "nn.conv2d", attrs, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int64_t> out_shape = {c.batch, c.outputs, c.OutH(), c.OutW()};
  if (one_d) out_shape.erase(out_shape.begin() + 2);
  EXPECT_EQ(ShapeToString((*out)[0]->shape()), ShapeToString(out_shape));
  std::vector<double> want, magnitude;
  NaiveConv(c, Values(inputs[0]), Values(inputs[1]),
            c.bias ? Values(inputs[2]) : std::vector<double>{}, &want, &magnitude);
  for (double& m : magnitude) m = 1e-5 * m + 1e-6;
  ExpectClose((*out)[0], want, magnitude);
}

ConvCase RandomCase(std::mt19937& rng, bool one_d) {
  for (;;) {
    ConvCase c{};
    c.batch = RandomInt(rng, 0, 9) == 0 ? 0 : RandomInt(rng, 1, 2);
    const int64_t kind = RandomInt(rng, 0, 3);  // 0, 1: groups 1; 2: grouped; 3: depthwise
    const int64_t group_in = kind == 3 ? 1 : RandomInt(rng, 0, 9) == 0 ? 0 : RandomInt(rng, 1, 4);
    c.groups = kind < 2 ? 1 : RandomInt(rng, 2, 4);
    c.channels = group_in * c.groups;
    c.outputs = c.groups * (RandomInt(rng, 0, 9) == 0 ? 0 : RandomInt(rng, 1, 3));
    c.height = one_d ? 1 : RandomInt(rng, 1, 12);
    c.width = RandomInt(rng, 1, 12);
    c.kernel_h = one_d ? 1 : RandomInt(rng, 1, 4);
    c.kernel_w = RandomInt(rng, 1, 4);
    c.stride_w = RandomInt(rng, 1, 3);
    c.dilation_w = RandomInt(rng, 1, 2);
    c.pad_left = RandomInt(rng, 0, 2);
    c.pad_right = RandomInt(rng, 0, 2);
    if (!one_d) {
      c.stride_h = RandomInt(rng, 1, 3);
      c.dilation_h = RandomInt(rng, 1, 2);
      c.pad_top = RandomInt(rng, 0, 2);
      c.pad_bottom = RandomInt(rng, 0, 2);
    }
    c.bias = rng() % 2;
    if (c.Fits()) return c;
  }
}

TEST(ConvTest, RandomConv2d) {
  std::mt19937 rng(41);
  for (int iter = 0; iter < 200; ++iter) CheckConv(rng, RandomCase(rng, false));
}

TEST(ConvTest, RandomConv1d) {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 100; ++iter) CheckConv(rng, RandomCase(rng, true), /*one_d=*/true);
}

TEST(ConvTest, SeveralPixelTilesPerImage) {
  std::mt19937 rng(43);
  // Patch 8 * 3 * 3 = 72: tiles of 1808 pixels over 48 * 48 = 2304, the second partial
  // and starting mid-row.
  CheckConv(rng, {.batch = 2,
                  .channels = 8,
                  .height = 48,
                  .width = 48,
                  .outputs = 5,
                  .kernel_h = 3,
                  .kernel_w = 3,
                  .groups = 1,
                  .pad_top = 1,
                  .pad_left = 1,
                  .pad_bottom = 1,
                  .pad_right = 1,
                  .bias = true});
  // Pointwise: the input is the GEMM operand directly, tiles of 432 pixels over 576.
  CheckConv(rng, {.batch = 1,
                  .channels = 300,
                  .height = 24,
                  .width = 24,
                  .outputs = 7,
                  .kernel_h = 1,
                  .kernel_w = 1,
                  .groups = 1,
                  .bias = true});
  CheckConv(rng, {.batch = 1,
                  .channels = 300,
                  .height = 24,
                  .width = 24,
                  .outputs = 7,
                  .kernel_h = 1,
                  .kernel_w = 1,
                  .groups = 1});
  // Strided 1x1 goes through im2col.
  CheckConv(rng, {.batch = 1,
                  .channels = 16,
                  .height = 15,
                  .width = 15,
                  .outputs = 4,
                  .kernel_h = 1,
                  .kernel_w = 1,
                  .groups = 1,
                  .stride_h = 2,
                  .stride_w = 2});
}

TEST(ConvTest, ResNetAndMobileNetLayers) {
  std::mt19937 rng(44);
  CheckConv(rng, {.batch = 1,
                  .channels = 64,
                  .height = 14,
                  .width = 14,
                  .outputs = 64,
                  .kernel_h = 3,
                  .kernel_w = 3,
                  .groups = 1,
                  .pad_top = 1,
                  .pad_left = 1,
                  .pad_bottom = 1,
                  .pad_right = 1,
                  .bias = true});
  CheckConv(rng, {.batch = 1,
                  .channels = 3,
                  .height = 32,
                  .width = 32,
                  .outputs = 8,
                  .kernel_h = 7,
                  .kernel_w = 7,
                  .groups = 1,
                  .stride_h = 2,
                  .stride_w = 2,
                  .pad_top = 3,
                  .pad_left = 3,
                  .pad_bottom = 3,
                  .pad_right = 3});
  // Depthwise 3x3, stride 1 and 2, channel multiplier 1 and 2.
  CheckConv(rng, {.batch = 2,
                  .channels = 32,
                  .height = 17,
                  .width = 17,
                  .outputs = 32,
                  .kernel_h = 3,
                  .kernel_w = 3,
                  .groups = 32,
                  .pad_top = 1,
                  .pad_left = 1,
                  .pad_bottom = 1,
                  .pad_right = 1,
                  .bias = true});
  CheckConv(rng, {.batch = 1,
                  .channels = 16,
                  .height = 17,
                  .width = 17,
                  .outputs = 32,
                  .kernel_h = 3,
                  .kernel_w = 3,
                  .groups = 16,
                  .stride_h = 2,
                  .stride_w = 2,
                  .pad_top = 1,
                  .pad_left = 1,
                  .pad_bottom = 1,
                  .pad_right = 1});
}

TEST(ConvTest, RelayAttributesAreChecked) {
  std::mt19937 rng(45);
  NDArray x = RandomTensor({1, 2, 5, 5}, DType::kF32, rng);
  NDArray w = RandomTensor({4, 2, 3, 3}, DType::kF32, rng);
  // The attributes a Relay program spells out are accepted when they agree.
  EXPECT_TRUE(RunKernel("nn.conv2d",
                        {{"channels", int64_t{4}},
                         {"kernel_size", std::vector<int64_t>{3, 3}},
                         {"data_layout", std::string("NCHW")},
                         {"kernel_layout", std::string("OIHW")},
                         {"out_layout", std::string("")},
                         {"out_dtype", std::string("float32")},
                         {"padding", std::vector<int64_t>{1}}},
                        {x, w})
                  .ok());
  ExpectInvalid(RunKernel("nn.conv2d", {{"channels", int64_t{5}}}, {x, w}),
                "nn.conv2d: weight [4, 2, 3, 3] contradicts attributes channels=5");
  ExpectInvalid(RunKernel("nn.conv2d", {{"kernel_size", std::vector<int64_t>{3, 2}}}, {x, w}),
                "contradicts attributes channels=0 kernel_size=[3, 2]");
  ExpectInvalid(RunKernel("nn.conv2d", {{"data_layout", std::string("NHWC")}}, {x, w}),
                "unsupported data_layout 'NHWC': expected 'NCHW'");
  ExpectInvalid(RunKernel("nn.conv1d", {{"kernel_layout", std::string("OIHW")}}, {x, w}),
                "unsupported kernel_layout 'OIHW': expected 'OIW'");
  ExpectInvalid(RunKernel("nn.conv2d", {{"out_dtype", std::string("int8")}}, {x, w}),
                "unsupported out_dtype 'int8': expected float32");
}

TEST(ConvTest, Errors) {
  NDArray x = Empty({1, 4, 5, 5}), w = Empty({6, 2, 3, 3});
  ExpectInvalid(RunKernel("nn.conv2d", {}, {x, w}),
                "nn.conv2d: weight [6, 2, 3, 3] does not fit data [1, 4, 5, 5] with groups 1");
  ExpectInvalid(RunKernel("nn.conv2d", {{"groups", int64_t{2}}}, {x, Empty({5, 2, 3, 3})}),
                "does not fit data [1, 4, 5, 5] with groups 2");
  ExpectInvalid(RunKernel("nn.conv2d", {{"groups", int64_t{0}}}, {x, w}),
                "attributes 'groups' 0 and 'channels' 0 must be positive and non-negative");
  ExpectInvalid(RunKernel("nn.conv2d", {{"groups", int64_t{2}}}, {Empty({1, 4, 5}), w}),
                "nn.conv2d: data must have rank 4 (NCHW), got shape [1, 4, 5]");
  ExpectInvalid(RunKernel("nn.conv1d", {}, {Empty({1, 4, 5}), w}),
                "nn.conv1d: weight must have rank 3 (OIW), got shape [6, 2, 3, 3]");
  ExpectInvalid(RunKernel("nn.conv2d", {{"groups", int64_t{2}}}, {x, w, Empty({5})}),
                "nn.conv2d: bias has shape [5], expected [6]");
  ExpectInvalid(RunKernel("nn.conv2d", {{"groups", int64_t{2}}}, {x, Empty({6, 2, 0, 3})}),
                "nn.conv2d: weight [6, 2, 0, 3] has an empty kernel");
  ExpectInvalid(RunKernel("nn.conv2d", {{"groups", int64_t{2}}}, {x, Empty({6, 2, 7, 3})}),
                "nn.conv2d: the window spans 7 height positions (kernel 7, dilation 1) but the "
                "padded input has 5");
  ExpectInvalid(
      RunKernel("nn.conv2d", {{"groups", int64_t{2}}, {"dilation", std::vector<int64_t>{1, 3}}},
                {x, w}),
      "the window spans 7 width positions (kernel 3, dilation 3)");
  ExpectInvalid(RunKernel("nn.conv2d", {{"strides", std::vector<int64_t>{1, 0}}}, {x, w}),
                "attribute 'strides' values must be in [1, 2147483648), got [1, 0]");
  ExpectInvalid(RunKernel("nn.conv2d", {{"padding", std::vector<int64_t>{1, 1, 1}}}, {x, w}),
                "attribute 'padding' needs 1, 2 or 4 values, got 3");
  ExpectInvalid(RunKernel("nn.conv2d", {{"padding", std::vector<int64_t>{-1}}}, {x, w}),
                "attribute 'padding' values must be in [0, 2147483648), got [-1]");
  ExpectInvalid(RunKernel("nn.conv2d", {{"dilation", std::vector<int64_t>{1, 1, 1}}}, {x, w}),
                "attribute 'dilation' needs 1 or 2 values, got 3");
  ExpectInvalid(
      RunKernel("nn.conv2d", {{"groups", int64_t{2}}}, {Empty({1, 4, 5, 5}, DType::kF16), w}),
      "unsupported dtype f16 for nn.conv2d data: expected f32");
  ExpectInvalid(RunKernel("nn.conv2d", {{"groups", int64_t{2}}}, {x, w, Empty({6}, DType::kI32)}),
                "unsupported dtype i32 for nn.conv2d bias: expected f32");
  ExpectInvalid(RunKernel("nn.conv2d", {}, {x}),
                "nn.conv2d takes 2 or 3 inputs (data, weight and an optional bias), got 1");
  ExpectInvalid(RunKernel("nn.conv2d", {{"stride", std::vector<int64_t>{1}}}, {x, w}),
                "unknown attribute 'stride'");
  ExpectInvalid(
      CallWithOutputs("nn.conv2d", {{"groups", int64_t{2}}}, {x, w}, {Empty({1, 6, 5, 5})}),
      "nn.conv2d: output 0 has shape [1, 6, 5, 5], expected [1, 6, 3, 3]");
}

}  // namespace
}  // namespace dynvm::kernels::testing
