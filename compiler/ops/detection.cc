// Relations of the object-detection operators (kernels/nn/detection.cc):
// vision.all_class_non_max_suppression, whose number of selected boxes only the values
// tell, and vision.roi_align. Attributes are checked by binding the kernel, so that a bad
// one fails at compile time with the message loading the executable would give.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"

namespace dynvm::compiler::internal {
namespace {

constexpr DType kF32[] = {DType::kF32};
constexpr DType kI64[] = {DType::kI64};

// Argument `i`, a scalar input that holds one value or none (ONNX's [1] or [0]).
absl::Status OptionalScalarArg(const OpCall& call, int i, std::string_view what,
                               absl::Span<const DType> dtypes) {
  DYNVM_ASSIGN_OR_RETURN(const Type t, TensorArg(call, i, what, dtypes));
  Dim elements = 1;
  for (const Dim& d : t.shape()) elements = elements * d;
  if (elements.is_const() && elements.const_value() > 1) {
    return OpError(call, absl::StrFormat("%s must hold one value or none, got shape %s", what,
                                         ShapeText(t.shape())));
  }
  return absl::OkStatus();
}

// boxes [B, N, 4], scores [B, C, N], max_output_boxes_per_class, iou_threshold
// [, score_threshold] -> [?, 3] int64: one row (batch, class, box) per selected box.
absl::StatusOr<Type> NonMaxSuppressionRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckKernelAttrs(call));
  DYNVM_ASSIGN_OR_RETURN(const Type boxes, TensorArg(call, 0, "boxes", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type scores, TensorArg(call, 1, "scores", kF32));
  if (boxes.rank() != 3 || scores.rank() != 3 || !MayEqual(boxes.shape()[2], 4) ||
      !MayEqual(scores.shape()[0], boxes.shape()[0]) || !MayEqual(scores.shape()[2], boxes.shape()[1])) {
    return OpError(call, absl::StrFormat("boxes %s and scores %s must be [batches, boxes, 4] and "
                                         "[batches, classes, boxes]",
                                         ShapeText(boxes.shape()), ShapeText(scores.shape())));
  }
  DYNVM_RETURN_IF_ERROR(OptionalScalarArg(call, 2, "max_output_boxes_per_class", kI64));
  DYNVM_RETURN_IF_ERROR(OptionalScalarArg(call, 3, "iou_threshold", kF32));
  if (call.args.size() == 5) DYNVM_RETURN_IF_ERROR(OptionalScalarArg(call, 4, "score_threshold", kF32));
  return Type::Tensor(DType::kI64, {Dim::Any(), 3});
}

// data [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, pooled_size[0], pooled_size[1]].
absl::StatusOr<Type> RoiAlignRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI64, DType::kI32};
  DYNVM_RETURN_IF_ERROR(CheckKernelAttrs(call));
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type rois, TensorArg(call, 1, "rois", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type indices, TensorArg(call, 2, "batch_indices", kIndex));
  if (x.rank() != 4) return OpError(call, absl::StrFormat("data %s must have rank 4 (NCHW)", ShapeText(x.shape())));
  if (rois.rank() != 2 || indices.rank() != 1 || !MayEqual(rois.shape()[1], 4) ||
      !MayEqual(rois.shape()[0], indices.shape()[0])) {
    return OpError(call, absl::StrFormat("rois %s and batch_indices %s must be [rois, 4] and [rois]",
                                         ShapeText(rois.shape()), ShapeText(indices.shape())));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> size, IntsAttr(call, "pooled_size", {}));
  const Dim count = Unify(rois.shape()[0], indices.shape()[0]);
  // Rois with channels to sample need images with pixels.
  const auto is = [](const Dim& d, bool zero) { return d.is_const() && (d.const_value() == 0) == zero; };
  if ((is(x.shape()[2], true) || is(x.shape()[3], true)) && is(count, false) && is(x.shape()[1], false)) {
    return OpError(call, absl::StrFormat("cannot sample rois from the empty images %s", ShapeText(x.shape())));
  }
  return Type::Tensor(DType::kF32, {count, x.shape()[1], size[0], size[1]});
}

constexpr OpDef kOps[] = {
    {"vision.all_class_non_max_suppression", 4, 5, NonMaxSuppressionRel},
    {"vision.roi_align", 3, 3, RoiAlignRel},
};

}  // namespace

absl::Span<const OpDef> DetectionOps() { return kOps; }

}  // namespace dynvm::compiler::internal
