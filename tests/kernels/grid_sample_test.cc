// Tests of nn.grid_sample (kernels/nn/grid_sample.cc): ONNX's GridSample conformance
// cases by hand, then every method, padding mode and align_corners on random shapes
// (extents of 0 and 1, points off the image, ties of nearest's rounding) against a plain
// port of ONNX's reference (onnx/reference/ops/op_grid_sample.py), non-finite points,
// and the errors.
//
// Tolerances: nearest copies input elements, so it is exact. The reference computes the
// coordinates in float as ONNX's does (so that nearest and the taps pick the same pixels)
// and the interpolation in double; with inputs in [-1, 1] the kernel's float sums are
// within 1e-5.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

Attrs SampleAttrs(const std::string& method, const std::string& padding, bool align_corners) {
  return {{"method", method}, {"padding_mode", padding}, {"align_corners", int64_t{align_corners}}};
}

std::vector<double> GridSample(const NDArray& x, const NDArray& grid, const Attrs& attrs) {
  absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.grid_sample", attrs, {x, grid});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? Values((*out)[0]) : std::vector<double>{};
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// ONNX's conformance cases (onnx/backend/test/case/node/gridsample.py): X [1, 1, 3, 2],
// points inside the image and, for the padding modes, far off it.
TEST(GridSampleTest, OnnxCases) {
  const NDArray x = TensorOf<float>({1, 1, 3, 2}, {0, 1, 2, 3, 4, 5});
  const NDArray grid = TensorOf<float>(
      {1, 2, 4, 2}, {-1, -1, -0.5f, -0.5f, -0.2f, -0.2f, 0, 0, 0, 0, -0.2f, -0.2f, 0.5f, 0.5f, 1, 1});
  EXPECT_EQ(GridSample(x, grid, SampleAttrs("nearest", "zeros", false)),
            (std::vector<double>{0, 0, 2, 2, 2, 2, 5, 0}));
  ExpectNear(GridSample(x, grid, SampleAttrs("bilinear", "zeros", false)), {0, 0.5, 1.7, 2.5, 2.5, 1.7, 4.5, 1.25},
             1e-6);
  ExpectNear(GridSample(x, grid, SampleAttrs("bilinear", "zeros", true)), {0, 1.25, 2, 2.5, 2.5, 2, 3.75, 5}, 1e-6);
  // Printed to 4 decimals there.
  ExpectNear(GridSample(x, grid, SampleAttrs("bicubic", "zeros", false)),
             {-0.1406, 0.3828, 1.7556, 2.9688, 2.9688, 1.7556, 5.1445, 1.3906}, 1e-4);

  const NDArray far = TensorOf<float>(
      {1, 2, 4, 2}, {-10, -10, -5, -5, -0.2f, -0.2f, 10, 10, 10, 10, -0.2f, -0.2f, 5, 5, 10, 10});
  ExpectNear(GridSample(x, far, SampleAttrs("bilinear", "zeros", false)), {0, 0, 1.7, 0, 0, 1.7, 0, 0}, 1e-6);
  ExpectNear(GridSample(x, far, SampleAttrs("bilinear", "border", false)), {0, 0, 1.7, 5, 5, 1.7, 5, 5}, 1e-6);
  ExpectNear(GridSample(x, far, SampleAttrs("bilinear", "reflection", false)), {2.5, 0, 1.7, 2.5, 2.5, 1.7, 5, 2.5},
             1e-6);
  // The defaults: bilinear, zeros, align_corners 0.
  ExpectNear(GridSample(x, grid, {}), {0, 0.5, 1.7, 2.5, 2.5, 1.7, 4.5, 1.25}, 1e-6);
}

// ---------------------------------------------------------------------------------------
// The reference: op_grid_sample.py for 2-D data, line for line.

struct Problem {
  std::string method, padding;
  bool align_corners;
};

// _gs_reflect. A range of one position (align_corners on an extent of 1), where the
// reference divides by zero, holds its one position.
double GsReflect(double x, double x_min, double x_max) {
  const double rng = x_max - x_min;
  if (rng == 0 && (x < x_min || x > x_max)) return x_min;
  if (x < x_min) {
    const double dx = x_min - x;
    const double n = std::trunc(dx / rng), r = dx - n * rng;
    return std::fmod(n, 2) == 0 ? x_min + r : x_max - r;
  }
  if (x > x_max) {
    const double dx = x - x_max;
    const double n = std::trunc(dx / rng), r = dx - n * rng;
    return std::fmod(n, 2) == 0 ? x_max - r : x_min + r;
  }
  return x;
}

// _pixel_at_array along one axis of `d` positions: the index read, or -1 for a 0.
int64_t PixelIndex(int64_t i, int64_t d, double lo, double hi, const std::string& padding) {
  if (padding == "zeros") return i >= 0 && i < d ? i : -1;
  if (padding == "border") return std::clamp<int64_t>(i, 0, d - 1);
  return static_cast<int64_t>(GsReflect(static_cast<double>(i), lo, hi));
}

// The cubic coefficients, a = -0.75, in double.
std::vector<double> Cubic(double x) {
  const double a = -0.75;
  x = std::fabs(x);
  return {((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a, ((a + 2) * x - (a + 3)) * x * x + 1,
          ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1,
          ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a};
}

// One sample of `plane` [h, w] at the denormalised, padded coordinates (x, y).
double ReferenceSample(const std::vector<double>& plane, int64_t h, int64_t w, double x, double y,
                       const Problem& p, const double border[4]) {
  auto pixel = [&](int64_t r, int64_t c) {
    const int64_t ri = PixelIndex(r, h, border[1], border[3], p.padding);
    const int64_t ci = PixelIndex(c, w, border[0], border[2], p.padding);
    return ri < 0 || ci < 0 ? 0.0 : plane[ri * w + ci];
  };
  if (p.method == "nearest") return pixel(static_cast<int64_t>(y), static_cast<int64_t>(x));
  const bool cubic = p.method == "bicubic";
  const int64_t x0 = static_cast<int64_t>(std::floor(x)), y0 = static_cast<int64_t>(std::floor(y));
  const std::vector<double> cx = cubic ? Cubic(x - x0) : std::vector<double>{1 - (x - x0), x - x0};
  const std::vector<double> cy = cubic ? Cubic(y - y0) : std::vector<double>{1 - (y - y0), y - y0};
  const int64_t first = cubic ? -1 : 0;
  double sum = 0;
  for (size_t j = 0; j < cy.size(); ++j) {
    double row = 0;
    for (size_t i = 0; i < cx.size(); ++i) row += cx[i] * pixel(y0 + first + j, x0 + first + i);
    sum += cy[j] * row;
  }
  return sum;
}

std::vector<double> Reference(const NDArray& x, const NDArray& grid, const Problem& p) {
  const int64_t n = x->shape()[0], c = x->shape()[1], h = x->shape()[2], w = x->shape()[3];
  const int64_t ho = grid->shape()[1], wo = grid->shape()[2];
  const std::vector<double> in = Values(x);
  const float* g = grid->data_as<float>();
  // [x_min, y_min, x_max, y_max]
  const double border[4] = {p.align_corners ? 0.0 : -0.5, p.align_corners ? 0.0 : -0.5,
                            p.align_corners ? w - 1.0 : w - 0.5, p.align_corners ? h - 1.0 : h - 0.5};
  auto denormalize = [&](float v, int64_t length) {
    return p.align_corners ? (v + 1.0f) / 2.0f * static_cast<float>(length - 1)
                           : ((v + 1.0f) * static_cast<float>(length) - 1.0f) / 2.0f;
  };
  auto pad = [&](float v, int64_t length, double lo, double hi) {
    if (!(v < lo || v > hi)) return v;
    if (p.padding == "border") return std::clamp(v, 0.0f, static_cast<float>(length - 1));
    if (p.padding == "reflection") return static_cast<float>(GsReflect(v, lo, hi));
    return v;
  };
  std::vector<double> y(n * c * ho * wo);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const std::vector<double> plane(in.begin() + (b * c + ch) * h * w, in.begin() + (b * c + ch + 1) * h * w);
      for (int64_t oy = 0; oy < ho; ++oy) {
        for (int64_t ox = 0; ox < wo; ++ox) {
          const float* point = g + ((b * ho + oy) * wo + ox) * 2;
          float sx = denormalize(point[0], w), sy = denormalize(point[1], h);
          if (p.method == "nearest") {
            sx = std::nearbyint(sx);
            sy = std::nearbyint(sy);
          }
          sx = pad(sx, w, border[0], border[2]);
          sy = pad(sy, h, border[1], border[3]);
          y[((b * c + ch) * ho + oy) * wo + ox] = ReferenceSample(plane, h, w, sx, sy, p, border);
        }
      }
    }
  }
  return y;
}

TEST(GridSampleTest, EveryModeOnRandomShapes) {
  std::mt19937 rng(29);
  const std::string methods[] = {"nearest", "bilinear", "bicubic"};
  const std::string paddings[] = {"zeros", "border", "reflection"};
  for (int iter = 0; iter < 300; ++iter) {
    const Problem p{methods[rng() % 3], paddings[rng() % 3], RandomInt(rng, 0, 1) == 1};
    const int64_t n = RandomInt(rng, 0, 2), c = RandomInt(rng, 1, 3);
    const int64_t h = RandomInt(rng, 1, 5), w = RandomInt(rng, 1, 5);
    const int64_t ho = RandomInt(rng, 0, 4), wo = RandomInt(rng, 0, 4);
    const NDArray x = RandomTensor({n, c, h, w}, DType::kF32, rng);
    // Points on a grid of quarters in [-3, 3] (whose coordinates are exact, so that
    // nearest meets its ties) or anywhere in [-1.5, 1.5].
    std::vector<float> points(n * ho * wo * 2);
    const bool quarters = RandomInt(rng, 0, 1) == 1;
    for (float& v : points) {
      v = quarters ? static_cast<float>(RandomInt(rng, -12, 12)) / 4.0f
                   : std::uniform_real_distribution<float>(-1.5f, 1.5f)(rng);
    }
    const NDArray grid = TensorOf<float>({n, ho, wo, 2}, points);
    SCOPED_TRACE(::testing::Message() << "data [" << n << ", " << c << ", " << h << ", " << w << "] -> " << ho
                                      << "x" << wo << " " << p.method << " " << p.padding
                                      << " align_corners=" << p.align_corners);
    absl::StatusOr<std::vector<NDArray>> out =
        RunKernel("nn.grid_sample", SampleAttrs(p.method, p.padding, p.align_corners), {x, grid});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0]->shape(), (Shape{n, c, ho, wo}));
    ExpectClose((*out)[0], Reference(x, grid, p), p.method == "nearest" ? 0.0 : 1e-5, 0.0);
  }
}

// A point that is not finite after padding samples 0 under zeros and NaN otherwise;
// infinities clamp under border; huge finite points stay in bounds.
TEST(GridSampleTest, NonFiniteAndHugePoints) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const NDArray x = TensorOf<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const NDArray points = TensorOf<float>({1, 1, 4, 2}, {nan, 0, inf, inf, -inf, 0, 1e30f, -1e30f});
  for (const char* method : {"nearest", "bilinear", "bicubic"}) {
    SCOPED_TRACE(method);
    const std::vector<double> zeros = GridSample(x, points, SampleAttrs(method, "zeros", false));
    EXPECT_EQ(zeros, (std::vector<double>{0, 0, 0, 0}));
    const std::vector<double> border = GridSample(x, points, SampleAttrs(method, "border", true));
    ASSERT_EQ(border.size(), 4u);
    EXPECT_TRUE(std::isnan(border[0]));
    EXPECT_NEAR(border[1], 4, 1e-6);  // (+inf, +inf): the bottom right corner
    EXPECT_NEAR(border[3], 2, 1e-6);  // (+1e30, -1e30): the top right corner
    const std::vector<double> reflection = GridSample(x, points, SampleAttrs(method, "reflection", false));
    ASSERT_EQ(reflection.size(), 4u);
    EXPECT_TRUE(std::isnan(reflection[0]) && std::isnan(reflection[1]) && std::isnan(reflection[2]));
    EXPECT_TRUE(std::isfinite(reflection[3]));
  }
}

TEST(GridSampleTest, Errors) {
  const NDArray x = Empty({1, 2, 3, 3});
  const NDArray grid = Empty({1, 2, 2, 2});
  ExpectInvalid(RunKernel("nn.grid_sample", {{"method", std::string("linear")}}, {x, grid}),
                "unsupported method 'linear': expected one of bilinear, nearest, bicubic");
  ExpectInvalid(RunKernel("nn.grid_sample", {{"padding_mode", std::string("wrap")}}, {x, grid}),
                "unsupported padding_mode 'wrap': expected one of zeros, border, reflection");
  ExpectInvalid(RunKernel("nn.grid_sample", {{"align_corners", int64_t{2}}}, {x, grid}), "align_corners");
  ExpectInvalid(RunKernel("nn.grid_sample", {{"layout", std::string("NHWC")}}, {x, grid}),
                "unsupported layout 'NHWC'");
  ExpectInvalid(RunKernel("nn.grid_sample", {{"mode", std::string("bilinear")}}, {x, grid}), "'mode'");
  ExpectInvalid(RunKernel("nn.grid_sample", {}, {x, Empty({2, 2, 2, 2})}),
                "nn.grid_sample: expected data [N, C, H, W] and grid [N, Ho, Wo, 2], got data [1, 2, 3, 3] and "
                "grid [2, 2, 2, 2]");
  ExpectInvalid(RunKernel("nn.grid_sample", {}, {x, Empty({1, 2, 2, 3})}), "grid [N, Ho, Wo, 2]");
  ExpectInvalid(RunKernel("nn.grid_sample", {}, {Empty({2, 3, 3}), grid}), "data [N, C, H, W]");
  ExpectInvalid(RunKernel("nn.grid_sample", {}, {x, Empty({1, 2, 2, 2}, DType::kF16)}),
                "unsupported dtype f16 for nn.grid_sample grid: expected f32");
  ExpectInvalid(RunKernel("nn.grid_sample", {}, {Empty({1, 2, 0, 3}), grid}),
                "nn.grid_sample: cannot sample the empty image [1, 2, 0, 3] at 2 x 2 points");
  ExpectInvalid(CallWithOutputs("nn.grid_sample", {}, {x, grid}, {Empty({1, 2, 3, 3})}),
                "nn.grid_sample: output 0 has shape [1, 2, 3, 3], expected [1, 2, 2, 2]");
  // No points, or an empty image sampled nowhere, is fine.
  EXPECT_TRUE(RunKernel("nn.grid_sample", {}, {Empty({1, 2, 0, 3}), Empty({1, 0, 2, 2})}).ok());
  EXPECT_TRUE(RunKernel("nn.grid_sample", {}, {Empty({0, 2, 3, 3}), Empty({0, 2, 2, 2})}).ok());
}

}  // namespace
}  // namespace dynvm::kernels::testing
