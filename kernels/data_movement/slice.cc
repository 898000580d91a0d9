// Kernels that cut tensors along axes or join them: concatenate, split, dyn.split (ONNX
// Split: the sizes are an input tensor), strided_slice, dyn.strided_slice (ONNX Slice:
// the bounds are input tensors), nn.pad and dyn.nn.pad (its widths an input). Every dtype
// is supported (elements move by size); outputs have the input's dtype.
//
// concatenate and both splits share one loop: each of the `outer` rows (the product of the
// extents before the axis) of the whole tensor is the pieces' rows laid end to end, so
// a row is one memcpy per piece. Both strided slices plan every axis the same way
// (PlanSlice) and are one strided copy; nn.pad writes each output row as
// [left pad][source row][right pad].
#include "kernels/data_movement/slice.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"

namespace dynvm::kernels {
namespace {

using internal::CheckOutput;
using internal::Dims;
using internal::InferShapeFn;
using internal::SingleShapeFn;

// ---------------------------------------------------------------------------------------
// concatenate, split

struct AxisState {
  int64_t axis;
};

absl::StatusOr<std::shared_ptr<const void>> BindConcatenate(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis"}));
  DYNVM_ASSIGN_OR_RETURN(int64_t axis, GetIntAttr(attrs, "axis", 0));
  return std::shared_ptr<const void>(std::make_shared<AxisState>(AxisState{axis}));
}

// Pointers to the pieces' data, one per input or output.
using Pieces = absl::InlinedVector<char*, 8>;

// Copies between `whole` ([outer, sum of piece_bytes] bytes) and the pieces ([outer,
// piece_bytes[j]] bytes each): into `whole` when `join`, out of it otherwise.
void JoinOrSplit(bool join, char* whole, const Pieces& pieces, const Dims& piece_bytes,
                 int64_t outer, ThreadPool& pool) {
  int64_t row_bytes = 0;
  for (int64_t b : piece_bytes) row_bytes += b;
  // Copies row `r`, each piece split over `piece_pool` if given.
  auto copy_row = [&](int64_t r, ThreadPool* piece_pool) {
    char* w = whole + r * row_bytes;
    for (size_t j = 0; j < pieces.size(); ++j) {
      const size_t n = static_cast<size_t>(piece_bytes[j]);
      char* p = pieces[j] + r * piece_bytes[j];
      if (piece_pool != nullptr) {
        internal::ParallelCopy(join ? w : p, join ? p : w, n, *piece_pool);
      } else if (n != 0) {
        std::memcpy(join ? w : p, join ? p : w, n);
      }
      w += n;
    }
  };
  // Long rows go one at a time with their pieces spread over the pool; short rows are
  // spread over the pool whole.
  if (row_bytes >= (int64_t{1} << 20)) {
    for (int64_t r = 0; r < outer; ++r) copy_row(r, &pool);
    return;
  }
  pool.ParallelFor(outer, internal::GrainForBytes(2 * row_bytes), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) copy_row(r, nullptr);
  });
}

// The products of the extents before and after `axis` of `shape`.
std::pair<int64_t, int64_t> OuterInner(const Shape& shape, int axis) {
  const absl::Span<const int64_t> s = shape;
  return {internal::ProductOf(s.first(axis)), internal::ProductOf(s.subspan(axis + 1))};
}

absl::StatusOr<int> ConcatAxis(const AxisState& s, absl::Span<NDArrayObj* const> inputs) {
  if (inputs.empty()) return absl::InvalidArgumentError("concatenate: needs at least one input");
  const Shape& first = inputs[0]->shape();
  if (first.empty()) return absl::InvalidArgumentError("concatenate: inputs must have rank >= 1");
  return internal::NormalizeAxis("concatenate", s.axis, static_cast<int>(first.size()));
}

absl::StatusOr<Shape> ConcatenateShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(int axis, ConcatAxis(*static_cast<const AxisState*>(state), inputs));
  Shape out = inputs[0]->shape();
  out[axis] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NDArrayObj& in = *inputs[i];
    bool fits = in.ndim() == static_cast<int>(out.size());
    for (size_t d = 0; fits && d < out.size(); ++d) {
      fits = static_cast<int>(d) == axis || in.shape()[d] == out[d];
    }
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "concatenate: input %d has shape %s, which does not match %s outside axis %d", i,
          ShapeToString(in.shape()), ShapeToString(inputs[0]->shape()), axis));
    }
    if (in.dtype() != inputs[0]->dtype()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("concatenate: input %d has dtype %s, expected %s", i,
                          DTypeName(in.dtype()), DTypeName(inputs[0]->dtype())));
    }
    if (__builtin_add_overflow(out[axis], in.shape()[axis], &out[axis])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("concatenate: the extents along axis %d overflow", axis));
    }
  }
  DYNVM_RETURN_IF_ERROR(internal::ValidateShape("concatenate", out));
  return out;
}

absl::Status ConcatenateKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(Shape shape, ConcatenateShape(call.state, call.inputs()));
  const NDArrayObj& out = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(CheckOutput("concatenate", out, call.args[0]->dtype(), shape));
  if (out.num_elements() == 0) return absl::OkStatus();
  DYNVM_ASSIGN_OR_RETURN(int axis,
                         ConcatAxis(*static_cast<const AxisState*>(call.state), call.inputs()));
  const auto [outer, inner] = OuterInner(shape, axis);
  const int64_t elem = static_cast<int64_t>(DTypeSize(out.dtype()));
  Pieces pieces;
  Dims bytes;
  for (NDArrayObj* in : call.inputs()) {
    pieces.push_back(static_cast<char*>(in->data()));
    bytes.push_back(in->shape()[axis] * inner * elem);
  }
  JoinOrSplit(/*join=*/true, static_cast<char*>(out.data()), pieces, bytes, outer, *call.pool);
  return absl::OkStatus();
}

struct SplitState {
  int64_t axis;
  int64_t sections;              // > 0 for equal sections, else 0 and `indices` used
  std::vector<int64_t> indices;  // split points, ascending
};

absl::StatusOr<std::shared_ptr<const void>> BindSplit(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"indices_or_sections", "axis"}));
  auto state = std::make_shared<SplitState>();
  DYNVM_ASSIGN_OR_RETURN(state->axis, GetIntAttr(attrs, "axis", 0));
  auto it = attrs.find("indices_or_sections");
  if (it != attrs.end() && std::holds_alternative<int64_t>(it->second)) {
    state->sections = std::get<int64_t>(it->second);
    if (state->sections <= 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "attribute 'indices_or_sections' is %d: sections must be positive", state->sections));
    }
  } else {
    state->sections = 0;
    DYNVM_ASSIGN_OR_RETURN(state->indices, GetIntsAttr(attrs, "indices_or_sections"));
    for (size_t i = 0; i < state->indices.size(); ++i) {
      if (state->indices[i] < 0 || (i > 0 && state->indices[i] < state->indices[i - 1])) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "attribute 'indices_or_sections' [%s] must be ascending and non-negative",
            absl::StrJoin(state->indices, ", ")));
      }
    }
  }
  return std::shared_ptr<const void>(std::move(state));
}

// The extent of each part along the split axis, after checking `num_outputs` and
// `in`'s rank and extent.
absl::StatusOr<Dims> SplitParts(const SplitState& s, const NDArrayObj& in, int num_outputs,
                                int* axis) {
  if (in.ndim() == 0) return absl::InvalidArgumentError("split: input must have rank >= 1");
  DYNVM_ASSIGN_OR_RETURN(*axis, internal::NormalizeAxis("split", s.axis, in.ndim()));
  const int64_t dim = in.shape()[*axis];
  Dims parts;
  if (s.sections > 0) {
    if (dim % s.sections != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "split: axis %d of extent %d does not divide into %d sections", *axis, dim, s.sections));
    }
    parts.assign(static_cast<size_t>(s.sections), dim / s.sections);
  } else {
    int64_t begin = 0;
    for (int64_t index : s.indices) {
      if (index > dim) {
        return absl::InvalidArgumentError(
            absl::StrFormat("split: index %d past axis %d of extent %d", index, *axis, dim));
      }
      parts.push_back(index - begin);
      begin = index;
    }
    parts.push_back(dim - begin);
  }
  DYNVM_RETURN_IF_ERROR(
      internal::CheckArity("split", "outputs", num_outputs, static_cast<int>(parts.size())));
  return parts;
}

absl::Status SplitShapeFn(const ShapeCall& call) {
  int axis;
  DYNVM_ASSIGN_OR_RETURN(Dims parts, SplitParts(*static_cast<const SplitState*>(call.state),
                                                *call.inputs[0], call.num_outputs, &axis));
  for (size_t j = 0; j < parts.size(); ++j) {
    call.output_shapes[j] = call.inputs[0]->shape();
    call.output_shapes[j][axis] = parts[j];
  }
  return absl::OkStatus();
}

// Writes the parts of input 0 along `axis`, of extents `parts`, to the call's outputs.
absl::Status WriteParts(std::string_view op, const KernelCall& call, const Dims& parts, int axis) {
  const NDArrayObj& in = *call.args[0];
  const auto [outer, inner] = OuterInner(in.shape(), axis);
  const int64_t elem = static_cast<int64_t>(DTypeSize(in.dtype()));
  Pieces pieces;
  Dims bytes;
  for (size_t j = 0; j < parts.size(); ++j) {
    const NDArrayObj& out = *call.outputs()[j];
    Shape shape = in.shape();
    shape[axis] = parts[j];
    DYNVM_RETURN_IF_ERROR(CheckOutput(op, out, in.dtype(), shape, static_cast<int>(j)));
    pieces.push_back(static_cast<char*>(out.data()));
    bytes.push_back(parts[j] * inner * elem);
  }
  if (in.num_elements() == 0) return absl::OkStatus();
  JoinOrSplit(/*join=*/false, static_cast<char*>(in.data()), pieces, bytes, outer, *call.pool);
  return absl::OkStatus();
}

absl::Status SplitKernel(const KernelCall& call) {
  int axis;
  DYNVM_ASSIGN_OR_RETURN(Dims parts, SplitParts(*static_cast<const SplitState*>(call.state),
                                                *call.args[0], call.num_outputs, &axis));
  return WriteParts("split", call, parts, axis);
}

// ---------------------------------------------------------------------------------------
// dyn.split: ONNX Split (opset 13) whose sizes are a run-time input. The number of
// parts is the number of outputs the call has, fixed when the kernel is bound.

absl::StatusOr<std::shared_ptr<const void>> BindDynSplit(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis"}));
  auto state = std::make_shared<SplitState>();
  DYNVM_ASSIGN_OR_RETURN(state->axis, GetIntAttr(attrs, "axis", 0));
  return std::shared_ptr<const void>(std::move(state));
}

// The extent of each part along the split axis (the values of `sizes`), after checking
// them against `num_outputs` and the extent of `in` along the axis, which it stores in
// `axis`.
absl::StatusOr<Dims> DynSplitParts(const SplitState& s, const NDArrayObj& in,
                                   const NDArrayObj& sizes, int num_outputs, int* axis) {
  if (in.ndim() == 0) return absl::InvalidArgumentError("dyn.split: input must have rank >= 1");
  DYNVM_ASSIGN_OR_RETURN(*axis, internal::NormalizeAxis("dyn.split", s.axis, in.ndim()));
  DYNVM_ASSIGN_OR_RETURN(Dims parts, internal::ReadIntVector("dyn.split", "sizes", sizes));
  if (num_outputs < 1 || parts.size() != static_cast<size_t>(num_outputs)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("dyn.split: sizes [%s] has %d values: expected one per output, %d",
                        absl::StrJoin(parts, ", "), parts.size(), num_outputs));
  }
  const int64_t dim = in.shape()[*axis];
  int64_t total = 0;
  bool overflow = false;
  for (int64_t p : parts) {
    if (p < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("dyn.split: sizes [%s] has the negative size %d: expected sizes >= 0",
                          absl::StrJoin(parts, ", "), p));
    }
    overflow |= __builtin_add_overflow(total, p, &total);
  }
  if (overflow || total != dim) {
    return absl::InvalidArgumentError(
        absl::StrFormat("dyn.split: sizes [%s] sum to %s: expected the extent %d of axis %d of %s",
                        absl::StrJoin(parts, ", "),
                        overflow ? std::string("more than int64 holds") : absl::StrCat(total), dim,
                        *axis, ShapeToString(in.shape())));
  }
  return parts;
}

absl::Status DynSplitShapeFn(const ShapeCall& call) {
  int axis;
  DYNVM_ASSIGN_OR_RETURN(
      Dims parts, DynSplitParts(*static_cast<const SplitState*>(call.state), *call.inputs[0],
                                *call.inputs[1], call.num_outputs, &axis));
  for (size_t j = 0; j < parts.size(); ++j) {
    call.output_shapes[j] = call.inputs[0]->shape();
    call.output_shapes[j][axis] = parts[j];
  }
  return absl::OkStatus();
}

absl::Status DynSplitKernel(const KernelCall& call) {
  int axis;
  DYNVM_ASSIGN_OR_RETURN(Dims parts, DynSplitParts(*static_cast<const SplitState*>(call.state),
                                                   *call.args[0], *call.args[1], call.num_outputs,
                                                   &axis));
  return WriteParts("dyn.split", call, parts, axis);
}

// ---------------------------------------------------------------------------------------
// strided_slice

struct StridedSliceState {
  std::vector<int64_t> begin, end, strides;
  std::optional<std::vector<int64_t>> axes;  // absent: begin[i] is for axis i
  bool size_mode;                            // slice_mode "size": end holds sizes
};

absl::StatusOr<std::shared_ptr<const void>> BindStridedSlice(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"begin", "end", "strides", "axes", "slice_mode"}));
  auto state = std::make_shared<StridedSliceState>();
  DYNVM_ASSIGN_OR_RETURN(state->begin, GetIntsAttr(attrs, "begin"));
  DYNVM_ASSIGN_OR_RETURN(state->end, GetIntsAttr(attrs, "end"));
  DYNVM_ASSIGN_OR_RETURN(state->strides, GetIntsAttr(attrs, "strides", {}));
  if (attrs.contains("axes")) {
    DYNVM_ASSIGN_OR_RETURN(state->axes, GetIntsAttr(attrs, "axes"));
    if (state->axes->size() != state->begin.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("attribute 'axes' has %d values but 'begin' has %d", state->axes->size(),
                          state->begin.size()));
    }
  }
  DYNVM_ASSIGN_OR_RETURN(std::string mode, GetStringAttr(attrs, "slice_mode", "end"));
  if (mode != "end" && mode != "size") {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'slice_mode' is '%s': expected 'end' or 'size'", mode));
  }
  state->size_mode = mode == "size";
  if (state->end.size() != state->begin.size() || state->strides.size() > state->begin.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attributes 'begin', 'end' and 'strides' have %d, %d and %d values: expected 'end' as "
        "many as 'begin' and 'strides' at most as many",
        state->begin.size(), state->end.size(), state->strides.size()));
  }
  for (int64_t stride : state->strides) {
    // -INT64_MIN does not exist; no axis is that long anyway.
    if (stride == 0 || stride == std::numeric_limits<int64_t>::min()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("attribute 'strides' has a step of %d", stride));
    }
  }
  return std::shared_ptr<const void>(std::move(state));
}

// The slice along one axis: `len` elements from `start`, `step` apart.
struct AxisSlice {
  int64_t start = 0, step = 1, len = 0;
};

// numpy's clamping: a negative bound counts from the end, then bounds clamp to the
// axis ([0, dim] going forward, [-1, dim - 1] going backward).
AxisSlice SliceAxis(int64_t dim, std::optional<int64_t> begin, std::optional<int64_t> end,
                    int64_t step) {
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += dim;
    return std::clamp(v, lo, hi);
  };
  AxisSlice a;
  a.step = step;
  if (step > 0) {
    a.start = begin ? clamp(*begin, 0, dim) : 0;
    const int64_t stop = end ? clamp(*end, 0, dim) : dim;
    a.len = stop > a.start ? (stop - a.start - 1) / step + 1 : 0;
  } else {
    a.start = begin ? clamp(*begin, -1, dim - 1) : dim - 1;
    const int64_t stop = end ? clamp(*end, -1, dim - 1) : -1;
    a.len = a.start > stop ? (a.start - stop - 1) / -step + 1 : 0;
  }
  return a;
}

// What to cut, shared by strided_slice (from attributes) and dyn.strided_slice (from
// input values): entry i slices axis axes[i] (absent: axis i) from begin[i] to end[i]
// by strides[i] (missing: 1). `begin`, `end` and `axes` have one length and no step is
// 0 or INT64_MIN (callers check); `op` names the kernel in errors.
struct SliceRequest {
  std::string_view op;
  absl::Span<const int64_t> begin, end, strides;
  std::optional<absl::Span<const int64_t>> axes;
  bool size_mode = false;  // end[i] is a size (negative: to the end); strides ignored
};

using SlicePlan = absl::InlinedVector<AxisSlice, 6>;

// The slice of every axis of a tensor of shape `in`; InvalidArgument for an axis out of
// range or sliced twice.
absl::StatusOr<SlicePlan> PlanSlice(const SliceRequest& r, const Shape& in) {
  const int rank = static_cast<int>(in.size());
  SlicePlan plan;
  absl::InlinedVector<bool, kMaxRank> given(in.size(), false);
  for (int i = 0; i < rank; ++i) plan.push_back(SliceAxis(in[i], std::nullopt, std::nullopt, 1));
  if (!r.axes && r.begin.size() > in.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d begin values for rank %d", r.op, r.begin.size(), rank));
  }
  for (size_t i = 0; i < r.begin.size(); ++i) {
    int axis = static_cast<int>(i);
    if (r.axes) {
      DYNVM_ASSIGN_OR_RETURN(axis, internal::NormalizeAxis(r.op, (*r.axes)[i], rank));
    }
    if (given[axis]) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: axis %d sliced twice", r.op, axis));
    }
    given[axis] = true;
    const int64_t step = i < r.strides.size() && !r.size_mode ? r.strides[i] : 1;
    std::optional<int64_t> end = r.end[i];
    if (r.size_mode) {  // a size from the (normalised) begin; negative: to the end
      const int64_t from = SliceAxis(in[axis], r.begin[i], std::nullopt, 1).start;
      end = r.end[i] < 0 || r.end[i] > in[axis] - from ? in[axis] : from + r.end[i];
    }
    plan[axis] = SliceAxis(in[axis], r.begin[i], end, step);
  }
  return plan;
}

Shape SliceShape(const SlicePlan& plan) {
  Shape out;
  for (const AxisSlice& a : plan) out.push_back(a.len);
  return out;
}

// Writes the slice `plan` of `in` to `out`, after checking `out`: one strided copy.
absl::Status CopySlice(std::string_view op, const SlicePlan& plan, const NDArrayObj& in,
                       const NDArrayObj& out, ThreadPool& pool) {
  const Shape shape = SliceShape(plan);
  DYNVM_RETURN_IF_ERROR(CheckOutput(op, out, in.dtype(), shape));
  if (out.num_elements() == 0) return absl::OkStatus();  // starts may lie outside the input
  const int64_t elem = static_cast<int64_t>(DTypeSize(in.dtype()));
  const Dims in_strides = internal::ContiguousStrides(in.shape());
  Dims src_strides;
  int64_t offset = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    offset += plan[i].start * in_strides[i];
    // With one element the step is never taken (and a huge one would overflow).
    src_strides.push_back(plan[i].len > 1 ? plan[i].step * in_strides[i] : 0);
  }
  internal::CopyStrided(static_cast<size_t>(elem), shape, out.data(),
                        internal::ContiguousStrides(shape),
                        static_cast<const char*>(in.data()) + offset * elem, src_strides, pool);
  return absl::OkStatus();
}

SliceRequest RequestOf(const StridedSliceState& s) {
  SliceRequest r{"strided_slice", s.begin, s.end, s.strides, std::nullopt, s.size_mode};
  if (s.axes) r.axes = *s.axes;
  return r;
}

absl::StatusOr<Shape> StridedSliceShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(
      SlicePlan plan,
      PlanSlice(RequestOf(*static_cast<const StridedSliceState*>(state)), inputs[0]->shape()));
  return SliceShape(plan);
}

absl::Status StridedSliceKernel(const KernelCall& call) {
  const NDArrayObj& in = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(
      SlicePlan plan,
      PlanSlice(RequestOf(*static_cast<const StridedSliceState*>(call.state)), in.shape()));
  return CopySlice("strided_slice", plan, in, *call.args[1], *call.pool);
}

// ---------------------------------------------------------------------------------------
// dyn.strided_slice

constexpr const char* kDynSlice = "dyn.strided_slice";

// The values of dyn.strided_slice's index inputs (ONNX Slice's starts, ends, axes,
// steps) with the defaults filled in.
struct DynSliceIndices {
  Dims starts, ends, axes, steps;
};

// Reads and checks the index inputs `inputs[1..]` for data of rank `rank`: 1-D i32/i64
// tensors of one length; without axes, at most one entry per axis; no step of 0. A step
// of INT64_MIN becomes -INT64_MAX, which takes the same single element.
absl::StatusOr<DynSliceIndices> ReadDynSliceIndices(absl::Span<NDArrayObj* const> inputs,
                                                    int rank) {
  if (inputs.size() < 3 || inputs.size() > 5) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected 3 to 5 inputs (data, starts, ends [, axes [, steps]]), got %d", kDynSlice,
        inputs.size()));
  }
  const char* const names[] = {"starts", "ends", "axes", "steps"};
  Dims values[4];
  for (size_t i = 1; i < inputs.size(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(values[i - 1],
                           internal::ReadIntVector(kDynSlice, names[i - 1], *inputs[i]));
  }
  const size_t n = values[0].size();
  for (size_t i = 1; i + 1 < inputs.size(); ++i) {
    if (values[i].size() != n) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s has %d values but starts has %d: expected as many", kDynSlice,
                          names[i], values[i].size(), n));
    }
  }
  DynSliceIndices ix{std::move(values[0]), std::move(values[1]), std::move(values[2]),
                     std::move(values[3])};
  if (inputs.size() < 4) {
    if (n > static_cast<size_t>(rank)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d starts without axes for data of rank %d: expected at most one per axis",
          kDynSlice, n, rank));
    }
    for (size_t i = 0; i < n; ++i) ix.axes.push_back(static_cast<int64_t>(i));
  }
  if (inputs.size() < 5) ix.steps.assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    if (ix.steps[i] == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: steps has a 0 at position %d: expected nonzero steps", kDynSlice, i));
    }
    if (ix.steps[i] == std::numeric_limits<int64_t>::min()) {
      ix.steps[i] = -std::numeric_limits<int64_t>::max();
    }
  }
  return ix;
}

absl::StatusOr<SlicePlan> PlanDynSlice(absl::Span<NDArrayObj* const> inputs) {
  const Shape& in = inputs[0]->shape();
  DYNVM_ASSIGN_OR_RETURN(DynSliceIndices ix,
                         ReadDynSliceIndices(inputs, static_cast<int>(in.size())));
  return PlanSlice(SliceRequest{kDynSlice, ix.starts, ix.ends, ix.steps, ix.axes}, in);
}

absl::StatusOr<Shape> DynStridedSliceShape(const void*, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(SlicePlan plan, PlanDynSlice(inputs));
  return SliceShape(plan);
}

absl::Status DynStridedSliceKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(SlicePlan plan, PlanDynSlice(call.inputs()));
  return CopySlice(kDynSlice, plan, *call.args[0], *call.outputs()[0], *call.pool);
}

// ---------------------------------------------------------------------------------------
// nn.pad

enum class PadMode { kConstant, kEdge, kReflect };

struct PadState {
  std::vector<int64_t> pad_width;   // [before_0, after_0, before_1, after_1, ...]
  std::optional<double> pad_value;  // the attribute, if given
  PadMode mode;
  bool width_input = false;  // dyn.nn.pad: pad_width is the second input
};

absl::Status CheckPadWidth(std::string_view op, absl::Span<const int64_t> width) {
  if (width.size() % 2 != 0 || std::any_of(width.begin(), width.end(), [](int64_t p) { return p < 0; })) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: pad_width [%s] must be non-negative (before, after) pairs, flattened", op,
        absl::StrJoin(width, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<PadMode> ParsePadMode(const Attrs& attrs) {
  DYNVM_ASSIGN_OR_RETURN(std::string mode, GetStringAttr(attrs, "pad_mode", "constant"));
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "reflect") return PadMode::kReflect;
  return absl::InvalidArgumentError(absl::StrFormat(
      "attribute 'pad_mode' is '%s': expected 'constant', 'edge' or 'reflect'", mode));
}

absl::StatusOr<std::shared_ptr<const void>> BindPad(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"pad_width", "pad_value", "pad_mode"}));
  auto state = std::make_shared<PadState>();
  DYNVM_ASSIGN_OR_RETURN(state->pad_width, GetIntsAttr(attrs, "pad_width"));
  DYNVM_RETURN_IF_ERROR(CheckPadWidth("nn.pad", state->pad_width));
  if (attrs.contains("pad_value")) {
    DYNVM_ASSIGN_OR_RETURN(state->pad_value, GetFloatAttr(attrs, "pad_value"));
  }
  DYNVM_ASSIGN_OR_RETURN(state->mode, ParsePadMode(attrs));
  return std::shared_ptr<const void>(std::move(state));
}

absl::StatusOr<std::shared_ptr<const void>> BindDynPad(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"pad_mode"}));
  auto state = std::make_shared<PadState>();
  state->width_input = true;
  DYNVM_ASSIGN_OR_RETURN(state->mode, ParsePadMode(attrs));
  return std::shared_ptr<const void>(std::move(state));
}

// A call's padding: the bound state with, for dyn.nn.pad, pad_width read from the
// second input; and the pad value's input, if any (nn.pad's second, dyn.nn.pad's third).
struct PadCall {
  PadState state;
  const NDArrayObj* value;
};

absl::StatusOr<PadCall> ResolvePad(const void* bound, absl::Span<NDArrayObj* const> inputs) {
  const auto& s = *static_cast<const PadState*>(bound);
  const char* op = s.width_input ? "dyn.nn.pad" : "nn.pad";
  const size_t first_value = s.width_input ? 2 : 1;
  if (inputs.size() != first_value && inputs.size() != first_value + 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected %d or %d inputs (data%s, optional pad value), got %d", op, first_value,
        first_value + 1, s.width_input ? ", pad_width" : "", inputs.size()));
  }
  PadCall call{s, inputs.size() > first_value ? inputs[first_value] : nullptr};
  if (s.width_input) {
    DYNVM_ASSIGN_OR_RETURN(const Dims width, internal::ReadIntVector(op, "pad_width", *inputs[1]));
    call.state.pad_width.assign(width.begin(), width.end());
    DYNVM_RETURN_IF_ERROR(CheckPadWidth(op, call.state.pad_width));
  }
  return call;
}

// The output shape of `call` on `in`.
absl::StatusOr<Shape> PadOutShape(const PadCall& call, const NDArrayObj& in) {
  const PadState& s = call.state;
  if (s.pad_width.size() != 2 * in.shape().size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("nn.pad: 'pad_width' has %d values for rank %d: expected %d",
                        s.pad_width.size(), in.ndim(), 2 * in.ndim()));
  }
  if (call.value != nullptr) {
    if (s.pad_value) {
      return absl::InvalidArgumentError("nn.pad: pad value given both as attribute and input");
    }
    DYNVM_RETURN_IF_ERROR(internal::CheckScalar("nn.pad", "pad value", *call.value));
  }
  Shape out;
  for (int i = 0; i < in.ndim(); ++i) {
    const int64_t dim = in.shape()[i], before = s.pad_width[2 * i], after = s.pad_width[2 * i + 1];
    if (s.mode == PadMode::kReflect && (before >= dim || after >= dim) && before + after > 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "nn.pad: reflect padding (%d, %d) of axis %d needs pads below its extent %d", before,
          after, i, dim));
    }
    if (s.mode == PadMode::kEdge && dim == 0 && before + after > 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("nn.pad: edge padding of axis %d, which is empty", i));
    }
    int64_t extent;
    if (__builtin_add_overflow(dim, before, &extent) ||
        __builtin_add_overflow(extent, after, &extent)) {
      extent = -1;  // rejected below
    }
    out.push_back(extent);
  }
  DYNVM_RETURN_IF_ERROR(internal::ValidateShape("nn.pad", out));
  return out;
}

absl::StatusOr<Shape> PadShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(const PadCall call, ResolvePad(state, inputs));
  return PadOutShape(call, *inputs[0]);
}

// Where output coordinate `o` of an axis reads from, or -1 for the constant.
int64_t PadSource(PadMode mode, int64_t o, int64_t before, int64_t dim) {
  const int64_t c = o - before;
  if (c >= 0 && c < dim) return c;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return c < 0 ? 0 : dim - 1;
    case PadMode::kReflect: return c < 0 ? -c : 2 * (dim - 1) - c;
  }
  return -1;
}

template <typename T>
void PadRows(const PadState& s, const NDArrayObj& in, const NDArrayObj& out, T value,
             ThreadPool& pool) {
  const int rank = in.ndim();
  const T* src = static_cast<const T*>(in.data());
  T* dst = static_cast<T*>(out.data());
  const int64_t dim = in.shape()[rank - 1], len = out.shape()[rank - 1];
  const int64_t before = s.pad_width[2 * rank - 2];
  const absl::Span<const int64_t> outer = absl::MakeConstSpan(out.shape()).first(rank - 1);
  const Dims in_strides = internal::ContiguousStrides(in.shape());
  const Dims out_strides = internal::ContiguousStrides(out.shape());
  const int64_t rows = internal::ProductOf(outer);
  pool.ParallelFor(rows, internal::GrainForBytes(2 * len * sizeof(T)), [&](int64_t b, int64_t e) {
    internal::Odometer od(outer, absl::MakeConstSpan(out_strides).first(rank - 1),
                          absl::MakeConstSpan(in_strides).first(rank - 1));
    od.Seek(b);
    for (int64_t r = b; r < e; ++r, od.Next()) {
      T* d = dst + od.offset0();
      int64_t from = 0;  // the source row's offset, or -1 if the row is all padding
      for (int i = 0; i < rank - 1 && from >= 0; ++i) {
        const int64_t c = PadSource(s.mode, od.index()[i], s.pad_width[2 * i], in.shape()[i]);
        from = c < 0 ? -1 : from + c * in_strides[i];
      }
      if (from < 0 || dim == 0) {
        std::fill_n(d, len, value);
        continue;
      }
      const T* row = src + from;
      for (int64_t j = 0; j < before; ++j) {
        const int64_t c = PadSource(s.mode, j, before, dim);
        d[j] = c < 0 ? value : row[c];
      }
      std::copy_n(row, dim, d + before);
      for (int64_t j = before + dim; j < len; ++j) {
        const int64_t c = PadSource(s.mode, j, before, dim);
        d[j] = c < 0 ? value : row[c];
      }
    }
  });
}

absl::Status PadKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const PadCall pad, ResolvePad(call.state, call.inputs()));
  const PadState& s = pad.state;
  const NDArrayObj& in = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(Shape shape, PadOutShape(pad, in));
  const NDArrayObj& out = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(CheckOutput("nn.pad", out, in.dtype(), shape));
  // The pad value as an element of the data's dtype: the input's bits if it has that
  // dtype, else converted.
  uint64_t value = 0;
  if (pad.value != nullptr && pad.value->dtype() == in.dtype()) {
    std::memcpy(&value, pad.value->data(), DTypeSize(in.dtype()));
  } else {
    const double v =
        pad.value != nullptr ? internal::LoadAsDouble(*pad.value, 0) : s.pad_value.value_or(0.0);
    internal::StoreFromDouble(v, in.dtype(), &value);
  }
  if (out.num_elements() == 0) return absl::OkStatus();
  if (in.ndim() == 0) {
    internal::ParallelCopy(out.data(), in.data(), in.nbytes(), *call.pool);
    return absl::OkStatus();
  }
  if (in.num_elements() == 0) {  // constant padding of an empty input: all padding
    internal::FillElements(out.data(), out.num_elements(), &value, DTypeSize(in.dtype()),
                           *call.pool);
    return absl::OkStatus();
  }
  internal::DispatchElementSize(DTypeSize(in.dtype()), [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, &value, sizeof(T));
    PadRows<T>(s, in, out, v, *call.pool);
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSliceKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {"concatenate", kVariadic, 1, ConcatenateKernel, BindConcatenate,
       SingleShapeFn<ConcatenateShape>},
      {"split", 1, kVariadic, SplitKernel, BindSplit, SplitShapeFn},
      {"dyn.split", 2, kVariadic, DynSplitKernel, BindDynSplit, DynSplitShapeFn},
      {"strided_slice", 1, 1, StridedSliceKernel, BindStridedSlice,
       SingleShapeFn<StridedSliceShape>},
      {kDynSlice, kVariadic, 1, DynStridedSliceKernel, nullptr,
       SingleShapeFn<DynStridedSliceShape>},
      {"nn.pad", kVariadic, 1, PadKernel, BindPad, SingleShapeFn<PadShape>},
      {"dyn.nn.pad", kVariadic, 1, PadKernel, BindDynPad, SingleShapeFn<PadShape>},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
