// Converters of ONNX's elementwise operators: unary and binary maps, comparisons and
// logic, variadic Max/Min/Sum/Mean, Cast, Clip, Where, and the activations ONNX defines
// by formulas, composed of the kernels' operators.
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
#include "objects/element_codec.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

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

// B aligned with A for opsets before 7, whose broadcast=1 with `axis` lines B's axes up
// with A's from that axis on (without `axis`, B's with A's trailing ones: numpy's rule).
absl::StatusOr<OnnxValue> LegacyBroadcast(const NodeContext& ctx, const OnnxValue& a, const OnnxValue& b) {
  if (ctx.opset() >= 7 || !ctx.HasAttr("axis")) return b;
  DYNVM_ASSIGN_OR_RETURN(const int64_t broadcast, ctx.Int("broadcast", 0));
  if (broadcast == 0) return ctx.Invalid("attribute 'axis' without broadcast=1");
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis"));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, a.type.rank()));
  const int trailing = a.type.rank() - axis - b.type.rank();
  if (trailing < 0) {
    return ctx.Invalid(absl::StrFormat("B %s does not fit A %s from axis %d", b.type.ToString(), a.type.ToString(),
                                       axis));
  }
  if (trailing == 0) return b;
  return ctx.Call("expand_dims", {b}, {{"axis", int64_t{b.type.rank()}}, {"num_newaxis", int64_t{trailing}}});
}

template <OpName kOp>
absl::StatusOr<Values> Binary(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(b, LegacyBroadcast(ctx, a, b));
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

// BitShift: `direction` LEFT or RIGHT, on unsigned integers (the kernels shift any
// integer type).
absl::StatusOr<Values> ConvertBitShift(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const std::string direction, ctx.String("direction"));
  if (direction != "LEFT" && direction != "RIGHT") {
    return ctx.Invalid(absl::StrFormat("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"%s\"", direction));
  }
  return One(ctx.Call(direction == "LEFT" ? "left_shift" : "right_shift", {x, y}));
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

// Dropout. Outside training (training_mode absent or false, or before opset 12) and at
// ratio 0 the data passes through and the mask is all true (ones of x's dtype before
// opset 10). In training, as ONNX's reference computes it:
//
//   keep = uniform(x.shape) >= ratio;  y = keep ? x / (1 - ratio) : 0
//
// with the draws of numpy's generator from the node's `seed` (random_uniform_like), so
// that a seeded model is deterministic. training_mode and ratio may be run-time inputs;
// without a seed, training that may happen at run time is refused (fresh randomness at
// every run is not supported).
absl::StatusOr<Values> ConvertDropout(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  const DType dtype = x.type.dtype();
  std::optional<OnnxValue> ratio = ctx.opset() >= 12 ? ctx.OptionalInput(1) : std::nullopt;
  std::optional<OnnxValue> training = ctx.opset() >= 12 ? ctx.OptionalInput(2) : std::nullopt;
  if (training && training->type != Type::Scalar(DType::kBool)) {
    return ctx.Invalid(absl::StrFormat("training_mode must be a bool scalar, got %s", training->type.ToString()));
  }
  if (ratio && (ratio->type.rank() != 0 || !IsFloatDType(ratio->type.dtype()))) {
    return ctx.Invalid(absl::StrFormat("ratio must be a float scalar, got %s", ratio->type.ToString()));
  }
  // Whether the node may train: training_mode true, or known only at run time, with a
  // ratio that is not 0.
  bool may_train = training.has_value();
  if (training) {
    if (absl::StatusOr<double> t = ctx.ConstantScalar(2); t.ok()) may_train = *t != 0.0;
  }
  if (may_train && ratio) {
    if (absl::StatusOr<double> r = ctx.ConstantScalar(1); r.ok()) may_train = *r != 0.0;
  }
  Values out;
  if (!may_train) {
    out.push_back(x);
  } else {
    if (!ctx.HasAttr("seed")) {
      return ctx.Unimplemented("training without a seed (fresh randomness at every run is not supported)");
    }
    DYNVM_ASSIGN_OR_RETURN(const int64_t seed, ctx.Int("seed"));
    if (!ratio) {
      DYNVM_ASSIGN_OR_RETURN(ratio, NodeContext::ConstantScalarOf(dtype, 0.5));
    }
    const std::string f64(RelayDTypeName(DType::kF64));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue draws, ctx.Call("random_uniform_like", {x}, {{"seed", seed}, {"dtype", f64}}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue ratio64, ctx.Call("cast", {*ratio}, {{"dtype", f64}}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue keep, ctx.Call("greater_equal", {draws, ratio64}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue one, NodeContext::ConstantScalarOf(dtype, 1.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue r, ctx.Call("cast", {*ratio}, {{"dtype", std::string(RelayDTypeName(dtype))}}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue kept, ctx.Call("subtract", {one, r}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, ctx.Call("divide", {one, kept}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue scaled, ctx.Call("multiply", {x, scale}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, NodeContext::ConstantScalarOf(dtype, 0.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("where", {keep, scaled, zero}));
    if (!ctx.ConstantScalar(2).ok()) {  // training decided at run time
      DYNVM_ASSIGN_OR_RETURN(y, ctx.Call("where", {*training, y, x}));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue inference, ctx.Call("logical_not", {*training}));
      DYNVM_ASSIGN_OR_RETURN(keep, ctx.Call("logical_or", {keep, inference}));
    }
    out.push_back(y.type == x.type ? y : ctx.Narrow(y, x.type));
    if (ctx.HasOutput(1)) out.push_back(ctx.Narrow(keep, Type::Tensor(DType::kBool, x.type.shape())));
    return out;
  }
  if (ctx.HasOutput(1)) {
    const DType mask = ctx.opset() >= 10 ? DType::kBool : dtype;
    DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("shape_of", {x}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue ones, ctx.Call("dyn.ones", {ShapeOperand(shape)},
                                                    {{"dtype", std::string(RelayDTypeName(mask))}}));
    out.push_back(ctx.Narrow(ones, Type::Tensor(mask, x.type.shape())));
  }
  return out;
}

// Activations that ONNX defines as formulas, composed of the kernels' operators (the
// fusion pass makes each one kernel again). x's dtype must be f32, as for the kernels.
template <OpName kOp>
absl::StatusOr<Values> Activation(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  const DType dtype = x.type.dtype();
  const auto c = [&](double v) { return NodeContext::ConstantScalarOf(dtype, v); };
  const auto call = [&](std::string_view op, std::vector<OnnxValue> args) { return ctx.Call(op, std::move(args)); };
  constexpr std::string_view op = kOp.view();
  if constexpr (op == "HardSigmoid" || op == "HardSwish") {
    double alpha = 1.0 / 6, beta = 0.5;
    if constexpr (op == "HardSigmoid") {
      DYNVM_ASSIGN_OR_RETURN(alpha, ctx.Float("alpha", 0.2));
      DYNVM_ASSIGN_OR_RETURN(beta, ctx.Float("beta", 0.5));
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue a, c(alpha));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue b, c(beta));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue t, call("multiply", {x, a}));
    DYNVM_ASSIGN_OR_RETURN(t, call("add", {t, b}));
    DYNVM_ASSIGN_OR_RETURN(t, ctx.Call("clip", {t}, {{"a_min", 0.0}, {"a_max", 1.0}}));
    if constexpr (op == "HardSwish") return One(call("multiply", {x, t}));
    return Values{t};
  } else if constexpr (op == "Elu" || op == "Selu" || op == "Celu") {
    // Elu: x > 0 ? x : alpha (e^x - 1); Selu: gamma times that; Celu:
    // max(0, x) + min(0, alpha (e^(x / alpha) - 1)).
    DYNVM_ASSIGN_OR_RETURN(const double alpha,
                           ctx.Float("alpha", op == "Selu" ? 1.67326319217681884765625 : 1.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue a, c(alpha));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, c(0.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue one, c(1.0));
    OnnxValue in = x;
    if constexpr (op == "Celu") {
      DYNVM_ASSIGN_OR_RETURN(in, call("divide", {x, a}));
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue e, call("exp", {in}));
    DYNVM_ASSIGN_OR_RETURN(e, call("subtract", {e, one}));
    DYNVM_ASSIGN_OR_RETURN(e, call("multiply", {a, e}));
    if constexpr (op == "Celu") {
      DYNVM_ASSIGN_OR_RETURN(OnnxValue lo, call("minimum", {zero, e}));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue hi, call("maximum", {zero, x}));
      return One(call("add", {hi, lo}));
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue positive, call("greater", {x, zero}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue out, call("where", {positive, x, e}));
    if constexpr (op == "Selu") {
      DYNVM_ASSIGN_OR_RETURN(const double gamma, ctx.Float("gamma", 1.05070102214813232421875));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue g, c(gamma));
      return One(call("multiply", {g, out}));
    }
    return Values{out};
  } else if constexpr (op == "Softplus") {
    // log(1 + e^x) as max(x, 0) + log(1 + e^-|x|), which does not overflow.
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, c(0.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue one, c(1.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue t, call("abs", {x}));
    DYNVM_ASSIGN_OR_RETURN(t, call("negative", {t}));
    DYNVM_ASSIGN_OR_RETURN(t, call("exp", {t}));
    DYNVM_ASSIGN_OR_RETURN(t, call("add", {one, t}));
    DYNVM_ASSIGN_OR_RETURN(t, call("log", {t}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue m, call("maximum", {x, zero}));
    return One(call("add", {m, t}));
  } else if constexpr (op == "Softsign") {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue one, c(1.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue t, call("abs", {x}));
    DYNVM_ASSIGN_OR_RETURN(t, call("add", {one, t}));
    return One(call("divide", {x, t}));
  } else if constexpr (op == "ThresholdedRelu") {
    DYNVM_ASSIGN_OR_RETURN(const double alpha, ctx.Float("alpha", 1.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue a, c(alpha));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, c(0.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue above, call("greater", {x, a}));
    return One(call("where", {above, x, zero}));
  } else if constexpr (op == "Shrink") {
    DYNVM_ASSIGN_OR_RETURN(const double bias, ctx.Float("bias", 0.0));
    DYNVM_ASSIGN_OR_RETURN(const double lambd, ctx.Float("lambd", 0.5));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue b, c(bias));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue l, c(lambd));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue nl, c(-lambd));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, c(0.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue below, call("less", {x, nl}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue above, call("greater", {x, l}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue up, call("add", {x, b}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue down, call("subtract", {x, b}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue inner, call("where", {above, down, zero}));
    return One(call("where", {below, up, inner}));
  } else if constexpr (op == "PRelu") {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue slope, ctx.Input(1));
    // Before opset 7 there is no broadcasting: a slope of one value per channel (as
    // PyTorch's nn.PReLU exported it) applies along axis 1.
    const int rank = x.type.rank();
    if (ctx.opset() < 7 && slope.type.rank() == 1 && rank > 2 && slope.type.shape()[0] != Dim(1)) {
      DYNVM_ASSIGN_OR_RETURN(slope, ctx.Call("expand_dims", {slope}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{rank - 2}}}));
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, c(0.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue negative, call("less", {x, zero}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue scaled, call("multiply", {x, slope}));
    return One(call("where", {negative, scaled, x}));
  } else if constexpr (op == "Tan") {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue sine, call("sin", {x}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue cosine, call("cos", {x}));
    return One(call("divide", {sine, cosine}));
  } else if constexpr (op == "IsInf") {
    DYNVM_ASSIGN_OR_RETURN(const int64_t positive, ctx.Int("detect_positive", 1));
    DYNVM_ASSIGN_OR_RETURN(const int64_t negative, ctx.Int("detect_negative", 1));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue pinf, c(INFINITY));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue ninf, c(-INFINITY));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue is_pinf, call("equal", {x, pinf}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue is_ninf, call("equal", {x, ninf}));
    if (positive != 0 && negative != 0) return One(call("logical_or", {is_pinf, is_ninf}));
    if (positive != 0) return Values{is_pinf};
    if (negative != 0) return Values{is_ninf};
    DYNVM_ASSIGN_OR_RETURN(OnnxValue no, NodeContext::ConstantScalarOf(DType::kBool, 0.0));
    return One(call("logical_and", {is_pinf, no}));
  } else {
    static_assert(op == "CastLike");
    DYNVM_ASSIGN_OR_RETURN(OnnxValue like, ctx.Input(1));
    if (like.type.dtype() == dtype) return Values{x};
    return One(ctx.Call("cast", {x}, {{"dtype", std::string(RelayDTypeName(like.type.dtype()))}}));
  }
}

}  // namespace

void AddElementwiseConverters(ConverterTable& table) {
  table.insert({
      {"Neg", {Unary<"negative">, {}}}, {"Abs", {Unary<"abs">, {}}}, {"Exp", {Unary<"exp">, {}}},
      {"Log", {Unary<"log">, {}}}, {"Sqrt", {Unary<"sqrt">, {}}},
      {"Reciprocal", {Unary<"reciprocal">, {}}}, {"Tanh", {Unary<"tanh">, {}}},
      {"Sigmoid", {Unary<"sigmoid">, {}}}, {"Relu", {Unary<"nn.relu">, {}}},
      {"Erf", {Unary<"erf">, {}}}, {"Sin", {Unary<"sin">, {}}}, {"Cos", {Unary<"cos">, {}}},
      {"Sinh", {Unary<"sinh">, {}}}, {"Cosh", {Unary<"cosh">, {}}}, {"Asin", {Unary<"asin">, {}}},
      {"Acos", {Unary<"acos">, {}}}, {"Atan", {Unary<"atan">, {}}}, {"Asinh", {Unary<"asinh">, {}}},
      {"Acosh", {Unary<"acosh">, {}}}, {"Atanh", {Unary<"atanh">, {}}},
      {"Floor", {Unary<"floor">, {}}}, {"Ceil", {Unary<"ceil">, {}}}, {"Round", {Unary<"round">, {}}},
      {"Sign", {Unary<"sign">, {}}}, {"Not", {Unary<"logical_not">, {}}},
      {"IsNaN", {Unary<"isnan">, {}}}, {"LeakyRelu", {ConvertLeakyRelu, {"alpha"}}},
      {"Clip", {ConvertClip, {"min", "max"}}}, {"Cast", {ConvertCast, {"to"}}},
      {"Identity", {ConvertIdentity, {}}},
      {"HardSigmoid", {Activation<"HardSigmoid">, {"alpha", "beta"}}},
      {"HardSwish", {Activation<"HardSwish">, {}}}, {"Elu", {Activation<"Elu">, {"alpha"}}},
      {"Selu", {Activation<"Selu">, {"alpha", "gamma"}}}, {"Celu", {Activation<"Celu">, {"alpha"}}},
      {"Softplus", {Activation<"Softplus">, {}}}, {"Softsign", {Activation<"Softsign">, {}}},
      {"ThresholdedRelu", {Activation<"ThresholdedRelu">, {"alpha"}}},
      {"Shrink", {Activation<"Shrink">, {"bias", "lambd"}}}, {"PRelu", {Activation<"PRelu">, {}}},
      {"Tan", {Activation<"Tan">, {}}},
      {"IsInf", {Activation<"IsInf">, {"detect_negative", "detect_positive"}}},
      {"CastLike", {Activation<"CastLike">, {}}}, {"Dropout", {ConvertDropout, {"ratio", "seed", "is_test"}}},
      {"Add", {Binary<"add">, {"broadcast", "axis"}}}, {"Sub", {Binary<"subtract">, {"broadcast", "axis"}}},
      {"Mul", {Binary<"multiply">, {"broadcast", "axis"}}}, {"Div", {Binary<"divide">, {"broadcast", "axis"}}},
      {"Pow", {ConvertPow, {"broadcast"}}}, {"Mod", {ConvertMod, {"fmod"}}},
      {"Equal", {Binary<"equal">, {"broadcast", "axis"}}}, {"Less", {Binary<"less">, {"broadcast", "axis"}}},
      {"LessOrEqual", {Binary<"less_equal">, {}}}, {"Greater", {Binary<"greater">, {"broadcast", "axis"}}},
      {"GreaterOrEqual", {Binary<"greater_equal">, {}}}, {"And", {Binary<"logical_and">, {"broadcast", "axis"}}},
      {"Or", {Binary<"logical_or">, {"broadcast", "axis"}}}, {"Xor", {Binary<"logical_xor">, {"broadcast", "axis"}}},
      {"Where", {ConvertWhere, {}}}, {"BitShift", {ConvertBitShift, {"direction"}}}, {"Max", {Variadic<"maximum">, {}}},
      {"Min", {Variadic<"minimum">, {}}}, {"Sum", {Variadic<"add">, {}}},
      {"Mean", {Variadic<"mean">, {}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
