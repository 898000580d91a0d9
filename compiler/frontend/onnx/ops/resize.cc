// The converters of ONNX's Resize (opsets 10-13) and Upsample (7-9) on NCHW images:
// image.resize2d when the output extents are constants, dyn.image.resize2d when sizes
// or scales arrive at run time — and always for scales, whose coordinate mapping uses
// 1 / scale rather than the ratio of the extents (they differ when in * scale is not
// whole). Modes nearest, linear and cubic (cubic_coeff_a, exclude_outside), every
// coordinate transformation — tf_crop_and_resize passing the roi input (f32) on as the
// kernels' last input —, every nearest_mode. GridSample (opset 16, 4-D) is nn.grid_sample.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// The kernels' method for ONNX's `mode`.
absl::StatusOr<std::string> Method(const NodeContext& ctx, const std::string& mode) {
  if (mode == "nearest") return std::string("nearest_neighbor");
  if (mode == "linear" || mode == "bilinear") return std::string("linear");
  if (mode == "cubic") return std::string("cubic");
  return ctx.Unimplemented(absl::StrFormat("mode '%s' (nearest, linear and cubic are supported)", mode));
}

// x resized to `target` (ONNX's sizes, i64 [4], or scales, f32 [4]) with `attrs`, and
// the roi for tf_crop_and_resize.
absl::StatusOr<Values> ResizeTo(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& target,
                                kernels::Attrs attrs, const std::optional<OnnxValue>& roi = std::nullopt) {
  if (x.type.rank() != 4) return ctx.Unimplemented("resizing other than 4-D (NCHW) data");
  // The roi, where given, is either kernel's last input.
  const auto with_roi = [&](std::vector<OnnxValue> args) {
    if (roi) args.push_back(*roi);
    return args;
  };
  if (target.type.dtype() == DType::kI64) {
    if (std::optional<std::vector<int64_t>> sizes = target.ConstantElements()) {
      if (sizes->size() != 4) return ctx.Invalid("sizes must hold 4 values (N, C, H, W)");
      for (int i = 0; i < 2; ++i) {
        if (x.type.shape()[i].is_const() && x.type.shape()[i].const_value() != (*sizes)[i]) {
          return ctx.Unimplemented("sizes that change N or C (only H and W resize)");
        }
      }
      attrs["size"] = std::vector<int64_t>{(*sizes)[2], (*sizes)[3]};
      return One(ctx.Call("image.resize2d", with_roi({x}), std::move(attrs)));
    }
  }
  return One(ctx.Call("dyn.image.resize2d", with_roi({x, target}), std::move(attrs)));
}

// tf_crop_and_resize's roi (input 1): f32, the starts then the ends along every axis of x.
absl::StatusOr<OnnxValue> Roi(const NodeContext& ctx, const OnnxValue& x) {
  std::optional<OnnxValue> roi = ctx.OptionalInput(1);
  if (!roi || (roi->type.rank() == 1 && roi->type.shape()[0] == Dim(0))) {
    return ctx.Invalid("coordinate_transformation_mode 'tf_crop_and_resize' needs the roi (input 1)");
  }
  if (roi->type.dtype() != DType::kF32) {
    return ctx.Unimplemented(absl::StrFormat("a roi of dtype %s (float32 is supported)", DTypeName(roi->type.dtype())));
  }
  if (roi->type.rank() != 1 || !MayEqual(roi->type.shape()[0], Dim(2 * x.type.rank()))) {
    return ctx.Invalid(absl::StrFormat("the roi %s must hold 2 values per axis of the data %s", roi->type.ToString(),
                                       x.type.ToString()));
  }
  return *roi;
}

absl::StatusOr<Values> ConvertResize(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const std::string mode, ctx.String("mode", "nearest"));
  DYNVM_ASSIGN_OR_RETURN(const std::string method, Method(ctx, mode));
  // Opset 10 maps coordinates as asymmetric and rounds nearest down.
  const bool v10 = ctx.opset() < 11;
  DYNVM_ASSIGN_OR_RETURN(const std::string transform,
                         ctx.String("coordinate_transformation_mode", v10 ? "asymmetric" : "half_pixel"));
  DYNVM_ASSIGN_OR_RETURN(const std::string nearest, ctx.String("nearest_mode", v10 ? "floor" : "round_prefer_floor"));
  kernels::Attrs attrs = {{"method", method}, {"coordinate_transformation_mode", transform},
                          {"rounding_method", nearest}};
  // exclude_outside renormalises the weights of the taps inside the image. Linear's taps
  // off the image are clamped copies of the one inside, so it changes nothing there; with
  // nearest, ONNX's reference divides by zero where the one tap read is off the image.
  DYNVM_ASSIGN_OR_RETURN(const int64_t exclude_outside, ctx.Int("exclude_outside", 0));
  if (exclude_outside != 0 && method == "nearest_neighbor") {
    return ctx.Unimplemented("exclude_outside = 1 with mode 'nearest'");
  }
  if (method == "cubic") {
    DYNVM_ASSIGN_OR_RETURN(const double a, ctx.Float("cubic_coeff_a", -0.75));
    attrs["cubic_alpha"] = a;
    attrs["cubic_exclude"] = int64_t{exclude_outside != 0};
  }
  std::optional<OnnxValue> roi;
  if (transform == "tf_crop_and_resize") {
    DYNVM_ASSIGN_OR_RETURN(roi, Roi(ctx, x));
    DYNVM_ASSIGN_OR_RETURN(const double extrapolation, ctx.Float("extrapolation_value", 0.0));
    attrs["extrapolation_value"] = extrapolation;
  }
  // The target: sizes where given, else scales (opset 10: input 1).
  std::optional<OnnxValue> sizes = v10 ? std::nullopt : ctx.OptionalInput(3);
  if (sizes && sizes->type.rank() == 1 && sizes->type.shape()[0] == Dim(0)) sizes.reset();
  if (sizes) return ResizeTo(ctx, x, *sizes, std::move(attrs), roi);
  std::optional<OnnxValue> scales = ctx.OptionalInput(v10 ? 1 : 2);
  if (!scales) return ctx.Invalid("neither sizes nor scales is given");
  return ResizeTo(ctx, x, *scales, std::move(attrs), roi);
}

// Upsample: scales (an attribute at opset 7, an input from 9), nearest rounding down
// and linear, both with the asymmetric mapping.
absl::StatusOr<Values> ConvertUpsample(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const std::string mode, ctx.String("mode", "nearest"));
  DYNVM_ASSIGN_OR_RETURN(const std::string method, Method(ctx, mode));
  kernels::Attrs attrs = {{"method", method}, {"coordinate_transformation_mode", std::string("asymmetric")},
                          {"rounding_method", std::string("floor")}};
  if (ctx.opset() < 9) return ctx.Unimplemented("Upsample before opset 9 (its scales an attribute)");
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scales, ctx.Input(1));
  return ResizeTo(ctx, x, scales, std::move(attrs));
}

// GridSample (opset 16): nn.grid_sample on 4-D data; opset 20's mode names linear and
// cubic are bilinear and bicubic.
absl::StatusOr<Values> ConvertGridSample(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue grid, ctx.Input(1));
  if (x.type.rank() != 4) return ctx.Unimplemented("sampling other than 4-D (NCHW) data");
  DYNVM_ASSIGN_OR_RETURN(std::string mode, ctx.String("mode", "bilinear"));
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  DYNVM_ASSIGN_OR_RETURN(const std::string padding, ctx.String("padding_mode", "zeros"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t align_corners, ctx.Int("align_corners", 0));
  if (x.type.dtype() != DType::kF32 || grid.type.dtype() != DType::kF32) {
    return ctx.Unimplemented(absl::StrFormat("data %s and grid %s: float32 is supported", x.type.ToString(),
                                             grid.type.ToString()));
  }
  return One(ctx.Call("nn.grid_sample", {x, grid},
                      {{"method", mode}, {"padding_mode", padding}, {"align_corners", int64_t{align_corners != 0}}}));
}

}  // namespace

void AddResizeConverters(ConverterTable& table) {
  table.insert({
      {"Resize",
       {ConvertResize,
        {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value", "mode",
         "nearest_mode"}}},
      {"Upsample", {ConvertUpsample, {"mode"}}},
      {"GridSample", {ConvertGridSample, {"align_corners", "mode", "padding_mode"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
