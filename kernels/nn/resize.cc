// image.resize2d over NCHW data, f32: output [batch, channels, size[0], size[1]], by
// nearest neighbour or bilinear interpolation, with TVM's coordinate arithmetic (in
// float32, as topi computes it):
//
//   scale = in / out
//   half_pixel            x_in = (x + 0.5) * scale - 0.5
//   pytorch_half_pixel    the same, but 0 when out == 1
//   align_corners         x_in = x * (in - 1) / (out - 1), 0 when out == 1
//   asymmetric            x_in = x * scale
//   tf_half_pixel_for_nn  x_in = (x + 0.5) * scale
//
// Nearest rounds x_in by `rounding_method` — round (half to even, as TVM lowers it),
// floor, ceil, round_prefer_floor, round_prefer_ceil; the default is round for
// align_corners and floor otherwise — and clamps to the image. Linear interpolates
// between floor(x_in) and floor(x_in) + 1, each clamped to the image, as
// a * (1 - t) + b * t along x, then along y.
//
// Relay's other attributes are accepted for compatibility and ignored: roi and
// extrapolation_value only matter for tf_crop_and_resize, cubic_alpha and cubic_exclude
// only for the cubic method, neither of which this kernel implements (asking for them
// is an error at load).
//
// The source coordinates and weights of the output columns and rows are computed once
// per call; output rows then run in parallel, each a gather from one or two input rows.
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

enum class Method { kNearest, kLinear };
enum class CoordMode {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn
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
                                                          {"linear", Method::kLinear}}));
  DYNVM_ASSIGN_OR_RETURN(const std::string mode,
                         GetStringAttr(attrs, "coordinate_transformation_mode", "half_pixel"));
  DYNVM_ASSIGN_OR_RETURN(
      s.mode, ParseEnumAttr<CoordMode>("coordinate_transformation_mode", mode,
                                       {{"half_pixel", CoordMode::kHalfPixel},
                                        {"pytorch_half_pixel", CoordMode::kPytorchHalfPixel},
                                        {"align_corners", CoordMode::kAlignCorners},
                                        {"asymmetric", CoordMode::kAsymmetric},
                                        {"tf_half_pixel_for_nn", CoordMode::kTfHalfPixelForNn}}));
  DYNVM_ASSIGN_OR_RETURN(std::string rounding, GetStringAttr(attrs, "rounding_method", ""));
  if (rounding.empty()) rounding = s.mode == CoordMode::kAlignCorners ? "round" : "floor";
  DYNVM_ASSIGN_OR_RETURN(
      s.rounding, ParseEnumAttr<Rounding>("rounding_method", rounding,
                                          {{"round", Rounding::kRound},
                                           {"floor", Rounding::kFloor},
                                           {"ceil", Rounding::kCeil},
                                           {"round_prefer_floor", Rounding::kRoundPreferFloor},
                                           {"round_prefer_ceil", Rounding::kRoundPreferCeil}}));
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

// A call's state: the bound one, or for dyn.image.resize2d, the output extents from the
// second input — ONNX's `sizes` (i64 [N, C, H, W]) or `scales` (f32 [1, 1, sh, sw]:
// H' = floor(H sh), the source coordinates then use 1 / sh) — N and C unchanged.
absl::StatusOr<ResizeState> CallResizeState(const void* bound, absl::Span<NDArrayObj* const> inputs) {
  ResizeState s = *static_cast<const ResizeState*>(bound);
  if (!s.target_input) return s;
  const NDArrayObj& x = *inputs[0];
  const NDArrayObj& target = *inputs[1];
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
    return s;
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

// The source coordinate of output `x` along an axis of `in` inputs and `out` outputs;
// `ratio` is input extents per output extent where scales set it, else 0 (in / out).
float SourceCoordinate(CoordMode mode, int64_t x, int64_t in, int64_t out, float ratio) {
  const float scale = ratio > 0.0f ? ratio : static_cast<float>(in) / static_cast<float>(out);
  const float fx = static_cast<float>(x);
  switch (mode) {
    case CoordMode::kHalfPixel:
      return (fx + 0.5f) * scale - 0.5f;
    case CoordMode::kPytorchHalfPixel:
      return out > 1 ? (fx + 0.5f) * scale - 0.5f : 0.0f;
    case CoordMode::kAlignCorners: {
      // With scales, ONNX aligns the corners of the unrounded output, in * scale long.
      const float length = ratio > 0.0f ? static_cast<float>(in) / ratio : static_cast<float>(out);
      return length > 1.0f ? static_cast<float>(in - 1) / (length - 1.0f) * fx : 0.0f;
    }
    case CoordMode::kAsymmetric:
      return fx * scale;
    case CoordMode::kTfHalfPixelForNn:
      return (fx + 0.5f) * scale;
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

// Per output position along one axis: the two source indices and the weight of the
// second (nearest uses only `i0`).
struct AxisTable {
  int64_t* i0;
  int64_t* i1;
  float* t;
};

void FillAxisTable(const ResizeState& s, int64_t in, int64_t out, float ratio, const AxisTable& table) {
  for (int64_t x = 0; x < out; ++x) {
    const float v = SourceCoordinate(s.mode, x, in, out, ratio);
    if (s.method == Method::kNearest) {
      table.i0[x] = ClampIndex(Round(s.rounding, v), in);
      continue;
    }
    const float base = std::floor(v);
    table.i0[x] = ClampIndex(base, in);
    table.i1[x] = ClampIndex(base + 1.0f, in);
    table.t[x] = v - base;
  }
}

void ResizeRow(const ResizeState& s, const float* plane, int64_t in_w, int64_t oh,
               const AxisTable& xs, const AxisTable& ys, float* row) {
  if (s.method == Method::kNearest) {
    const float* src = plane + ys.i0[oh] * in_w;
    for (int64_t x = 0; x < s.out_w; ++x) row[x] = src[xs.i0[x]];
    return;
  }
  const float* top = plane + ys.i0[oh] * in_w;
  const float* bottom = plane + ys.i1[oh] * in_w;
  const float ty = ys.t[oh];
  for (int64_t x = 0; x < s.out_w; ++x) {
    const float t = xs.t[x];
    const float a = top[xs.i0[x]] * (1.0f - t) + top[xs.i1[x]] * t;
    const float b = bottom[xs.i0[x]] * (1.0f - t) + bottom[xs.i1[x]] * t;
    row[x] = a * (1.0f - ty) + b * ty;
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

  // Tables for the columns then the rows: indices first, then weights.
  const int64_t positions = s.out_w + s.out_h;
  void* scratch = ThreadScratchBytes(ScratchSlot::kCall,
                                         positions * (2 * sizeof(int64_t) + sizeof(float)));
  int64_t* indices = static_cast<int64_t*>(scratch);
  float* weights = reinterpret_cast<float*>(indices + 2 * positions);
  const AxisTable xs{indices, indices + s.out_w, weights};
  const AxisTable ys{indices + 2 * s.out_w, indices + 2 * s.out_w + s.out_h, weights + s.out_w};
  FillAxisTable(s, in_w, s.out_w, s.ratio_w, xs);
  FillAxisTable(s, in_h, s.out_h, s.ratio_h, ys);

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
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kOp),
                                                    .num_inputs = 1,
                                                    .num_outputs = 1,
                                                    .fn = ResizeKernel,
                                                    .bind = BindResize,
                                                    .shape_fn = ResizeShapeFn}));
  return registry.Register(KernelDef{.name = "dyn.image.resize2d",
                                     .num_inputs = 2,
                                     .num_outputs = 1,
                                     .fn = ResizeKernel,
                                     .bind = BindDynResize,
                                     .shape_fn = ResizeShapeFn});
}

}  // namespace dynvm::kernels
