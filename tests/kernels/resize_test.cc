// Tests of image.resize2d (kernels/nn/resize.cc): hand-computed results that pin the
// semantics (PyTorch's bilinear, ONNX's nearest and cubic), then every method, coordinate
// mode and rounding on random sizes (up- and downsampling, extents of 0 and 1) against a
// plain reference written from TVM's formulas — for cubic and tf_crop_and_resize, from
// ONNX's reference (onnx/backend/test/case/node/resize.py) —, and the errors.
//
// Tolerances: nearest copies input elements, so it is exact. The reference computes the
// source coordinates in float as TVM does (so that nearest picks the same pixel) and the
// interpolation in double; with inputs in [-1, 1] bilinear is within 1e-6 absolute, and
// cubic, whose weights the kernel computes in float, within 1e-5.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

std::vector<double> Resize(const NDArray& x, const Attrs& attrs) {
  absl::StatusOr<std::vector<NDArray>> out = RunKernel("image.resize2d", attrs, {x});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? Values((*out)[0]) : std::vector<double>{};
}

Attrs ResizeAttrs(int64_t h, int64_t w, std::string method, std::string mode,
                  std::string rounding = "") {
  Attrs attrs = {{"size", std::vector<int64_t>{h, w}},
                 {"method", std::move(method)},
                 {"coordinate_transformation_mode", std::move(mode)}};
  if (!rounding.empty()) attrs["rounding_method"] = std::move(rounding);
  return attrs;
}

TEST(ResizeTest, HandComputed) {
  NDArray square = TensorOf<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(Resize(square, ResizeAttrs(4, 4, "nearest_neighbor", "asymmetric")),
            (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  NDArray row = TensorOf<float>({1, 1, 1, 3}, {0, 10, 20});
  EXPECT_EQ(Resize(row, ResizeAttrs(1, 5, "linear", "align_corners")),
            (std::vector<double>{0, 5, 10, 15, 20}));
  // PyTorch's interpolate(mode="bilinear", align_corners=False) of [0, 4] to 4.
  NDArray pair = TensorOf<float>({1, 1, 1, 2}, {0, 4});
  EXPECT_EQ(Resize(pair, ResizeAttrs(1, 4, "linear", "half_pixel")),
            (std::vector<double>{0, 1, 3, 4}));
  // ONNX Resize nearest, half_pixel, 4 -> 2: sources 0.5 and 2.5 round down (floor).
  NDArray four = TensorOf<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  EXPECT_EQ(Resize(four, ResizeAttrs(1, 2, "nearest_neighbor", "half_pixel")),
            (std::vector<double>{1, 3}));
  // round is half to even: asymmetric 4 -> 8 reads 0, 0.5, 1, 1.5, ...: 0, 0, 1, 2, 2, 2, 3, 4
  // (indices clamp to 3).
  EXPECT_EQ(Resize(four, ResizeAttrs(1, 8, "nearest_neighbor", "asymmetric", "round")),
            (std::vector<double>{1, 1, 2, 3, 3, 3, 4, 4}));
  EXPECT_EQ(Resize(four, ResizeAttrs(1, 8, "nearest_neighbor", "asymmetric", "round_prefer_ceil")),
            (std::vector<double>{1, 2, 2, 3, 3, 4, 4, 4}));
  // Relay's defaults: linear, half_pixel; the identity size copies.
  EXPECT_EQ(Resize(square, {{"size", std::vector<int64_t>{2, 2}}}),
            (std::vector<double>{1, 2, 3, 4}));
}

// The source coordinate, computed in float as TVM's topi does.
float Source(const std::string& mode, int64_t x, int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const float fx = static_cast<float>(x);
  if (mode == "half_pixel") return (fx + 0.5f) * scale - 0.5f;
  if (mode == "pytorch_half_pixel") return out > 1 ? (fx + 0.5f) * scale - 0.5f : 0.0f;
  if (mode == "align_corners") {
    return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) * fx : 0.0f;
  }
  if (mode == "asymmetric") return fx * scale;
  return (fx + 0.5f) * scale;  // tf_half_pixel_for_nn
}

int64_t Nearest(const std::string& rounding, float v, int64_t in) {
  float r = 0;
  if (rounding == "round") r = std::nearbyint(v);
  if (rounding == "floor") r = std::floor(v + 1e-5f);
  if (rounding == "ceil") r = std::ceil(v - 1e-5f);
  if (rounding == "round_prefer_floor") r = std::ceil(v - 0.5f);
  if (rounding == "round_prefer_ceil") r = std::floor(v + 0.5f);
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
}

std::vector<double> Reference(const std::vector<double>& x, int64_t planes, int64_t in_h,
                              int64_t in_w, int64_t out_h, int64_t out_w, bool linear,
                              const std::string& mode, const std::string& rounding) {
  std::vector<double> y;
  auto at = [&](int64_t p, int64_t i, int64_t j) {
    return x[(p * in_h + std::clamp<int64_t>(i, 0, in_h - 1)) * in_w +
             std::clamp<int64_t>(j, 0, in_w - 1)];
  };
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < out_h; ++oy) {
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const float sy = Source(mode, oy, in_h, out_h), sx = Source(mode, ox, in_w, out_w);
        if (!linear) {
          y.push_back(at(p, Nearest(rounding, sy, in_h), Nearest(rounding, sx, in_w)));
          continue;
        }
        const int64_t y0 = static_cast<int64_t>(std::floor(sy));
        const int64_t x0 = static_cast<int64_t>(std::floor(sx));
        const double ty = sy - y0, tx = sx - x0;
        const double top = at(p, y0, x0) * (1 - tx) + at(p, y0, x0 + 1) * tx;
        const double bottom = at(p, y0 + 1, x0) * (1 - tx) + at(p, y0 + 1, x0 + 1) * tx;
        y.push_back(top * (1 - ty) + bottom * ty);
      }
    }
  }
  return y;
}

TEST(ResizeTest, EveryModeOnRandomSizes) {
  std::mt19937 rng(61);
  const std::string modes[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                               "tf_half_pixel_for_nn"};
  const std::string roundings[] = {
      "", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"};
  for (int iter = 0; iter < 120; ++iter) {
    const int64_t n = RandomInt(rng, 0, 2), c = RandomInt(rng, 1, 3);
    const int64_t in_h = RandomInt(rng, 1, 9), in_w = RandomInt(rng, 1, 9);
    const int64_t out_h = RandomInt(rng, 1, 12), out_w = RandomInt(rng, 1, 12);
    const std::string& mode = modes[rng() % 5];
    NDArray x = RandomTensor({n, c, in_h, in_w}, DType::kF32, rng);
    for (bool linear : {false, true}) {
      std::string rounding = linear ? "" : roundings[rng() % 6];
      SCOPED_TRACE(::testing::Message()
                   << in_h << "x" << in_w << " -> " << out_h << "x" << out_w << " "
                   << (linear ? "linear" : "nearest") << " " << mode << " '" << rounding << "'");
      absl::StatusOr<std::vector<NDArray>> out = RunKernel(
          "image.resize2d",
          ResizeAttrs(out_h, out_w, linear ? "linear" : "nearest_neighbor", mode, rounding), {x});
      ASSERT_TRUE(out.ok()) << out.status();
      if (rounding.empty()) rounding = mode == "align_corners" ? "round" : "floor";
      ExpectClose((*out)[0],
                  Reference(Values(x), n * c, in_h, in_w, out_h, out_w, linear, mode, rounding),
                  linear ? 1e-6 : 0.0, 0.0);
    }
  }
}

TEST(ResizeTest, RelayAttributesAreAccepted) {
  NDArray x = TensorOf<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Attrs attrs = ResizeAttrs(3, 3, "linear", "align_corners");
  attrs["layout"] = std::string("NCHW");
  attrs["roi"] = std::vector<double>{0, 0, 0, 0};
  attrs["cubic_alpha"] = -0.75;
  attrs["cubic_exclude"] = int64_t{0};
  attrs["extrapolation_value"] = 0.0;
  attrs["out_dtype"] = std::string("");
  EXPECT_EQ(Resize(x, attrs), (std::vector<double>{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
}

// dyn.image.resize2d: ONNX's sizes give what the size attribute gives; scales give
// floor(in * scale) and map coordinates by 1 / scale (here 0.6 of 5 columns: 3 columns
// read from x = (j + 0.5) / 0.6 - 0.5, not from the extents' ratio 5 / 3).
TEST(ResizeTest, DynTargetSizesAndScales) {
  std::mt19937 rng(3);
  const NDArray x = RandomTensor({2, 3, 4, 5}, DType::kF32, rng);
  for (const char* method : {"nearest_neighbor", "linear"}) {
    SCOPED_TRACE(method);
    Attrs dyn = ResizeAttrs(0, 0, method, "half_pixel");
    dyn.erase("size");
    absl::StatusOr<std::vector<NDArray>> by_sizes =
        RunKernel("dyn.image.resize2d", dyn, {x, TensorOf<int64_t>({4}, {2, 3, 7, 3})}, {DType::kF32});
    ASSERT_TRUE(by_sizes.ok()) << by_sizes.status();
    EXPECT_EQ(Values((*by_sizes)[0]), Resize(x, ResizeAttrs(7, 3, method, "half_pixel")));

    absl::StatusOr<std::vector<NDArray>> by_scales =
        RunKernel("dyn.image.resize2d", dyn, {x, TensorOf<float>({4}, {1, 1, 1, 0.6f})}, {DType::kF32});
    ASSERT_TRUE(by_scales.ok()) << by_scales.status();
    const NDArray& y = (*by_scales)[0];
    ASSERT_EQ(y->shape(), (Shape{2, 3, 4, 3}));
    for (int64_t j = 0; j < 3; ++j) {
      const float v = (static_cast<float>(j) + 0.5f) / 0.6f - 0.5f;
      const float* row = x->data_as<float>();  // plane 0, row 0
      const int64_t i0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(v)), 0, 4);
      const int64_t i1 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(v)) + 1, 0, 4);
      const float t = v - std::floor(v);
      const double want = std::string_view(method) == "linear"
                              ? row[i0] * (1.0 - t) + row[i1] * t
                              : row[std::clamp<int64_t>(static_cast<int64_t>(std::floor(v + 1e-5f)), 0, 4)];
      EXPECT_NEAR(y->data_as<float>()[j], want, 1e-6) << "column " << j;
    }
  }
  Attrs dyn = ResizeAttrs(0, 0, "linear", "half_pixel");
  dyn.erase("size");
  ExpectInvalid(RunKernel("dyn.image.resize2d", dyn, {x, TensorOf<int64_t>({4}, {2, 4, 7, 3})}, {DType::kF32}),
                "sizes [2, 4, ...] change N or C");
  ExpectInvalid(RunKernel("dyn.image.resize2d", dyn, {x, TensorOf<float>({4}, {1, 1, 0, 2})}, {DType::kF32}),
                "must be 1 for N and C and positive for H and W");
  ExpectInvalid(RunKernel("dyn.image.resize2d", dyn, {x, TensorOf<int32_t>({4}, {2, 3, 7, 3})}, {DType::kF32}),
                "the target must be sizes (i64) or scales (f32), got i32");
  ExpectInvalid(RunKernel("dyn.image.resize2d", dyn, {x, TensorOf<float>({2}, {2, 2})}, {DType::kF32}),
                "the target must hold 4 values");
  ExpectInvalid(RunKernel("dyn.image.resize2d", dyn, {x, TensorOf<float>({4}, {1, 1, 1e30f, 1})}, {DType::kF32}),
                "give more than");
}

// ONNX's cubic convolution weights (resize.py's cubic_coeffs), in double.
std::vector<double> CubicCoeffs(double r, double a) {
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
          ((a * (2 - r) - 5 * a) * (2 - r) + 8 * a) * (2 - r) - 4 * a};
}

// One axis of a cubic sample as ONNX's interpolate_1d_with_x takes it: the four input
// positions nearest to `v` (the lower ones on a tie: at a whole v, v - 2 ... v + 1 with
// ratio 1), their weights, zeroed off the image and renormalised with `exclude`.
void CubicTaps(double v, int64_t in, double a, bool exclude, int64_t* idx, double* w) {
  const int64_t base = static_cast<int64_t>(std::floor(v));
  const bool whole = v == std::floor(v);
  const std::vector<double> c = CubicCoeffs(whole ? 1.0 : v - static_cast<double>(base), a);
  double sum = 0;
  for (int k = 0; k < 4; ++k) {
    idx[k] = base - (whole ? 2 : 1) + k;
    w[k] = exclude && (idx[k] < 0 || idx[k] >= in) ? 0.0 : c[k];
    sum += w[k];
  }
  for (int k = 0; k < 4 && exclude; ++k) w[k] /= sum;
}

// A resize's parameters beyond the sizes: ONNX's cubic options and tf_crop_and_resize's
// roi ([start_h, start_w, end_h, end_w]) and extrapolation value.
struct Options {
  double alpha = -0.75;
  bool exclude = false;
  std::vector<float> roi = {0, 0, 1, 1};
  double extrapolation = 0;
};

// tf_crop_and_resize's source coordinate, in float in ONNX's order of operations, as the
// kernel computes it (so that nearest picks the same pixel).
float CropSource(int64_t x, int64_t in, int64_t out, float start, float end) {
  const float span = end - start, last = static_cast<float>(in - 1);
  const float v = out > 1 ? static_cast<float>(x) * span * last / static_cast<float>(out - 1) : span * last / 2.0f;
  return v + start * last;
}

// The reference of `method` ("nearest_neighbor", "linear", "cubic") under `mode`, ONNX's
// cubic included and tf_crop_and_resize's extrapolation.
std::vector<double> ReferenceOf(const std::vector<double>& x, int64_t planes, int64_t in_h, int64_t in_w,
                                int64_t out_h, int64_t out_w, const std::string& method, const std::string& mode,
                                const std::string& rounding, const Options& o) {
  const bool crop = mode == "tf_crop_and_resize";
  if (method != "cubic" && !crop) {
    return Reference(x, planes, in_h, in_w, out_h, out_w, method == "linear", mode, rounding);
  }
  std::vector<double> y;
  auto at = [&](int64_t p, int64_t i, int64_t j) {
    return x[(p * in_h + std::clamp<int64_t>(i, 0, in_h - 1)) * in_w + std::clamp<int64_t>(j, 0, in_w - 1)];
  };
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < out_h; ++oy) {
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const float sy = crop ? CropSource(oy, in_h, out_h, o.roi[0], o.roi[2]) : Source(mode, oy, in_h, out_h);
        const float sx = crop ? CropSource(ox, in_w, out_w, o.roi[1], o.roi[3]) : Source(mode, ox, in_w, out_w);
        if (crop && !(sy >= 0 && sy <= in_h - 1 && sx >= 0 && sx <= in_w - 1)) {
          y.push_back(o.extrapolation);
        } else if (method == "nearest_neighbor") {
          y.push_back(at(p, Nearest(rounding, sy, in_h), Nearest(rounding, sx, in_w)));
        } else if (method == "linear") {
          const int64_t y0 = static_cast<int64_t>(std::floor(sy)), x0 = static_cast<int64_t>(std::floor(sx));
          const double ty = sy - y0, tx = sx - x0;
          const double top = at(p, y0, x0) * (1 - tx) + at(p, y0, x0 + 1) * tx;
          const double bottom = at(p, y0 + 1, x0) * (1 - tx) + at(p, y0 + 1, x0 + 1) * tx;
          y.push_back(top * (1 - ty) + bottom * ty);
        } else {
          int64_t iy[4], ix[4];
          double wy[4], wx[4];
          CubicTaps(sy, in_h, o.alpha, o.exclude, iy, wy);
          CubicTaps(sx, in_w, o.alpha, o.exclude, ix, wx);
          double sum = 0;
          for (int j = 0; j < 4; ++j) {
            double row = 0;
            for (int k = 0; k < 4; ++k) row += wx[k] * at(p, iy[j], ix[k]);
            sum += wy[j] * row;
          }
          y.push_back(sum);
        }
      }
    }
  }
  return y;
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// ONNX's reference of a row [1, 2, 3, 4] resized to 8 (half_pixel) and 3 (align_corners).
TEST(ResizeTest, CubicHandComputed) {
  const NDArray row = TensorOf<float>({1, 1, 1, 4}, {1, 2, 3, 4});
  Attrs attrs = ResizeAttrs(1, 8, "cubic", "half_pixel");
  attrs["cubic_alpha"] = -0.75;
  ExpectNear(Resize(row, attrs),
             {0.89453125, 1.19140625, 1.66796875, 2.296875, 2.703125, 3.33203125, 3.80859375, 4.10546875}, 1e-6);
  attrs["cubic_alpha"] = -0.5;
  attrs["cubic_exclude"] = int64_t{1};
  ExpectNear(Resize(row, attrs),
             {0.91176468, 1.16788316, 1.70992362, 2.25, 2.75, 3.29007626, 3.83211684, 4.08823538}, 1e-6);
  // Relay's default a = -0.5; a whole source coordinate reads its pixel.
  EXPECT_EQ(Resize(row, ResizeAttrs(1, 3, "cubic", "align_corners")), (std::vector<double>{1, 2.5, 4}));
}

// ONNX's tf_crop_and_resize cases: a roi inside the image, and one reaching past it,
// whose outputs there are the extrapolation value.
TEST(ResizeTest, CropAndResizeHandComputed) {
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[i] = static_cast<float>(i + 1);
  const NDArray x = TensorOf<float>({1, 1, 4, 4}, values);
  Attrs attrs = ResizeAttrs(3, 3, "linear", "tf_crop_and_resize");
  absl::StatusOr<std::vector<NDArray>> inside =
      RunKernel("image.resize2d", attrs, {x, TensorOf<float>({8}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f})});
  ASSERT_TRUE(inside.ok()) << inside.status();
  ExpectClose((*inside)[0], {7.6, 7.9, 8.2, 8.8, 9.1, 9.4, 10, 10.3, 10.6}, 1e-5, 0);
  attrs["extrapolation_value"] = 10.0;
  attrs.erase("size");
  absl::StatusOr<std::vector<NDArray>> past =
      RunKernel("dyn.image.resize2d", attrs,
                {x, TensorOf<int64_t>({4}, {1, 1, 3, 3}), TensorOf<float>({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f})},
                {DType::kF32});
  ASSERT_TRUE(past.ok()) << past.status();
  ExpectClose((*past)[0], {7.6, 10, 10, 12.4, 10, 10, 10, 10, 10}, 1e-5, 0);
}

// Cubic under every coordinate mode, and every method under tf_crop_and_resize, on
// random sizes and rois (reaching past the image now and then), through both forms.
TEST(ResizeTest, CubicAndCropOnRandomSizes) {
  std::mt19937 rng(17);
  const std::string modes[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                               "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  const std::string methods[] = {"nearest_neighbor", "linear", "cubic"};
  const std::string roundings[] = {"round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"};
  for (int iter = 0; iter < 200; ++iter) {
    const int64_t n = RandomInt(rng, 0, 2), c = RandomInt(rng, 1, 2);
    const int64_t in_h = RandomInt(rng, 1, 7), in_w = RandomInt(rng, 1, 7);
    const int64_t out_h = RandomInt(rng, 0, 10), out_w = RandomInt(rng, 0, 10);
    const std::string& mode = modes[rng() % 6];
    const std::string& method = mode == "tf_crop_and_resize" ? methods[rng() % 3] : methods[2];
    const std::string rounding = roundings[rng() % 5];
    Options o;
    o.alpha = RandomInt(rng, 0, 1) ? -0.5 : -0.75;
    o.exclude = RandomInt(rng, 0, 1) == 1;
    o.extrapolation = 7.5;
    for (float& r : o.roi) r += static_cast<float>(RandomInt(rng, -4, 4)) / 10.0f;
    Attrs attrs = ResizeAttrs(out_h, out_w, method, mode, rounding);
    attrs["cubic_alpha"] = o.alpha;
    attrs["cubic_exclude"] = int64_t{o.exclude};
    attrs["extrapolation_value"] = o.extrapolation;
    NDArray x = RandomTensor({n, c, in_h, in_w}, DType::kF32, rng);
    const NDArray roi = TensorOf<float>({8}, {0, 0, o.roi[0], o.roi[1], 1, 1, o.roi[2], o.roi[3]});
    SCOPED_TRACE(::testing::Message() << in_h << "x" << in_w << " -> " << out_h << "x" << out_w << " " << method
                                      << " " << mode << " '" << rounding << "' a=" << o.alpha << " exclude="
                                      << o.exclude << " roi " << o.roi[0] << " " << o.roi[1] << " " << o.roi[2]
                                      << " " << o.roi[3]);
    const std::vector<double> want =
        ReferenceOf(Values(x), n * c, in_h, in_w, out_h, out_w, method, mode, rounding, o);
    const double tol = method == "nearest_neighbor" ? 0.0 : 1e-5;
    absl::StatusOr<std::vector<NDArray>> out = RunKernel("image.resize2d", attrs, {x, roi});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectClose((*out)[0], want, tol, 0.0);
    attrs.erase("size");
    out = RunKernel("dyn.image.resize2d", attrs, {x, TensorOf<int64_t>({4}, {n, c, out_h, out_w}), roi},
                    {DType::kF32});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectClose((*out)[0], want, tol, 0.0);
  }
}

TEST(ResizeTest, RoiErrors) {
  const NDArray x = Empty({2, 1, 3, 3});
  const Attrs crop = ResizeAttrs(2, 2, "linear", "tf_crop_and_resize");
  ExpectInvalid(RunKernel("image.resize2d", crop, {x}),
                "image.resize2d: coordinate_transformation_mode 'tf_crop_and_resize' needs the roi");
  ExpectInvalid(RunKernel("image.resize2d", crop, {x, Empty({4})}),
                "the roi must be f32 [8] (the starts, then the ends, along N, C, H, W), got f32 [4]");
  ExpectInvalid(RunKernel("image.resize2d", ResizeAttrs(2, 2, "linear", "half_pixel"), {x, Empty({8}, DType::kI64)}),
                "the roi must be f32 [8]");
  // N (2 images) cannot be cropped; C (1 channel) reads its one slice whatever the range.
  ExpectInvalid(RunKernel("image.resize2d", crop, {x, TensorOf<float>({8}, {0, 0, 0, 0, 0.5f, 1, 1, 1})}),
                "the roi [0, 0, 0, 0, 0.5, 1, 1, 1] crops N or C of data [2, 1, 3, 3]");
  EXPECT_TRUE(RunKernel("image.resize2d", crop, {x, TensorOf<float>({8}, {0, 0.5f, 0, 0, 1, 0.7f, 1, 1})}).ok());
  ExpectInvalid(RunKernel("image.resize2d", crop, {x, x, x}),
                "image.resize2d takes 1 or 2 inputs (data[, roi]), got 3");
  Attrs dyn = crop;
  dyn.erase("size");
  ExpectInvalid(RunKernel("dyn.image.resize2d", dyn, {x}, {DType::kF32}),
                "dyn.image.resize2d takes 2 or 3 inputs (data, target[, roi]), got 1");
  ExpectInvalid(RunKernel("dyn.image.resize2d", dyn, {x, TensorOf<int64_t>({4}, {2, 1, 2, 2})}, {DType::kF32}),
                "needs the roi, a last input after the target");
}

TEST(ResizeTest, Errors) {
  NDArray x = Empty({1, 2, 3, 3});
  ExpectInvalid(RunKernel("image.resize2d", {}, {x}), "missing int list attribute 'size'");
  ExpectInvalid(RunKernel("image.resize2d", {{"size", std::vector<int64_t>{2}}}, {x}),
                "attribute 'size' must be [height, width] in [0, 2147483648), got [2]");
  ExpectInvalid(RunKernel("image.resize2d", ResizeAttrs(2, 2, "bicubic", "half_pixel"), {x}),
                "unsupported method 'bicubic': expected one of nearest_neighbor, linear, cubic");
  ExpectInvalid(RunKernel("image.resize2d", ResizeAttrs(2, 2, "linear", "tf_crop"), {x}),
                "unsupported coordinate_transformation_mode 'tf_crop'");
  Attrs cubic = ResizeAttrs(2, 2, "cubic", "half_pixel");
  cubic["cubic_exclude"] = int64_t{2};
  ExpectInvalid(RunKernel("image.resize2d", cubic, {x}), "cubic_exclude");
  ExpectInvalid(
      RunKernel("image.resize2d", ResizeAttrs(2, 2, "nearest_neighbor", "asymmetric", "up"), {x}),
      "unsupported rounding_method 'up'");
  Attrs nhwc = ResizeAttrs(2, 2, "linear", "half_pixel");
  nhwc["layout"] = std::string("NHWC");
  ExpectInvalid(RunKernel("image.resize2d", nhwc, {x}), "unsupported layout 'NHWC'");
  ExpectInvalid(
      RunKernel("image.resize2d", ResizeAttrs(2, 2, "linear", "half_pixel"), {Empty({2, 3, 3})}),
      "image.resize2d: data must have rank 4 (NCHW), got shape [2, 3, 3]");
  ExpectInvalid(
      RunKernel("image.resize2d", ResizeAttrs(2, 2, "linear", "half_pixel"), {Empty({1, 2, 0, 3})}),
      "image.resize2d: cannot resize the empty image [1, 2, 0, 3] to 2 x 2");
  ExpectInvalid(RunKernel("image.resize2d", ResizeAttrs(2, 2, "linear", "half_pixel"),
                          {Empty({1, 2, 3, 3}, DType::kU8)}),
                "unsupported dtype u8 for image.resize2d data: expected f32");
  ExpectInvalid(CallWithOutputs("image.resize2d", ResizeAttrs(2, 2, "linear", "half_pixel"), {x},
                                {Empty({1, 2, 3, 3})}),
                "image.resize2d: output 0 has shape [1, 2, 3, 3], expected [1, 2, 2, 2]");
  // An empty image resized to nothing is fine.
  EXPECT_TRUE(
      RunKernel("image.resize2d", ResizeAttrs(0, 2, "linear", "half_pixel"), {Empty({1, 2, 0, 3})})
          .ok());
}

}  // namespace
}  // namespace dynvm::kernels::testing
