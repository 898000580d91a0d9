// Converters of ONNX's remaining indexing operators, GatherND, ScatterND, ReverseSequence
// and MaxUnpool, composed from take, scatter_elements, arange and reshapes. Index values
// are read only by the kernels' checked modes (take "fast", scatter_elements), so an
// index outside [-extent, extent) is an error when the model runs, never a read or a
// write out of bounds; a negative one counts from the end of its axis.
//
// GatherND and ScatterND address the k leading data axes they index (after GatherND's
// batch axes) as one axis of their product M, by each index tuple's row-major position
// in it,
//
//   position = (..((i_0 * d_1 + i_1) * d_2 + i_2)..) * d_{k-1} + i_{k-1}
//
// each i_j checked against its own extent d_j first (through take from [0, d_j)), so
// that [0, 5] into [2, 3] is an error rather than the element [1, 2]. GatherND is then
// one take along the merged axis, its batch axes take's batch_dims; ScatterND one
// scatter_elements over the data as [M, R] (R: the product of the axes not indexed).
//
// ReverseSequence takes, for each batch entry b and time t, the time
//
//   src[b, t] = t < len[b] ? len[b] - 1 - t : t
//
// with take's batch_dims over the batch axis (after a transpose when time comes first).
// MaxUnpool scatters the values into zeros of the unpooled extents
// (in - 1) * stride + kernel - pads, flattened as MaxPool's indices are, and extends the
// result with zeros at the end of each axis to the optional output_shape. Extents known
// only at run time are read from shape_of (common.h's ExtentOf) and computed with them.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// Checks what GatherND and ScatterND ask of their indices: an int64 tensor of rank 1 or
// more whose last extent k, the length of each index tuple, is known when the model is
// compiled (it decides the result's rank) and lies in [1, `axes`]. Returns k.
absl::StatusOr<int> TupleLength(const NodeContext& ctx, const OnnxValue& indices, int axes) {
  if (indices.type.dtype() != DType::kI64 || indices.type.rank() < 1) {
    return ctx.Invalid(absl::StrFormat("the indices must be an int64 tensor of rank 1 or more, got %s",
                                       indices.type.ToString()));
  }
  const Dim& last = indices.type.shape().back();
  if (!last.is_const()) {
    return ctx.Unimplemented("the indices' last extent (the length of each index tuple) is known only at run "
                             "time: the result's rank depends on it");
  }
  const int64_t k = last.const_value();
  if (k < 1 || k > axes) {
    return ctx.Invalid(absl::StrFormat("index tuples of length %d, expected 1 to %d (the data axes they can address)",
                                       k, axes));
  }
  return static_cast<int>(k);
}

// `x` with a new axis of extent 1 at `axis`.
absl::StatusOr<OnnxValue> NewAxis(const NodeContext& ctx, const OnnxValue& x, int axis) {
  return ctx.Call("expand_dims", {x}, {{"axis", int64_t{axis}}, {"num_newaxis", int64_t{1}}});
}

// `x` with its `count` axes from `first` merged into one, of their product; a new axis of
// extent 1 at `first` when `count` is 0.
absl::StatusOr<OnnxValue> MergeAxes(const NodeContext& ctx, OnnxValue x, int first, int count) {
  if (count == 0) return NewAxis(ctx, x, first);
  std::vector<int64_t> codes(first, 0);  // copy the axes before `first`,
  codes.push_back(-3);                   // merge two,
  codes.push_back(-2);                   // copy the rest
  for (int i = 1; i < count; ++i) {
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("reshape", {x}, {{"newshape", codes}}));
  }
  return x;
}

// The row-major position of each index tuple (the last axis, of `k` entries, of `indices`)
// within the axes [first, first + k) of `data`, as the file comment says: shape
// indices[:-1]. A single index is left as it is, to the operator that uses it, which
// checks it against that one extent.
absl::StatusOr<OnnxValue> TuplePosition(const NodeContext& ctx, const OnnxValue& indices, const OnnxValue& data,
                                        int first, int k) {
  const kernels::Attrs last_axis = {{"axis", int64_t{indices.type.rank() - 1}}, {"mode", std::string("fast")}};
  const kernels::Attrs checked = {{"axis", int64_t{0}}, {"mode", std::string("fast")}};
  std::optional<OnnxValue> position;
  for (int j = 0; j < k; ++j) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue i, ctx.Call("take", {indices, NodeContext::ConstantI64({j}, true)}, last_axis));
    if (k == 1) return i;
    DYNVM_ASSIGN_OR_RETURN(OnnxValue extent, ExtentOf(ctx, data, first + j));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue range, Iota(ctx, extent, data.type.shape()[first + j]));
    DYNVM_ASSIGN_OR_RETURN(i, ctx.Call("take", {range, i}, checked));
    if (!position) {
      position = std::move(i);
      continue;
    }
    DYNVM_ASSIGN_OR_RETURN(position, ctx.Call("multiply", {*position, extent}));
    DYNVM_ASSIGN_OR_RETURN(position, ctx.Call("add", {*position, i}));
  }
  return *position;
}

// Whether two extents are known to differ.
bool Differ(const Dim& a, const Dim& b) { return a.is_const() && b.is_const() && a != b; }

// GatherND: out[b..., n...] = data[b..., index tuple indices[b..., n..., :], ...], of
// shape indices[:-1] + data[batch_dims + k:].
absl::StatusOr<Values> ConvertGatherND(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue data, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue indices, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t batch_dims, ctx.Int("batch_dims", 0));
  const int r = data.type.rank(), q = indices.type.rank();
  if (batch_dims < 0 || batch_dims >= std::min(r, q)) {
    return ctx.Invalid(absl::StrFormat("batch_dims %d, expected one in [0, %d) for data of rank %d and indices of "
                                       "rank %d", batch_dims, std::min(r, q), r, q));
  }
  const int b = static_cast<int>(batch_dims);
  DYNVM_ASSIGN_OR_RETURN(const int k, TupleLength(ctx, indices, r - b));
  for (int i = 0; i < b; ++i) {
    if (Differ(data.type.shape()[i], indices.type.shape()[i])) {
      return ctx.Invalid(absl::StrFormat("batch axis %d has extent %s in the data but %s in the indices", i,
                                         data.type.shape()[i].ToString(), indices.type.shape()[i].ToString()));
    }
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue position, TuplePosition(ctx, indices, data, b, k));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue table, MergeAxes(ctx, data, b, k));
  return One(ctx.Call("take", {table, position}, {{"axis", int64_t{b}}, {"batch_dims", int64_t{b}},
                                                  {"mode", std::string("fast")}}));
}

// `x` reshaped to the shape of `like` (of as many elements): static extents when that
// shape is known when the model is compiled, else read from shape_of(like) at run time;
// with allowzero, since an extent of 0 is one, not a copy of x's.
absl::StatusOr<OnnxValue> ReshapeLike(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& like) {
  if (std::optional<std::vector<int64_t>> shape = ConstantDims(like.type.shape())) {
    return ctx.Call("reshape", {x}, {{"newshape", *shape}, {"allowzero", int64_t{1}}});
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("shape_of", {like}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("dyn.reshape", {x, shape}, {{"allowzero", int64_t{1}}}));
  return ctx.Narrow(out, Type::Tensor(x.type.dtype(), like.type.shape()));
}

// ScatterND: the data with data[index tuple indices[n..., :], ...] combined with
// updates[n..., ...] by `reduction`, as one scatter_elements along axis 0 of the data as
// [M, R], the updates as [N, R] and each tuple's position repeated over R.
absl::StatusOr<Values> ConvertScatterND(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue data, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue indices, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue updates, ctx.Input(2));
  DYNVM_ASSIGN_OR_RETURN(std::string reduction, ctx.String("reduction", "none"));
  const bool min_max = ctx.opset() >= 18 && (reduction == "min" || reduction == "max");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && !min_max) {
    return ctx.Invalid(absl::StrFormat("attribute 'reduction' must be \"none\", \"add\" or \"mul\"%s, got \"%s\"",
                                       ctx.opset() >= 18 ? " (or \"min\", \"max\")" : "", reduction));
  }
  if (reduction == "none") reduction = "update";
  const int r = data.type.rank(), q = indices.type.rank();
  if (r < 1) return ctx.Invalid("the data must have rank 1 or more, got a scalar");
  DYNVM_ASSIGN_OR_RETURN(const int k, TupleLength(ctx, indices, r));
  std::vector<Dim> expected(indices.type.shape().begin(), indices.type.shape().end() - 1);
  expected.insert(expected.end(), data.type.shape().begin() + k, data.type.shape().end());
  bool fits = updates.type.rank() == static_cast<int>(expected.size());
  for (size_t i = 0; fits && i < expected.size(); ++i) fits = !Differ(updates.type.shape()[i], expected[i]);
  if (!fits || updates.type.dtype() != data.type.dtype()) {
    return ctx.Invalid(absl::StrFormat("the updates are %s, expected %s (the indices' shape without its last axis, "
                                       "then the data's after the %d axes it indexes)", updates.type.ToString(),
                                       Type::Tensor(data.type.dtype(), expected).ToString(), k));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue position, TuplePosition(ctx, indices, data, 0, k));
  DYNVM_ASSIGN_OR_RETURN(position, MergeAxes(ctx, position, 0, q - 1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue table, MergeAxes(ctx, data, 0, k));
  DYNVM_ASSIGN_OR_RETURN(table, MergeAxes(ctx, table, 1, r - k));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue rows, MergeAxes(ctx, updates, 0, q - 1));
  DYNVM_ASSIGN_OR_RETURN(rows, MergeAxes(ctx, rows, 1, r - k));
  // Each position over the R columns: [N, 1] + 0 * [0, R).
  DYNVM_ASSIGN_OR_RETURN(OnnxValue width, ExtentOf(ctx, table, 1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue columns, Iota(ctx, width, table.type.shape()[1]));
  DYNVM_ASSIGN_OR_RETURN(columns, ctx.Call("multiply", {columns, NodeContext::ConstantI64({0}, true)}));
  DYNVM_ASSIGN_OR_RETURN(position, NewAxis(ctx, position, 1));
  DYNVM_ASSIGN_OR_RETURN(position, ctx.Call("add", {position, columns}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("scatter_elements", {table, position, rows},
                                                 {{"axis", int64_t{0}}, {"reduction", reduction}}));
  return One(ReshapeLike(ctx, out, data));
}

// ReverseSequence: along time_axis, the first sequence_lens[b] entries of each batch
// entry b reversed, the rest kept (the file comment's src[b, t]).
absl::StatusOr<Values> ConvertReverseSequence(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue lens, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t batch_axis, ctx.Int("batch_axis", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t time_axis, ctx.Int("time_axis", 0));
  const int rank = x.type.rank();
  if (rank < 2) return ctx.Invalid(absl::StrFormat("the input must have rank 2 or more, got %d", rank));
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    return ctx.Invalid(absl::StrFormat("batch_axis %d and time_axis %d, expected 0 and 1 in either order", batch_axis,
                                       time_axis));
  }
  if (lens.type.rank() != 1 || lens.type.dtype() != DType::kI64) {
    return ctx.Invalid(absl::StrFormat("sequence_lens must be a 1-D int64 tensor, got %s", lens.type.ToString()));
  }
  if (Differ(lens.type.shape()[0], x.type.shape()[batch_axis])) {
    return ctx.Invalid(absl::StrFormat("%s sequence lengths for a batch of %s", lens.type.shape()[0].ToString(),
                                       x.type.shape()[batch_axis].ToString()));
  }
  // Batch first, so that the batch axis is take's batch_dims.
  std::vector<int64_t> swap(rank);
  for (int i = 0; i < rank; ++i) swap[i] = i < 2 ? 1 - i : i;
  if (time_axis == 0) {
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("transpose", {x}, {{"axes", swap}}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue steps, ExtentOf(ctx, x, 1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue t, Iota(ctx, steps, x.type.shape()[1]));
  DYNVM_ASSIGN_OR_RETURN(lens, NewAxis(ctx, lens, 1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue reversed, ctx.Call("subtract", {lens, NodeContext::ConstantI64({1}, true)}));
  DYNVM_ASSIGN_OR_RETURN(reversed, ctx.Call("subtract", {reversed, t}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue inside, ctx.Call("less", {t, lens}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue src, ctx.Call("where", {inside, reversed, t}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("take", {x, src}, {{"axis", int64_t{1}}, {"batch_dims", int64_t{1}},
                                                                    {"mode", std::string("fast")}}));
  if (time_axis == 0) return One(ctx.Call("transpose", {out}, {{"axes", swap}}));
  return Values{std::move(out)};
}

// The 0-d i64 `v` * `scale` + `offset`, folded when `v` is a constant.
absl::StatusOr<OnnxValue> Affine(const NodeContext& ctx, const OnnxValue& v, int64_t scale, int64_t offset) {
  if (std::optional<std::vector<int64_t>> c = v.ConstantElements()) {
    return NodeContext::ConstantI64({(*c)[0] * scale + offset}, /*scalar=*/true);
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("multiply", {v, NodeContext::ConstantI64({scale}, true)}));
  return ctx.Call("add", {out, NodeContext::ConstantI64({offset}, true)});
}

// The attribute `name` of `count` values, each `least` or more; `fallback` when absent.
absl::StatusOr<std::vector<int64_t>> CountedInts(const NodeContext& ctx, std::string_view name, size_t count,
                                                 int64_t least, std::optional<std::vector<int64_t>> fallback) {
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> values, ctx.Ints(name, std::move(fallback)));
  if (values.size() != count) {
    return ctx.Invalid(absl::StrFormat("attribute '%s' has %d values, expected %d", name, values.size(), count));
  }
  for (const int64_t v : values) {
    if (v < least) {
      return ctx.Invalid(absl::StrFormat("attribute '%s' is [%s]: each value must be %d or more", name,
                                         absl::StrJoin(values, ", "), least));
    }
  }
  return values;
}

// The rank-1 i64 shape of the 0-d i64 `extents`, whose values are `dims`: a constant when
// each is known.
absl::StatusOr<OnnxValue> ShapeVector(const NodeContext& ctx, const std::vector<OnnxValue>& extents,
                                      const std::vector<Dim>& dims) {
  if (std::optional<std::vector<int64_t>> known = ConstantDims(dims)) return NodeContext::ConstantI64(*known);
  std::vector<OnnxValue> parts;
  for (const OnnxValue& e : extents) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue part, NewAxis(ctx, e, 0));
    parts.push_back(std::move(part));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("concatenate", std::move(parts), {{"axis", int64_t{0}}}));
  shape.elements = dims;
  return shape;
}

// Zeros of the unpooled shape (`extents`, of values `dims`) with X's values at I's
// positions in them, flattened: one scatter_elements into the zeros as one axis.
absl::StatusOr<OnnxValue> Unpool(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& indices,
                                 const std::vector<OnnxValue>& extents, const std::vector<Dim>& dims) {
  const std::string dtype(RelayDTypeName(x.type.dtype()));
  const std::optional<std::vector<int64_t>> known = ConstantDims(dims);
  OnnxValue zeros;
  if (known) {
    int64_t total = 1;
    for (const int64_t d : *known) total *= d;
    DYNVM_ASSIGN_OR_RETURN(zeros, ctx.Call("zeros", {}, {{"shape", std::vector<int64_t>{total}}, {"dtype", dtype}}));
  } else {
    OnnxValue total = extents[0];
    for (size_t a = 1; a < extents.size(); ++a) {
      DYNVM_ASSIGN_OR_RETURN(total, ctx.Call("multiply", {total, extents[a]}));
    }
    DYNVM_ASSIGN_OR_RETURN(total, NewAxis(ctx, total, 0));
    DYNVM_ASSIGN_OR_RETURN(zeros, ctx.Call("dyn.zeros", {total}, {{"dtype", dtype}}));
  }
  const kernels::Attrs flat = {{"newshape", std::vector<int64_t>{-1}}};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue positions, ctx.Call("reshape", {indices}, flat));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue values, ctx.Call("reshape", {x}, flat));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("scatter_elements", {zeros, positions, values},
                                               {{"axis", int64_t{0}}, {"reduction", std::string("update")}}));
  // allowzero: an extent of 0 is one, not a copy of the flat input's.
  if (known) return ctx.Call("reshape", {y}, {{"newshape", *known}, {"allowzero", int64_t{1}}});
  DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ShapeVector(ctx, extents, dims));
  DYNVM_ASSIGN_OR_RETURN(y, ctx.Call("dyn.reshape", {y, shape}, {{"allowzero", int64_t{1}}}));
  return ctx.Narrow(y, Type::Tensor(x.type.dtype(), dims));
}

// `y`, of the unpooled shape (`extents`, of values `dims`), extended with zeros at the end
// of each axis to `output_shape`, which may not be smaller on any axis.
absl::StatusOr<OnnxValue> ExtendTo(const NodeContext& ctx, const OnnxValue& y, const OnnxValue& output_shape,
                                   const std::vector<OnnxValue>& extents, const std::vector<Dim>& dims) {
  const int rank = y.type.rank();
  if (output_shape.type.rank() != 1 || Differ(output_shape.type.shape()[0], Dim(rank)) ||
      output_shape.type.dtype() != DType::kI64) {
    return ctx.Invalid(absl::StrFormat("output_shape must be a 1-D int64 tensor of %d values (X's rank), got %s",
                                       rank, output_shape.type.ToString()));
  }
  const std::optional<std::vector<int64_t>> target = output_shape.ConstantElements();
  const std::optional<std::vector<int64_t>> known = ConstantDims(dims);
  if (target && known) {
    std::vector<int64_t> width;
    for (int a = 0; a < rank; ++a) {
      if ((*target)[a] < (*known)[a]) {
        return ctx.Invalid(absl::StrFormat("output_shape [%s] is smaller than the unpooled shape [%s] on axis %d",
                                           absl::StrJoin(*target, ", "), absl::StrJoin(*known, ", "), a));
      }
      width.push_back(0);
      width.push_back((*target)[a] - (*known)[a]);
    }
    return ctx.Call("nn.pad", {y}, {{"pad_width", width}, {"pad_mode", std::string("constant")}});
  }
  // (0, output_shape[a] - unpooled[a]) pairs, flattened, for dyn.nn.pad, whose kernel
  // refuses a negative one: an output_shape smaller than the unpooled shape.
  DYNVM_ASSIGN_OR_RETURN(OnnxValue unpooled, ShapeVector(ctx, extents, dims));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue after, ctx.Call("subtract", {output_shape, unpooled}));
  DYNVM_ASSIGN_OR_RETURN(after, NewAxis(ctx, after, 1));
  const OnnxValue zeros = NodeContext::ConstantI64(std::vector<int64_t>(rank, 0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue before, NewAxis(ctx, zeros, 1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue pairs, ctx.Call("concatenate", {before, after}, {{"axis", int64_t{1}}}));
  DYNVM_ASSIGN_OR_RETURN(pairs, ctx.Call("reshape", {pairs}, {{"newshape", std::vector<int64_t>{-1}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call("dyn.nn.pad", {y, pairs}, {{"pad_mode", std::string("constant")}}));
  if (!output_shape.elements) return out;
  return ctx.Narrow(out, Type::Tensor(y.type.dtype(), *output_shape.elements));
}

// MaxUnpool: X's values placed at the positions I gives them (MaxPool's indices, into
// the whole output flattened) in zeros of [N, C, (D - 1) * stride + kernel - pads...],
// then extended to output_shape when it is given.
absl::StatusOr<Values> ConvertMaxUnpool(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue indices, ctx.Input(1));
  const int rank = x.type.rank();
  if (rank < 3) {
    return ctx.Invalid(absl::StrFormat("X must be [N, C, D1, ...] with one spatial axis or more, got %s",
                                       x.type.ToString()));
  }
  bool fits = indices.type.rank() == rank && indices.type.dtype() == DType::kI64;
  for (int a = 0; fits && a < rank; ++a) fits = !Differ(indices.type.shape()[a], x.type.shape()[a]);
  if (!fits) {
    return ctx.Invalid(absl::StrFormat("I must be an int64 tensor of X's shape, got %s for X %s",
                                       indices.type.ToString(), x.type.ToString()));
  }
  const size_t spatial = rank - 2;
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, CountedInts(ctx, "kernel_shape", spatial, 1, {}));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                         CountedInts(ctx, "strides", spatial, 1, std::vector<int64_t>(spatial, 1)));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                         CountedInts(ctx, "pads", 2 * spatial, 0, std::vector<int64_t>(2 * spatial, 0)));
  const std::optional<OnnxValue> output_shape = ctx.OptionalInput(2);
  if (output_shape && std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
    return ctx.Unimplemented("pads together with output_shape: ONNX's reference implementations disagree on "
                             "whether the pads still shrink the unpooled shape");
  }
  std::vector<OnnxValue> extents;
  std::vector<Dim> dims;
  for (int a = 0; a < rank; ++a) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue extent, ExtentOf(ctx, x, a));
    Dim dim = x.type.shape()[a];
    if (a >= 2) {
      const size_t i = a - 2;
      const int64_t offset = kernel[i] - strides[i] - pads[i] - pads[i + spatial];
      DYNVM_ASSIGN_OR_RETURN(extent, Affine(ctx, extent, strides[i], offset));
      dim = dim * Dim(strides[i]) + Dim(offset);
      if (dim.is_const() && dim.const_value() < 0) {
        return ctx.Invalid(absl::StrFormat("spatial axis %d unpools to a negative extent %d: the pads exceed it",
                                           i, dim.const_value()));
      }
    }
    extents.push_back(std::move(extent));
    dims.push_back(std::move(dim));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, Unpool(ctx, x, indices, extents, dims));
  if (!output_shape) return Values{std::move(y)};
  return One(ExtendTo(ctx, y, *output_shape, extents, dims));
}

}  // namespace

void AddIndexingConverters(ConverterTable& table) {
  table.insert({
      {"GatherND", {ConvertGatherND, {"batch_dims"}}},
      {"ScatterND", {ConvertScatterND, {"reduction"}}},
      {"ReverseSequence", {ConvertReverseSequence, {"batch_axis", "time_axis"}}},
      {"MaxUnpool", {ConvertMaxUnpool, {"kernel_shape", "pads", "strides"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
