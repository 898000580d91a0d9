// The converters of ONNX operators to IR operator calls, and their table.
//
// Each follows the operator's ONNX specification for every opset from 1 to 17 (where
// an attribute became an input, both forms are read). What the kernel library cannot
// do is Unimplemented, naming the attribute or input; nothing is silently approximated.
#include "compiler/frontend/onnx/converters.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/tensor_proto.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

using Values = std::vector<OnnxValue>;

absl::StatusOr<Values> One(absl::StatusOr<OnnxValue> v) {
  if (!v.ok()) return v.status();
  return Values{*std::move(v)};
}

// An operator name as a template argument, so that one converter serves a family.
template <size_t N>
struct OpName {
  constexpr OpName(const char (&s)[N]) { std::copy_n(s, N, name); }  // NOLINT
  char name[N];
  constexpr std::string_view view() const { return {name, N - 1}; }
};

// `axis` in [-rank, rank) made non-negative.
absl::StatusOr<int> NormalizeAxis(const NodeContext& ctx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return ctx.Invalid(absl::StrFormat("axis %d is out of range for rank %d", axis, rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

kernels::Attrs AxesAttr(const std::vector<int64_t>& axes) {
  return {{"axis", axes}};
}

// ---------------------------------------------------------------------------------------
// Elementwise

template <OpName kOp>
absl::StatusOr<Values> Unary(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  return One(ctx.Call(kOp.view(), {x}));
}

// Elementwise arithmetic on the elements of shape values (Dims), numpy broadcasting of
// one-element operands; nothing when the result cannot be told.
std::optional<std::vector<Dim>> FoldArithmetic(std::string_view op, const OnnxValue& a,
                                               const OnnxValue& b) {
  if (!a.elements || !b.elements) return std::nullopt;
  const std::vector<Dim>& x = *a.elements;
  const std::vector<Dim>& y = *b.elements;
  if (x.size() != y.size() && x.size() != 1 && y.size() != 1) return std::nullopt;
  const size_t n = std::max(x.size(), y.size());
  std::vector<Dim> out;
  for (size_t i = 0; i < n; ++i) {
    const Dim& l = x[x.size() == 1 ? 0 : i];
    const Dim& r = y[y.size() == 1 ? 0 : i];
    if (l.is_any() || r.is_any()) return std::nullopt;
    if (op == "add") {
      out.push_back(l + r);
    } else if (op == "subtract") {
      out.push_back(l - r);
    } else if (op == "multiply") {
      out.push_back(l * r);
    } else if (op == "divide") {
      // ONNX truncates; floor division agrees when both are non-negative: a constant
      // >= 0, or an extent (a symbol), over a positive constant.
      if (!r.is_const() || r.const_value() <= 0) return std::nullopt;
      if (l.is_const() ? l.const_value() < 0 : !l.is_symbol()) return std::nullopt;
      out.push_back(FloorDiv(l, r));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

template <OpName kOp>
absl::StatusOr<Values> Binary(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, ctx.Input(1));
  std::optional<std::vector<Dim>> folded;
  if (a.type.rank() <= 1 && b.type.rank() <= 1) folded = FoldArithmetic(kOp.view(), a, b);
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call(kOp.view(), {a, b}));
  out.elements = std::move(folded);
  return Values{std::move(out)};
}

// Max, Min, Sum, Mean: any number of inputs, broadcast together.
template <OpName kOp>
absl::StatusOr<Values> Variadic(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue acc, ctx.Input(0));
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(i));
    constexpr std::string_view op = kOp.view() == "mean" ? std::string_view("add") : kOp.view();
    DYNVM_ASSIGN_OR_RETURN(acc, ctx.Call(op, {acc, x}));
  }
  if constexpr (kOp.view() == "mean") {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue n, NodeContext::ConstantScalarOf(acc.type.dtype(), ctx.num_inputs()));
    return One(ctx.Call("divide", {acc, n}));
  }
  return Values{acc};
}

absl::StatusOr<Values> ConvertPow(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, ctx.Input(1));
  if (b.type.dtype() != a.type.dtype()) {  // opset 12+: the exponent may have its own type
    DYNVM_ASSIGN_OR_RETURN(b, ctx.Call("cast", {b}, {{"dtype", std::string(RelayDTypeName(a.type.dtype()))}}));
  }
  return One(ctx.Call("power", {a, b}));
}

absl::StatusOr<Values> ConvertMod(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t fmod, ctx.Int("fmod", 0));
  return One(ctx.Call(fmod != 0 ? "mod" : "floor_mod", {a, b}));
}

absl::StatusOr<Values> ConvertCast(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t to, ctx.Int("to"));
  absl::StatusOr<DType> dtype = DTypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype.ok()) return ctx.Unimplemented(std::string(dtype.status().message()));
  std::optional<std::vector<Dim>> elements = x.elements;
  if (*dtype != DType::kI64 && *dtype != DType::kI32) elements.reset();
  if (*dtype == x.type.dtype()) return Values{x};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("cast", {x}, {{"dtype", std::string(RelayDTypeName(*dtype))}}));
  out.elements = std::move(elements);
  return Values{std::move(out)};
}

absl::StatusOr<Values> ConvertLeakyRelu(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const double alpha, ctx.Float("alpha", 0.01));
  return One(ctx.Call("nn.leaky_relu", {x}, {{"alpha", alpha}}));
}

absl::StatusOr<Values> ConvertClip(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  if (ctx.opset() < 11) {
    DYNVM_ASSIGN_OR_RETURN(const double lo, ctx.Float("min", -std::numeric_limits<float>::max()));
    DYNVM_ASSIGN_OR_RETURN(const double hi, ctx.Float("max", std::numeric_limits<float>::max()));
    return One(ctx.Call("clip", {x}, {{"a_min", lo}, {"a_max", hi}}));
  }
  // opset 11+: bounds are optional inputs of x's type, applied as max then min (which
  // also serves integers and run-time bounds).
  OnnxValue out = x;
  if (std::optional<OnnxValue> lo = ctx.OptionalInput(1)) {
    DYNVM_ASSIGN_OR_RETURN(out, ctx.Call("maximum", {out, *lo}));
  }
  if (std::optional<OnnxValue> hi = ctx.OptionalInput(2)) {
    DYNVM_ASSIGN_OR_RETURN(out, ctx.Call("minimum", {out, *hi}));
  }
  return Values{out};
}

absl::StatusOr<Values> ConvertWhere(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue c, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Input(2));
  return One(ctx.Call("where", {c, x, y}));
}

absl::StatusOr<Values> ConvertIdentity(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  return Values{x};
}

// Inference: the data passes through; the mask output is not produced.
absl::StatusOr<Values> ConvertDropout(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  if (ctx.HasOutput(1)) return ctx.Unimplemented("the mask output is not supported (inference only)");
  if (ctx.OptionalInput(2)) {
    DYNVM_ASSIGN_OR_RETURN(const double training, ctx.ConstantScalar(2));
    if (training != 0.0) return ctx.Unimplemented("training_mode = true is not supported");
  }
  return Values{x};
}

// ---------------------------------------------------------------------------------------
// Constants and shapes

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
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("shape_of", {x}));
  if (start != 0 || end != rank) {
    DYNVM_ASSIGN_OR_RETURN(out, ctx.Call("strided_slice", {out}, {{"begin", std::vector<int64_t>{start}},
                                                                  {"end", std::vector<int64_t>{end}}}));
  }
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

// A rank-1 i64 value with known elements as an operand: the constant when every element
// is one, else the value's own run-time expression.
OnnxValue ShapeOperand(const OnnxValue& v) {
  if (std::optional<std::vector<int64_t>> c = v.ConstantElements()) return NodeContext::ConstantI64(*c);
  return v;
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
  return One(ctx.Call("dyn.full", {fill, shape}, {{"dtype", dtype}}));
}

absl::StatusOr<Values> ConvertRange(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue start, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue limit, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue delta, ctx.Input(2));
  return One(ctx.Call("arange", {start, limit, delta}));
}

// ---------------------------------------------------------------------------------------
// Data movement

// Reshape's target as Relay's `newshape` codes for `data`: an extent, 0 (copy the input
// extent at that position) or -1 (inferred), when every target extent is a constant or
// equals the input's at its position, with at most one that is neither.
std::optional<std::vector<int64_t>> ReshapeCodes(const Type& data, const std::vector<Dim>& target,
                                                 bool allowzero) {
  std::vector<int64_t> codes;
  int inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim& d = target[i];
    if (d.is_const()) {
      if (d.const_value() == -1) {
        if (inferred >= 0) return std::nullopt;
        inferred = static_cast<int>(i);
      }
      codes.push_back(d.const_value());
    } else if (i < static_cast<size_t>(data.rank()) && data.shape()[i] == d && !d.is_any()) {
      codes.push_back(0);
    } else {
      if (inferred >= 0) return std::nullopt;
      inferred = static_cast<int>(i);
      codes.push_back(-1);
    }
  }
  if (allowzero) {  // a 0 means an extent of 0: no copies allowed
    for (size_t i = 0; i < codes.size(); ++i) {
      if (codes[i] == 0 && !target[i].is_const()) return std::nullopt;
    }
  }
  return codes;
}

absl::StatusOr<Values> ConvertReshape(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue data, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t allowzero, ctx.Int("allowzero", 0));
  if (shape.elements) {
    if (std::optional<std::vector<int64_t>> codes = ReshapeCodes(data.type, *shape.elements, allowzero)) {
      return One(ctx.Call("reshape", {data}, {{"newshape", *codes}, {"allowzero", allowzero}}));
    }
  }
  if (allowzero != 0) return ctx.Unimplemented("allowzero = 1 with a shape known only at run time");
  return One(ctx.Call("dyn.reshape", {data, shape}));
}

absl::StatusOr<Values> ConvertFlatten(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  const int rank = x.type.rank();
  DYNVM_ASSIGN_OR_RETURN(int64_t axis, ctx.Int("axis", 1));
  if (axis < -rank || axis > rank) return ctx.Invalid(absl::StrFormat("axis %d for rank %d", axis, rank));
  if (axis < 0) axis += rank;
  Dim outer = 1, inner = 1;
  for (int i = 0; i < rank; ++i) (i < axis ? outer : inner) = (i < axis ? outer : inner) * x.type.shape()[i];
  std::vector<int64_t> codes;
  if (outer.is_const()) {
    codes = {outer.const_value(), -1};
  } else if (inner.is_const()) {
    codes = {-1, inner.const_value()};
  } else {
    return ctx.Unimplemented("both sides of the flattening axis have extents known only at run time");
  }
  return One(ctx.Call("reshape", {x}, {{"newshape", codes}}));
}

absl::StatusOr<Values> ConvertTranspose(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  std::vector<int64_t> reversed(x.type.rank());
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> perm, ctx.Ints("perm", reversed));
  return One(ctx.Call("transpose", {x}, {{"axes", perm}}));
}

// The axes of Squeeze/Unsqueeze/Reduce*: an attribute before `input_since`, an optional
// input from then on.
absl::StatusOr<std::optional<std::vector<int64_t>>> AxesOf(NodeContext& ctx, int64_t input_since,
                                                          int input_index = 1) {
  if (ctx.opset() < input_since) {
    if (!ctx.HasAttr("axes")) return std::optional<std::vector<int64_t>>();
    DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.Ints("axes"));
    return std::optional<std::vector<int64_t>>(std::move(axes));
  }
  if (!ctx.OptionalInput(input_index)) return std::optional<std::vector<int64_t>>();
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.ConstantInts(input_index));
  return std::optional<std::vector<int64_t>>(std::move(axes));
}

absl::StatusOr<Values> ConvertUnsqueeze(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesOf(ctx, 13));
  if (!axes) return ctx.Invalid("axes are required");
  const int out_rank = x.type.rank() + static_cast<int>(axes->size());
  std::vector<int64_t> sorted;
  for (const int64_t a : *axes) {
    DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, a, out_rank));
    sorted.push_back(axis);
  }
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return ctx.Invalid("repeated axes");
  std::optional<std::vector<Dim>> elements;
  if (x.type.rank() == 0 && x.elements && sorted == std::vector<int64_t>{0}) elements = x.elements;
  OnnxValue out = x;
  for (const int64_t axis : sorted) {
    DYNVM_ASSIGN_OR_RETURN(out, ctx.Call("expand_dims", {out}, {{"axis", axis}, {"num_newaxis", int64_t{1}}}));
  }
  out.elements = std::move(elements);
  return Values{std::move(out)};
}

absl::StatusOr<Values> ConvertSqueeze(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesOf(ctx, 13));
  std::optional<std::vector<Dim>> elements;
  if (x.type.rank() == 1 && x.elements) elements = x.elements;
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("squeeze", {x}, axes ? AxesAttr(*axes) : kernels::Attrs{}));
  if (out.type.rank() == 0) out.elements = std::move(elements);
  return Values{std::move(out)};
}

absl::StatusOr<Values> ConvertConcat(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis"));
  std::vector<OnnxValue> inputs;
  std::optional<std::vector<Dim>> elements = std::vector<Dim>();
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(i));
    if (elements && x.elements && x.type.rank() == 1) {
      elements->insert(elements->end(), x.elements->begin(), x.elements->end());
    } else {
      elements.reset();
    }
    inputs.push_back(std::move(x));
  }
  if (elements) {
    if (std::optional<std::vector<int64_t>> c = ConstantDims(*elements)) {
      return Values{NodeContext::ConstantI64(*c)};
    }
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("concatenate", std::move(inputs), {{"axis", axis}}));
  out.elements = std::move(elements);
  return Values{std::move(out)};
}

absl::StatusOr<Values> ConvertSplit(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", 0));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, x.type.rank()));
  std::optional<std::vector<int64_t>> sizes;
  if (ctx.opset() < 2 && ctx.OptionalInput(1)) return ctx.Unimplemented("split sizes as an input (opset 1)");
  if (ctx.opset() < 13) {
    if (ctx.HasAttr("split")) {
      DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> s, ctx.Ints("split"));
      sizes = std::move(s);
    }
  } else if (ctx.OptionalInput(1)) {
    DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> s, ctx.ConstantInts(1));
    sizes = std::move(s);
  }
  const int parts = ctx.num_outputs();
  kernels::Attrs attrs{{"axis", int64_t{axis}}};
  if (sizes) {
    if (static_cast<int>(sizes->size()) != parts) {
      return ctx.Invalid(absl::StrFormat("%d split sizes for %d outputs", sizes->size(), parts));
    }
    std::vector<int64_t> points;
    int64_t at = 0;
    for (int i = 0; i + 1 < parts; ++i) points.push_back(at += (*sizes)[i]);
    attrs["indices_or_sections"] = points;
  } else {
    attrs["indices_or_sections"] = int64_t{parts};
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue tuple, ctx.Call("split", {x}, std::move(attrs)));
  if (parts == 1) {
    return Values{NodeContext::Field(tuple, 0)};
  }
  Values out;
  for (int i = 0; i < parts; ++i) out.push_back(NodeContext::Field(tuple, i));
  return out;
}

// The type of a Slice the relation of dyn.strided_slice leaves `?`, when starts are 0,
// steps 1 and axes known, and each end is a constant or an extent e (a symbol, so
// e >= 0): the result's extent is then min(e, D) for the data's extent D (ONNX clamps
// the end to D), which is e when D is e. Nothing otherwise.
std::optional<Type> SliceType(const NodeContext& ctx, const Type& data) {
  const auto known = [&](int i) -> std::optional<std::vector<int64_t>> {
    std::optional<OnnxValue> v = ctx.OptionalInput(i);
    return v ? v->ConstantElements() : std::nullopt;
  };
  const std::optional<std::vector<int64_t>> starts = known(1);
  std::optional<OnnxValue> ends = ctx.OptionalInput(2);
  if (!starts || !ends || !ends->elements || ends->elements->size() != starts->size()) return std::nullopt;
  const size_t n = starts->size();
  std::vector<int64_t> axes(n), steps(n, 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (ctx.OptionalInput(3)) {
    std::optional<std::vector<int64_t>> a = known(3);
    if (!a || a->size() != n) return std::nullopt;
    axes = *a;
  }
  if (ctx.OptionalInput(4)) {
    std::optional<std::vector<int64_t>> s = known(4);
    if (!s || s->size() != n) return std::nullopt;
    steps = *s;
  }
  std::vector<Dim> shape = data.shape();
  std::vector<bool> seen(shape.size(), false);
  for (size_t k = 0; k < n; ++k) {
    int64_t axis = axes[k];
    if (axis < 0) axis += data.rank();
    if (axis < 0 || axis >= data.rank() || seen[axis] || (*starts)[k] != 0 || steps[k] != 1) {
      return std::nullopt;
    }
    seen[axis] = true;
    const Dim& e = (*ends->elements)[k];
    const Dim& d = shape[axis];
    if (!e.is_symbol()) return std::nullopt;
    if (e == d) continue;
    if (!d.is_const() || d.const_value() < 1) return std::nullopt;
    shape[axis] = Min(e, d);
  }
  return Type::Tensor(data.dtype(), std::move(shape));
}

absl::StatusOr<Values> ConvertSlice(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue data, ctx.Input(0));
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    DYNVM_ASSIGN_OR_RETURN(starts, ctx.Ints("starts"));
    DYNVM_ASSIGN_OR_RETURN(ends, ctx.Ints("ends"));
    if (ctx.HasAttr("axes")) {
      DYNVM_ASSIGN_OR_RETURN(axes, ctx.Ints("axes"));
    }
  } else {
    const auto known = [&](int i) -> std::optional<std::vector<int64_t>> {
      std::optional<OnnxValue> v = ctx.OptionalInput(i);
      return v ? v->ConstantElements() : std::nullopt;
    };
    starts = known(1);
    ends = known(2);
    axes = known(3);
    steps = known(4);
    const bool runtime = !starts || !ends || (ctx.OptionalInput(3) && !axes) ||
                         (ctx.OptionalInput(4) && !steps);
    if (runtime) {
      std::vector<OnnxValue> args = {data};
      for (int i = 1; i < ctx.num_inputs(); ++i) {
        std::optional<OnnxValue> v = ctx.OptionalInput(i);
        if (!v) {
          if (i == 3) {  // axes absent but steps present: 0..n-1
            DYNVM_ASSIGN_OR_RETURN(OnnxValue s, ctx.Input(1));
            if (s.type.rank() != 1 || !s.type.shape()[0].is_const()) {
              return ctx.Unimplemented("steps without axes, with starts of unknown length");
            }
            std::vector<int64_t> all(s.type.shape()[0].const_value());
            std::iota(all.begin(), all.end(), 0);
            args.push_back(NodeContext::ConstantI64(all));
            continue;
          }
          return ctx.Invalid(absl::StrFormat("input %d is required", i));
        }
        args.push_back(ShapeOperand(*v));
      }
      DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("dyn.strided_slice", std::move(args)));
      if (std::optional<Type> type = SliceType(ctx, data.type)) return Values{ctx.Narrow(out, *type)};
      return Values{std::move(out)};
    }
  }
  const size_t n = starts->size();
  if (ends->size() != n || (axes && axes->size() != n) || (steps && steps->size() != n)) {
    return ctx.Invalid("starts, ends, axes and steps differ in length");
  }
  if (!axes) {
    axes.emplace(n);
    std::iota(axes->begin(), axes->end(), 0);
  }
  if (!steps) steps.emplace(n, 1);
  // Slices of shape values keep their elements.
  std::optional<std::vector<Dim>> elements;
  if (data.elements && data.type.rank() == 1 && n == 1) {
    const int64_t len = static_cast<int64_t>(data.elements->size());
    int64_t s = (*starts)[0], e = (*ends)[0];
    const int64_t step = (*steps)[0];
    if (step > 0) {
      if (s < 0) s += len;
      if (e < 0) e += len;
      s = std::clamp<int64_t>(s, 0, len);
      e = std::clamp<int64_t>(e, 0, len);
      elements.emplace();
      for (int64_t i = s; i < e; i += step) elements->push_back((*data.elements)[i]);
    }
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("strided_slice", {data},
                                                 {{"begin", *starts}, {"end", *ends},
                                                  {"strides", *steps}, {"axes", *axes}}));
  out.elements = std::move(elements);
  return Values{std::move(out)};
}

absl::StatusOr<Values> ConvertGather(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue data, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue indices, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", 0));
  std::optional<std::vector<Dim>> elements;
  if (data.elements && data.type.rank() == 1 && indices.type.rank() <= 1) {
    if (std::optional<std::vector<int64_t>> idx = indices.ConstantElements()) {
      const int64_t n = static_cast<int64_t>(data.elements->size());
      elements.emplace();
      for (int64_t i : *idx) {
        if (i < -n || i >= n) return ctx.Invalid(absl::StrFormat("index %d out of range [%d, %d)", i, -n, n));
        elements->push_back((*data.elements)[i < 0 ? i + n : i]);
      }
      if (std::optional<std::vector<int64_t>> c = ConstantDims(*elements)) {
        return Values{NodeContext::ConstantI64(*c, indices.type.rank() == 0)};
      }
    }
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("take", {data, indices}, {{"axis", axis}, {"mode", std::string("fast")}}));
  out.elements = std::move(elements);
  return Values{std::move(out)};
}

absl::StatusOr<Values> ConvertGatherElements(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue data, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue indices, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", 0));
  return One(ctx.Call("gather", {data, indices}, {{"axis", axis}}));
}

absl::StatusOr<Values> ConvertScatterElements(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue data, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue indices, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue updates, ctx.Input(2));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", 0));
  DYNVM_ASSIGN_OR_RETURN(std::string reduction, ctx.String("reduction", "none"));
  if (reduction == "none") reduction = "update";
  return One(ctx.Call("scatter_elements", {data, indices, updates}, {{"axis", axis}, {"reduction", reduction}}));
}

// numpy's broadcast of two shapes, when the types tell it.
std::optional<std::vector<Dim>> BroadcastDims(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<Dim> out(n);
  for (size_t i = 0; i < n; ++i) {
    const Dim x = i < n - a.size() ? Dim(1) : a[i - (n - a.size())];
    const Dim y = i < n - b.size() ? Dim(1) : b[i - (n - b.size())];
    if (x == y || (y.is_const() && y.const_value() == 1)) {
      out[i] = x;
    } else if (x.is_const() && x.const_value() == 1) {
      out[i] = y;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

absl::StatusOr<Values> ConvertExpand(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Input(1));
  // Expand broadcasts both ways: the result is the broadcast of x's shape and `shape`.
  if (shape.elements) {
    if (std::optional<std::vector<Dim>> dims = BroadcastDims(x.type.shape(), *shape.elements)) {
      std::vector<int64_t> target;
      for (const Dim& d : *dims) {
        if (!d.is_const()) break;
        target.push_back(d.const_value());
      }
      if (target.size() == dims->size()) {
        return One(ctx.Call("broadcast_to", {x}, {{"shape", target}}));
      }
    }
  }
  if (shape.type.rank() == 1 && shape.type.shape()[0].is_const() &&
      shape.type.shape()[0].const_value() >= x.type.rank()) {
    // A target of at least x's rank: numpy's broadcast_to, unless an extent of the
    // target is 1 where x's is not (then x's wins); zeros of the target's shape added
    // to x give exactly ONNX's result in both cases.
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zeros, ctx.Call("dyn.zeros", {ShapeOperand(shape)},
                                                     {{"dtype", std::string(RelayDTypeName(x.type.dtype()))}}));
    if (x.type.dtype() == DType::kBool) return One(ctx.Call("logical_or", {x, zeros}));
    return One(ctx.Call("add", {x, zeros}));
  }
  return ctx.Unimplemented("a target shape shorter than the input's rank, known only at run time");
}

absl::StatusOr<Values> ConvertTile(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> reps, ctx.ConstantInts(1));
  return One(ctx.Call("tile", {x}, {{"reps", reps}}));
}

absl::StatusOr<Values> ConvertPad(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(std::string mode, ctx.String("mode", "constant"));
  std::vector<int64_t> pads;
  std::optional<OnnxValue> value;
  if (ctx.opset() < 11) {
    DYNVM_ASSIGN_OR_RETURN(pads, ctx.Ints("pads"));
    DYNVM_ASSIGN_OR_RETURN(const double v, ctx.Float("value", 0.0));
    DYNVM_ASSIGN_OR_RETURN(value, NodeContext::ConstantScalarOf(x.type.dtype(), v));
  } else {
    DYNVM_ASSIGN_OR_RETURN(pads, ctx.ConstantInts(1));
    value = ctx.OptionalInput(2);
    if (ctx.OptionalInput(3)) return ctx.Unimplemented("the axes input (opset 18) is not supported");
  }
  const int rank = x.type.rank();
  if (static_cast<int>(pads.size()) != 2 * rank) {
    return ctx.Invalid(absl::StrFormat("%d pads for rank %d, expected %d", pads.size(), rank, 2 * rank));
  }
  std::vector<int64_t> width;
  for (int i = 0; i < rank; ++i) {
    if (pads[i] < 0 || pads[i + rank] < 0) return ctx.Unimplemented("negative pads (cropping) are not supported");
    width.push_back(pads[i]);
    width.push_back(pads[i + rank]);
  }
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return ctx.Unimplemented(absl::StrFormat("mode '%s' is not supported", mode));
  }
  std::vector<OnnxValue> args = {x};
  if (mode == "constant" && value) args.push_back(*value);
  return One(ctx.Call("nn.pad", std::move(args), {{"pad_width", width}, {"pad_mode", mode}}));
}

// ---------------------------------------------------------------------------------------
// Products, normalisation, reductions

absl::StatusOr<Values> ConvertMatMul(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, ctx.Input(1));
  // x · W with a constant matrix W is nn.dense with Wᵀ (transposed once, by constant
  // folding), the form the fusion pass gives bias and activation epilogues.
  if (b.expr.is(ExprKind::kConstant) && b.type.rank() == 2 && a.type.rank() >= 2 &&
      a.type.dtype() == DType::kF32 && b.type.dtype() == DType::kF32) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue wt, ctx.Call("transpose", {b}, {{"axes", std::vector<int64_t>{1, 0}}}));
    return One(ctx.Call("nn.dense", {a, wt}));
  }
  return One(ctx.Call("matmul", {a, b}));
}

absl::StatusOr<Values> ConvertGemm(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const double alpha, ctx.Float("alpha", 1.0));
  DYNVM_ASSIGN_OR_RETURN(const double beta, ctx.Float("beta", 1.0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t trans_a, ctx.Int("transA", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t trans_b, ctx.Int("transB", 0));
  const kernels::Attrs attrs = {{"trans_a", trans_a}, {"trans_b", trans_b}, {"alpha", alpha}};
  std::optional<OnnxValue> c = ctx.OptionalInput(2);
  if (c && beta == 1.0 && c->type.rank() == 1) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue ab, ctx.Call("gemm", {a, b}, attrs));
    if (ab.type.rank() == 2 && c->type.shape()[0] == ab.type.shape()[1]) {
      return One(ctx.Call("gemm", {a, b, *c}, attrs));
    }
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("gemm", {a, b}, attrs));
  if (!c || beta == 0.0) return Values{out};
  OnnxValue bias = *c;
  if (beta != 1.0) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, NodeContext::ConstantScalarOf(c->type.dtype(), beta));
    DYNVM_ASSIGN_OR_RETURN(bias, ctx.Call("multiply", {bias, scale}));
  }
  return One(ctx.Call("add", {out, bias}));
}

// Softmax and LogSoftmax: one axis from opset 13; before, the input is coerced to 2-D at
// `axis` (default 1) and normalised over the second dimension.
template <OpName kOp>
absl::StatusOr<Values> SoftmaxLike(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  const int rank = x.type.rank();
  if (ctx.opset() >= 13) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", -1));
    return One(ctx.Call(kOp.view(), {x}, {{"axis", axis}}));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", 1));
  if (rank == 0) return One(ctx.Call(kOp.view(), {x}, {{"axis", int64_t{-1}}}));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, rank));
  if (axis == rank - 1) return One(ctx.Call(kOp.view(), {x}, {{"axis", int64_t{-1}}}));
  Dim inner = 1;
  for (int i = axis; i < rank; ++i) inner = inner * x.type.shape()[i];
  if (!inner.is_const()) return ctx.Unimplemented("coercing to 2-D over extents known only at run time");
  const std::vector<int64_t> flat = axis == 0 ? std::vector<int64_t>{1, -1} : std::vector<int64_t>{-1, inner.const_value()};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x2, ctx.Call("reshape", {x}, {{"newshape", flat}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y2, ctx.Call(kOp.view(), {x2}, {{"axis", int64_t{-1}}}));
  std::vector<int64_t> back;
  for (int i = 0; i < rank; ++i) back.push_back(x.type.shape()[i].is_const() ? x.type.shape()[i].const_value() : 0);
  int unknown = 0;
  for (int i = axis; i < rank; ++i) unknown += !x.type.shape()[i].is_const();
  if (unknown == 0) {  // a 0 code copies y2's extent at that position: only safe before axis 2
    for (int i = 0; i < rank; ++i) {
      if (back[i] == 0 && i >= 1) {
        DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("shape_of", {x}));
        return One(ctx.Call("dyn.reshape", {y2, shape}));
      }
    }
    if (axis == 0 && back[0] == 0) back[0] = -1;
    return One(ctx.Call("reshape", {y2}, {{"newshape", back}}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("shape_of", {x}));
  return One(ctx.Call("dyn.reshape", {y2, shape}));
}

absl::StatusOr<Values> ConvertLayerNorm(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", -1));
  DYNVM_ASSIGN_OR_RETURN(const double epsilon, ctx.Float("epsilon", 1e-5));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, x.type.rank()));
  if (axis != x.type.rank() - 1) return ctx.Unimplemented("normalising over more than the last axis");
  if (ctx.HasOutput(1) || ctx.HasOutput(2)) return ctx.Unimplemented("the Mean and InvStdDev outputs");
  if (scale.type.rank() != 1) return ctx.Unimplemented("a scale of rank other than 1");
  kernels::Attrs attrs = {{"axis", int64_t{-1}}, {"epsilon", epsilon}};
  std::optional<OnnxValue> bias = ctx.OptionalInput(2);
  if (!bias) {
    bias = scale;  // a placeholder of the right shape; center=0 ignores it
    attrs["center"] = int64_t{0};
  }
  return One(ctx.Call("nn.layer_norm", {x, scale, *bias}, std::move(attrs)));
}

absl::StatusOr<Values> ConvertBatchNorm(NodeContext& ctx) {
  if (ctx.HasOutput(1) || ctx.HasOutput(2)) return ctx.Unimplemented("training outputs");
  std::vector<OnnxValue> args;
  for (int i = 0; i < 5; ++i) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(i));
    args.push_back(std::move(v));
  }
  DYNVM_ASSIGN_OR_RETURN(const double epsilon, ctx.Float("epsilon", 1e-5));
  DYNVM_ASSIGN_OR_RETURN(const int64_t spatial, ctx.Int("spatial", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t training, ctx.Int("training_mode", 0));
  if (spatial != 1) return ctx.Unimplemented("spatial = 0 (per-element statistics)");
  if (training != 0) return ctx.Unimplemented("training_mode = 1");
  return One(ctx.Call("nn.batch_norm", std::move(args), {{"axis", int64_t{1}}, {"epsilon", epsilon}}));
}

const std::vector<std::string_view> kReduceAttrs = {"axes", "keepdims", "noop_with_empty_axes"};

// Reductions over `axes` (attribute, or input from `axes_input_since`); keepdims
// (default 1); noop_with_empty_axes. `kPre`/`kPost` compose ReduceSumSquare, ReduceL1,
// ReduceLogSum and ReduceLogSumExp.
template <OpName kOp, int64_t kAxesInputSince, OpName kPre = "", OpName kPost = "">
absl::StatusOr<Values> Reduce(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t keepdims, ctx.Int("keepdims", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t noop, ctx.Int("noop_with_empty_axes", 0));
  DYNVM_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesOf(ctx, kAxesInputSince));
  if ((!axes || axes->empty()) && noop != 0) return Values{x};
  kernels::Attrs attrs = {{"keepdims", keepdims}};
  if (axes && !axes->empty()) attrs["axis"] = *axes;
  if constexpr (kPre.view() == "square") {
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("multiply", {x, x}));
  } else if constexpr (!kPre.view().empty()) {
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call(kPre.view(), {x}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call(kOp.view(), {x}, std::move(attrs)));
  if constexpr (!kPost.view().empty()) {
    DYNVM_ASSIGN_OR_RETURN(out, ctx.Call(kPost.view(), {out}));
  }
  return Values{out};
}

template <OpName kOp>
absl::StatusOr<Values> ArgReduce(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t keepdims, ctx.Int("keepdims", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t last, ctx.Int("select_last_index", 0));
  return One(ctx.Call(kOp.view(), {x}, {{"axis", std::vector<int64_t>{axis}}, {"keepdims", keepdims},
                                        {"select_last_index", last}}));
}

absl::StatusOr<Values> ConvertCumSum(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> axis, ctx.ConstantInts(1));
  if (axis.size() != 1) return ctx.Invalid("axis must hold one value");
  DYNVM_ASSIGN_OR_RETURN(const int64_t exclusive, ctx.Int("exclusive", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t reverse, ctx.Int("reverse", 0));
  return One(ctx.Call("cumsum", {x}, {{"axis", axis[0]}, {"exclusive", exclusive}, {"reverse", reverse}}));
}

absl::StatusOr<Values> ConvertTopK(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  int64_t k;
  if (ctx.opset() < 10) {
    DYNVM_ASSIGN_OR_RETURN(k, ctx.Int("k"));
  } else {
    DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> ks, ctx.ConstantInts(1));
    if (ks.size() != 1) return ctx.Invalid("K must hold one value");
    k = ks[0];
  }
  if (k < 1) return ctx.Unimplemented("K below 1");
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", -1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t largest, ctx.Int("largest", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t sorted, ctx.Int("sorted", 1));
  if (sorted == 0) return ctx.Unimplemented("sorted = 0");
  DYNVM_ASSIGN_OR_RETURN(OnnxValue both, ctx.Call("topk", {x}, {{"k", k}, {"axis", axis},
                                                                {"ret_type", std::string("both")},
                                                                {"is_ascend", int64_t{largest == 0}},
                                                                {"dtype", std::string("int64")}}));
  return Values{NodeContext::Field(both, 0), NodeContext::Field(both, 1)};
}

absl::StatusOr<Values> ConvertNonZero(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  return One(ctx.Call("nonzero", {x}));
}

// ---------------------------------------------------------------------------------------

const absl::flat_hash_map<std::string_view, ConverterDef>& Table() {
  // Binary operators before opset 7 took `broadcast` (B right-aligned to A, as numpy
  // does) and `axis` (elsewhere: not supported, so not listed).
  static const auto* table = new absl::flat_hash_map<std::string_view, ConverterDef>{
      // elementwise unary
      {"Neg", {Unary<"negative">, {}}}, {"Abs", {Unary<"abs">, {}}}, {"Exp", {Unary<"exp">, {}}},
      {"Log", {Unary<"log">, {}}}, {"Sqrt", {Unary<"sqrt">, {}}},
      {"Reciprocal", {Unary<"reciprocal">, {}}}, {"Tanh", {Unary<"tanh">, {}}},
      {"Sigmoid", {Unary<"sigmoid">, {}}}, {"Relu", {Unary<"nn.relu">, {}}},
      {"Erf", {Unary<"erf">, {}}}, {"Sin", {Unary<"sin">, {}}}, {"Cos", {Unary<"cos">, {}}},
      {"Floor", {Unary<"floor">, {}}}, {"Ceil", {Unary<"ceil">, {}}}, {"Round", {Unary<"round">, {}}},
      {"Sign", {Unary<"sign">, {}}}, {"Not", {Unary<"logical_not">, {}}},
      {"IsNaN", {Unary<"isnan">, {}}}, {"LeakyRelu", {ConvertLeakyRelu, {"alpha"}}},
      {"Clip", {ConvertClip, {"min", "max"}}}, {"Cast", {ConvertCast, {"to"}}},
      {"Identity", {ConvertIdentity, {}}}, {"Dropout", {ConvertDropout, {"ratio", "seed", "is_test"}}},
      // elementwise binary
      {"Add", {Binary<"add">, {"broadcast"}}}, {"Sub", {Binary<"subtract">, {"broadcast"}}},
      {"Mul", {Binary<"multiply">, {"broadcast"}}}, {"Div", {Binary<"divide">, {"broadcast"}}},
      {"Pow", {ConvertPow, {"broadcast"}}}, {"Mod", {ConvertMod, {"fmod"}}},
      {"Equal", {Binary<"equal">, {"broadcast"}}}, {"Less", {Binary<"less">, {"broadcast"}}},
      {"LessOrEqual", {Binary<"less_equal">, {}}}, {"Greater", {Binary<"greater">, {"broadcast"}}},
      {"GreaterOrEqual", {Binary<"greater_equal">, {}}}, {"And", {Binary<"logical_and">, {"broadcast"}}},
      {"Or", {Binary<"logical_or">, {"broadcast"}}}, {"Xor", {Binary<"logical_xor">, {"broadcast"}}},
      {"Where", {ConvertWhere, {}}}, {"Max", {Variadic<"maximum">, {}}},
      {"Min", {Variadic<"minimum">, {}}}, {"Sum", {Variadic<"add">, {}}},
      {"Mean", {Variadic<"mean">, {}}},
      // constants and shapes
      {"Constant", {ConvertConstant, {"value", "value_float", "value_int", "value_ints"}}},
      {"Shape", {ConvertShape, {"start", "end"}}}, {"Size", {ConvertSize, {}}},
      {"ConstantOfShape", {ConvertConstantOfShape, {"value"}}}, {"Range", {ConvertRange, {}}},
      // data movement
      {"Reshape", {ConvertReshape, {"allowzero"}}}, {"Flatten", {ConvertFlatten, {"axis"}}},
      {"Transpose", {ConvertTranspose, {"perm"}}}, {"Squeeze", {ConvertSqueeze, {"axes"}}},
      {"Unsqueeze", {ConvertUnsqueeze, {"axes"}}}, {"Concat", {ConvertConcat, {"axis"}}},
      {"Split", {ConvertSplit, {"axis", "split"}}}, {"Slice", {ConvertSlice, {"starts", "ends", "axes"}}},
      {"Gather", {ConvertGather, {"axis"}}}, {"GatherElements", {ConvertGatherElements, {"axis"}}},
      {"ScatterElements", {ConvertScatterElements, {"axis", "reduction"}}},
      {"Expand", {ConvertExpand, {}}}, {"Tile", {ConvertTile, {}}},
      {"Pad", {ConvertPad, {"mode", "pads", "value"}}}, {"NonZero", {ConvertNonZero, {}}},
      {"TopK", {ConvertTopK, {"axis", "largest", "sorted", "k"}}},
      // products, normalisation, reductions
      {"MatMul", {ConvertMatMul, {}}},
      {"Gemm", {ConvertGemm, {"alpha", "beta", "transA", "transB", "broadcast"}}},
      {"Softmax", {SoftmaxLike<"nn.softmax">, {"axis"}}},
      {"LogSoftmax", {SoftmaxLike<"nn.log_softmax">, {"axis"}}},
      {"LayerNormalization", {ConvertLayerNorm, {"axis", "epsilon", "stash_type"}}},
      {"BatchNormalization",
       {ConvertBatchNorm, {"epsilon", "momentum", "is_test", "spatial", "training_mode"}}},
      {"ReduceSum", {Reduce<"sum", 13>, kReduceAttrs}}, {"ReduceMean", {Reduce<"mean", 18>, kReduceAttrs}},
      {"ReduceMax", {Reduce<"max", 18>, kReduceAttrs}}, {"ReduceMin", {Reduce<"min", 18>, kReduceAttrs}},
      {"ReduceProd", {Reduce<"prod", 18>, kReduceAttrs}},
      {"ReduceL2", {Reduce<"l2_norm", 18>, kReduceAttrs}},
      {"ReduceSumSquare", {Reduce<"sum", 18, "square">, kReduceAttrs}},
      {"ReduceL1", {Reduce<"sum", 18, "abs">, kReduceAttrs}},
      {"ReduceLogSum", {Reduce<"sum", 18, "", "log">, kReduceAttrs}},
      {"ReduceLogSumExp", {Reduce<"sum", 18, "exp", "log">, kReduceAttrs}},
      {"ArgMax", {ArgReduce<"argmax">, {"axis", "keepdims", "select_last_index"}}},
      {"ArgMin", {ArgReduce<"argmin">, {"axis", "keepdims", "select_last_index"}}},
      {"CumSum", {ConvertCumSum, {"exclusive", "reverse"}}},
  };
  return *table;
}

}  // namespace

const ConverterDef* FindConverter(std::string_view op_type) {
  auto it = Table().find(op_type);
  return it == Table().end() ? nullptr : &it->second;
}

std::vector<std::string_view> SupportedOperators() {
  std::vector<std::string_view> names;
  for (const auto& [name, convert] : Table()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace dynvm::compiler::onnx_frontend
