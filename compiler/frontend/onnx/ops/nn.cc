// Converters of ONNX's neural-network operators: MatMul, Gemm, Softmax, LogSoftmax, Hardmax,
// LayerNormalization, BatchNormalization, InstanceNormalization,
// MeanVarianceNormalization, LRN, the reductions, CumSum, convolution and
// pooling.
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

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

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

// Det: the determinant of each matrix of the last two axes.
absl::StatusOr<Values> ConvertDet(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  return One(ctx.Call("det", {x}));
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

// Softmax, LogSoftmax and Hardmax: `along(ctx, x, axis)` over one axis from opset 13;
// before, the input is coerced to 2-D at `axis` (default 1) and `along` runs over the
// second dimension.
template <typename Along>
absl::StatusOr<Values> AlongAxis(NodeContext& ctx, Along along) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  const int rank = x.type.rank();
  if (rank == 0) return ctx.Invalid("the input must have rank 1 or more");
  if (ctx.opset() >= 13) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", -1));
    DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, rank));
    return One(along(ctx, x, axis));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", 1));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, rank));
  if (axis == rank - 1) return One(along(ctx, x, axis));
  Dim inner = 1;
  for (int i = axis; i < rank; ++i) inner = inner * x.type.shape()[i];
  if (!inner.is_const()) return ctx.Unimplemented("coercing to 2-D over extents known only at run time");
  const std::vector<int64_t> flat = axis == 0 ? std::vector<int64_t>{1, -1} : std::vector<int64_t>{-1, inner.const_value()};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x2, ctx.Call("reshape", {x}, {{"newshape", flat}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y2, along(ctx, x2, 1));
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

template <OpName kOp>
absl::StatusOr<Values> SoftmaxLike(NodeContext& ctx) {
  return AlongAxis(ctx, [](const NodeContext& c, const OnnxValue& x, int axis) {
    return c.Call(kOp.view(), {x}, {{"axis", int64_t{axis}}});
  });
}

// 1 where an element is the first maximum along its axis, 0 elsewhere.
absl::StatusOr<OnnxValue> HardmaxAlong(const NodeContext& ctx, const OnnxValue& x, int axis) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue first, ctx.Call("argmax", {x}, {{"axis", std::vector<int64_t>{axis}}, {"keepdims", int64_t{1}}}));
  if (first.type.dtype() != DType::kI64) {
    DYNVM_ASSIGN_OR_RETURN(first, ctx.Call("cast", {first}, {{"dtype", std::string(RelayDTypeName(DType::kI64))}}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue extent, ExtentOf(ctx, x, axis));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue positions, Iota(ctx, extent, x.type.shape()[axis]));
  if (const int trailing = x.type.rank() - axis - 1; trailing > 0) {
    DYNVM_ASSIGN_OR_RETURN(positions, ctx.Call("expand_dims", {positions}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{trailing}}}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue hot, ctx.Call("equal", {positions, first}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("cast", {hot}, {{"dtype", std::string(RelayDTypeName(x.type.dtype()))}}));
  return out.type == x.type ? out : ctx.Narrow(out, x.type);
}

absl::StatusOr<Values> ConvertHardmax(NodeContext& ctx) { return AlongAxis(ctx, HardmaxAlong); }

// The moments of x over `axes`, kept as extent-1 axes: the mean, x - mean, and
// 1 / sqrt(var + epsilon).
struct Moments {
  OnnxValue mean, centered, inv_std;
};

absl::StatusOr<Moments> MomentsOver(const NodeContext& ctx, const OnnxValue& x,
                                    const std::vector<int64_t>& axes, double epsilon) {
  const kernels::Attrs over = {{"axis", axes}, {"keepdims", int64_t{1}}};
  Moments m;
  DYNVM_ASSIGN_OR_RETURN(m.mean, ctx.Call("mean", {x}, over));
  DYNVM_ASSIGN_OR_RETURN(m.centered, ctx.Call("subtract", {x, m.mean}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue squares, ctx.Call("multiply", {m.centered, m.centered}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue var, ctx.Call("mean", {squares}, over));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue eps, NodeContext::ConstantScalarOf(x.type.dtype(), epsilon));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue denom, ctx.Call("add", {var, eps}));
  DYNVM_ASSIGN_OR_RETURN(m.inv_std, ctx.Call("rsqrt", {denom}));
  return m;
}

// LayerNormalization over axes [axis, rank): nn.layer_norm over the last axis, the
// normalised axes flattened into one when there are several (their extents constant),
// and the optional Mean and InvStdDev outputs computed apart when asked for.
absl::StatusOr<Values> ConvertLayerNorm(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", -1));
  DYNVM_ASSIGN_OR_RETURN(const double epsilon, ctx.Float("epsilon", 1e-5));
  const int rank = x.type.rank();
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, rank));
  const std::vector<Dim> inner(x.type.shape().begin() + axis, x.type.shape().end());
  const std::optional<std::vector<int64_t>> inner_extents = ConstantDims(inner);
  const bool flatten = rank - axis > 1;
  if (flatten && !inner_extents) return ctx.Unimplemented("normalising over several axes of extents known only at run time");
  const int64_t n = inner_extents ? std::accumulate(inner_extents->begin(), inner_extents->end(), int64_t{1},
                                                    std::multiplies<>()) : 0;
  // Scale and bias as [n] (broadcast to the normalised shape first, as ONNX allows).
  const auto as_vector = [&](const OnnxValue& v) -> absl::StatusOr<OnnxValue> {
    if (!flatten && v.type.rank() == 1 && v.type.shape()[0] == inner[0]) return v;
    if (!inner_extents) return ctx.Unimplemented("a scale or bias that broadcasts over an extent known only at run time");
    DYNVM_ASSIGN_OR_RETURN(OnnxValue full, ctx.Call("broadcast_to", {v}, {{"shape", *inner_extents}}));
    return ctx.Call("reshape", {full}, {{"newshape", std::vector<int64_t>{n}}});
  };
  DYNVM_ASSIGN_OR_RETURN(OnnxValue gamma, as_vector(scale));
  kernels::Attrs attrs = {{"axis", int64_t{-1}}, {"epsilon", epsilon}};
  OnnxValue beta = gamma;  // a placeholder of the right shape when there is no bias
  if (std::optional<OnnxValue> bias = ctx.OptionalInput(2)) {
    DYNVM_ASSIGN_OR_RETURN(beta, as_vector(*bias));
  } else {
    attrs["center"] = int64_t{0};
  }
  OnnxValue data = x;
  std::vector<int64_t> leading(axis, 0);  // reshape codes: copy the leading extents
  if (flatten) {
    std::vector<int64_t> codes = leading;
    codes.push_back(n);
    DYNVM_ASSIGN_OR_RETURN(data, ctx.Call("reshape", {x}, {{"newshape", codes}}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("nn.layer_norm", {data, gamma, beta}, std::move(attrs)));
  if (flatten) {
    std::vector<int64_t> codes = leading;
    codes.insert(codes.end(), inner_extents->begin(), inner_extents->end());
    DYNVM_ASSIGN_OR_RETURN(y, ctx.Call("reshape", {y}, {{"newshape", codes}}));
  }
  Values out = {y};
  if (ctx.HasOutput(1) || ctx.HasOutput(2)) {
    std::vector<int64_t> axes(rank - axis);
    std::iota(axes.begin(), axes.end(), axis);
    DYNVM_ASSIGN_OR_RETURN(Moments m, MomentsOver(ctx, x, axes, epsilon));
    out.push_back(std::move(m.mean));
    out.push_back(std::move(m.inv_std));
  }
  return out;
}

// (x - mean) / sqrt(var + epsilon) over `axes`.
absl::StatusOr<OnnxValue> Standardize(const NodeContext& ctx, const OnnxValue& x,
                                      const std::vector<int64_t>& axes, double epsilon) {
  DYNVM_ASSIGN_OR_RETURN(const Moments m, MomentsOver(ctx, x, axes, epsilon));
  return ctx.Call("multiply", {m.centered, m.inv_std});
}

// InstanceNormalization on [N, C, d1...]: each (n, c) plane standardised over its
// spatial axes, then scale[c] * y + bias[c].
absl::StatusOr<Values> ConvertInstanceNorm(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue bias, ctx.Input(2));
  DYNVM_ASSIGN_OR_RETURN(const double epsilon, ctx.Float("epsilon", 1e-5));
  const int rank = x.type.rank();
  if (rank < 3) return ctx.Invalid(absl::StrFormat("the input must be [N, C, d1...], got %s", x.type.ToString()));
  std::vector<int64_t> spatial;
  for (int i = 2; i < rank; ++i) spatial.push_back(i);
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, Standardize(ctx, x, spatial, epsilon));
  const kernels::Attrs per_channel = {{"axis", int64_t{1}}, {"num_newaxis", int64_t{rank - 2}}};
  DYNVM_ASSIGN_OR_RETURN(scale, ctx.Call("expand_dims", {scale}, per_channel));
  DYNVM_ASSIGN_OR_RETURN(bias, ctx.Call("expand_dims", {bias}, per_channel));
  DYNVM_ASSIGN_OR_RETURN(y, ctx.Call("multiply", {y, scale}));
  return One(ctx.Call("add", {y, bias}));
}

// MeanVarianceNormalization: standardised over `axes` (default [0, 2, 3]), with ONNX's
// epsilon of 1e-9 under the root.
absl::StatusOr<Values> ConvertMvn(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, ctx.Ints("axes", std::vector<int64_t>{0, 2, 3}));
  return One(Standardize(ctx, x, axes, 1e-9));
}

// LRN on [N, C, d1...]: x / (bias + alpha / size * Σ x²)^beta, the sum over the `size`
// channels around each (floor((size - 1) / 2) before, ceil after; zeros past the
// ends), as `size` shifted slices of the squares padded along the channels. C must be
// known when the model is compiled.
absl::StatusOr<Values> ConvertLrn(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t size, ctx.Int("size"));
  DYNVM_ASSIGN_OR_RETURN(const double alpha, ctx.Float("alpha", 1e-4));
  DYNVM_ASSIGN_OR_RETURN(const double beta, ctx.Float("beta", 0.75));
  DYNVM_ASSIGN_OR_RETURN(const double bias, ctx.Float("bias", 1.0));
  const int rank = x.type.rank();
  if (rank < 3) return ctx.Invalid(absl::StrFormat("the input must be [N, C, d1...], got %s", x.type.ToString()));
  if (size < 1) return ctx.Invalid(absl::StrFormat("size must be positive, got %d", size));
  if (!x.type.shape()[1].is_const()) return ctx.Unimplemented("a channel count known only at run time");
  const int64_t channels = x.type.shape()[1].const_value();
  DYNVM_ASSIGN_OR_RETURN(OnnxValue squares, ctx.Call("multiply", {x, x}));
  std::vector<int64_t> width(2 * rank, 0);
  width[2] = (size - 1) / 2;
  width[3] = size - 1 - (size - 1) / 2;
  DYNVM_ASSIGN_OR_RETURN(OnnxValue padded, ctx.Call("nn.pad", {squares}, {{"pad_width", width}}));
  std::optional<OnnxValue> sum;
  for (int64_t k = 0; k < size; ++k) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue window, ctx.Call("strided_slice", {padded},
                                                      {{"begin", std::vector<int64_t>{k}},
                                                       {"end", std::vector<int64_t>{k + channels}},
                                                       {"strides", std::vector<int64_t>{1}},
                                                       {"axes", std::vector<int64_t>{1}}}));
    if (sum) {
      DYNVM_ASSIGN_OR_RETURN(sum, ctx.Call("add", {*sum, window}));
    } else {
      sum = std::move(window);
    }
  }
  const DType dtype = x.type.dtype();
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, NodeContext::ConstantScalarOf(dtype, alpha / static_cast<double>(size)));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, NodeContext::ConstantScalarOf(dtype, bias));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue e, NodeContext::ConstantScalarOf(dtype, beta));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scaled, ctx.Call("multiply", {*sum, a}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue base, ctx.Call("add", {scaled, b}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue denom, ctx.Call("power", {base, e}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("divide", {x, denom}));
  return Values{y.type == x.type ? y : ctx.Narrow(y, x.type)};
}

// BatchNormalization over axis 1. With training_mode = 1 (opset 14 on) it normalises by
// the batch's own statistics — the mean and the population variance over every axis
// but 1 — and returns the running statistics updated as ONNX defines them:
// running * momentum + batch * (1 - momentum).
absl::StatusOr<Values> ConvertBatchNorm(NodeContext& ctx) {
  std::vector<OnnxValue> args;
  for (int i = 0; i < 5; ++i) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(i));
    args.push_back(std::move(v));
  }
  DYNVM_ASSIGN_OR_RETURN(const double epsilon, ctx.Float("epsilon", 1e-5));
  DYNVM_ASSIGN_OR_RETURN(const int64_t spatial, ctx.Int("spatial", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t training, ctx.Int("training_mode", 0));
  if (spatial != 1) return ctx.Unimplemented("spatial = 0 (per-element statistics)");
  const kernels::Attrs attrs = {{"axis", int64_t{1}}, {"epsilon", epsilon}};
  if (training == 0) {
    if (ctx.HasOutput(1) || ctx.HasOutput(2)) return ctx.Unimplemented("training outputs before opset 14");
    return One(ctx.Call("nn.batch_norm", std::move(args), attrs));
  }
  const OnnxValue& x = args[0];
  if (x.type.rank() < 2) return ctx.Invalid(absl::StrFormat("the input must be [N, C, ...], got %s", x.type.ToString()));
  DYNVM_ASSIGN_OR_RETURN(const double momentum, ctx.Float("momentum", 0.9));
  std::vector<int64_t> axes = {0};
  for (int i = 2; i < x.type.rank(); ++i) axes.push_back(i);
  DYNVM_ASSIGN_OR_RETURN(OnnxValue mean, ctx.Call("mean", {x}, {{"axis", axes}, {"keepdims", int64_t{1}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue centered, ctx.Call("subtract", {x, mean}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue squares, ctx.Call("multiply", {centered, centered}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue var, ctx.Call("mean", {squares}, {{"axis", axes}, {"keepdims", int64_t{0}}}));
  DYNVM_ASSIGN_OR_RETURN(mean, ctx.Call("squeeze", {mean}, AxesAttr(axes)));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("nn.batch_norm", {x, args[1], args[2], mean, var}, attrs));
  Values out = {y};
  const DType dtype = args[3].type.dtype();
  DYNVM_ASSIGN_OR_RETURN(OnnxValue keep, NodeContext::ConstantScalarOf(dtype, momentum));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue take, NodeContext::ConstantScalarOf(dtype, 1.0 - momentum));
  // The batch's statistics in the running statistics' dtype (they may differ from x's).
  const std::string stats_dtype(RelayDTypeName(dtype));
  for (const auto& [running, batch] : {std::pair{args[3], mean}, std::pair{args[4], var}}) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue old, ctx.Call("multiply", {running, keep}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue now, ctx.Call("cast", {batch}, {{"dtype", stats_dtype}}));
    DYNVM_ASSIGN_OR_RETURN(now, ctx.Call("multiply", {now, take}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue updated, ctx.Call("add", {old, now}));
    out.push_back(std::move(updated));
  }
  return out;
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
  // Axes given as a tensor known only at run time: the dyn. form reads them.
  std::optional<OnnxValue> runtime_axes;
  std::optional<std::vector<int64_t>> axes;
  if (ctx.opset() >= kAxesInputSince) {
    std::optional<OnnxValue> given = ctx.OptionalInput(1);
    if (given && given->type.rank() == 1 && given->type.shape()[0] == Dim(0)) {
      axes.emplace();  // an empty list, whatever its source
    } else if (given && !given->ConstantElements()) {
      runtime_axes = std::move(given);
    }
  }
  if (axes) {
    if (noop != 0) return Values{x};
  } else if (!runtime_axes) {
    DYNVM_ASSIGN_OR_RETURN(axes, AxesOf(ctx, kAxesInputSince));
    if ((!axes || axes->empty()) && noop != 0) return Values{x};
  }
  kernels::Attrs attrs = {{"keepdims", keepdims}};
  if (axes && !axes->empty()) attrs["axis"] = *axes;
  if constexpr (kPre.view() == "square") {
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("multiply", {x, x}));
  } else if constexpr (!kPre.view().empty()) {
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call(kPre.view(), {x}));
  }
  OnnxValue out;
  if (runtime_axes) {
    attrs["noop_with_empty_axes"] = noop;
    DYNVM_ASSIGN_OR_RETURN(out, ctx.Call("dyn." + std::string(kOp.view()), {x, *runtime_axes}, std::move(attrs)));
  } else {
    DYNVM_ASSIGN_OR_RETURN(out, ctx.Call(kOp.view(), {x}, std::move(attrs)));
  }
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

// CumSum: the axis an attribute of cumsum when known at compile time, else
// dyn.cumsum's second input, read when the model runs.
absl::StatusOr<Values> ConvertCumSum(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue axis, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t exclusive, ctx.Int("exclusive", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t reverse, ctx.Int("reverse", 0));
  kernels::Attrs attrs = {{"exclusive", exclusive}, {"reverse", reverse}};
  if (std::optional<std::vector<int64_t>> known = axis.ConstantElements()) {
    if (known->size() != 1) return ctx.Invalid("axis must hold one value");
    attrs["axis"] = (*known)[0];
    return One(ctx.Call("cumsum", {x}, std::move(attrs)));
  }
  return One(ctx.Call("dyn.cumsum", {x, axis}, std::move(attrs)));
}


absl::StatusOr<Window> WindowOf(const NodeContext& ctx, const Type& x, std::vector<int64_t> kernel) {
  const int spatial = x.rank() - 2;
  Window w;
  w.kernel = std::move(kernel);
  if (static_cast<int>(w.kernel.size()) != spatial) {
    return ctx.Invalid(absl::StrFormat("a kernel of %d extents for %d spatial axes", w.kernel.size(), spatial));
  }
  DYNVM_ASSIGN_OR_RETURN(w.strides, ctx.Ints("strides", std::vector<int64_t>(spatial, 1)));
  DYNVM_ASSIGN_OR_RETURN(w.dilations, ctx.Ints("dilations", std::vector<int64_t>(spatial, 1)));
  DYNVM_ASSIGN_OR_RETURN(w.pads, ctx.Ints("pads", std::vector<int64_t>(2 * spatial, 0)));
  DYNVM_ASSIGN_OR_RETURN(const std::string auto_pad, ctx.String("auto_pad", "NOTSET"));
  if (static_cast<int>(w.strides.size()) != spatial || static_cast<int>(w.dilations.size()) != spatial ||
      static_cast<int>(w.pads.size()) != 2 * spatial) {
    return ctx.Invalid("strides, dilations or pads do not match the spatial rank");
  }
  if (auto_pad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // Output extent ceil(in / stride); the total padding split, the odd one at the end
    // (UPPER) or the beginning (LOWER).
    for (int i = 0; i < spatial; ++i) {
      const Dim& in = x.shape()[2 + i];
      if (!in.is_const()) return ctx.Unimplemented("auto_pad SAME over an extent known only at run time");
      const int64_t n = in.const_value(), s = w.strides[i];
      const int64_t out = (n + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + (w.kernel[i] - 1) * w.dilations[i] + 1 - n);
      const int64_t small = total / 2, large = total - small;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads[spatial + i] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (auto_pad != "NOTSET") {
    return ctx.Invalid(absl::StrFormat("auto_pad '%s'", auto_pad));
  }
  return w;
}

absl::StatusOr<Values> ConvertConv(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue weight, ctx.Input(1));
  return One(Convolution(ctx, x, weight, ctx.OptionalInput(2)));
}

// One 2-D pool of `x` [N, C, H, W] over `w` (2-D).
// With `with_indices` (max only), the tuple of the maxima and their flattened indices.
template <bool kMax>
absl::StatusOr<OnnxValue> Pool2d(const NodeContext& ctx, const OnnxValue& x, const Window& w, int64_t ceil_mode,
                                 bool with_indices = false) {
  kernels::Attrs attrs = {{"pool_size", w.kernel}, {"strides", w.strides}, {"padding", w.pads},
                          {"dilation", w.dilations}, {"ceil_mode", ceil_mode}};
  if constexpr (kMax) {
    if (with_indices) attrs["with_indices"] = int64_t{1};
    return ctx.Call("nn.max_pool2d", {x}, std::move(attrs));
  } else {
    DYNVM_ASSIGN_OR_RETURN(const int64_t count_include_pad, ctx.Int("count_include_pad", 0));
    attrs["count_include_pad"] = count_include_pad;
    return ctx.Call("nn.avg_pool2d", {x}, std::move(attrs));
  }
}

// MaxPool and AveragePool in 1-D, 2-D and 3-D on the 2-D kernels. 1-D is a 2-D pool over
// [N, C, 1, L] whose window is 1 high. 3-D pools are separable: the max (or the sum) over
// a box is the max (sum) over its depth taps of the 2-D pools of their planes, and the
// taps a window counts — inside the input, or inside the padding with count_include_pad
// — are the product of those along each axis; so a 2-D pool over (H, W) of the
// [N, C * D, H, W] planes, then one over D of [N, C, D, H' * W'] (C must be known).
template <bool kMax>
absl::StatusOr<Values> ConvertPool(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  const int rank = x.type.rank();
  if (rank < 3 || rank > 5) return ctx.Unimplemented("pooling other than 1-D, 2-D and 3-D");
  if (ctx.HasOutput(1) && rank != 4) return ctx.Unimplemented("the Indices output of a pool other than 2-D");
  DYNVM_ASSIGN_OR_RETURN(const int64_t storage_order, ctx.Int("storage_order", 0));
  if (storage_order != 0 && storage_order != 1) {
    return ctx.Invalid(absl::StrFormat("storage_order must be 0 or 1, got %d", storage_order));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, ctx.Ints("kernel_shape"));
  DYNVM_ASSIGN_OR_RETURN(const Window w, WindowOf(ctx, x.type, kernel));
  DYNVM_ASSIGN_OR_RETURN(const int64_t ceil_mode, ctx.Int("ceil_mode", 0));
  if (rank == 4 && ctx.HasOutput(1)) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue both, Pool2d<kMax>(ctx, x, w, ceil_mode, /*with_indices=*/true));
    OnnxValue indices = NodeContext::Field(both, 1);
    if (storage_order == 1) {  // plane · H · W + h · W + w  ->  plane · H · W + w · H + h (all >= 0)
      DYNVM_ASSIGN_OR_RETURN(OnnxValue height, ExtentOf(ctx, x, 2));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue width, ExtentOf(ctx, x, 3));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue area, ctx.Call("multiply", {height, width}));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue in_plane, ctx.Call("floor_mod", {indices, area}));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue plane_start, ctx.Call("subtract", {indices, in_plane}));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue row, ctx.Call("divide", {in_plane, width}));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue column, ctx.Call("floor_mod", {in_plane, width}));
      DYNVM_ASSIGN_OR_RETURN(column, ctx.Call("multiply", {column, height}));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue moved, ctx.Call("add", {plane_start, column}));
      DYNVM_ASSIGN_OR_RETURN(indices, ctx.Call("add", {moved, row}));
    }
    return Values{NodeContext::Field(both, 0), indices};
  }
  if (rank == 4) return One(Pool2d<kMax>(ctx, x, w, ceil_mode));
  if (rank == 3) {
    const Window lifted = {{1, w.kernel[0]}, {1, w.strides[0]}, {1, w.dilations[0]}, {0, w.pads[0], 0, w.pads[1]}};
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("expand_dims", {x}, {{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue y, Pool2d<kMax>(ctx, x, lifted, ceil_mode));
    return One(ctx.Call("squeeze", {y}, AxesAttr({2})));
  }
  const Dim& channels = x.type.shape()[1];
  if (!channels.is_const()) return ctx.Unimplemented("3-D pooling over a channel count known only at run time");
  const Window planes = {{w.kernel[1], w.kernel[2]}, {w.strides[1], w.strides[2]}, {w.dilations[1], w.dilations[2]},
                         {w.pads[1], w.pads[2], w.pads[4], w.pads[5]}};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue flat, ctx.Call("reshape", {x}, {{"newshape", std::vector<int64_t>{0, -3, 0, 0}}}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue pooled_planes, Pool2d<kMax>(ctx, flat, planes, ceil_mode));
  const std::vector<Dim>& hw = pooled_planes.type.shape();
  const kernels::Attrs by_depth = {{"newshape", std::vector<int64_t>{0, -4, channels.const_value(), -1, -3}}};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue columns, ctx.Call("reshape", {pooled_planes}, by_depth));
  const Window depth = {{w.kernel[0], 1}, {w.strides[0], 1}, {w.dilations[0], 1}, {w.pads[0], 0, w.pads[3], 0}};
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue deep, Pool2d<kMax>(ctx, columns, depth, ceil_mode));
  // Back to [N, C, D', H', W']: -4 splits H' * W' given one of the two, else the
  // extents are read at run time.
  if (hw[2].is_const() || hw[3].is_const()) {
    const std::vector<int64_t> back = {0, 0, 0, -4, hw[2].is_const() ? hw[2].const_value() : -1,
                                       hw[2].is_const() ? -1 : hw[3].const_value()};
    return One(ctx.Call("reshape", {deep}, {{"newshape", back}}));
  }
  const kernels::Attrs ncd = {{"end", int64_t{3}}}, plane = {{"start", int64_t{2}}};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue outer, ctx.Call("shape_of", {deep}, ncd));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue inner, ctx.Call("shape_of", {pooled_planes}, plane));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("concatenate", {outer, inner}, {{"axis", int64_t{0}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("dyn.reshape", {deep, shape}));
  std::vector<Dim> dims(deep.type.shape().begin(), deep.type.shape().begin() + 3);
  dims.insert(dims.end(), {hw[2], hw[3]});
  return Values{ctx.Narrow(y, Type::Tensor(x.type.dtype(), std::move(dims)))};
}

absl::StatusOr<Values> ConvertGlobalAveragePool(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  if (x.type.rank() != 4) return ctx.Unimplemented("pooling other than 2-D");
  return One(ctx.Call("nn.global_avg_pool2d", {x}));
}

absl::StatusOr<Values> ConvertGlobalMaxPool(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  std::vector<int64_t> axes(std::max(0, x.type.rank() - 2));
  std::iota(axes.begin(), axes.end(), 2);
  return One(ctx.Call("max", {x}, {{"axis", axes}, {"keepdims", int64_t{1}}}));
}

}  // namespace

namespace {

// A 3-D convolution as 2-D ones, one per depth tap kd of the kernel: the output planes at
// depths od read input depth od · stride + kd · dilation (after padding the depth), so
// slicing those planes out of the padded input, folding the output depth into the batch
// ([N · OD, C, H, W]) and convolving with the kernel's kd plane gives tap kd's share of
// every output; the shares are summed (then the bias added once) and the depth unfolded.
// The input's channels and depth must be known when compiling.
absl::StatusOr<OnnxValue> Convolution3d(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& weight,
                                        const std::optional<OnnxValue>& bias, const Window& w, int64_t group) {
  const Dim& depth = x.type.shape()[2];
  const Dim& channels = x.type.shape()[1];
  if (!depth.is_const() || !channels.is_const()) {
    return ctx.Unimplemented("a 3-D convolution whose input channels or depth are known only at run time");
  }
  const int64_t padded = depth.const_value() + w.pads[0] + w.pads[3];
  const int64_t reach = w.dilations[0] * (w.kernel[0] - 1) + 1;
  if (padded < reach) return ctx.Invalid(absl::StrFormat("the padded depth %d is below the kernel's %d", padded, reach));
  const int64_t out_depth = (padded - reach) / w.strides[0] + 1;
  OnnxValue in = x;
  if (w.pads[0] != 0 || w.pads[3] != 0) {
    const std::vector<int64_t> width = {0, 0, 0, 0, w.pads[0], w.pads[3], 0, 0, 0, 0};
    DYNVM_ASSIGN_OR_RETURN(in, ctx.Call("nn.pad", {in}, {{"pad_width", width}}));
  }
  const kernels::Attrs plane = {{"strides", std::vector<int64_t>{w.strides[1], w.strides[2]}},
                                {"padding", std::vector<int64_t>{w.pads[1], w.pads[2], w.pads[4], w.pads[5]}},
                                {"dilation", std::vector<int64_t>{w.dilations[1], w.dilations[2]}},
                                {"groups", group}};
  OnnxValue sum;
  for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
    const int64_t begin = kd * w.dilations[0];
    const kernels::Attrs planes = {{"begin", std::vector<int64_t>{begin}},
                                   {"end", std::vector<int64_t>{begin + (out_depth - 1) * w.strides[0] + 1}},
                                   {"strides", std::vector<int64_t>{w.strides[0]}},
                                   {"axes", std::vector<int64_t>{2}}};
    DYNVM_ASSIGN_OR_RETURN(OnnxValue xs, ctx.Call("strided_slice", {in}, planes));
    DYNVM_ASSIGN_OR_RETURN(xs, ctx.Call("transpose", {xs}, {{"axes", std::vector<int64_t>{0, 2, 1, 3, 4}}}));
    DYNVM_ASSIGN_OR_RETURN(xs, ctx.Call("reshape", {xs}, {{"newshape", std::vector<int64_t>{-3, 0, 0, 0}}}));
    const kernels::Attrs tap = {{"begin", std::vector<int64_t>{kd}}, {"end", std::vector<int64_t>{kd + 1}},
                                {"axes", std::vector<int64_t>{2}}};
    DYNVM_ASSIGN_OR_RETURN(OnnxValue ws, ctx.Call("strided_slice", {weight}, tap));
    DYNVM_ASSIGN_OR_RETURN(ws, ctx.Call("squeeze", {ws}, AxesAttr({2})));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue share, ctx.Call("nn.conv2d", {xs, ws}, plane));
    if (kd == 0) {
      sum = std::move(share);
    } else {
      DYNVM_ASSIGN_OR_RETURN(sum, ctx.Call("add", {sum, share}));
    }
  }
  if (bias) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue b, ctx.Call("expand_dims", {*bias}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{2}}}));
    DYNVM_ASSIGN_OR_RETURN(sum, ctx.Call("add", {sum, b}));
  }
  DYNVM_ASSIGN_OR_RETURN(sum, ctx.Call("reshape", {sum}, {{"newshape", std::vector<int64_t>{-4, -1, out_depth, 0, 0, 0}}}));
  return ctx.Call("transpose", {sum}, {{"axes", std::vector<int64_t>{0, 2, 1, 3, 4}}});
}

}  // namespace

absl::StatusOr<OnnxValue> Convolution(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& weight,
                                      const std::optional<OnnxValue>& bias) {
  if (x.type.rank() < 3 || x.type.rank() > 5) return ctx.Unimplemented("convolution other than 1-D, 2-D and 3-D");
  if (weight.type.rank() != x.type.rank()) return ctx.Invalid("W's rank differs from X's");
  std::vector<int64_t> fallback;
  for (int i = 2; i < weight.type.rank(); ++i) {
    if (!weight.type.shape()[i].is_const()) return ctx.Unimplemented("a kernel extent known only at run time");
    fallback.push_back(weight.type.shape()[i].const_value());
  }
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, ctx.Ints("kernel_shape", fallback));
  DYNVM_ASSIGN_OR_RETURN(const Window w, WindowOf(ctx, x.type, std::move(kernel)));
  DYNVM_ASSIGN_OR_RETURN(const int64_t group, ctx.Int("group", 1));
  return Convolve(ctx, x, weight, bias, w, group);
}

absl::StatusOr<OnnxValue> Convolve(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& weight,
                                   const std::optional<OnnxValue>& bias, const Window& w, int64_t group) {
  if (x.type.rank() == 5) return Convolution3d(ctx, x, weight, bias, w, group);
  std::vector<OnnxValue> args = {x, weight};
  if (bias) args.push_back(*bias);
  const kernels::Attrs attrs = {{"strides", w.strides}, {"padding", w.pads}, {"dilation", w.dilations},
                                {"groups", group}};
  return ctx.Call(x.type.rank() == 4 ? "nn.conv2d" : "nn.conv1d", std::move(args), attrs);
}

void AddNnConverters(ConverterTable& table) {
  table.insert({
      {"MatMul", {ConvertMatMul, {}}},
      {"Det", {ConvertDet, {}}},
      {"Gemm", {ConvertGemm, {"alpha", "beta", "transA", "transB", "broadcast"}}},
      {"Softmax", {SoftmaxLike<"nn.softmax">, {"axis"}}},
      {"LogSoftmax", {SoftmaxLike<"nn.log_softmax">, {"axis"}}},
      {"Hardmax", {ConvertHardmax, {"axis"}}},
      {"LayerNormalization", {ConvertLayerNorm, {"axis", "epsilon", "stash_type"}}},
      {"InstanceNormalization", {ConvertInstanceNorm, {"epsilon"}}},
      {"MeanVarianceNormalization", {ConvertMvn, {"axes"}}},
      {"LRN", {ConvertLrn, {"alpha", "beta", "bias", "size"}}},
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
      {"Conv", {ConvertConv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}}},
      {"MaxPool", {ConvertPool<true>, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                                       "storage_order", "strides"}}},
      {"AveragePool", {ConvertPool<false>, {"auto_pad", "ceil_mode", "count_include_pad", "dilations",
                                            "kernel_shape", "pads", "strides"}}},
      {"GlobalAveragePool", {ConvertGlobalAveragePool, {}}},
      {"GlobalMaxPool", {ConvertGlobalMaxPool, {}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
