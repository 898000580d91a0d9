// The converters of ONNX's Resize (opsets 10-13) and Upsample (7-9) on NCHW images:
// image.resize2d when the output extents are constants, dyn.image.resize2d when sizes
// or scales arrive at run time — and always for scales, whose coordinate mapping uses
// 1 / scale rather than the ratio of the extents (they differ when in * scale is not
// whole). Modes nearest and linear, every coordinate transformation but
// tf_crop_and_resize, every nearest_mode; cubic is not supported.
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
  return ctx.Unimplemented(absl::StrFormat("mode '%s' (nearest and linear are supported)", mode));
}

// x resized to `target` (ONNX's sizes, i64 [4], or scales, f32 [4]) with `attrs`.
absl::StatusOr<Values> ResizeTo(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& target,
                                kernels::Attrs attrs) {
  if (x.type.rank() != 4) return ctx.Unimplemented("resizing other than 4-D (NCHW) data");
  if (target.type.dtype() == DType::kI64) {
    if (std::optional<std::vector<int64_t>> sizes = target.ConstantElements()) {
      if (sizes->size() != 4) return ctx.Invalid("sizes must hold 4 values (N, C, H, W)");
      for (int i = 0; i < 2; ++i) {
        if (x.type.shape()[i].is_const() && x.type.shape()[i].const_value() != (*sizes)[i]) {
          return ctx.Unimplemented("sizes that change N or C (only H and W resize)");
        }
      }
      attrs["size"] = std::vector<int64_t>{(*sizes)[2], (*sizes)[3]};
      return One(ctx.Call("image.resize2d", {x}, std::move(attrs)));
    }
  }
  return One(ctx.Call("dyn.image.resize2d", {x, target}, std::move(attrs)));
}

absl::StatusOr<Values> ConvertResize(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const std::string mode, ctx.String("mode", "nearest"));
  DYNVM_ASSIGN_OR_RETURN(const std::string method, Method(ctx, mode));
  // Opset 10 maps coordinates as asymmetric and rounds nearest down.
  const bool v10 = ctx.opset() < 11;
  DYNVM_ASSIGN_OR_RETURN(const std::string transform,
                         ctx.String("coordinate_transformation_mode", v10 ? "asymmetric" : "half_pixel"));
  if (transform == "tf_crop_and_resize") return ctx.Unimplemented("coordinate_transformation_mode 'tf_crop_and_resize'");
  DYNVM_ASSIGN_OR_RETURN(const std::string nearest, ctx.String("nearest_mode", v10 ? "floor" : "round_prefer_floor"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t exclude_outside, ctx.Int("exclude_outside", 0));
  if (exclude_outside != 0) return ctx.Unimplemented("exclude_outside = 1 (a cubic option)");
  kernels::Attrs attrs = {{"method", method}, {"coordinate_transformation_mode", transform},
                          {"rounding_method", nearest}};
  // The target: sizes where given, else scales (opset 10: input 1).
  std::optional<OnnxValue> sizes = v10 ? std::nullopt : ctx.OptionalInput(3);
  if (sizes && sizes->type.rank() == 1 && sizes->type.shape()[0] == Dim(0)) sizes.reset();
  if (sizes) return ResizeTo(ctx, x, *sizes, std::move(attrs));
  std::optional<OnnxValue> scales = ctx.OptionalInput(v10 ? 1 : 2);
  if (!scales) return ctx.Invalid("neither sizes nor scales is given");
  return ResizeTo(ctx, x, *scales, std::move(attrs));
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

}  // namespace

void AddResizeConverters(ConverterTable& table) {
  table.insert({
      {"Resize",
       {ConvertResize,
        {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value", "mode",
         "nearest_mode"}}},
      {"Upsample", {ConvertUpsample, {"mode"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
