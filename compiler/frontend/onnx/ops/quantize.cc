// Converters of ONNX's linear quantization operators — QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv —
// composed from the float kernels, as ONNX's reference computes them:
//
//   quantize:    q = saturate(round_half_even(x / scale) + zero_point)
//   dequantize:  x = (float(q) - float(zero_point)) * scale
//
// with scale and zero point per tensor, or per slice along `axis` (opset 13). The
// integer products of MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv run as
// f32 products (the matmul and conv kernels compute only f32) of the zero-point-shifted
// operands, which are integers in [-255, 255]: every partial sum of at most kExactTerms
// such products is below 2^24 and so exact in f32, whatever the kernel's order of
// summation. Longer sums are split into runs of at most kExactTerms terms — of the inner
// dimension, or of a convolution's input channels — whose exact results are added in
// i32, where ONNX accumulates (wrapping past 2^31 as ONNX allows). A grouped convolution
// or a kernel of more than kExactTerms taps past the bound is refused, never rounded.
// (Fast int8 kernels would replace these compositions without changing a result.)
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

// `param` (a scale or zero point: a scalar, a one-element tensor, 1-D along `axis` of a
// tensor of rank `rank`, or — MatMulInteger's [..., M, 1] and [..., 1, N] — of rank
// `rank` itself, which broadcasts as it is) shaped to broadcast against that tensor.
absl::StatusOr<OnnxValue> AlongAxis(const NodeContext& ctx, OnnxValue param, int rank, int64_t axis_attr,
                                    std::string_view what) {
  if (param.type.rank() == 0 || (param.type.rank() == rank && rank >= 2)) return param;
  if (param.type.rank() != 1) {
    return ctx.Invalid(absl::StrFormat("%s must be a scalar, 1-D or of rank %d, got %s", what, rank,
                                       param.type.ToString()));
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
// / 255, zero point saturate(round(-min / scale)) — then x quantized with them. An
// empty range (x all 0) counts as 1 wide, as ONNX's later reference implementation
// (onnx.reference) has it, rather than dividing 0 by 0: scale 1/255, zero point 0, y 0.
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
  DYNVM_ASSIGN_OR_RETURN(OnnxValue empty, ctx.Call("equal", {span, zero}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue one, NodeContext::ConstantScalarOf(DType::kF32, 1.0));
  DYNVM_ASSIGN_OR_RETURN(span, ctx.Call("where", {empty, one, span}));
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

// `v`[begin:end] along `axis`.
absl::StatusOr<OnnxValue> SliceAlong(const NodeContext& ctx, const OnnxValue& v, int64_t axis, int64_t begin,
                                     int64_t end) {
  return ctx.Call("strided_slice", {v}, {{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                                         {"axes", std::vector<int64_t>{axis}}});
}

// The i32 sum of `part(begin, end)` over the runs [begin, end) of at most `run` of
// [0, extent), each part an f32 tensor of integers (exact): one part when `extent` is at
// most `run`.
template <typename Part>
absl::StatusOr<OnnxValue> SumOfRuns(const NodeContext& ctx, int64_t extent, int64_t run, const Part& part) {
  const kernels::Attrs to_i32 = {{"dtype", Name(DType::kI32)}};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sum, part(0, std::min(extent, run)));
  DYNVM_ASSIGN_OR_RETURN(sum, ctx.Call("cast", {sum}, to_i32));
  for (int64_t begin = run; begin < extent; begin += run) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue next, part(begin, std::min(extent, begin + run)));
    DYNVM_ASSIGN_OR_RETURN(next, ctx.Call("cast", {next}, to_i32));
    DYNVM_ASSIGN_OR_RETURN(sum, ctx.Call("add", {sum, next}));
  }
  return sum;
}

// The exact product a · b, in i32, of integer-valued f32 matrices (numpy's matmul
// broadcasting) whose elements lie in [-255, 255]: f32 products of runs of at most
// kExactTerms of the inner dimension, summed in i32.
absl::StatusOr<OnnxValue> ExactIntegerMatMul(const NodeContext& ctx, const OnnxValue& a, const OnnxValue& b) {
  if (a.type.rank() < 1 || b.type.rank() < 1) return ctx.Invalid("MatMul operands must have rank 1 or more");
  const Dim& k = a.type.shape().back();
  if (!k.is_const()) return ctx.Unimplemented("an inner dimension known only at run time");
  const int64_t a_axis = a.type.rank() - 1;
  const int64_t b_axis = b.type.rank() >= 2 ? b.type.rank() - 2 : 0;
  return SumOfRuns(ctx, k.const_value(), kExactTerms, [&](int64_t begin, int64_t end) -> absl::StatusOr<OnnxValue> {
    if (begin == 0 && end == k.const_value()) return ctx.Call("matmul", {a, b});
    DYNVM_ASSIGN_OR_RETURN(OnnxValue a_run, SliceAlong(ctx, a, a_axis, begin, end));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue b_run, SliceAlong(ctx, b, b_axis, begin, end));
    return ctx.Call("matmul", {a_run, b_run});
  });
}

// MatMulInteger: (a - a_zero_point) · (b - b_zero_point) in int32; a's zero point per
// tensor, per row (1-D along a's axis -2, or [..., M, 1]), b's per tensor or per column
// (1-D, or [..., 1, N]).
absl::StatusOr<Values> ConvertMatMulInteger(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue b, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sa, Shifted(ctx, a, 2, -2, "A"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sb, Shifted(ctx, b, 3, -1, "B"));
  return One(ExactIntegerMatMul(ctx, sa, sb));
}

// QLinearMatMul: the exact integer product of the shifted operands, scaled by
// a_scale · b_scale / y_scale in f32 (a's scale per tensor or per row, b's per tensor or
// per column, like their zero points; y's per tensor or per column) and quantized with
// y's zero point.
absl::StatusOr<Values> ConvertQLinearMatMul(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue a, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue b, ctx.Input(3));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue y_zero_point, ctx.Input(7));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sa, Shifted(ctx, a, 2, -2, "a"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sb, Shifted(ctx, b, 5, -1, "b"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue product, ExactIntegerMatMul(ctx, sa, sb));
  DYNVM_ASSIGN_OR_RETURN(product, CastTo(ctx, product, DType::kF32));
  const int rank = product.type.rank();
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a_scale, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b_scale, ctx.Input(4));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y_scale, ctx.Input(6));
  DYNVM_ASSIGN_OR_RETURN(a_scale, AlongAxis(ctx, a_scale, a.type.rank(), -2, "a_scale"));
  DYNVM_ASSIGN_OR_RETURN(b_scale, AlongAxis(ctx, b_scale, b.type.rank(), -1, "b_scale"));
  DYNVM_ASSIGN_OR_RETURN(y_scale, AlongAxis(ctx, y_scale, rank, -1, "y_scale"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue multiplier, ctx.Call("multiply", {a_scale, b_scale}));
  DYNVM_ASSIGN_OR_RETURN(multiplier, ctx.Call("divide", {multiplier, y_scale}));
  DYNVM_ASSIGN_OR_RETURN(product, ctx.Call("multiply", {product, multiplier}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zp, CastTo(ctx, y_zero_point, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(zp, AlongAxis(ctx, zp, rank, -1, "y_zero_point"));
  return One(Saturate(ctx, product, zp, y_zero_point.type.dtype()));
}

// The exact integer convolution, in i32, of shifted x and w (f32 holding integers in
// [-255, 255]): f32 convolutions of runs of input channels summing at most kExactTerms
// products per output, added in i32. Past the bound, a grouped convolution or a kernel
// of more than kExactTerms taps is refused.
absl::StatusOr<OnnxValue> ExactIntegerConv(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& w) {
  if (w.type.rank() < 3) return ctx.Invalid(absl::StrFormat("W must have rank 3 or more, got %s", w.type.ToString()));
  Dim taps(1);
  for (int i = 2; i < w.type.rank(); ++i) taps = taps * w.type.shape()[i];
  const Dim& channels = w.type.shape()[1];  // per group
  const Dim terms = channels * taps;
  if (terms.is_const() && terms.const_value() <= kExactTerms) {
    DYNVM_ASSIGN_OR_RETURN(const OnnxValue y, Convolution(ctx, x, w, std::nullopt));
    return CastTo(ctx, y, DType::kI32);
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t group, ctx.Int("group", 1));
  if (!channels.is_const() || !taps.is_const() || taps.const_value() > kExactTerms || group != 1) {
    return ctx.Unimplemented(absl::StrFormat(
        "a convolution summing %s products per output over %s taps with group %d (f32 sums at most %d products "
        "exactly; longer sums are split by input channel, for group 1 and at most %d taps)",
        terms.ToString(), taps.ToString(), group, kExactTerms, kExactTerms));
  }
  const int64_t run = kExactTerms / taps.const_value();
  return SumOfRuns(ctx, channels.const_value(), run, [&](int64_t begin, int64_t end) -> absl::StatusOr<OnnxValue> {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue x_run, SliceAlong(ctx, x, 1, begin, end));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue w_run, SliceAlong(ctx, w, 1, begin, end));
    return Convolution(ctx, x_run, w_run, std::nullopt);
  });
}

// ConvInteger: conv(x - x_zero_point, w - w_zero_point) in int32; w's zero point per
// tensor or per output channel. Padding holds x's zero point (0 once shifted).
absl::StatusOr<Values> ConvertConvInteger(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue w, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sx, Shifted(ctx, x, 2, 1, "x"));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue sw, Shifted(ctx, w, 3, 0, "w"));
  return One(ExactIntegerConv(ctx, sx, sw));
}

// QLinearConv: the exact integer convolution plus the int32 bias, summed in int32, then
// scaled by x_scale · w_scale / y_scale in f32 (w_scale per output channel or per
// tensor) and quantized with y's zero point.
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
    DYNVM_ASSIGN_OR_RETURN(OnnxValue b, AlongAxis(ctx, *bias, rank, 1, "B"));
    DYNVM_ASSIGN_OR_RETURN(acc, ctx.Call("add", {acc, b}));
  }
  DYNVM_ASSIGN_OR_RETURN(acc, CastTo(ctx, acc, DType::kF32));
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
