// nn.grid_sample(data [N, C, H, W], grid [N, Ho, Wo, 2]) -> [N, C, Ho, Wo], f32: ONNX's
// GridSample (opset 16; PyTorch's grid_sample on 4-D data), following ONNX's reference
// (onnx/reference/ops/op_grid_sample.py) operation for operation.
//
// grid[n, oy, ox] = (gx, gy) is normalised so that -1 and 1 are the image's edges: the
// centres of its corner pixels with `align_corners`, their outer sides without. In float:
//
//   align_corners   x = (gx + 1) / 2 * (W - 1)     border [0, W - 1]
//   otherwise       x = ((gx + 1) * W - 1) / 2     border [-0.5, W - 0.5]
//
// and y likewise from gy and H. `method` nearest then rounds x half to even. A coordinate
// beyond the border is moved by `padding_mode`: border clamps it to [0, W - 1],
// reflection reflects it off the border (in double) until it lies within, zeros leaves
// it. The sample reads the pixel x (nearest); the taps floor(x) and floor(x) + 1 weighed
// 1 - t and t, t = x - floor(x) (bilinear); or the taps floor(x) - 1 ... floor(x) + 2
// weighed by Keys' cubic kernel with a = -0.75 (bicubic); along x, then along y. A tap
// off the image reads 0 under zeros, the nearest edge pixel under border, and its
// reflection off the border (truncated to an index) under reflection. A coordinate that
// is not finite after padding samples 0 under zeros (it is off the image) and NaN under
// the others.
//
// Each output pixel's taps and weights are computed once and applied to every channel;
// the output rows of each image run in parallel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"

namespace dynvm::kernels {
namespace {

constexpr std::string_view kOp = "nn.grid_sample";

enum class Method { kNearest, kBilinear, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridSampleState {
  Method method = Method::kBilinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

absl::StatusOr<std::shared_ptr<const void>> BindGridSample(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"method", "padding_mode", "align_corners", "layout"}));
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "layout", "NCHW"));
  GridSampleState s;
  DYNVM_ASSIGN_OR_RETURN(const std::string method, GetStringAttr(attrs, "method", "bilinear"));
  if (method == "nearest") {
    s.method = Method::kNearest;
  } else if (method == "bicubic") {
    s.method = Method::kBicubic;
  } else if (method != "bilinear") {
    return absl::InvalidArgumentError(
        absl::StrFormat("unsupported method '%s': expected one of bilinear, nearest, bicubic", method));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::string padding, GetStringAttr(attrs, "padding_mode", "zeros"));
  if (padding == "border") {
    s.padding = Padding::kBorder;
  } else if (padding == "reflection") {
    s.padding = Padding::kReflection;
  } else if (padding != "zeros") {
    return absl::InvalidArgumentError(
        absl::StrFormat("unsupported padding_mode '%s': expected one of zeros, border, reflection", padding));
  }
  DYNVM_ASSIGN_OR_RETURN(s.align_corners, GetBoolAttr(attrs, "align_corners", false));
  return std::make_shared<const GridSampleState>(s);
}

absl::StatusOr<Shape> GridSampleOutputShape(const NDArrayObj& x, const NDArrayObj& grid) {
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kOp, "data", x));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kOp, "grid", grid));
  if (x.ndim() != 4 || grid.ndim() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != x.shape()[0]) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected data [N, C, H, W] and grid [N, Ho, Wo, 2], got data %s and grid %s", kOp,
                        ShapeToString(x.shape()), ShapeToString(grid.shape())));
  }
  Shape out = {x.shape()[0], x.shape()[1], grid.shape()[1], grid.shape()[2]};
  if ((x.shape()[2] == 0 || x.shape()[3] == 0) && out[0] * out[1] * out[2] * out[3] != 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: cannot sample the empty image %s at %d x %d points",
                                                      kOp, ShapeToString(x.shape()), out[2], out[3]));
  }
  return out;
}

absl::Status GridSampleShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(call.output_shapes[0], GridSampleOutputShape(*call.inputs[0], *call.inputs[1]));
  return absl::OkStatus();
}

// ONNX's _gs_reflect: `x` reflected off `lo` and `hi` until it lies between them. A range
// of one position (align_corners on an extent of 1) holds only `lo`.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (!(x < lo || x > hi)) return x;
  if (range <= 0.0) return lo;
  const double dx = x < lo ? lo - x : x - hi;
  const double n = std::floor(dx / range), r = dx - n * range;
  const bool even = std::fmod(n, 2.0) == 0.0;
  return (x < lo) == even ? lo + r : hi - r;
}

// One axis of a sample: `count` taps, their indices (-1: off the image under zeros
// padding, reading 0) and weights.
struct AxisTaps {
  int64_t index[4];
  float weight[4];
  int count;
};

// One axis of the image: `len` pixels and its border.
struct ImageAxis {
  int64_t len;
  float lo, hi;
};

// The taps of the sample at normalised coordinate `g` along `axis`, or false when the
// coordinate is not finite after padding.
bool SampleAxis(const GridSampleState& s, float g, const ImageAxis& axis, AxisTaps& taps) {
  const float len = static_cast<float>(axis.len);
  float x = s.align_corners ? (g + 1.0f) / 2.0f * (len - 1.0f) : ((g + 1.0f) * len - 1.0f) / 2.0f;
  if (s.method == Method::kNearest) x = std::nearbyint(x);
  if (x < axis.lo || x > axis.hi) {
    if (s.padding == Padding::kBorder) x = std::clamp(x, 0.0f, len - 1.0f);
    if (s.padding == Padding::kReflection) x = static_cast<float>(Reflect(x, axis.lo, axis.hi));
  }
  if (!std::isfinite(x)) return false;
  // Under zeros, every tap of a coordinate this far off the image is off it still: the
  // clamp only keeps the indices small.
  x = std::clamp(x, -4.0f, len + 3.0f);
  const float base = s.method == Method::kNearest ? std::trunc(x) : std::floor(x);
  const float t = x - base;
  switch (s.method) {
    case Method::kNearest:
      taps.count = 1;
      taps.weight[0] = 1.0f;
      break;
    case Method::kBilinear:
      taps.count = 2;
      taps.weight[0] = 1.0f - t;
      taps.weight[1] = t;
      break;
    case Method::kBicubic:
      taps.count = 4;
      nn::CubicWeights(-0.75f, t, taps.weight);
      break;
  }
  const int64_t first = static_cast<int64_t>(base) - (s.method == Method::kBicubic ? 1 : 0);
  for (int k = 0; k < taps.count; ++k) {
    int64_t i = first + k;
    if (s.padding == Padding::kReflection) i = static_cast<int64_t>(Reflect(static_cast<double>(i), axis.lo, axis.hi));
    if (s.padding != Padding::kZeros) i = std::clamp<int64_t>(i, 0, axis.len - 1);
    taps.index[k] = i >= 0 && i < axis.len ? i : -1;
  }
  return true;
}

// The sample of one channel's `plane` (`w` columns) at the taps `xs` and `ys`: along x,
// then along y.
float Sample(const float* plane, int64_t w, const AxisTaps& xs, const AxisTaps& ys) {
  float sum = 0.0f;
  for (int j = 0; j < ys.count; ++j) {
    if (ys.index[j] < 0) continue;
    const float* row = plane + ys.index[j] * w;
    float v = 0.0f;
    for (int k = 0; k < xs.count; ++k) {
      if (xs.index[k] >= 0) v += xs.weight[k] * row[xs.index[k]];
    }
    sum += ys.weight[j] * v;
  }
  return sum;
}

absl::Status GridSampleKernel(const KernelCall& call) {
  const auto& s = *static_cast<const GridSampleState*>(call.state);
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& grid = *call.args[1];
  DYNVM_ASSIGN_OR_RETURN(const Shape out_shape, GridSampleOutputShape(x, grid));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kOp, call, {out_shape}));
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  const int64_t channels = out_shape[1], out_h = out_shape[2], out_w = out_shape[3];
  const int64_t in_h = x.shape()[2], in_w = x.shape()[3];
  const ImageAxis h_axis{in_h, s.align_corners ? 0.0f : -0.5f,
                         static_cast<float>(in_h) - (s.align_corners ? 1.0f : 0.5f)};
  const ImageAxis w_axis{in_w, s.align_corners ? 0.0f : -0.5f,
                         static_cast<float>(in_w) - (s.align_corners ? 1.0f : 0.5f)};
  const float off_image = s.padding == Padding::kZeros ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  const float* in = x.data_as<float>();
  const float* points = grid.data_as<float>();
  float* out = call.outputs()[0]->data_as<float>();
  // Row r is output row r % out_h of image r / out_h, in every channel.
  call.pool->ParallelFor(out_shape[0] * out_h, internal::GrainForBytes(8 * out_w * channels),
                         [&](int64_t begin, int64_t end) {
                           for (int64_t r = begin; r < end; ++r) {
                             const int64_t n = r / out_h, oy = r % out_h;
                             const float* image = in + n * channels * in_h * in_w;
                             float* y = out + n * channels * out_h * out_w + oy * out_w;
                             for (int64_t ox = 0; ox < out_w; ++ox) {
                               const float* g = points + (r * out_w + ox) * 2;
                               AxisTaps xs, ys;
                               const bool finite = SampleAxis(s, g[0], w_axis, xs) && SampleAxis(s, g[1], h_axis, ys);
                               for (int64_t c = 0; c < channels; ++c) {
                                 y[c * out_h * out_w + ox] =
                                     finite ? Sample(image + c * in_h * in_w, in_w, xs, ys) : off_image;
                               }
                             }
                           }
                         });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterGridSampleKernels(KernelRegistry& registry) {
  return registry.Register(KernelDef{.name = std::string(kOp),
                                     .num_inputs = 2,
                                     .num_outputs = 1,
                                     .fn = GridSampleKernel,
                                     .bind = BindGridSample,
                                     .shape_fn = GridSampleShapeFn});
}

}  // namespace dynvm::kernels
