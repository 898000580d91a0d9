// Converters of ONNX's linear quantization operators — QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv —
// composed from the float kernels, as ONNX's reference computes them:
//
//   quantize:    q = saturate(round_half_even(x / scale) + zero_point)
//   dequantize:  x = (float(q) - float(zero_point)) * scale
//
// with scale and zero point per tensor, or per slice along `axis` (opset 13). The
// integer products of MatMulInteger and QLinearMatMul run as f32 products of the
// zero-point-shifted operands, which are integers of at most 9 bits: every partial sum
// of at most kExactTerms such products is below 2^24 and so exact in f32; longer inner
// dimensions are split into runs of kExactTerms whose products are added in i32. A
// convolution's terms per output (input channels per group times the kernel's taps) must
// be at most kExactTerms. (Fast int8 kernels would replace these compositions without
// changing a result.)
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// Products of two integers in [-255, 255] summed: 256 terms stay below 2^24.
constexpr int64_t kExactTerms = 256;

std::string Name(DType dtype) { return std::string(RelayDTypeName(dtype)); }

// `param` (a scale or zero point: a scalar, a one-element tensor, or 1-D along `axis`
// of a tensor of rank `rank`) shaped to broadcast against that tensor.
absl::StatusOr<OnnxValue> AlongAxis(const NodeContext& ctx, OnnxValue param, int rank, int64_t axis_attr,
                                    std::string_view what) {
  if (param.type.rank() == 0) return param;
  if (param.type.rank() != 1) {
    return ctx.Invalid(absl::StrFormat("%s must be a scalar or 1-D, got %s", what, param.type.ToString()));
  }
  if (param.type.shape()[0] == Dim(1)) return ctx.Call("squeeze", {param}, AxesAttr({0}));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, rank));
  if (const int trailing = rank - axis - 1; trailing > 0) {
    return ctx.Call("expand_dims", {param}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{trailing}}});
  }
  return param;
}

// The integer range of a quantized dtype.
absl::StatusOr<std::pair<double, double>> RangeOf(const NodeContext& ctx, DType dtype) {
  if (dtype == DType::kU8) return std::pair{0.0, 255.0};
  if (dtype == DType::kI8) return std::pair{-128.0, 127.0};
  return ctx.Unimplemented(absl::StrFormat("quantized dtype %s (uint8 and int8 are supported)", Name(dtype)));
}

// saturate(round_half_even(v) + zero_point) as `dtype`, for f32 `v` and an f32
// zero point already shaped to broadcast.
absl::StatusOr<OnnxValue> Saturate(const NodeContext& ctx, const OnnxValue& v, const OnnxValue& zero_point,
                                   DType dtype) {
  DYNVM_ASSIGN_OR_RETURN(const auto range, RangeOf(ctx, dtype));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue q, ctx.Call("round", {v}));  // nearbyint: half to even
  DYNVM_ASSIGN_OR_RETURN(q, ctx.Call("add", {q, zero_point}));
  DYNVM_ASSIGN_OR_RETURN(q, ctx.Call("clip", {q}, {{"a_min", range.first}, {"a_max", range.second}}));
  return ctx.Call("cast", {q}, {{"dtype", Name(dtype)}});
}

absl::StatusOr<Values> ConvertQuantizeLinear(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", 1));
  const int rank = x.type.rank();
  std::optional<OnnxValue> zero_point = ctx.OptionalInput(2);
  const DType dtype = zero_point ? zero_point->type.dtype() : DType::kU8;
  OnnxValue zp;
  if (zero_point) {
    DYNVM_ASSIGN_OR_RETURN(zp, CastTo(ctx, *zero_point, DType::kF32));
    DYNVM_ASSIGN_OR_RETURN(zp, AlongAxis(ctx, zp, rank, axis, "y_zero_point"));
  } else {
    DYNVM_ASSIGN_OR_RETURN(zp, NodeContext::ConstantScalarOf(DType::kF32, 0.0));
  }
  DYNVM_ASSIGN_OR_RETURN(x, CastTo(ctx, x, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(scale, CastTo(ctx, scale, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(scale, AlongAxis(ctx, scale, rank, axis, "y_scale"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scaled, ctx.Call("divide", {x, scale}));
  return One(Saturate(ctx, scaled, zp, dtype));
}

absl::StatusOr<Values> ConvertDequantizeLinear(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue q, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", 1));
  const int rank = q.type.rank();
  const DType dtype = q.type.dtype();
  if (dtype != DType::kU8 && dtype != DType::kI8 && dtype != DType::kI32) {
    return ctx.Invalid(absl::StrFormat("x must be uint8, int8 or int32, got %s", Name(dtype)));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, CastTo(ctx, q, DType::kF32));
  if (std::optional<OnnxValue> zero_point = ctx.OptionalInput(2)) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zp, CastTo(ctx, *zero_point, DType::kF32));
    DYNVM_ASSIGN_OR_RETURN(zp, AlongAxis(ctx, zp, rank, axis, "x_zero_point"));
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("subtract", {x, zp}));
  }
  DYNVM_ASSIGN_OR_RETURN(scale, AlongAxis(ctx, scale, rank, axis, "x_scale"));
  return One(ctx.Call("multiply", {x, scale}));
}

// DynamicQuantizeLinear: uint8 over [min(0, min x), max(0, max x)] — scale the range
// / 255, zero point saturate(round(-min / scale)) — then x quantized with them.
absl::StatusOr<Values> ConvertDynamicQuantizeLinear(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  if (x.type.dtype() != DType::kF32) {
    return ctx.Invalid(absl::StrFormat("x must be float32, got %s", Name(x.type.dtype())));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, NodeContext::ConstantScalarOf(DType::kF32, 0.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue lo, ctx.Call("min", {x}));
  DYNVM_ASSIGN_OR_RETURN(lo, ctx.Call("minimum", {lo, zero}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue hi, ctx.Call("max", {x}));
  DYNVM_ASSIGN_OR_RETURN(hi, ctx.Call("maximum", {hi, zero}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue levels, NodeContext::ConstantScalarOf(DType::kF32, 255.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue span, ctx.Call("subtract", {hi, lo}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, ctx.Call("divide", {span, levels}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shift, ctx.Call("subtract", {zero, lo}));
  DYNVM_ASSIGN_OR_RETURN(shift, ctx.Call("divide", {shift, scale}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zp, Saturate(ctx, shift, zero, DType::kU8));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zp_f32, CastTo(ctx, zp, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scaled, ctx.Call("divide", {x, scale}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, Saturate(ctx, scaled, zp_f32, DType::kU8));
  return Values{y, scale, zp};
}

// `v` (uint8 or int8) minus its zero point (input `zp_input`, optional; a scalar, or
// 1-D along `axis` for a per-row or per-column one), as f32.
absl::StatusOr<OnnxValue> Shifted(const NodeContext& ctx, const OnnxValue& v, int zp_input, int64_t axis,
                                  std::string_view what) {
  if (v.type.dtype() != DType::kU8 && v.type.dtype() != DType::kI8) {
    return ctx.Invalid(absl::StrFormat("%s must be uint8 or int8, got %s", what, Name(v.type.dtype())));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue f, CastTo(ctx, v, DType::kF32));
  std::optional<OnnxValue> zero_point = ctx.OptionalInput(zp_input);
  if (!zero_point) return f;
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zp, CastTo(ctx, *zero_point, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(zp, AlongAxis(ctx, zp, v.type.rank(), axis, absl::StrCat(std::string(what), "'s zero point")));
  return ctx.Call("subtract", {f, zp});
}

// The exact product a · b of integer-valued f32 matrices (numpy's matmul broadcasting)
// whose elements lie in [-255, 255]: one f32 product when the inner dimension is at
// most kExactTerms, else runs of kExactTerms, each exact, summed in i32 (the result is
// then i32: past 2^24 f32 would round it).
absl::StatusOr<OnnxValue> ExactIntegerMatMul(const NodeContext& ctx, const OnnxValue& a, const OnnxValue& b) {
  if (a.type.rank() < 1 || b.type.rank() < 1) return ctx.Invalid("MatMul operands must have rank 1 or more");
  const Dim& k = a.type.shape().back();
  if (!k.is_const()) return ctx.Unimplemented("an inner dimension known only at run time");
  const int64_t inner = k.const_value();
  if (inner <= kExactTerms) return ctx.Call("matmul", {a, b});
  const int b_axis = b.type.rank() >= 2 ? b.type.rank() - 2 : 0;
  OnnxValue sum;
  for (int64_t begin = 0; begin < inner; begin += kExactTerms) {
    const int64_t end = std::min(inner, begin + kExactTerms);
    const kernels::Attrs a_run = {{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                                  {"axes", std::vector<int64_t>{a.type.rank() - 1}}};
    const kernels::Attrs b_run = {{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                                  {"axes", std::vector<int64_t>{b_axis}}};
    DYNVM_ASSIGN_OR_RETURN(OnnxValue a_part, ctx.Call("strided_slice", {a}, a_run));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue b_part, ctx.Call("strided_slice", {b}, b_run));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue part, ctx.Call("matmul", {a_part, b_part}));
    DYNVM_ASSIGN_OR_RETURN(part, ctx.Call("cast", {part}, {{"dtype", Name(DType::kI32)}}));
    if (begin == 0) {
      sum = std::move(part);
    } else {
      DYNVM_ASSIGN_OR_RETURN(sum, ctx.Call("add", {sum, part}));
    }
  }
  return sum;
}

// MatMulInteger: (a - a_zero_point) · (b - b_zero_point) in int32; a's zero point per
// row (1-D along a's axis -2) or per tensor, b's per column or per tensor.
absl::StatusOr<Values> ConvertMatMulInteger(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue b, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sa, Shifted(ctx, a, 2, -2, "A"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sb, Shifted(ctx, b, 3, -1, "B"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue product, ExactIntegerMatMul(ctx, sa, sb));
  if (product.type.dtype() == DType::kI32) return Values{product};
  return One(ctx.Call("cast", {product}, {{"dtype", Name(DType::kI32)}}));
}

// QLinearMatMul: the exact integer product of the shifted operands, scaled by
// a_scale · b_scale / y_scale in f32 and quantized with y's zero point.
absl::StatusOr<Values> ConvertQLinearMatMul(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue b, ctx.Input(3));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue y_zero_point, ctx.Input(7));
  std::vector<OnnxValue> scales;
  for (int i : {1, 4, 6}) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue s, ctx.Input(i));
    DYNVM_ASSIGN_OR_RETURN(s, CastTo(ctx, s, DType::kF32));
    scales.push_back(std::move(s));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sa, Shifted(ctx, a, 2, -2, "a"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sb, Shifted(ctx, b, 5, -1, "b"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue product, ExactIntegerMatMul(ctx, sa, sb));
  DYNVM_ASSIGN_OR_RETURN(product, CastTo(ctx, product, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue multiplier, ctx.Call("multiply", {scales[0], scales[1]}));
  DYNVM_ASSIGN_OR_RETURN(multiplier, ctx.Call("divide", {multiplier, scales[2]}));
  DYNVM_ASSIGN_OR_RETURN(product, ctx.Call("multiply", {product, multiplier}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zp, CastTo(ctx, y_zero_point, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(zp, AlongAxis(ctx, zp, product.type.rank(), -1, "y_zero_point"));
  return One(Saturate(ctx, product, zp, y_zero_point.type.dtype()));
}

// The exact integer convolution of shifted x and w (f32 holding integers in
// [-255, 255]), as f32: one f32 convolution, refused where an output sums more than
// kExactTerms products.
absl::StatusOr<OnnxValue> ExactIntegerConv(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& w) {
  Dim terms(1);
  for (int i = 1; i < w.type.rank(); ++i) terms = terms * w.type.shape()[i];
  if (!terms.is_const() || terms.const_value() > kExactTerms) {
    return ctx.Unimplemented(absl::StrFormat(
        "a convolution summing %s products per output (at most %d are exact in f32)", terms.ToString(), kExactTerms));
  }
  return Convolution(ctx, x, w, std::nullopt);
}

// ConvInteger: conv(x - x_zero_point, w - w_zero_point) in int32; w's zero point per
// tensor or per output channel. Padding holds x's zero point (0 once shifted).
absl::StatusOr<Values> ConvertConvInteger(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue w, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sx, Shifted(ctx, x, 2, 1, "x"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sw, Shifted(ctx, w, 3, 0, "w"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ExactIntegerConv(ctx, sx, sw));
  return One(ctx.Call("cast", {y}, {{"dtype", Name(DType::kI32)}}));
}

// QLinearConv: the exact integer convolution plus the int32 bias, scaled by
// x_scale · w_scale / y_scale in f32 (w_scale per output channel or per tensor) and
// quantized with y's zero point.
absl::StatusOr<Values> ConvertQLinearConv(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue w, ctx.Input(3));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue y_zero_point, ctx.Input(7));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sx, Shifted(ctx, x, 2, 1, "x"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sw, Shifted(ctx, w, 5, 0, "w"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue acc, ExactIntegerConv(ctx, sx, sw));
  const int rank = acc.type.rank();
  if (std::optional<OnnxValue> bias = ctx.OptionalInput(8)) {
    if (bias->type.dtype() != DType::kI32 || bias->type.rank() != 1) {
      return ctx.Invalid(absl::StrFormat("B must be a 1-D int32 tensor, got %s", bias->type.ToString()));
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue b, CastTo(ctx, *bias, DType::kF32));
    DYNVM_ASSIGN_OR_RETURN(b, AlongAxis(ctx, b, rank, 1, "B"));
    DYNVM_ASSIGN_OR_RETURN(acc, ctx.Call("add", {acc, b}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x_scale, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue w_scale, ctx.Input(4));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y_scale, ctx.Input(6));
  DYNVM_ASSIGN_OR_RETURN(w_scale, AlongAxis(ctx, w_scale, rank, 1, "w_scale"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue multiplier, ctx.Call("multiply", {x_scale, w_scale}));
  DYNVM_ASSIGN_OR_RETURN(multiplier, ctx.Call("divide", {multiplier, y_scale}));
  DYNVM_ASSIGN_OR_RETURN(acc, ctx.Call("multiply", {acc, multiplier}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zp, CastTo(ctx, y_zero_point, DType::kF32));
  return One(Saturate(ctx, acc, zp, y_zero_point.type.dtype()));
}

}  // namespace

void AddQuantizeConverters(ConverterTable& table) {
  table.insert({
      {"QuantizeLinear", {ConvertQuantizeLinear, {"axis"}}},
      {"DequantizeLinear", {ConvertDequantizeLinear, {"axis"}}},
      {"DynamicQuantizeLinear", {ConvertDynamicQuantizeLinear, {}}},
      {"MatMulInteger", {ConvertMatMulInteger, {}}},
      {"QLinearMatMul", {ConvertQLinearMatMul, {}}},
      {"ConvInteger", {ConvertConvInteger, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}}},
      {"QLinearConv", {ConvertQLinearConv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
