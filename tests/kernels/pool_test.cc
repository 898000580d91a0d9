// Tests of nn.max_pool2d, nn.avg_pool2d and nn.global_avg_pool2d (kernels/nn/pool.cc)
// against a naive pooling written here from TVM's definition (a padded input whose pad
// value is the lowest float for max and 0 for avg; divisors counting the taps inside the
// padded or the unpadded input), on random windows with strides, dilation, asymmetric
// padding and ceil_mode, and their errors.
//
// Tolerances: max pooling is exact. An average is a float sum of at most kh * kw terms
// and one division: 1e-6 relative to the sum of magnitudes. A global average sums a
// whole plane in float, an error of at most plane * eps times the sum of magnitudes
// before the division by the plane size: 1e-6 times the sum of magnitudes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

struct PoolCase {
  int64_t batch, channels, height, width, pool_h, pool_w;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool ceil_mode = false, count_include_pad = false;

  int64_t Out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pads) const {
    return (in + pads - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0)) / s + 1;
  }
  int64_t OutH() const { return Out(height, pool_h, stride_h, dilation_h, pad_top + pad_bottom); }
  int64_t OutW() const { return Out(width, pool_w, stride_w, dilation_w, pad_left + pad_right); }
  bool Fits() const {
    return height + pad_top + pad_bottom >= dilation_h * (pool_h - 1) + 1 &&
           width + pad_left + pad_right >= dilation_w * (pool_w - 1) + 1;
  }
  Attrs ToAttrs(bool max) const {
    Attrs attrs = {{"pool_size", std::vector<int64_t>{pool_h, pool_w}},
                   {"strides", std::vector<int64_t>{stride_h, stride_w}},
                   {"dilation", std::vector<int64_t>{dilation_h, dilation_w}},
                   {"padding", std::vector<int64_t>{pad_top, pad_left, pad_bottom, pad_right}},
                   {"ceil_mode", int64_t{ceil_mode}}};
    if (!max) attrs["count_include_pad"] = int64_t{count_include_pad};
    return attrs;
  }
};

// Per output: the reference value and the sum of magnitudes of what it combines.
void NaivePool(const PoolCase& c, bool max, const std::vector<double>& in, std::vector<double>* out,
               std::vector<double>* magnitude) {
  const int64_t oh_n = c.OutH(), ow_n = c.OutW();
  out->clear();
  magnitude->clear();
  const double lowest = std::numeric_limits<float>::lowest();
  for (int64_t p = 0; p < c.batch * c.channels; ++p) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        double acc = max ? -INFINITY : 0.0, mag = 0;
        int64_t inside = 0, padded = 0;
        for (int64_t kh = 0; kh < c.pool_h; ++kh) {
          for (int64_t kw = 0; kw < c.pool_w; ++kw) {
            const int64_t ih = oh * c.stride_h - c.pad_top + kh * c.dilation_h;
            const int64_t iw = ow * c.stride_w - c.pad_left + kw * c.dilation_w;
            const bool in_h = ih >= 0 && ih < c.height, in_w = iw >= 0 && iw < c.width;
            // The explicit padding, not the ceil_mode extension past it.
            if (ih < c.height + c.pad_bottom && iw < c.width + c.pad_right) ++padded;
            if (in_h && in_w) {
              const double v = in[(p * c.height + ih) * c.width + iw];
              acc = max ? std::max(acc, v) : acc + v;
              mag += std::fabs(v);
              ++inside;
            } else if (max) {
              acc = std::max(acc, lowest);
            }
          }
        }
        if (!max) acc /= std::max<int64_t>(1, c.count_include_pad ? padded : inside);
        out->push_back(acc);
        magnitude->push_back(mag);
      }
    }
  }
}

// Per output of max pooling: the flattened index of its window's first maximum among
// the taps inside the data, or -1 when none is.
std::vector<int64_t> NaiveArgmax(const PoolCase& c, const std::vector<double>& in) {
  std::vector<int64_t> out;
  for (int64_t p = 0; p < c.batch * c.channels; ++p) {
    for (int64_t oh = 0; oh < c.OutH(); ++oh) {
      for (int64_t ow = 0; ow < c.OutW(); ++ow) {
        int64_t at = -1;
        for (int64_t kh = 0; kh < c.pool_h; ++kh) {
          for (int64_t kw = 0; kw < c.pool_w; ++kw) {
            const int64_t ih = oh * c.stride_h - c.pad_top + kh * c.dilation_h;
            const int64_t iw = ow * c.stride_w - c.pad_left + kw * c.dilation_w;
            if (ih < 0 || ih >= c.height || iw < 0 || iw >= c.width) continue;
            const int64_t i = (p * c.height + ih) * c.width + iw;
            if (at < 0 || in[i] > in[at]) at = i;
          }
        }
        out.push_back(at);
      }
    }
  }
  return out;
}

void CheckPool(std::mt19937& rng, const PoolCase& c) {
  SCOPED_TRACE(::testing::Message()
               << c.batch << "x" << c.channels << "x" << c.height << "x" << c.width << " pool "
               << c.pool_h << "x" << c.pool_w << " s" << c.stride_h << "," << c.stride_w << " d"
               << c.dilation_h << "," << c.dilation_w << " p" << c.pad_top << "," << c.pad_left
               << "," << c.pad_bottom << "," << c.pad_right << " ceil " << c.ceil_mode
               << " include_pad " << c.count_include_pad);
  NDArray x = RandomTensor({c.batch, c.channels, c.height, c.width}, DType::kF32, rng);
  for (bool max : {true, false}) {
    absl::StatusOr<std::vector<NDArray>> out =
        RunKernel(max ? "nn.max_pool2d" : "nn.avg_pool2d", c.ToAttrs(max), {x});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ShapeToString((*out)[0]->shape()),
              ShapeToString({c.batch, c.channels, c.OutH(), c.OutW()}));
    std::vector<double> want, magnitude;
    NaivePool(c, max, Values(x), &want, &magnitude);
    if (max) {
      ExpectClose((*out)[0], want, 0, 0);
      // With indices (the scalar path): the same maxima, and each one's first position.
      Attrs attrs = c.ToAttrs(true);
      attrs["with_indices"] = int64_t{1};
      auto both = RunKernel("nn.max_pool2d", attrs, {x}, {DType::kF32, DType::kI64}, 2);
      ASSERT_TRUE(both.ok()) << both.status();
      ExpectClose((*both)[0], want, 0, 0);
      const std::vector<int64_t> at = NaiveArgmax(c, Values(x));
      for (size_t i = 0; i < at.size(); ++i) {
        EXPECT_EQ((*both)[1]->data_as<int64_t>()[i], at[i]) << "output " << i;
      }
      // u8 data: the same windows over integers; a window with no tap inside the data
      // yields the lowest u8, 0.
      NDArray bytes = *NDArrayObj::Empty({c.batch, c.channels, c.height, c.width}, DType::kU8, MakeNaiveAllocator());
      std::vector<double> byte_values;
      for (int64_t i = 0; i < bytes->num_elements(); ++i) {
        bytes->data_as<uint8_t>()[i] = static_cast<uint8_t>(rng() % 256);
        byte_values.push_back(bytes->data_as<uint8_t>()[i]);
      }
      auto pooled = RunKernel("nn.max_pool2d", c.ToAttrs(true), {bytes}, {DType::kU8});
      ASSERT_TRUE(pooled.ok()) << pooled.status();
      std::vector<double> want_bytes;
      NaivePool(c, true, byte_values, &want_bytes, &magnitude);
      for (size_t i = 0; i < want_bytes.size(); ++i) {
        EXPECT_EQ((*pooled)[0]->data_as<uint8_t>()[i], std::max(0.0, want_bytes[i])) << "u8 output " << i;
      }
    } else {
      for (double& m : magnitude) m = 1e-6 * m + 1e-7;
      ExpectClose((*out)[0], want, magnitude);
    }
  }
}

TEST(PoolTest, RandomWindows) {
  std::mt19937 rng(51);
  for (int iter = 0; iter < 300; ++iter) {
    PoolCase c{};
    c.batch = RandomInt(rng, 0, 9) == 0 ? 0 : RandomInt(rng, 1, 2);
    c.channels = RandomInt(rng, 1, 3);
    c.height = RandomInt(rng, 1, 11);
    c.width = RandomInt(rng, 1, 23);
    c.pool_h = RandomInt(rng, 1, 4);
    c.pool_w = RandomInt(rng, 1, 4);
    c.stride_h = RandomInt(rng, 1, 3);
    c.stride_w = RandomInt(rng, 1, 3);
    c.dilation_h = RandomInt(rng, 1, 2);
    c.dilation_w = RandomInt(rng, 1, 2);
    c.pad_top = RandomInt(rng, 0, 2);
    c.pad_left = RandomInt(rng, 0, 2);
    c.pad_bottom = RandomInt(rng, 0, 2);
    c.pad_right = RandomInt(rng, 0, 2);
    c.ceil_mode = rng() % 2;
    c.count_include_pad = rng() % 2;
    if (c.Fits()) CheckPool(rng, c);
  }
}

TEST(PoolTest, CommonLayers) {
  std::mt19937 rng(52);
  // ResNet's stem max pool, 3x3 stride 2 pad 1; a 2x2 stride 2; GoogLeNet's ceil_mode pool.
  CheckPool(rng, {.batch = 1,
                  .channels = 4,
                  .height = 112,
                  .width = 112,
                  .pool_h = 3,
                  .pool_w = 3,
                  .stride_h = 2,
                  .stride_w = 2,
                  .pad_top = 1,
                  .pad_left = 1,
                  .pad_bottom = 1,
                  .pad_right = 1});
  CheckPool(rng, {.batch = 2,
                  .channels = 3,
                  .height = 16,
                  .width = 16,
                  .pool_h = 2,
                  .pool_w = 2,
                  .stride_h = 2,
                  .stride_w = 2});
  CheckPool(rng, {.batch = 1,
                  .channels = 2,
                  .height = 14,
                  .width = 14,
                  .pool_h = 3,
                  .pool_w = 3,
                  .stride_h = 2,
                  .stride_w = 2,
                  .ceil_mode = true});
  CheckPool(rng, {.batch = 1,
                  .channels = 2,
                  .height = 9,
                  .width = 9,
                  .pool_h = 3,
                  .pool_w = 3,
                  .pad_top = 1,
                  .pad_left = 1,
                  .pad_bottom = 1,
                  .pad_right = 1,
                  .count_include_pad = true});
}

TEST(PoolTest, WindowsEntirelyInTheCeilExtension) {
  // width 4, pool 1, stride 2, ceil: outputs read 0, 2 and 4; the last lies past the
  // input (max: the lowest float; avg: 0).
  NDArray x = TensorOf<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  const Attrs attrs = {{"pool_size", std::vector<int64_t>{1, 1}},
                       {"strides", std::vector<int64_t>{1, 2}},
                       {"ceil_mode", int64_t{1}}};
  absl::StatusOr<std::vector<NDArray>> max = RunKernel("nn.max_pool2d", attrs, {x});
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(Values((*max)[0]), (std::vector<double>{1, 3, std::numeric_limits<float>::lowest()}));
  absl::StatusOr<std::vector<NDArray>> avg = RunKernel("nn.avg_pool2d", attrs, {x});
  ASSERT_TRUE(avg.ok()) << avg.status();
  EXPECT_EQ(Values((*avg)[0]), (std::vector<double>{1, 3, 0}));
}

TEST(GlobalAvgPoolTest, Planes) {
  std::mt19937 rng(53);
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 3, 7, 7},
                                            {1, 64, 56, 56},
                                            {1, 1, 1, 1},
                                            {0, 3, 2, 2},
                                            {3, 2, 1, 13}}) {
    NDArray x = RandomTensor(shape, DType::kF32, rng);
    absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.global_avg_pool2d", {}, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ShapeToString((*out)[0]->shape()), ShapeToString({shape[0], shape[1], 1, 1}));
    const std::vector<double> in = Values(x);
    const int64_t plane = shape[2] * shape[3];
    std::vector<double> want, tol;
    for (int64_t p = 0; p < shape[0] * shape[1]; ++p) {
      double sum = 0, mag = 0;
      for (int64_t i = 0; i < plane; ++i) {
        sum += in[p * plane + i];
        mag += std::fabs(in[p * plane + i]);
      }
      want.push_back(sum / plane);
      // A float sum of the plane errs by at most (plane - 1) 2^-24 mag, its mean by
      // 2^-24 mag: allow twice that.
      tol.push_back(0x1p-23 * mag + 1e-7);
    }
    ExpectClose((*out)[0], want, tol);
  }
}

TEST(PoolTest, Errors) {
  NDArray x = Empty({1, 2, 5, 5});
  ExpectInvalid(RunKernel("nn.max_pool2d", {}, {Empty({1, 2, 5})}),
                "nn.max_pool2d: data must have rank 4 (NCHW), got shape [1, 2, 5]");
  ExpectInvalid(RunKernel("nn.avg_pool2d", {}, {Empty({1, 2, 5, 5}, DType::kI32)}),
                "unsupported dtype i32 for nn.avg_pool2d data: expected f32");
  ExpectInvalid(RunKernel("nn.max_pool2d", {{"pool_size", std::vector<int64_t>{6, 1}}}, {x}),
                "nn.max_pool2d: the window spans 6 height positions (kernel 6, dilation 1) but "
                "the padded input has 5");
  ExpectInvalid(RunKernel("nn.max_pool2d", {{"pool_size", std::vector<int64_t>{0}}}, {x}),
                "attribute 'pool_size' values must be in [1, 2147483648), got [0, 0]");
  ExpectInvalid(RunKernel("nn.max_pool2d", {{"count_include_pad", int64_t{1}}}, {x}),
                "unknown attribute 'count_include_pad'");
  ExpectInvalid(RunKernel("nn.avg_pool2d", {{"ceil_mode", int64_t{3}}}, {x}),
                "attribute 'ceil_mode' must be 0 or 1, got 3");
  ExpectInvalid(RunKernel("nn.avg_pool2d", {{"layout", std::string("NHWC")}}, {x}),
                "unsupported layout 'NHWC': expected 'NCHW'");
  ExpectInvalid(RunKernel("nn.global_avg_pool2d", {{"layout", std::string("NCHW4c")}}, {x}),
                "unsupported layout 'NCHW4c': expected 'NCHW'");
  ExpectInvalid(RunKernel("nn.global_avg_pool2d", {}, {Empty({2, 2})}),
                "nn.global_avg_pool2d: data must have rank 4 (NCHW), got shape [2, 2]");
  ExpectInvalid(RunKernel("nn.max_pool2d", {}, {x, x}), "takes 1 inputs and any number of outputs, not 2 and 1");
  ExpectInvalid(RunKernel("nn.max_pool2d", {{"pool_size", std::vector<int64_t>{2, 2}}}, {x}, {DType::kF32, DType::kI64}, 2),
                "nn.max_pool2d: expected 1 outputs (with_indices 0), got 2");
  ExpectInvalid(CallWithOutputs("nn.max_pool2d", {}, {x}, {Empty({1, 2, 4, 4})}),
                "nn.max_pool2d: output 0 has shape [1, 2, 4, 4], expected [1, 2, 5, 5]");
  ExpectInvalid(CallWithOutputs("nn.global_avg_pool2d", {}, {x}, {Empty({1, 2})}),
                "nn.global_avg_pool2d: output 0 has shape [1, 2], expected [1, 2, 1, 1]");
}

}  // namespace
}  // namespace dynvm::kernels::testing
