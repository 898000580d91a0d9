// Converters of ONNX's data movement operators: Reshape, Flatten, Transpose, Squeeze,
// Unsqueeze, Concat, Split, Slice, Gather, GatherElements, ScatterElements, Expand, Tile,
// Pad, NonZero, Compress, TopK, Unique, Trilu, OneHot, DepthToSpace and SpaceToDepth.
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
  return One(ctx.Call("dyn.reshape", {data, shape}, {{"allowzero", allowzero}}));
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

// Input `i` when it is an operand from opset `input_since` on, present, and not known at
// import (the case AxesOf and ConstantInts refuse): the operand of the dyn.* form of the
// operator. It must be 1-D of a static length, which the result's rank or arity needs.
absl::StatusOr<std::optional<OnnxValue>> RuntimeInput(NodeContext& ctx, int64_t input_since, int i,
                                                      std::string_view what) {
  if (ctx.opset() < input_since) return std::optional<OnnxValue>();
  std::optional<OnnxValue> v = ctx.OptionalInput(i);
  if (!v || v->ConstantElements()) return std::optional<OnnxValue>();
  if (v->type.rank() != 1 || !v->type.shape()[0].is_const()) {
    return ctx.Unimplemented(absl::StrFormat("%s known only at run time, of type %s: expected a 1-D "
                                             "tensor of static length", what, v->type.ToString()));
  }
  return v;
}

absl::StatusOr<Values> ConvertUnsqueeze(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(std::optional<OnnxValue> runtime_axes, RuntimeInput(ctx, 13, 1, "axes"));
  if (runtime_axes) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("dyn.expand_dims", {x, *runtime_axes}));
    // A scalar given one axis can only become [1]: its elements carry over.
    if (x.type.rank() == 0 && out.type.rank() == 1) out.elements = x.elements;
    return Values{std::move(out)};
  }
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
  std::optional<std::vector<Dim>> elements;
  if (x.type.rank() == 1 && x.elements) elements = x.elements;
  DYNVM_ASSIGN_OR_RETURN(std::optional<OnnxValue> runtime_axes, RuntimeInput(ctx, 13, 1, "axes"));
  if (runtime_axes) {
    // Given axes squeeze exactly those; an empty tensor squeezes nothing (dyn.squeeze's
    // rank is the data's less the axes' length), as the constant path's empty list does.
    DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("dyn.squeeze", {x, *runtime_axes}));
    if (out.type.rank() == 0) out.elements = std::move(elements);
    return Values{std::move(out)};
  }
  DYNVM_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesOf(ctx, 13));
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
  const int parts = ctx.num_outputs();
  DYNVM_ASSIGN_OR_RETURN(std::optional<OnnxValue> runtime_sizes, RuntimeInput(ctx, 13, 1, "split sizes"));
  if (runtime_sizes) {
    const int64_t length = runtime_sizes->type.shape()[0].const_value();
    if (length != parts) {
      return ctx.Invalid(absl::StrFormat("%d split sizes for %d outputs", length, parts));
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue tuple, ctx.Call("dyn.split", {x, *runtime_sizes}, {{"axis", int64_t{axis}}}));
    Values out;
    for (int i = 0; i < parts; ++i) out.push_back(NodeContext::Field(tuple, i));
    return out;
  }
  if (ctx.opset() < 13) {
    if (ctx.HasAttr("split")) {
      DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> s, ctx.Ints("split"));
      sizes = std::move(s);
    }
  } else if (ctx.OptionalInput(1)) {
    DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> s, ctx.ConstantInts(1));
    sizes = std::move(s);
  }
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

// Compress: the slices of `input` along `axis` (of the flattened input without one)
// whose condition is true; the condition may be shorter than the axis (the rest are
// dropped). The positions come from argwhere when the model runs.
absl::StatusOr<Values> ConvertCompress(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue condition, ctx.Input(1));
  if (condition.type.rank() != 1 || condition.type.dtype() != DType::kBool) {
    return ctx.Invalid(absl::StrFormat("the condition must be a 1-D bool tensor, got %s", condition.type.ToString()));
  }
  int64_t axis = 0;
  if (ctx.HasAttr("axis")) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t given, ctx.Int("axis"));
    DYNVM_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, given, x.type.rank()));
  } else {
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("reshape", {x}, {{"newshape", std::vector<int64_t>{-1}}}));
  }
  const Dim& extent = x.type.shape()[axis];
  const Dim& length = condition.type.shape()[0];
  if (extent.is_const() && length.is_const() && length.const_value() > extent.const_value()) {
    return ctx.Invalid(absl::StrFormat("the condition has %d entries for an axis of %d", length.const_value(),
                                       extent.const_value()));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue positions, ctx.Call("argwhere", {condition}));
  DYNVM_ASSIGN_OR_RETURN(positions, ctx.Call("reshape", {positions}, {{"newshape", std::vector<int64_t>{-1}}}));
  return One(ctx.Call("take", {x, positions}, {{"axis", axis}, {"mode", std::string("fast")}}));
}

// Unique over the flattened input (`axis` absent) or of the slices along `axis`: the
// distinct values (slices), sorted or in order of first occurrence, with their first
// indices, each element's (slice's) inverse index and the counts. Numbers or strings.
absl::StatusOr<Values> ConvertUnique(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t sorted, ctx.Int("sorted", 1));
  kernels::Attrs attrs = {{"sorted", sorted}};
  if (ctx.HasAttr("axis")) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis"));
    attrs["axis"] = axis;
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue all, ctx.Call("unique", {x}, std::move(attrs)));
  Values out;
  for (int i = 0; i < ctx.num_outputs(); ++i) out.push_back(NodeContext::Field(all, i));
  return out;
}

// The lower (upper = 0) or upper triangle of each matrix of x's last two axes, from
// diagonal k (input 1, default 0; positive above the main one): element [i, j] is kept
// where j - i <= k (lower) or j - i >= k (upper), else 0. The mask is built from the
// extents at run time, so it serves a causal mask over a sequence of any length.
absl::StatusOr<Values> ConvertTrilu(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t upper, ctx.Int("upper", 1));
  const int rank = x.type.rank();
  if (rank < 2) return ctx.Invalid(absl::StrFormat("the input must have rank 2 or more, got %d", rank));
  OnnxValue k = NodeContext::ConstantI64({0}, /*scalar=*/true);
  if (std::optional<OnnxValue> given = ctx.OptionalInput(1)) {
    if (given->type.dtype() != DType::kI64 || given->type.rank() != 0) {
      return ctx.Invalid(absl::StrFormat("k must be a 0-d int64 tensor, got %s", given->type.ToString()));
    }
    k = *std::move(given);
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue rows, ExtentOf(ctx, x, rank - 2));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue cols, ExtentOf(ctx, x, rank - 1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue i, Iota(ctx, rows, x.type.shape()[rank - 2]));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue j, Iota(ctx, cols, x.type.shape()[rank - 1]));
  DYNVM_ASSIGN_OR_RETURN(i, ctx.Call("expand_dims", {i}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue diagonal, ctx.Call("subtract", {j, i}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue keep, ctx.Call(upper != 0 ? "greater_equal" : "less_equal", {diagonal, k}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, NodeContext::ConstantScalarOf(x.type.dtype(), 0.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("where", {keep, x, zero}));
  return Values{out.type == x.type ? out : ctx.Narrow(out, x.type)};
}

// OneHot: for indices of shape S, an output of shape S with `depth` (input 1, a scalar
// read at run time) inserted at `axis`, holding values[1] where the position along that
// axis equals the index and values[0] elsewhere. A negative index counts from depth; an
// index outside [-depth, depth) gives a row of values[0].
absl::StatusOr<Values> ConvertOneHot(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue indices, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue depth, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue values, ctx.Input(2));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", -1));
  const int out_rank = indices.type.rank() + 1;
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, out_rank));
  if (depth.type.rank() > 1 || (depth.type.rank() == 1 && depth.type.shape()[0] != Dim(1))) {
    return ctx.Invalid(absl::StrFormat("depth must be a scalar or hold one element, got %s", depth.type.ToString()));
  }
  if (values.type.rank() != 1 || values.type.shape()[0] != Dim(2)) {
    return ctx.Invalid(absl::StrFormat("values must be [off_value, on_value], got %s", values.type.ToString()));
  }
  const std::string i64(RelayDTypeName(DType::kI64));
  Dim extent = Dim::Any();
  if (std::optional<std::vector<int64_t>> d = depth.ConstantElements()) extent = Dim((*d)[0]);
  if (depth.type.rank() == 1) {
    DYNVM_ASSIGN_OR_RETURN(depth, ctx.Call("squeeze", {depth}, AxesAttr({0})));
  }
  if (depth.type.dtype() != DType::kI64) {
    DYNVM_ASSIGN_OR_RETURN(depth, ctx.Call("cast", {depth}, {{"dtype", i64}}));
  }
  if (indices.type.dtype() != DType::kI64) {
    DYNVM_ASSIGN_OR_RETURN(indices, ctx.Call("cast", {indices}, {{"dtype", i64}}));
  }
  // Negative indices wrap once; what is still outside [0, depth) matches no position.
  DYNVM_ASSIGN_OR_RETURN(OnnxValue negative, ctx.Call("less", {indices, NodeContext::ConstantI64({0}, true)}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue wrapped, ctx.Call("add", {indices, depth}));
  DYNVM_ASSIGN_OR_RETURN(indices, ctx.Call("where", {negative, wrapped, indices}));
  DYNVM_ASSIGN_OR_RETURN(indices, ctx.Call("expand_dims", {indices}, {{"axis", int64_t{axis}}, {"num_newaxis", int64_t{1}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue positions, Iota(ctx, depth, extent));
  if (const int trailing = out_rank - axis - 1; trailing > 0) {
    DYNVM_ASSIGN_OR_RETURN(positions, ctx.Call("expand_dims", {positions}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{trailing}}}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue hot, ctx.Call("equal", {positions, indices}));
  const kernels::Attrs take = {{"axis", int64_t{0}}, {"mode", std::string("fast")}};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue off, ctx.Call("take", {values, NodeContext::ConstantI64({0}, true)}, take));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue on, ctx.Call("take", {values, NodeContext::ConstantI64({1}, true)}, take));
  return One(ctx.Call("where", {hot, on, off}));
}

// DepthToSpace (mode DCR or CRD) and SpaceToDepth on [N, C, H, W]: a reshape to six
// axes, a transpose and a reshape back, as ONNX defines them. C, H and W must be known
// when the model is compiled; N may vary.
template <bool kToSpace>
absl::StatusOr<Values> BlockRearrange(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t b, ctx.Int("blocksize"));
  DYNVM_ASSIGN_OR_RETURN(const std::string mode, ctx.String("mode", "DCR"));
  if (x.type.rank() != 4) return ctx.Invalid(absl::StrFormat("the input must be [N, C, H, W], got %s", x.type.ToString()));
  if (b < 1) return ctx.Invalid(absl::StrFormat("blocksize must be positive, got %d", b));
  if (mode != "DCR" && mode != "CRD") return ctx.Invalid(absl::StrFormat("mode must be \"DCR\" or \"CRD\", got \"%s\"", mode));
  const std::vector<Dim> chw(x.type.shape().begin() + 1, x.type.shape().end());
  const std::optional<std::vector<int64_t>> known = ConstantDims(chw);
  if (!known) return ctx.Unimplemented("C, H and W known only at run time");
  const int64_t c = (*known)[0], h = (*known)[1], w = (*known)[2];
  std::vector<int64_t> split, perm, merged;
  if constexpr (kToSpace) {
    if (c % (b * b) != 0) return ctx.Invalid(absl::StrFormat("C = %d is not a multiple of blocksize² = %d", c, b * b));
    const int64_t d = c / (b * b);
    split = mode == "DCR" ? std::vector<int64_t>{-1, b, b, d, h, w} : std::vector<int64_t>{-1, d, b, b, h, w};
    perm = mode == "DCR" ? std::vector<int64_t>{0, 3, 4, 1, 5, 2} : std::vector<int64_t>{0, 1, 4, 2, 5, 3};
    merged = {-1, d, h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) {
      return ctx.Invalid(absl::StrFormat("H = %d and W = %d must be multiples of blocksize %d", h, w, b));
    }
    split = {-1, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {-1, c * b * b, h / b, w / b};
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("reshape", {x}, {{"newshape", split}}));
  DYNVM_ASSIGN_OR_RETURN(y, ctx.Call("transpose", {y}, {{"axes", perm}}));
  return One(ctx.Call("reshape", {y}, {{"newshape", merged}}));
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
  if (shape.elements) {
    // The result's shape is known symbolically; when it is the target itself (no 1 in
    // the target where x is wider), numpy's broadcast_to computes it.
    std::optional<std::vector<Dim>> dims = BroadcastDims(x.type.shape(), *shape.elements);
    if (dims && *dims == *shape.elements) {
      DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("dyn.broadcast_to", {x, shape}));
      return Values{ctx.Narrow(out, Type::Tensor(x.type.dtype(), *std::move(dims)))};
    }
  }
  if (shape.type.rank() != 1 || !shape.type.shape()[0].is_const()) {
    return ctx.Unimplemented("a target shape of a length known only at run time");
  }
  // Otherwise where(true of the target's shape, x, x): `where` broadcasts its three
  // operands as numpy does, both ways, and copies x's elements exactly, of any dtype.
  DYNVM_ASSIGN_OR_RETURN(OnnxValue all, ctx.Call("dyn.ones", {ShapeOperand(shape)},
                                                 {{"dtype", std::string(RelayDTypeName(DType::kBool))}}));
  return One(ctx.Call("where", {all, x, x}));
}

// Tile: the repetitions an attribute of tile when known at compile time, else
// dyn.tile's second input.
absl::StatusOr<Values> ConvertTile(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue repeats, ctx.Input(1));
  if (std::optional<std::vector<int64_t>> reps = repeats.ConstantElements()) {
    return One(ctx.Call("tile", {x}, {{"reps", *reps}}));
  }
  return One(ctx.Call("dyn.tile", {x, repeats}));
}

absl::StatusOr<Values> ConvertPad(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(std::string mode, ctx.String("mode", "constant"));
  std::vector<int64_t> pads;
  std::optional<OnnxValue> value;
  const int rank = x.type.rank();
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return ctx.Unimplemented(absl::StrFormat("mode '%s' is not supported", mode));
  }
  if (ctx.opset() < 11) {
    DYNVM_ASSIGN_OR_RETURN(pads, ctx.Ints("pads"));
    DYNVM_ASSIGN_OR_RETURN(const double v, ctx.Float("value", 0.0));
    DYNVM_ASSIGN_OR_RETURN(value, NodeContext::ConstantScalarOf(x.type.dtype(), v));
  } else {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue given, ctx.Input(1));
    value = ctx.OptionalInput(2);
    if (ctx.OptionalInput(3)) return ctx.Unimplemented("the axes input (opset 18) is not supported");
    if (std::optional<std::vector<int64_t>> known = given.ConstantElements()) {
      pads = *std::move(known);
    } else {
      // Known only at run time: ONNX's [begins..., ends...] reordered to (before, after)
      // pairs for dyn.nn.pad, whose kernel refuses negative pads when it runs.
      DYNVM_ASSIGN_OR_RETURN(OnnxValue pairs, ctx.Call("reshape", {given}, {{"newshape", std::vector<int64_t>{2, rank}}}));
      DYNVM_ASSIGN_OR_RETURN(pairs, ctx.Call("transpose", {pairs}, {{"axes", std::vector<int64_t>{1, 0}}}));
      DYNVM_ASSIGN_OR_RETURN(pairs, ctx.Call("reshape", {pairs}, {{"newshape", std::vector<int64_t>{2 * rank}}}));
      std::vector<OnnxValue> args = {x, pairs};
      if (mode == "constant" && value) args.push_back(*value);
      return One(ctx.Call("dyn.nn.pad", std::move(args), {{"pad_mode", mode}}));
    }
  }
  if (static_cast<int>(pads.size()) != 2 * rank) {
    return ctx.Invalid(absl::StrFormat("%d pads for rank %d, expected %d", pads.size(), rank, 2 * rank));
  }
  std::vector<int64_t> width;
  for (int i = 0; i < rank; ++i) {
    if (pads[i] < 0 || pads[i + rank] < 0) return ctx.Unimplemented("negative pads (cropping) are not supported");
    width.push_back(pads[i]);
    width.push_back(pads[i + rank]);
  }
  std::vector<OnnxValue> args = {x};
  if (mode == "constant" && value) args.push_back(*value);
  return One(ctx.Call("nn.pad", std::move(args), {{"pad_width", width}, {"pad_mode", mode}}));
}

absl::StatusOr<Values> ConvertTopK(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  // K: an attribute before opset 10; then an input, dyn.topk's when known only at run time.
  std::optional<int64_t> k;
  std::optional<OnnxValue> runtime_k;
  if (ctx.opset() < 10) {
    DYNVM_ASSIGN_OR_RETURN(k, ctx.Int("k"));
  } else {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue given, ctx.Input(1));
    if (std::optional<std::vector<int64_t>> ks = given.ConstantElements()) {
      if (ks->size() != 1) return ctx.Invalid("K must hold one value");
      k = (*ks)[0];
    } else {
      runtime_k = std::move(given);
    }
  }
  if (k && *k < 1) return ctx.Unimplemented("K below 1");
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, ctx.Int("axis", -1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t largest, ctx.Int("largest", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t sorted, ctx.Int("sorted", 1));
  if (sorted == 0) return ctx.Unimplemented("sorted = 0");
  kernels::Attrs attrs = {{"axis", axis},
                          {"ret_type", std::string("both")},
                          {"is_ascend", int64_t{largest == 0}},
                          {"dtype", std::string("int64")}};
  OnnxValue both;
  if (k) {
    attrs["k"] = *k;
    DYNVM_ASSIGN_OR_RETURN(both, ctx.Call("topk", {x}, std::move(attrs)));
  } else {
    DYNVM_ASSIGN_OR_RETURN(both, ctx.Call("dyn.topk", {x, *runtime_k}, std::move(attrs)));
  }
  return Values{NodeContext::Field(both, 0), NodeContext::Field(both, 1)};
}

absl::StatusOr<Values> ConvertNonZero(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  return One(ctx.Call("nonzero", {x}));
}

}  // namespace

void AddDataMovementConverters(ConverterTable& table) {
  table.insert({
      {"Reshape", {ConvertReshape, {"allowzero"}}}, {"Flatten", {ConvertFlatten, {"axis"}}},
      {"Transpose", {ConvertTranspose, {"perm"}}}, {"Squeeze", {ConvertSqueeze, {"axes"}}},
      {"Unsqueeze", {ConvertUnsqueeze, {"axes"}}}, {"Concat", {ConvertConcat, {"axis"}}},
      {"Split", {ConvertSplit, {"axis", "split"}}}, {"Slice", {ConvertSlice, {"starts", "ends", "axes"}}},
      {"Gather", {ConvertGather, {"axis"}}}, {"GatherElements", {ConvertGatherElements, {"axis"}}},
      {"ScatterElements", {ConvertScatterElements, {"axis", "reduction"}}},
      {"Scatter", {ConvertScatterElements, {"axis"}}},  // opsets 9-10: ScatterElements without reduction
      {"Expand", {ConvertExpand, {}}}, {"Tile", {ConvertTile, {}}},
      {"Pad", {ConvertPad, {"mode", "pads", "value"}}}, {"NonZero", {ConvertNonZero, {}}},
      {"TopK", {ConvertTopK, {"axis", "largest", "sorted", "k"}}},
      {"Compress", {ConvertCompress, {"axis"}}}, {"Unique", {ConvertUnique, {"axis", "sorted"}}},
      {"Trilu", {ConvertTrilu, {"upper"}}}, {"OneHot", {ConvertOneHot, {"axis"}}},
      {"DepthToSpace", {BlockRearrange<true>, {"blocksize", "mode"}}},
      {"SpaceToDepth", {BlockRearrange<false>, {"blocksize"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
