// The helpers the ONNX operator converters share (ops/common.h).
#include "compiler/frontend/onnx/ops/common.h"

#include <cstdint>
#include <optional>
#include <string>
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

absl::StatusOr<OnnxValue> CastTo(const NodeContext& ctx, const OnnxValue& x, DType dtype) {
  if (x.type.dtype() == dtype) return x;
  return ctx.Call("cast", {x}, {{"dtype", std::string(RelayDTypeName(dtype))}});
}

absl::StatusOr<OnnxValue> ExtentOf(const NodeContext& ctx, const OnnxValue& x, int axis) {
  const Dim& extent = x.type.shape()[axis];
  if (extent.is_const()) return NodeContext::ConstantI64({extent.const_value()}, /*scalar=*/true);
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("shape_of", {x}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("take", {shape, NodeContext::ConstantI64({axis}, /*scalar=*/true)},
                                                 {{"axis", int64_t{0}}, {"mode", std::string("fast")}}));
  out.elements = std::vector<Dim>{extent};
  return out;
}

absl::StatusOr<OnnxValue> Iota(const NodeContext& ctx, const OnnxValue& n, const Dim& extent) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("arange", {NodeContext::ConstantI64({0}, true), n,
                                                            NodeContext::ConstantI64({1}, true)}));
  if (extent.is_any()) return out;
  return ctx.Narrow(out, Type::Tensor(DType::kI64, {extent}));
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
