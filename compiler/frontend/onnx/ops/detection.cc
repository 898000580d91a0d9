// The converters of ONNX's object-detection operators: NonMaxSuppression (opsets 10,
// 11) to vision.all_class_non_max_suppression, and RoiAlign (opsets 10, 16) to
// vision.roi_align, whose kernels (kernels/nn/detection.cc) follow ONNX's reference
// implementations. Float32 data only.
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

// Input `i`, which must be float32: the kernels compute in float32 only.
absl::StatusOr<OnnxValue> F32Input(const NodeContext& ctx, int i, std::string_view what) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(i));
  if (v.type.is_tensor() && v.type.dtype() != DType::kF32) {
    return ctx.Unimplemented(absl::StrFormat("%s of dtype %s (float32 only)", what,
                                             std::string(RelayDTypeName(v.type.dtype()))));
  }
  return v;
}

// The scalars max_output_boxes_per_class and iou_threshold are optional inputs that
// default to 0 (no box selected, any overlap suppresses); score_threshold, when absent,
// filters nothing, so the kernel is called without it. The scalars may arrive at run time.
absl::StatusOr<Values> ConvertNonMaxSuppression(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue boxes, F32Input(ctx, 0, "boxes"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scores, F32Input(ctx, 1, "scores"));
  std::optional<OnnxValue> max_output = ctx.OptionalInput(2);
  if (!max_output) max_output = NodeContext::ConstantI64({0});
  std::optional<OnnxValue> iou = ctx.OptionalInput(3);
  if (!iou) {
    DYNVM_ASSIGN_OR_RETURN(iou, NodeContext::ConstantScalarOf(DType::kF32, 0.0));
  }
  std::vector<OnnxValue> args = {std::move(boxes), std::move(scores), *std::move(max_output), *std::move(iou)};
  if (std::optional<OnnxValue> score = ctx.OptionalInput(4)) args.push_back(*std::move(score));
  DYNVM_ASSIGN_OR_RETURN(const int64_t center_point_box, ctx.Int("center_point_box", 0));
  if (center_point_box != 0 && center_point_box != 1) {
    return ctx.Invalid(absl::StrFormat("center_point_box must be 0 or 1, got %d", center_point_box));
  }
  return One(ctx.Call("vision.all_class_non_max_suppression", std::move(args),
                      {{"center_point_box", center_point_box}}));
}

// Opset 10 samples as output_half_pixel (no half-pixel shift); opset 16 adds the
// attribute, half_pixel by default.
absl::StatusOr<Values> ConvertRoiAlign(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, F32Input(ctx, 0, "X"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue rois, F32Input(ctx, 1, "rois"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue batch_indices, ctx.Input(2));
  DYNVM_ASSIGN_OR_RETURN(const std::string transform,
                         ctx.String("coordinate_transformation_mode",
                                    ctx.opset() < 16 ? "output_half_pixel" : "half_pixel"));
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    return ctx.Invalid(absl::StrFormat(
        "coordinate_transformation_mode '%s': expected half_pixel or output_half_pixel", transform));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::string mode, ctx.String("mode", "avg"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t height, ctx.Int("output_height", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t width, ctx.Int("output_width", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t sampling_ratio, ctx.Int("sampling_ratio", 0));
  DYNVM_ASSIGN_OR_RETURN(const double spatial_scale, ctx.Float("spatial_scale", 1.0));
  kernels::Attrs attrs = {{"pooled_size", std::vector<int64_t>{height, width}},
                          {"spatial_scale", spatial_scale},
                          {"sample_ratio", sampling_ratio},
                          {"mode", mode},
                          {"aligned", int64_t{transform == "half_pixel"}}};
  return One(ctx.Call("vision.roi_align", {std::move(x), std::move(rois), std::move(batch_indices)},
                      std::move(attrs)));
}

}  // namespace

void AddDetectionConverters(ConverterTable& table) {
  table.insert({
      {"NonMaxSuppression", {ConvertNonMaxSuppression, {"center_point_box"}}},
      {"RoiAlign",
       {ConvertRoiAlign,
        {"coordinate_transformation_mode", "mode", "output_height", "output_width", "sampling_ratio",
         "spatial_scale"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
