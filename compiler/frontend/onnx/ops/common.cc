// The helpers the ONNX operator converters share (ops/common.h).
#include "compiler/frontend/onnx/ops/common.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace dynvm::compiler::onnx_frontend::ops {

absl::StatusOr<Values> One(absl::StatusOr<OnnxValue> v) {
  if (!v.ok()) return v.status();
  return Values{*std::move(v)};
}

absl::StatusOr<int> NormalizeAxis(const NodeContext& ctx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return ctx.Invalid(absl::StrFormat("axis %d is out of range for rank %d", axis, rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

kernels::Attrs AxesAttr(const std::vector<int64_t>& axes) {
  return {{"axis", axes}};
}

Type AnyExtents(const Type& t) {
  return Type::Tensor(t.dtype(), std::vector<Dim>(t.rank(), Dim::Any()));
}

OnnxValue ShapeOperand(const OnnxValue& v) {
  if (std::optional<std::vector<int64_t>> c = v.ConstantElements()) return NodeContext::ConstantI64(*c);
  return v;
}

absl::StatusOr<std::optional<std::vector<int64_t>>> AxesOf(NodeContext& ctx, int64_t input_since,
                                                          int input_index) {
  if (ctx.opset() < input_since) {
    if (!ctx.HasAttr("axes")) return std::optional<std::vector<int64_t>>();
    DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.Ints("axes"));
    return std::optional<std::vector<int64_t>>(std::move(axes));
  }
  if (!ctx.OptionalInput(input_index)) return std::optional<std::vector<int64_t>>();
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.ConstantInts(input_index));
  return std::optional<std::vector<int64_t>>(std::move(axes));
}

}  // namespace dynvm::compiler::onnx_frontend::ops
