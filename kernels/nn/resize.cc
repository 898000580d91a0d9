// image.resize2d over NCHW data, f32: output [batch, channels, size[0], size[1]], by
// nearest neighbour, bilinear or bicubic interpolation, with TVM's coordinate arithmetic
// (in float32, as topi computes it):
//
//   scale = in / out
//   half_pixel            x_in = (x + 0.5) * scale - 0.5
//   pytorch_half_pixel    the same, but 0 when out == 1
//   align_corners         x_in = x * (in - 1) / (out - 1), 0 when out == 1
//   asymmetric            x_in = x * scale
//   tf_half_pixel_for_nn  x_in = (x + 0.5) * scale
//   tf_crop_and_resize    x_in = start * (in - 1) + x * (end - start) * (in - 1) / (out - 1),
//                         (start + end) / 2 * (in - 1) when out == 1
//
// where [start, end] is the axis' range in the roi, fractions of the image (ONNX's roi
// input, the last input of either form). Nearest rounds x_in by `rounding_method` —
// round (half to even, as TVM lowers it), floor, ceil, round_prefer_floor,
// round_prefer_ceil; the default is round for align_corners and floor otherwise — and
// clamps to the image. Linear interpolates between floor(x_in) and floor(x_in) + 1, each
// clamped to the image, as a * (1 - t) + b * t along x, then along y. Cubic (ONNX's
// Resize) weighs the taps floor(x_in) - 1 ... floor(x_in) + 2, clamped to the image, by
// Keys' kernel with a = `cubic_alpha` at their distances from x_in, along x, then along
// y; with `cubic_exclude`, the taps outside the image get weight 0 and the others are
// scaled to sum to 1. Under tf_crop_and_resize, an output whose x_in or y_in falls
// outside [0, in - 1] is `extrapolation_value`.
//
// Relay's `roi` attribute is accepted for compatibility and ignored: the roi is an input.
//
// The source coordinates and weights of the output columns and rows are computed once
// per call; output rows then run in parallel, each a gather from one, two or four input
// rows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

constexpr std::string_view kOp = "image.resize2d";

enum class Method { kNearest, kLinear, kCubic };
enum class CoordMode {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class Rounding { kRound, kFloor, kCeil, kRoundPreferFloor, kRoundPreferCeil };

struct ResizeState {
  int64_t out_h = 0, out_w = 0;
  Method method = Method::kLinear;
  CoordMode mode = CoordMode::kHalfPixel;
  Rounding rounding = Rounding::kFloor;
  bool target_input = false;  // dyn.image.resize2d: the sizes or scales are the second input
  // Input extents per output extent along H and W, where given scales set them (1 /
  // scale); 0: in / out.
  float ratio_h = 0.0f, ratio_w = 0.0f;
  float cubic_alpha = -0.5f;  // Relay's default (ONNX's is -0.75)
  bool cubic_exclude = false;
  float extrapolation_value = 0.0f;
  // tf_crop_and_resize: the roi's ranges along H and W, [start_h, start_w, end_h, end_w],
  // from the call's roi input.
  float roi[4] = {0.0f, 0.0f, 1.0f, 1.0f};
};

// The enum value whose name is `value`, or InvalidArgument listing the names.
template <typename E, size_t kCount>
absl::StatusOr<E> ParseEnumAttr(std::string_view attr, const std::string& value,
                                const std::pair<std::string_view, E> (&names)[kCount]) {
  std::string known;
  for (const auto& [name, e] : names) {
    if (name == value) return e;
    known += known.empty() ? "" : ", ";
    known += name;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unsupported %s '%s': expected one of %s", attr, value, known));
}

// The attributes both forms share (all but `size`) into `s`.
absl::Status ParseResizeAttrs(const Attrs& attrs, ResizeState& s) {
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "layout", "NCHW"));
  DYNVM_ASSIGN_OR_RETURN(const std::string out_dtype, GetStringAttr(attrs, "out_dtype", ""));
  if (!out_dtype.empty() && out_dtype != "float32" && out_dtype != "f32") {
    return absl::InvalidArgumentError(
        absl::StrFormat("unsupported out_dtype '%s': expected float32", out_dtype));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::string method, GetStringAttr(attrs, "method", "linear"));
  DYNVM_ASSIGN_OR_RETURN(s.method, ParseEnumAttr<Method>("method", method,
                                                         {{"nearest_neighbor", Method::kNearest},
                                                          {"linear", Method::kLinear},
                                                          {"cubic", Method::kCubic}}));
  DYNVM_ASSIGN_OR_RETURN(const std::string mode,
                         GetStringAttr(attrs, "coordinate_transformation_mode", "half_pixel"));
  DYNVM_ASSIGN_OR_RETURN(
      s.mode, ParseEnumAttr<CoordMode>("coordinate_transformation_mode", mode,
                                       {{"half_pixel", CoordMode::kHalfPixel},
                                        {"pytorch_half_pixel", CoordMode::kPytorchHalfPixel},
                                        {"align_corners", CoordMode::kAlignCorners},
                                        {"asymmetric", CoordMode::kAsymmetric},
                                        {"tf_half_pixel_for_nn", CoordMode::kTfHalfPixelForNn},
                                        {"tf_crop_and_resize", CoordMode::kTfCropAndResize}}));
  DYNVM_ASSIGN_OR_RETURN(std::string rounding, GetStringAttr(attrs, "rounding_method", ""));
  if (rounding.empty()) rounding = s.mode == CoordMode::kAlignCorners ? "round" : "floor";
  DYNVM_ASSIGN_OR_RETURN(
      s.rounding, ParseEnumAttr<Rounding>("rounding_method", rounding,
                                          {{"round", Rounding::kRound},
                                           {"floor", Rounding::kFloor},
                                           {"ceil", Rounding::kCeil},
                                           {"round_prefer_floor", Rounding::kRoundPreferFloor},
                                           {"round_prefer_ceil", Rounding::kRoundPreferCeil}}));
  DYNVM_ASSIGN_OR_RETURN(const double alpha, GetFloatAttr(attrs, "cubic_alpha", -0.5));
  DYNVM_ASSIGN_OR_RETURN(s.cubic_exclude, GetBoolAttr(attrs, "cubic_exclude", false));
  DYNVM_ASSIGN_OR_RETURN(const double extrapolation, GetFloatAttr(attrs, "extrapolation_value", 0.0));
  if (!std::isfinite(alpha)) {
    return absl::InvalidArgumentError(absl::StrFormat("attribute 'cubic_alpha' must be finite, got %g", alpha));
  }
  s.cubic_alpha = static_cast<float>(alpha);
  s.extrapolation_value = static_cast<float>(extrapolation);
  return absl::OkStatus();
}

// The attributes both forms take, and `size` for image.resize2d.
#define DYNVM_RESIZE_ATTRS                                                                   \
  "method", "coordinate_transformation_mode", "rounding_method", "layout", "out_dtype", "roi", \
      "cubic_alpha", "cubic_exclude", "extrapolation_value"

absl::StatusOr<std::shared_ptr<const void>> BindResize(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {DYNVM_RESIZE_ATTRS, "size"}));
  ResizeState s;
  DYNVM_RETURN_IF_ERROR(ParseResizeAttrs(attrs, s));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> size, GetIntsAttr(attrs, "size"));
  if (size.size() != 2 || size[0] < 0 || size[1] < 0 || size[0] >= nn::kMaxWindowAttr ||
      size[1] >= nn::kMaxWindowAttr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'size' must be [height, width] in [0, %d), got [%s]",
                        nn::kMaxWindowAttr, absl::StrJoin(size, ", ")));
  }
  s.out_h = size[0];
  s.out_w = size[1];
  return std::make_shared<const ResizeState>(s);
}

absl::StatusOr<std::shared_ptr<const void>> BindDynResize(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {DYNVM_RESIZE_ATTRS}));
  ResizeState s;
  DYNVM_RETURN_IF_ERROR(ParseResizeAttrs(attrs, s));
  s.target_input = true;
  return std::make_shared<const ResizeState>(s);
}

#undef DYNVM_RESIZE_ATTRS

// dyn.image.resize2d's output extents into `s`, from its second input: ONNX's `sizes`
// (i64 [N, C, H, W]) or `scales` (f32 [1, 1, sh, sw]: H' = floor(H sh), the source
// coordinates then use 1 / sh) — N and C unchanged.
absl::Status ReadTarget(const NDArrayObj& x, const NDArrayObj& target, ResizeState& s) {
  if (target.ndim() != 1 || target.num_elements() != 4 || x.ndim() != 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dyn.image.resize2d: the target must hold 4 values (N, C, H, W) for NCHW data, got shape %s for data %s",
        ShapeToString(target.shape()), ShapeToString(x.shape())));
  }
  if (target.dtype() == DType::kI64) {
    const int64_t* size = target.data_as<int64_t>();
    if (size[0] != x.shape()[0] || size[1] != x.shape()[1]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dyn.image.resize2d: sizes [%d, %d, ...] change N or C of data %s: only H and W resize",
          size[0], size[1], ShapeToString(x.shape())));
    }
    if (size[2] < 0 || size[3] < 0 || size[2] >= nn::kMaxWindowAttr || size[3] >= nn::kMaxWindowAttr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dyn.image.resize2d: sizes H and W must be in [0, %d), got [%d, %d]", nn::kMaxWindowAttr,
          size[2], size[3]));
    }
    s.out_h = size[2];
    s.out_w = size[3];
    return absl::OkStatus();
  }
  if (target.dtype() != DType::kF32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dyn.image.resize2d: the target must be sizes (i64) or scales (f32), got %s", DTypeName(target.dtype())));
  }
  const float* scale = target.data_as<float>();
  if (scale[0] != 1.0f || scale[1] != 1.0f || !(scale[2] > 0.0f) || !(scale[3] > 0.0f)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dyn.image.resize2d: scales [%g, %g, %g, %g] must be 1 for N and C and positive for H and W",
        scale[0], scale[1], scale[2], scale[3]));
  }
  const double h = std::floor(static_cast<double>(x.shape()[2]) * scale[2]);
  const double w = std::floor(static_cast<double>(x.shape()[3]) * scale[3]);
  if (!(h < nn::kMaxWindowAttr) || !(w < nn::kMaxWindowAttr)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dyn.image.resize2d: scales %g x %g of data %s give more than %d rows or columns", scale[2],
        scale[3], ShapeToString(x.shape()), nn::kMaxWindowAttr));
  }
  s.out_h = static_cast<int64_t>(h);
  s.out_w = static_cast<int64_t>(w);
  s.ratio_h = 1.0f / scale[2];
  s.ratio_w = 1.0f / scale[3];
  return absl::OkStatus();
}

// The roi input (f32 [8]: ONNX's starts, then ends, of N, C, H, W, as fractions of each
// extent) into `s` for tf_crop_and_resize, which alone reads it. Only H and W may be
// cropped: N and C must span [0, 1] unless their extent is 1 (any range reads the one
// slice there).
absl::Status ReadRoi(const NDArrayObj& x, const NDArrayObj& roi, ResizeState& s) {
  if (roi.dtype() != DType::kF32 || roi.ndim() != 1 || roi.num_elements() != 8) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the roi must be f32 [8] (the starts, then the ends, along N, C, H, W), got %s %s", kOp,
        DTypeName(roi.dtype()), ShapeToString(roi.shape())));
  }
  if (s.mode != CoordMode::kTfCropAndResize || x.ndim() != 4) return absl::OkStatus();
  const float* r = roi.data_as<float>();
  for (int axis : {0, 1}) {
    if (x.shape()[axis] != 1 && (r[axis] != 0.0f || r[axis + 4] != 1.0f)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the roi [%s] crops N or C of data %s: only H and W may be cropped (N and C span [0, 1])", kOp,
          absl::StrJoin(absl::MakeConstSpan(r, 8), ", "), ShapeToString(x.shape())));
    }
  }
  s.roi[0] = r[2];
  s.roi[1] = r[3];
  s.roi[2] = r[6];
  s.roi[3] = r[7];
  return absl::OkStatus();
}

// A call's state: the bound one with, for dyn.image.resize2d, the output extents from the
// target, and the roi from the last input where given (tf_crop_and_resize needs it).
absl::StatusOr<ResizeState> CallResizeState(const void* bound, absl::Span<NDArrayObj* const> inputs) {
  ResizeState s = *static_cast<const ResizeState*>(bound);
  const int roi_at = s.target_input ? 2 : 1;
  DYNVM_RETURN_IF_ERROR(nn::CheckInputCount(s.target_input ? "dyn.image.resize2d" : kOp,
                                            static_cast<int>(inputs.size()), {roi_at, roi_at + 1},
                                            s.target_input ? "data, target[, roi]" : "data[, roi]"));
  if (s.target_input) DYNVM_RETURN_IF_ERROR(ReadTarget(*inputs[0], *inputs[1], s));
  if (static_cast<int>(inputs.size()) > roi_at) {
    DYNVM_RETURN_IF_ERROR(ReadRoi(*inputs[0], *inputs[roi_at], s));
  } else if (s.mode == CoordMode::kTfCropAndResize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: coordinate_transformation_mode 'tf_crop_and_resize' needs the roi, a last input after %s", kOp,
        s.target_input ? "the target" : "the data"));
  }
  return s;
}

absl::StatusOr<Shape> ResizeOutputShape(const ResizeState& s, const NDArrayObj& x) {
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kOp, "data", x));
  if (x.ndim() != 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: data must have rank 4 (NCHW), got shape %s", kOp, ShapeToString(x.shape())));
  }
  Shape out = {x.shape()[0], x.shape()[1], s.out_h, s.out_w};
  if ((x.shape()[2] == 0 || x.shape()[3] == 0) && out[0] * out[1] * s.out_h * s.out_w != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot resize the empty image %s to %d x %d", kOp,
                        ShapeToString(x.shape()), s.out_h, s.out_w));
  }
  return out;
}

absl::Status ResizeShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const ResizeState s, CallResizeState(call.state, call.input_span()));
  DYNVM_ASSIGN_OR_RETURN(call.output_shapes[0], ResizeOutputShape(s, *call.inputs[0]));
  return absl::OkStatus();
}

// One axis of a call: `in` inputs, `out` outputs, and what maps between them: `ratio`,
// input extents per output extent where scales set it, else 0 (in / out); the roi's
// range along the axis.
struct Axis {
  int64_t in, out;
  float ratio;
  float roi_start, roi_end;
};

// The source coordinate of output `x` along `axis`.
float SourceCoordinate(CoordMode mode, int64_t x, const Axis& axis) {
  const int64_t in = axis.in, out = axis.out;
  const float ratio = axis.ratio;
  const float scale = ratio > 0.0f ? ratio : static_cast<float>(in) / static_cast<float>(out);
  const float fx = static_cast<float>(x);
  // With scales, ONNX aligns the corners of the unrounded output, in * scale long.
  const float length = ratio > 0.0f ? static_cast<float>(in) / ratio : static_cast<float>(out);
  switch (mode) {
    case CoordMode::kHalfPixel:
      return (fx + 0.5f) * scale - 0.5f;
    case CoordMode::kPytorchHalfPixel:
      return out > 1 ? (fx + 0.5f) * scale - 0.5f : 0.0f;
    case CoordMode::kAlignCorners:
      return length > 1.0f ? static_cast<float>(in - 1) / (length - 1.0f) * fx : 0.0f;
    case CoordMode::kAsymmetric:
      return fx * scale;
    case CoordMode::kTfHalfPixelForNn:
      return (fx + 0.5f) * scale;
    case CoordMode::kTfCropAndResize: {
      // ONNX's order of operations.
      const float span = axis.roi_end - axis.roi_start, last = static_cast<float>(in - 1);
      const float v = length > 1.0f ? fx * span * last / (length - 1.0f) : span * last / 2.0f;
      return v + axis.roi_start * last;
    }
  }
  return 0.0f;
}

float Round(Rounding rounding, float v) {
  // The epsilons are TVM's, which guard floor and ceil against coordinates computed a
  // hair off an integer.
  switch (rounding) {
    case Rounding::kRound:
      return std::nearbyint(v);
    case Rounding::kFloor:
      return std::floor(v + 1e-5f);
    case Rounding::kCeil:
      return std::ceil(v - 1e-5f);
    case Rounding::kRoundPreferFloor:
      return std::ceil(v - 0.5f);
    case Rounding::kRoundPreferCeil:
      return std::floor(v + 0.5f);
  }
  return v;
}

// `v` clamped to [0, in - 1] as an index (`in` >= 1); the clamp happens in float so
// that no conversion overflows.
int64_t ClampIndex(float v, int64_t in) {
  return static_cast<int64_t>(std::clamp(v, 0.0f, static_cast<float>(in - 1)));
}

// The input positions each output position reads along an axis.
int Taps(Method method) {
  switch (method) {
    case Method::kNearest:
      return 1;
    case Method::kLinear:
      return 2;
    case Method::kCubic:
      return 4;
  }
  return 4;
}

// Per output position along one axis, Taps(method) apart: the source indices, clamped to
// the image, and their weights (none for nearest); for tf_crop_and_resize, whether the
// coordinate falls outside the image (the output there is extrapolation_value).
struct AxisTable {
  int64_t* index;
  float* weight;
  bool* outside;
};

void FillAxisTable(const ResizeState& s, const Axis& axis, const AxisTable& table) {
  const int taps = Taps(s.method);
  const float last = static_cast<float>(axis.in - 1);
  for (int64_t x = 0; x < axis.out; ++x) {
    float v = SourceCoordinate(s.mode, x, axis);
    if (s.mode == CoordMode::kTfCropAndResize) {
      table.outside[x] = !(v >= 0.0f && v <= last);  // NaN (from a NaN roi) too
      if (table.outside[x]) v = 0.0f;                 // any position in the image: overwritten
    }
    int64_t* index = table.index + x * taps;
    float* weight = table.weight + x * taps;
    if (s.method == Method::kNearest) {
      index[0] = ClampIndex(Round(s.rounding, v), axis.in);
      continue;
    }
    const float base = std::floor(v);
    if (s.method == Method::kLinear) {
      index[0] = ClampIndex(base, axis.in);
      index[1] = ClampIndex(base + 1.0f, axis.in);
      weight[1] = v - base;
      weight[0] = 1.0f - weight[1];
      continue;
    }
    nn::CubicWeights(s.cubic_alpha, v - base, weight);
    float sum = 0.0f;
    for (int k = 0; k < 4; ++k) {
      const float tap = base + static_cast<float>(k - 1);
      index[k] = ClampIndex(tap, axis.in);
      if (s.cubic_exclude && (tap < 0.0f || tap > last)) weight[k] = 0.0f;
      sum += weight[k];
    }
    if (s.cubic_exclude) {
      for (int k = 0; k < 4; ++k) weight[k] /= sum;
    }
  }
}

// Output row `oh` of one plane, each value sum_j wy[j] * (sum_i wx[i] * in[y_j][x_i])
// over the taps, as ONNX interpolates along x first.
void CubicRow(const ResizeState& s, const float* plane, int64_t in_w, int64_t oh,
              const AxisTable& xs, const AxisTable& ys, float* row) {
  const float* rows[4];
  for (int j = 0; j < 4; ++j) rows[j] = plane + ys.index[4 * oh + j] * in_w;
  const float* wy = ys.weight + 4 * oh;
  for (int64_t x = 0; x < s.out_w; ++x) {
    const int64_t* i = xs.index + 4 * x;
    const float* w = xs.weight + 4 * x;
    float sum = 0.0f;
    for (int j = 0; j < 4; ++j) {
      const float* r = rows[j];
      sum += wy[j] * (w[0] * r[i[0]] + w[1] * r[i[1]] + w[2] * r[i[2]] + w[3] * r[i[3]]);
    }
    row[x] = sum;
  }
}

void ResizeRow(const ResizeState& s, const float* plane, int64_t in_w, int64_t oh,
               const AxisTable& xs, const AxisTable& ys, float* row) {
  if (s.method == Method::kNearest) {
    const float* src = plane + ys.index[oh] * in_w;
    for (int64_t x = 0; x < s.out_w; ++x) row[x] = src[xs.index[x]];
  } else if (s.method == Method::kLinear) {
    const float* top = plane + ys.index[2 * oh] * in_w;
    const float* bottom = plane + ys.index[2 * oh + 1] * in_w;
    const float wy0 = ys.weight[2 * oh], wy1 = ys.weight[2 * oh + 1];
    for (int64_t x = 0; x < s.out_w; ++x) {
      const int64_t* i = xs.index + 2 * x;
      const float* w = xs.weight + 2 * x;
      const float a = top[i[0]] * w[0] + top[i[1]] * w[1];
      const float b = bottom[i[0]] * w[0] + bottom[i[1]] * w[1];
      row[x] = a * wy0 + b * wy1;
    }
  } else {
    CubicRow(s, plane, in_w, oh, xs, ys, row);
  }
  if (s.mode != CoordMode::kTfCropAndResize) return;
  for (int64_t x = 0; x < s.out_w; ++x) {
    if (ys.outside[oh] || xs.outside[x]) row[x] = s.extrapolation_value;
  }
}

absl::Status ResizeKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const ResizeState s, CallResizeState(call.state, call.inputs()));
  const NDArrayObj& x = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(const Shape out_shape, ResizeOutputShape(s, x));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kOp, call, {out_shape}));
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  const int64_t planes = out_shape[0] * out_shape[1];
  const int64_t in_h = x.shape()[2], in_w = x.shape()[3];

  // Tables for the columns then the rows: indices first, then weights, then the flags.
  const int64_t positions = s.out_w + s.out_h, taps = Taps(s.method);
  void* scratch = ThreadScratchBytes(ScratchSlot::kCall,
                                     positions * (taps * (sizeof(int64_t) + sizeof(float)) + sizeof(bool)));
  int64_t* indices = static_cast<int64_t*>(scratch);
  float* weights = reinterpret_cast<float*>(indices + taps * positions);
  bool* outside = reinterpret_cast<bool*>(weights + taps * positions);
  const AxisTable xs{indices, weights, outside};
  const AxisTable ys{indices + taps * s.out_w, weights + taps * s.out_w, outside + s.out_w};
  FillAxisTable(s, {in_w, s.out_w, s.ratio_w, s.roi[1], s.roi[3]}, xs);
  FillAxisTable(s, {in_h, s.out_h, s.ratio_h, s.roi[0], s.roi[2]}, ys);

  const float* in = x.data_as<float>();
  float* out = call.outputs()[0]->data_as<float>();
  call.pool->ParallelFor(planes * s.out_h, internal::GrainForBytes(8 * s.out_w),
                         [&](int64_t begin, int64_t end) {
                           for (int64_t r = begin; r < end; ++r) {
                             ResizeRow(s, in + r / s.out_h * in_h * in_w, in_w, r % s.out_h, xs, ys,
                                       out + r * s.out_w);
                           }
                         });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterResizeKernels(KernelRegistry& registry) {
  // Both take the roi as an optional last input.
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kOp),
                                                    .num_inputs = kVariadic,
                                                    .num_outputs = 1,
                                                    .fn = ResizeKernel,
                                                    .bind = BindResize,
                                                    .shape_fn = ResizeShapeFn}));
  return registry.Register(KernelDef{.name = "dyn.image.resize2d",
                                     .num_inputs = kVariadic,
                                     .num_outputs = 1,
                                     .fn = ResizeKernel,
                                     .bind = BindDynResize,
                                     .shape_fn = ResizeShapeFn});
}

}  // namespace dynvm::kernels
