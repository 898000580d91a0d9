// Converters of ONNX's loss operators, NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss, composed from gather, where and the reductions as ONNX's own
// function bodies define them: for log-probabilities x [N, C, d1...] and classes
// t [N, d1...],
//
//   loss[n, d] = -x[n, t[n, d], d] * w[t[n, d]]       (w: the weight input, or 1)
//
// with the positions whose class is ignore_index contributing 0 and weighing 0; then
// reduction "none" keeps loss, "sum" sums it, and "mean" divides the sum by the sum of
// the weights taken (the count of positions not ignored when there is no weight).
// SoftmaxCrossEntropyLoss is the same on log_softmax(scores) over axis 1, and returns
// the log-probabilities as its optional second output.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// The loss of log-probabilities `logp` and classes `target`, as the file comment says.
absl::StatusOr<OnnxValue> NllLoss(const NodeContext& ctx, const OnnxValue& logp,
                                  const OnnxValue& target, const std::optional<OnnxValue>& weight) {
  DYNVM_ASSIGN_OR_RETURN(const std::string reduction, ctx.String("reduction", "mean"));
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return ctx.Invalid(absl::StrFormat(
        "attribute 'reduction' must be \"none\", \"sum\" or \"mean\", got \"%s\"", reduction));
  }
  const int rank = logp.type.rank();
  if (rank < 2) {
    return ctx.Invalid(absl::StrFormat("the input must be [N, C, d1...] (rank 2 or more), got rank %d", rank));
  }
  if (target.type.rank() != rank - 1) {
    return ctx.Invalid(absl::StrFormat(
        "the target must have rank %d (the input's without the class axis), got %d", rank - 1,
        target.type.rank()));
  }
  const DType index_dtype = target.type.dtype();
  if (index_dtype != DType::kI32 && index_dtype != DType::kI64) {
    return ctx.Invalid(absl::StrFormat("the target must be int32 or int64, got %s",
                                       DTypeName(index_dtype)));
  }
  if (weight && weight->type.rank() != 1) {
    return ctx.Invalid(absl::StrFormat("the weight must be [C], got rank %d", weight->type.rank()));
  }
  const DType dtype = logp.type.dtype();

  // Where the class is ignore_index, and the classes with those positions made 0 (any
  // valid class: its value is discarded).
  std::optional<OnnxValue> ignored;
  OnnxValue classes = target;
  if (ctx.HasAttr("ignore_index")) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t ignore_index, ctx.Int("ignore_index"));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue ii, NodeContext::ConstantScalarOf(index_dtype, static_cast<double>(ignore_index)));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, NodeContext::ConstantScalarOf(index_dtype, 0.0));
    DYNVM_ASSIGN_OR_RETURN(ignored, ctx.Call("equal", {target, ii}));
    DYNVM_ASSIGN_OR_RETURN(classes, ctx.Call("where", {*ignored, zero, target}));
  }

  DYNVM_ASSIGN_OR_RETURN(OnnxValue index, ctx.Call("expand_dims", {classes}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue picked, ctx.Call("gather", {logp, index}, {{"axis", int64_t{1}}}));
  DYNVM_ASSIGN_OR_RETURN(picked, ctx.Call("squeeze", {picked}, AxesAttr({1})));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue loss, ctx.Call("negative", {picked}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue fzero, NodeContext::ConstantScalarOf(dtype, 0.0));
  // Set, not multiplied by a zero weight: an ignored position's log-probability may be
  // -inf, and 0 * inf is NaN.
  if (ignored) {
    DYNVM_ASSIGN_OR_RETURN(loss, ctx.Call("where", {*ignored, fzero, loss}));
  }

  std::optional<OnnxValue> weights;  // per position
  if (weight) {
    // "clip": an ignored position's class may lie outside [0, C); its weight is replaced.
    DYNVM_ASSIGN_OR_RETURN(weights, ctx.Call("take", {*weight, classes}, {{"axis", int64_t{0}}, {"mode", std::string("clip")}}));
    if (ignored) {
      DYNVM_ASSIGN_OR_RETURN(weights, ctx.Call("where", {*ignored, fzero, *weights}));
    }
    DYNVM_ASSIGN_OR_RETURN(loss, ctx.Call("multiply", {loss, *weights}));
  } else if (ignored) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue kept, ctx.Call("logical_not", {*ignored}));
    DYNVM_ASSIGN_OR_RETURN(weights, ctx.Call("cast", {kept}, {{"dtype", std::string(RelayDTypeName(dtype))}}));
  }

  if (reduction == "none") return loss;
  const kernels::Attrs all = {{"keepdims", int64_t{0}}};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue total, ctx.Call("sum", {loss}, all));
  if (reduction == "sum") return total;
  if (!weights) return ctx.Call("mean", {loss}, all);
  DYNVM_ASSIGN_OR_RETURN(OnnxValue weight_sum, ctx.Call("sum", {*weights}, all));
  return ctx.Call("divide", {total, weight_sum});
}

absl::StatusOr<Values> ConvertNllLoss(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue logp, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue target, ctx.Input(1));
  return One(NllLoss(ctx, logp, target, ctx.OptionalInput(2)));
}

absl::StatusOr<Values> ConvertSoftmaxCrossEntropyLoss(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scores, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue target, ctx.Input(1));
  if (scores.type.rank() < 2) {
    return ctx.Invalid(absl::StrFormat("the scores must be [N, C, d1...] (rank 2 or more), got rank %d",
                                       scores.type.rank()));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue logp, ctx.Call("nn.log_softmax", {scores}, {{"axis", int64_t{1}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue loss, NllLoss(ctx, logp, target, ctx.OptionalInput(2)));
  Values out = {std::move(loss)};
  if (ctx.HasOutput(1)) out.push_back(std::move(logp));
  return out;
}

}  // namespace

void AddLossConverters(ConverterTable& table) {
  table.insert({
      {"NegativeLogLikelihoodLoss", {ConvertNllLoss, {"ignore_index", "reduction"}}},
      {"SoftmaxCrossEntropyLoss", {ConvertSoftmaxCrossEntropyLoss, {"ignore_index", "reduction"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
