// Converters of ONNX's constants and shape operators: Constant, Shape, Size,
// ConstantOfShape, Range and EyeLike, with the shape arithmetic the importer folds (converters.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"
#include "compiler/frontend/onnx/tensor_proto.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

absl::StatusOr<Values> ConvertConstant(NodeContext& ctx) {
  if (ctx.HasAttr("value")) {
    DYNVM_ASSIGN_OR_RETURN(NDArray t, ctx.Tensor("value"));
    return Values{NodeContext::Constant(std::move(t))};
  }
  if (ctx.HasAttr("value_float")) {
    DYNVM_ASSIGN_OR_RETURN(const double v, ctx.Float("value_float"));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue c, NodeContext::ConstantScalarOf(DType::kF32, v));
    return Values{c};
  }
  if (ctx.HasAttr("value_int")) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t v, ctx.Int("value_int"));
    return Values{NodeContext::ConstantI64({v}, /*scalar=*/true)};
  }
  if (ctx.HasAttr("value_ints")) {
    DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> v, ctx.Ints("value_ints"));
    return Values{NodeContext::ConstantI64(v)};
  }
  return ctx.Unimplemented("only the value, value_float, value_int and value_ints forms are supported");
}

absl::StatusOr<Values> ConvertShape(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  const int rank = x.type.rank();
  DYNVM_ASSIGN_OR_RETURN(int64_t start, ctx.Int("start", 0));
  DYNVM_ASSIGN_OR_RETURN(int64_t end, ctx.Int("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  const std::vector<Dim> dims(x.type.shape().begin() + start, x.type.shape().begin() + end);
  if (std::optional<std::vector<int64_t>> values = ConstantDims(dims)) {
    return Values{NodeContext::ConstantI64(*values)};
  }
  kernels::Attrs range;  // shape_of takes opset 15's range itself
  if (start != 0) range["start"] = start;
  if (end != rank) range["end"] = end;
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("shape_of", {x}, std::move(range)));
  out.elements = dims;
  return Values{std::move(out)};
}

absl::StatusOr<Values> ConvertSize(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  Dim n = 1;
  for (const Dim& d : x.type.shape()) n = n * d;
  if (n.is_const()) return Values{NodeContext::ConstantI64({n.const_value()}, /*scalar=*/true)};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("shape_of", {x}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("prod", {shape}));
  if (!n.is_any()) out.elements = std::vector<Dim>{n};
  return Values{std::move(out)};
}


absl::StatusOr<Values> ConvertConstantOfShape(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Input(0));
  OnnxValue fill;
  if (ctx.HasAttr("value")) {
    DYNVM_ASSIGN_OR_RETURN(NDArray t, ctx.Tensor("value"));
    if (t->num_elements() != 1) return ctx.Invalid("attribute 'value' must hold one element");
    DYNVM_ASSIGN_OR_RETURN(NDArray scalar, NDArrayObj::Create(t->storage(), 0, t->dtype(), {}));
    fill = NodeContext::Constant(scalar);
  } else {
    DYNVM_ASSIGN_OR_RETURN(fill, NodeContext::ConstantScalarOf(DType::kF32, 0.0));
  }
  const std::string dtype(RelayDTypeName(fill.type.dtype()));
  if (std::optional<std::vector<int64_t>> dims = shape.ConstantElements()) {
    return One(ctx.Call("full", {fill}, {{"shape", *dims}, {"dtype", dtype}}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("dyn.full", {fill, shape}, {{"dtype", dtype}}));
  // Extents told symbolically (all constants took the static form above).
  if (shape.elements && std::none_of(shape.elements->begin(), shape.elements->end(), [](const Dim& d) {
        return d.is_any() || (d.is_const() && d.const_value() < 0);
      })) {
    return Values{ctx.Narrow(out, Type::Tensor(out.type.dtype(), *shape.elements))};
  }
  return Values{std::move(out)};
}

absl::StatusOr<Values> ConvertRange(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue start, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue limit, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue delta, ctx.Input(2));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("arange", {start, limit, delta}));
  // arange(0, n, 1) over an extent n (position ids) has exactly n elements.
  const std::optional<std::vector<int64_t>> first = start.ConstantElements();
  const std::optional<std::vector<int64_t>> step = delta.ConstantElements();
  if (first == std::vector<int64_t>{0} && step == std::vector<int64_t>{1} && limit.elements &&
      limit.elements->size() == 1 && (*limit.elements)[0].is_symbol()) {
    return Values{ctx.Narrow(out, Type::Tensor(out.type.dtype(), {(*limit.elements)[0]}))};
  }
  return Values{std::move(out)};
}

// EyeLike: a matrix of x's shape (read at run time where the type does not know it)
// and of `dtype` (default x's), 1 on diagonal k (positive above the main one), 0
// elsewhere.
absl::StatusOr<Values> ConvertEyeLike(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  if (x.type.rank() != 2) return ctx.Invalid(absl::StrFormat("the input must be a matrix, got %s", x.type.ToString()));
  DType dtype = x.type.dtype();
  if (ctx.HasAttr("dtype")) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t onnx_dtype, ctx.Int("dtype"));
    absl::StatusOr<DType> given = DTypeFromOnnx(static_cast<int32_t>(onnx_dtype));
    if (!given.ok()) return ctx.Unimplemented(std::string(given.status().message()));
    dtype = *given;
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t k, ctx.Int("k", 0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue rows, ExtentOf(ctx, x, 0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue cols, ExtentOf(ctx, x, 1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue i, Iota(ctx, rows, x.type.shape()[0]));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue j, Iota(ctx, cols, x.type.shape()[1]));
  DYNVM_ASSIGN_OR_RETURN(i, ctx.Call("expand_dims", {i}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue diagonal, ctx.Call("subtract", {j, i}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue on, ctx.Call("equal", {diagonal, NodeContext::ConstantI64({k}, true)}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("cast", {on}, {{"dtype", std::string(RelayDTypeName(dtype))}}));
  const Type type = Type::Tensor(dtype, x.type.shape());
  return Values{out.type == type ? out : ctx.Narrow(out, type)};
}

}  // namespace

void AddShapeConverters(ConverterTable& table) {
  table.insert({
      {"Constant", {ConvertConstant, {"value", "value_float", "value_int", "value_ints"}}},
      {"Shape", {ConvertShape, {"start", "end"}}}, {"Size", {ConvertSize, {}}},
      {"ConstantOfShape", {ConvertConstantOfShape, {"value"}}}, {"Range", {ConvertRange, {}}},
      {"EyeLike", {ConvertEyeLike, {"dtype", "k"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
