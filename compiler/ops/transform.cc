// Relations of the layout, slicing, indexing and sorting operators
// (kernels/data_movement/transform.cc, slice.cc, index.cc, sort.cc, reduce.cc's cumsum).
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"

namespace dynvm::compiler::internal {
namespace {

constexpr DType kIndexDTypes[] = {DType::kI32, DType::kI64};

// Relay's newshape: v > 0 is v; 0 copies the input extent at that position (a literal 0
// with allowzero=1); -1 is inferred from the input extents no other code consumed; -2
// copies the remaining extents; -3 merges the next two; -4, a, b splits the next extent
// into a x b (one of them may be -1).
absl::StatusOr<Type> ReshapeRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> codes, IntsAttr(call, "newshape", {}));
  DYNVM_ASSIGN_OR_RETURN(const int64_t allowzero, IntAttr(call, "allowzero", 0));
  const std::vector<Dim>& in = x.shape();
  const size_t rank = in.size();
  std::vector<Dim> out;
  std::vector<bool> used_in(rank, false), used_out;
  int infer = -1;
  size_t src = 0;
  const auto input = [&](size_t i) -> absl::StatusOr<Dim> {
    if (i >= rank) {
      return OpError(call, absl::StrFormat("newshape %s consumes more than the %d input dims",
                                           ShapeText({codes.begin(), codes.end()}), rank));
    }
    used_in[i] = true;
    return in[i];
  };
  const auto push = [&](Dim d, bool used) {
    out.push_back(std::move(d));
    used_out.push_back(used);
  };
  for (size_t i = 0; i < codes.size(); ++i) {
    const int64_t v = codes[i];
    if (v > 0 || (v == 0 && allowzero != 0)) {
      push(v, false);
      ++src;
    } else if (v == 0) {
      DYNVM_ASSIGN_OR_RETURN(Dim d, input(src++));
      push(d, true);
    } else if (v == -1) {
      if (infer >= 0) return OpError(call, "newshape has more than one -1");
      infer = static_cast<int>(out.size());
      push(1, false);
      ++src;
    } else if (v == -2) {
      while (src < rank) {
        DYNVM_ASSIGN_OR_RETURN(Dim d, input(src++));
        push(d, true);
      }
    } else if (v == -3) {
      DYNVM_ASSIGN_OR_RETURN(const Dim a, input(src++));
      DYNVM_ASSIGN_OR_RETURN(const Dim b, input(src++));
      push(a * b, true);
    } else if (v == -4) {
      if (i + 2 >= codes.size()) return OpError(call, "newshape's -4 needs two values after it");
      DYNVM_ASSIGN_OR_RETURN(const Dim d, input(src++));
      const int64_t a = codes[++i], b = codes[++i];
      if ((a == -1 && b == -1) || a == 0 || b == 0 || a < -1 || b < -1) {
        return OpError(call, absl::StrFormat("newshape's -4 splits into %d x %d", a, b));
      }
      push(a == -1 ? FloorDiv(d, b) : Dim(a), true);
      push(b == -1 ? FloorDiv(d, a) : Dim(b), true);
    } else {
      return OpError(call, absl::StrFormat("newshape code %d is not one of -1, -2, -3, -4", v));
    }
  }
  if (infer >= 0) {
    Dim rest = 1;
    for (size_t i = 0; i < rank; ++i) {
      if (!used_in[i]) rest = rest * in[i];
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (!used_out[i] && static_cast<int>(i) != infer) rest = FloorDiv(rest, out[i]);
    }
    out[infer] = rest;
  }
  Dim in_size = 1, out_size = 1;
  for (const Dim& d : in) in_size = in_size * d;
  for (const Dim& d : out) out_size = out_size * d;
  if (!MayEqual(in_size, out_size)) {
    return OpError(call, absl::StrFormat("cannot reshape %s (%s elements) to %s (%s elements)",
                                         ShapeText(in), in_size.ToString(), ShapeText(out),
                                         out_size.ToString()));
  }
  return Type::Tensor(x.dtype(), std::move(out));
}

absl::StatusOr<Type> TransposeRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  const int rank = x.rank();
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> axes, IntsAttr(call, "axes", {}));
  if (axes.empty()) {
    for (int i = rank - 1; i >= 0; --i) axes.push_back(i);
  }
  if (static_cast<int>(axes.size()) != rank) {
    return OpError(call, absl::StrFormat("axes has %d entries for rank %d", axes.size(), rank));
  }
  std::vector<bool> seen(rank, false);
  std::vector<Dim> out;
  for (int64_t axis : axes) {
    DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, rank, "axes entry"));
    if (seen[a]) return OpError(call, absl::StrFormat("axes repeats axis %d", a));
    seen[a] = true;
    out.push_back(x.shape()[a]);
  }
  return Type::Tensor(x.dtype(), std::move(out));
}

absl::StatusOr<Type> ExpandDimsRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t count, IntAttr(call, "num_newaxis", 1));
  if (count < 0) return OpError(call, absl::StrFormat("num_newaxis %d is negative", count));
  DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, x.rank() + 1));
  std::vector<Dim> out = x.shape();
  out.insert(out.begin() + a, count, Dim(1));
  return Type::Tensor(x.dtype(), std::move(out));
}

absl::StatusOr<Type> SqueezeRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  const int rank = x.rank();
  std::vector<bool> drop(rank, false);
  if (!HasAttr(call, "axis")) {
    for (int i = 0; i < rank; ++i) {
      const Dim& d = x.shape()[i];
      if (!d.is_const()) {
        return OpError(call, absl::StrFormat("without axis, dim %d (%s) must be static to tell "
                                             "whether it is 1", i, d.ToString()));
      }
      drop[i] = d.const_value() == 1;
    }
  } else {
    DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, IntsAttr(call, "axis", {}));
    for (int64_t axis : axes) {
      DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, rank));
      if (!MayEqual(x.shape()[a], 1)) {
        return OpError(call, absl::StrFormat("axis %d has extent %s, expected 1", axis,
                                             x.shape()[a].ToString()));
      }
      drop[a] = true;
    }
  }
  std::vector<Dim> out;
  for (int i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(x.shape()[i]);
  }
  return Type::Tensor(x.dtype(), std::move(out));
}

// concatenate((a, b, ...), axis) as Relay writes it, or concatenate(a, b, ...) as the
// kernel takes it.
absl::StatusOr<Type> ConcatenateRel(const OpCall& call) {
  std::vector<Type> parts(call.args.begin(), call.args.end());
  if (parts.size() == 1 && parts[0].kind() == TypeKind::kTuple) parts = parts[0].fields();
  if (parts.empty()) return OpError(call, "needs at least one tensor");
  const Type fields[] = {parts[0]};
  DYNVM_ASSIGN_OR_RETURN(const Type first, TensorArg(OpCall{call.op, fields, call.attrs}, 0, "input 0"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", 0));
  DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, first.rank()));
  std::vector<Dim> out = first.shape();
  for (size_t i = 1; i < parts.size(); ++i) {
    const Type& t = parts[i];
    if (!t.is_tensor() || t.dtype() != first.dtype() || t.rank() != first.rank()) {
      return OpError(call, absl::StrFormat("input %d is %s, expected a %s tensor of rank %d", i,
                                           t.ToString(), std::string(RelayDTypeName(first.dtype())),
                                           first.rank()));
    }
    for (int d = 0; d < first.rank(); ++d) {
      if (d == a) {
        out[d] = out[d] + t.shape()[d];
      } else if (!MayEqual(out[d], t.shape()[d])) {
        return OpError(call, absl::StrFormat("input %d has shape %s, expected %s off axis %d", i,
                                             ShapeText(t.shape()), ShapeText(first.shape()), a));
      } else {
        out[d] = Unify(out[d], t.shape()[d]);
      }
    }
  }
  return Type::Tensor(first.dtype(), std::move(out));
}

// data[:axis] + indices[batch_dims:] + data[axis+1:]; without axis, data flattened.
absl::StatusOr<Type> TakeRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type data, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const Type indices, TensorArg(call, 1, "indices", kIndexDTypes));
  // Indices into an empty axis are an error whatever their values.
  Dim count = 1;
  for (const Dim& d : indices.shape()) count = count * d;
  const auto check_extent = [&](const Dim& extent, std::string_view what) -> absl::Status {
    if (extent.is_const() && extent.const_value() == 0 && count.is_const() && count.const_value() > 0) {
      return OpError(call, absl::StrFormat("%s indices into %s of extent 0", count.ToString(), what));
    }
    return absl::OkStatus();
  };
  if (!HasAttr(call, "axis")) {
    Dim size = 1;
    for (const Dim& d : data.shape()) size = size * d;
    DYNVM_RETURN_IF_ERROR(check_extent(size, "the flattened data"));
    return Type::Tensor(data.dtype(), indices.shape());
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", 0));
  DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, data.rank()));
  DYNVM_RETURN_IF_ERROR(check_extent(data.shape()[a], absl::StrFormat("axis %d", a)));
  DYNVM_ASSIGN_OR_RETURN(int64_t batch_dims, IntAttr(call, "batch_dims", 0));
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims < 0 || batch_dims > a || batch_dims > indices.rank()) {
    return OpError(call, absl::StrFormat("batch_dims %d out of range for axis %d and indices of rank %d",
                                         batch_dims, a, indices.rank()));
  }
  std::vector<Dim> out(data.shape().begin(), data.shape().begin() + a);
  out.insert(out.end(), indices.shape().begin() + batch_dims, indices.shape().end());
  out.insert(out.end(), data.shape().begin() + a + 1, data.shape().end());
  return Type::Tensor(data.dtype(), std::move(out));
}

// numpy broadcasting of data to exactly `shape`.
absl::StatusOr<Type> BroadcastToRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> shape, IntsAttr(call, "shape", {}));
  const std::vector<Dim> target(shape.begin(), shape.end());
  DYNVM_ASSIGN_OR_RETURN(const std::vector<Dim> out, BroadcastShapes(call, x.shape(), target));
  if (out.size() != target.size() || !std::equal(out.begin(), out.end(), target.begin(),
                                                  [](const Dim& a, const Dim& b) { return MayEqual(a, b); })) {
    return OpError(call, absl::StrFormat("cannot broadcast %s to %s", ShapeText(x.shape()),
                                         ShapeText(target)));
  }
  return Type::Tensor(x.dtype(), target);
}

// numpy's tile: rank and reps left-padded with 1s, then multiplied.
absl::StatusOr<Type> TileRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> reps, IntsAttr(call, "reps", {}));
  for (int64_t r : reps) {
    if (r < 0) return OpError(call, absl::StrFormat("reps %s has a negative entry", ShapeText({reps.begin(), reps.end()})));
  }
  std::vector<Dim> dims = x.shape();
  while (dims.size() < reps.size()) dims.insert(dims.begin(), Dim(1));
  while (reps.size() < dims.size()) reps.insert(reps.begin(), 1);
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = dims[i] * reps[i];
  return Type::Tensor(x.dtype(), std::move(dims));
}

// dyn.tile(data, reps): the repetitions a rank-1 int tensor read at run time, of static
// length (it gives the rank); every extent `?`.
absl::StatusOr<Type> DynTileRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const Type reps, TensorArg(call, 1, "reps", kIndex));
  if (reps.rank() != 1 || !reps.shape()[0].is_const()) {
    return OpError(call, absl::StrFormat("reps must be a list of static length, got %s", reps.ToString()));
  }
  const int64_t rank = std::max<int64_t>(x.rank(), reps.shape()[0].const_value());
  return Type::Tensor(x.dtype(), std::vector<Dim>(rank, Dim::Any()));
}

// numpy's slicing of one axis of constant extent `dim` (kernels/data_movement/slice.cc).
int64_t SliceLength(int64_t dim, std::optional<int64_t> begin, std::optional<int64_t> end, int64_t step) {
  const auto clamp = [dim](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + dim : v, lo, hi); };
  if (step > 0) {
    const int64_t start = begin ? clamp(*begin, 0, dim) : 0, stop = end ? clamp(*end, 0, dim) : dim;
    return stop > start ? (stop - start - 1) / step + 1 : 0;
  }
  const int64_t start = begin ? clamp(*begin, -1, dim - 1) : dim - 1;
  const int64_t stop = end ? clamp(*end, -1, dim - 1) : -1;
  return start > stop ? (start - stop - 1) / -step + 1 : 0;
}

// Extents of sliced axes are computed for constant dims; a sliced symbolic dim is `?`.
absl::StatusOr<Type> StridedSliceRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> begin, IntsAttr(call, "begin", {}));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> end, IntsAttr(call, "end", {}));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, IntsAttr(call, "strides", {}));
  absl::StatusOr<std::string> mode = kernels::GetStringAttr(call.attrs, "slice_mode", "end");
  if (!mode.ok()) return OpError(call, mode.status().message());
  if (*mode != "end" && *mode != "size") {
    return OpError(call, absl::StrFormat("attribute 'slice_mode' is '%s': expected 'end' or 'size'", *mode));
  }
  const bool size_mode = *mode == "size";
  for (int64_t step : strides) {
    if (step == 0 || step == std::numeric_limits<int64_t>::min()) {
      return OpError(call, absl::StrFormat("attribute 'strides' has a step of %d", step));
    }
  }
  const int rank = x.rank();
  const bool has_axes = HasAttr(call, "axes");
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, IntsAttr(call, "axes", {}));
  if (begin.size() != end.size() || (has_axes && axes.size() != begin.size()) ||
      (!has_axes && static_cast<int>(begin.size()) > rank)) {
    return OpError(call, absl::StrFormat("%d begin, %d end values and %d axes for rank %d",
                                         begin.size(), end.size(), axes.size(), rank));
  }
  std::vector<Dim> out = x.shape();
  std::vector<bool> given(rank, false);
  for (size_t i = 0; i < begin.size(); ++i) {
    int axis = static_cast<int>(i);
    if (has_axes) {
      DYNVM_ASSIGN_OR_RETURN(axis, NormalizeAxis(call, axes[i], rank));
    }
    if (given[axis]) return OpError(call, absl::StrFormat("axis %d sliced twice", axis));
    given[axis] = true;
    const int64_t step = i < strides.size() && !size_mode ? strides[i] : 1;
    const Dim& d = x.shape()[axis];
    if (!d.is_const()) {
      out[axis] = Dim::Any();
      continue;
    }
    const int64_t n = d.const_value();
    std::optional<int64_t> stop = end[i];
    if (size_mode) {
      const int64_t from = n - SliceLength(n, begin[i], std::nullopt, 1);
      stop = end[i] < 0 || end[i] > n - from ? n : from + end[i];
    }
    out[axis] = SliceLength(n, begin[i], stop, step);
  }
  return Type::Tensor(x.dtype(), std::move(out));
}

// A tuple of the parts: equal sections, or the pieces between split points.
absl::StatusOr<Type> SplitRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, IntAttr(call, "axis", 0));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(call, axis_attr, x.rank()));
  const Dim& n = x.shape()[axis];
  if (!HasAttr(call, "indices_or_sections")) return OpError(call, "attribute 'indices_or_sections' is required");
  const kernels::AttrValue& spec = call.attrs.find("indices_or_sections")->second;
  std::vector<Dim> extents;
  if (const auto* sections = std::get_if<int64_t>(&spec)) {
    if (*sections <= 0 || (n.is_const() && n.const_value() % *sections != 0)) {
      return OpError(call, absl::StrFormat("%d sections do not divide axis %d of extent %s", *sections, axis, n.ToString()));
    }
    extents.assign(*sections, FloorDiv(n, *sections));
  } else {
    DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> points, IntsAttr(call, "indices_or_sections", {}));
    Dim previous = 0;
    int64_t last = 0;
    for (int64_t p : points) {
      if (p < last || (n.is_const() && p > n.const_value())) {
        return OpError(call, absl::StrFormat("split points %s must ascend within [0, %s]",
                                             ShapeText({points.begin(), points.end()}), n.ToString()));
      }
      extents.push_back(Dim(p) - previous);
      previous = p;
      last = p;
    }
    extents.push_back(n - previous);
  }
  std::vector<Type> parts;
  for (const Dim& e : extents) {
    std::vector<Dim> shape = x.shape();
    shape[axis] = e;
    parts.push_back(Type::Tensor(x.dtype(), std::move(shape)));
  }
  return Type::Tuple(std::move(parts));
}

// pad_width flattened [before_0, after_0, ...], two per axis.
absl::StatusOr<Type> PadRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, IntsAttr(call, "pad_width", {}));
  if (pads.size() != 2 * static_cast<size_t>(x.rank())) {
    return OpError(call, absl::StrFormat("pad_width has %d values for rank %d: expected %d",
                                         pads.size(), x.rank(), 2 * x.rank()));
  }
  std::vector<Dim> out = x.shape();
  for (int i = 0; i < x.rank(); ++i) {
    if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) return OpError(call, "pad_width has a negative entry");
    out[i] = out[i] + pads[2 * i] + pads[2 * i + 1];
  }
  return Type::Tensor(x.dtype(), std::move(out));
}

// dyn.nn.pad(data, pad_width[, value]): pad_width a 1-D int tensor of (before, after)
// pairs read at run time; the rank stays, every extent `?`.
absl::StatusOr<Type> DynPadRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const Type width, TensorArg(call, 1, "pad_width", kIndex));
  if (width.rank() != 1 || (width.shape()[0].is_const() && width.shape()[0] != Dim(2 * x.rank()))) {
    return OpError(call, absl::StrFormat("pad_width must hold %d values for rank %d, got %s", 2 * x.rank(),
                                         x.rank(), width.ToString()));
  }
  return Type::Tensor(x.dtype(), std::vector<Dim>(x.rank(), Dim::Any()));
}

// GatherElements: indices of the data's rank; the output has the indices' shape.
absl::StatusOr<Type> GatherRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type data, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const Type indices, TensorArg(call, 1, "indices", kIndexDTypes));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", 0));
  DYNVM_RETURN_IF_ERROR(NormalizeAxis(call, axis, data.rank()).status());
  if (indices.rank() != data.rank()) {
    return OpError(call, absl::StrFormat("indices have rank %d, expected the data's %d", indices.rank(), data.rank()));
  }
  return Type::Tensor(data.dtype(), indices.shape());
}

absl::StatusOr<Type> ScatterElementsRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type data, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const Type indices, TensorArg(call, 1, "indices", kIndexDTypes));
  DYNVM_ASSIGN_OR_RETURN(const Type updates, TensorArg(call, 2, "updates"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", 0));
  DYNVM_RETURN_IF_ERROR(NormalizeAxis(call, axis, data.rank()).status());
  if (indices.rank() != data.rank() || updates.rank() != indices.rank() ||
      updates.dtype() != data.dtype()) {
    return OpError(call, absl::StrFormat("indices %s and updates %s must have the data's rank, updates its dtype",
                                         ShapeText(indices.shape()), updates.ToString()));
  }
  return data;
}

absl::StatusOr<Type> CumsumRel(const OpCall& call) {
  static constexpr DType kNumeric[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kNumeric));
  if (!HasAttr(call, "axis")) {
    Dim size = 1;
    for (const Dim& d : x.shape()) size = size * d;
    return Type::Tensor(x.dtype(), {size});
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", 0));
  DYNVM_RETURN_IF_ERROR(NormalizeAxis(call, axis, x.rank()).status());
  return x;
}

// dyn.cumsum(data, axis): the axis one int element read at run time; the data's type.
absl::StatusOr<Type> DynCumsumRel(const OpCall& call) {
  static constexpr DType kNumeric[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kNumeric));
  DYNVM_ASSIGN_OR_RETURN(const Type axis, TensorArg(call, 1, "axis", kIndex));
  if (axis.rank() > 1 || (axis.rank() == 1 && axis.shape()[0].is_const() && axis.shape()[0] != Dim(1))) {
    return OpError(call, absl::StrFormat("the axis must be one element, got %s", axis.ToString()));
  }
  return x;
}

// The `dtype` attribute of an index output: int32 or int64, `fallback` if absent.
absl::StatusOr<DType> IndexDTypeAttr(const OpCall& call, std::string_view fallback = "int32") {
  absl::StatusOr<std::string> name = kernels::GetStringAttr(call.attrs, "dtype", fallback);
  if (!name.ok()) return OpError(call, name.status().message());
  absl::StatusOr<DType> dtype = ParseDType(*name);
  if (!dtype.ok() || (*dtype != DType::kI32 && *dtype != DType::kI64)) {
    return OpError(call, absl::StrFormat("attribute 'dtype' is '%s': expected int32 or int64", *name));
  }
  return *dtype;
}

constexpr DType kSortable[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};

absl::StatusOr<Type> ArgsortRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kSortable));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", -1));
  DYNVM_RETURN_IF_ERROR(NormalizeAxis(call, axis, x.rank()).status());
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, IndexDTypeAttr(call));
  return Type::Tensor(dtype, x.shape());
}

// (values, indices), or one of them as ret_type says.
// topk(data) with k an attribute, or dyn.topk(data, k) with k one int element read at
// run time (the extent along the axis is then `?`).
absl::StatusOr<Type> TopkRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kSortable));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, IntAttr(call, "axis", -1));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(call, axis_attr, x.rank()));
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, IndexDTypeAttr(call));
  std::vector<Dim> shape = x.shape();
  if (call.args.size() == 2) {
    DYNVM_ASSIGN_OR_RETURN(const Type k, TensorArg(call, 1, "k", kIndex));
    if (k.rank() > 1 || (k.rank() == 1 && k.shape()[0].is_const() && k.shape()[0] != Dim(1))) {
      return OpError(call, absl::StrFormat("k must be one element, got %s", k.ToString()));
    }
    shape[axis] = Dim::Any();
  } else {
    DYNVM_ASSIGN_OR_RETURN(const int64_t k, IntAttr(call, "k", 1));
    if (k >= 1) {
      if (shape[axis].is_const() && k > shape[axis].const_value()) {
        return OpError(call, absl::StrFormat("k = %d is above the extent %s of axis %d", k, shape[axis].ToString(), axis));
      }
      shape[axis] = k;
    }
  }
  absl::StatusOr<std::string> ret = kernels::GetStringAttr(call.attrs, "ret_type", "both");
  if (!ret.ok()) return OpError(call, ret.status().message());
  const Type values = Type::Tensor(x.dtype(), shape), indices = Type::Tensor(dtype, shape);
  if (*ret == "values") return values;
  if (*ret == "indices") return indices;
  if (*ret != "both") {
    return OpError(call, absl::StrFormat("attribute 'ret_type' is '%s': expected both, values or indices", *ret));
  }
  return Type::Tuple({values, indices});
}

// Coordinates of the nonzero elements: [count, rank] (argwhere) or [rank, count]
// (nonzero); the count is known when the data is, at run time.
template <bool kTransposed>
absl::StatusOr<Type> NonzeroRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "condition"));
  const Dim rank = x.rank();
  return Type::Tensor(DType::kI64, kTransposed ? std::vector<Dim>{rank, Dim::Any()}
                                               : std::vector<Dim>{Dim::Any(), rank});
}

// shape_of: the extents of axes [start, end) of the data (ONNX Shape-15's range: a
// negative bound counts from the end, both clamp to [0, rank]; default all), as int64 or
// int32. The rank is static, so the length is too.
absl::StatusOr<Type> ShapeOfRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, IndexDTypeAttr(call, "int64"));
  const int64_t rank = x.rank();
  DYNVM_ASSIGN_OR_RETURN(int64_t first, IntAttr(call, "start", 0));
  DYNVM_ASSIGN_OR_RETURN(int64_t last, IntAttr(call, "end", rank));
  first = std::clamp(first < 0 ? first + rank : first, int64_t{0}, rank);
  last = std::clamp(last < 0 ? last + rank : last, first, rank);
  for (int64_t d = first; d < last; ++d) {
    const Dim& e = x.shape()[d];
    if (dtype == DType::kI32 && e.is_const() && e.const_value() > std::numeric_limits<int32_t>::max()) {
      return OpError(call, absl::StrFormat("extent %d of axis %d does not fit int32", e.const_value(), d));
    }
  }
  return Type::Tensor(dtype, {Dim(last - first)});
}

// dyn.strided_slice(data, starts, ends [, axes [, steps]]): ONNX Slice, the bounds read
// at run time from 1-D int32/int64 tensors of one length L. Every axis that may be sliced
// is `?` (without axes and with L static, axes 0..L-1; else all), except that an empty
// axis stays empty; L = 0 slices nothing.
absl::StatusOr<Type> DynStridedSliceRel(const OpCall& call) {
  static constexpr std::string_view kNames[] = {"starts", "ends", "axes", "steps"};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  Dim length = Dim::Any();
  for (size_t i = 1; i < call.args.size(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(const Type t, TensorArg(call, static_cast<int>(i), kNames[i - 1], kIndexDTypes));
    if (t.rank() != 1) {
      return OpError(call, absl::StrFormat("%s %s must be 1-D", kNames[i - 1], ShapeText(t.shape())));
    }
    if (!MayEqual(length, t.shape()[0])) {
      return OpError(call, absl::StrFormat("index inputs of different lengths: %s has %s values, expected %s",
                                           kNames[i - 1], t.shape()[0].ToString(), length.ToString()));
    }
    length = Unify(length, t.shape()[0]);
  }
  const int rank = x.rank();
  const bool has_axes = call.args.size() > 3;
  int sliced = rank;  // axes [0, sliced) may be sliced
  if (length.is_const()) {
    const int64_t n = length.const_value();
    if (n > rank) {
      return OpError(call, absl::StrFormat("%d starts for data of rank %d: expected at most one per axis", n, rank));
    }
    if (!has_axes) sliced = static_cast<int>(n);
    if (n == 0) sliced = 0;
  }
  std::vector<Dim> out = x.shape();
  for (int a = 0; a < sliced; ++a) {
    if (!out[a].is_const() || out[a].const_value() != 0) out[a] = Dim::Any();
  }
  return Type::Tensor(x.dtype(), std::move(out));
}

// unique(data): without `axis`, the distinct elements of the flattened data; with it,
// the distinct slices along it (that extent `?`). Then the first indices, the inverse
// indices (one per element or slice) and the counts: all four (the type of a call with
// fewer is a prefix). Numbers or strings.
absl::StatusOr<Type> UniqueRel(const OpCall& call) {
  constexpr DType kUniqueDTypes[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kString};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kUniqueDTypes));
  std::vector<Dim> distinct = {Dim::Any()};
  Dim n = 1;
  if (HasAttr(call, "axis")) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", 0));
    DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, x.rank(), "axis"));
    distinct = x.shape();
    distinct[a] = Dim::Any();
    n = x.shape()[a];
  } else {
    for (const Dim& d : x.shape()) n = n * d;
  }
  return Type::Tuple({Type::Tensor(x.dtype(), std::move(distinct)), Type::Tensor(DType::kI64, {Dim::Any()}),
                      Type::Tensor(DType::kI64, {n}), Type::Tensor(DType::kI64, {Dim::Any()})});
}

// A shape read from a 1-D integer tensor of static length: rank known, extents `?`.
absl::StatusOr<std::vector<Dim>> ShapeFromTensor(const OpCall& call, int i) {
  DYNVM_ASSIGN_OR_RETURN(const Type shape, TensorArg(call, i, "shape", kIndexDTypes));
  if (shape.rank() != 1 || !shape.shape()[0].is_const()) {
    return OpError(call, absl::StrFormat("shape %s must be a 1-D tensor of static length",
                                         ShapeText(shape.shape())));
  }
  return std::vector<Dim>(shape.shape()[0].const_value(), Dim::Any());
}

absl::StatusOr<Type> DynReshapeRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(std::vector<Dim> shape, ShapeFromTensor(call, 1));
  return Type::Tensor(x.dtype(), std::move(shape));
}

absl::StatusOr<Type> DynBroadcastToRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(std::vector<Dim> shape, ShapeFromTensor(call, 1));
  if (shape.size() < static_cast<size_t>(x.rank())) {
    return OpError(call, absl::StrFormat("cannot broadcast rank %d to rank %d", x.rank(), shape.size()));
  }
  return Type::Tensor(x.dtype(), std::move(shape));
}

// The static length of a 1-D integer tensor argument `i` (ONNX's run-time axes and
// split sizes): the count of axes or parts, which the result's rank or arity needs.
absl::StatusOr<int64_t> StaticLength(const OpCall& call, int i, std::string_view what) {
  DYNVM_ASSIGN_OR_RETURN(const Type t, TensorArg(call, i, what, kIndexDTypes));
  if (t.rank() != 1 || !t.shape()[0].is_const()) {
    return OpError(call, absl::StrFormat("%s %s must be a 1-D tensor of static length", what,
                                         ShapeText(t.shape())));
  }
  return t.shape()[0].const_value();
}

// dyn.expand_dims(data, axes): rank r + k for k axes. Output dim j is a new 1 or input
// dim i for some i in [j - k, j]; it is known when all of those are 1.
absl::StatusOr<Type> DynExpandDimsRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t k, StaticLength(call, 1, "axes"));
  if (k == 0) return x;
  const int64_t rank = x.rank();
  std::vector<Dim> out;
  for (int64_t j = 0; j < rank + k; ++j) {
    bool ones = true;
    for (int64_t i = std::max<int64_t>(0, j - k); i <= std::min(j, rank - 1); ++i) {
      ones = ones && x.shape()[i].is_const() && x.shape()[i].const_value() == 1;
    }
    out.push_back(ones ? Dim(1) : Dim::Any());
  }
  return Type::Tensor(x.dtype(), std::move(out));
}

// dyn.squeeze(data, axes): rank r - k for k axes, each of extent 1. Output dim j is
// input dim i = j + m, m of the k squeezed axes before it: possible when m axes before
// i and k - m after it may have extent 1. The dim is known when every possible source
// has the same one (a static non-1 extent pins the squeezed axes around it).
absl::StatusOr<Type> DynSqueezeRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t k, StaticLength(call, 1, "axes"));
  const int64_t rank = x.rank();
  // ones_before[i]: how many of the axes before i may have extent 1.
  std::vector<int64_t> ones_before(rank + 1, 0);
  for (int64_t i = 0; i < rank; ++i) {
    ones_before[i + 1] = ones_before[i] + (MayEqual(x.shape()[i], 1) ? 1 : 0);
  }
  if (k > ones_before[rank]) {
    return OpError(call, absl::StrFormat("%d axes to squeeze from %s, where at most %d may have extent 1",
                                         k, ShapeText(x.shape()), ones_before[rank]));
  }
  std::vector<Dim> out;
  for (int64_t j = 0; j < rank - k; ++j) {
    std::optional<Dim> known;
    bool agree = true;
    for (int64_t m = 0; m <= k; ++m) {
      const int64_t i = j + m;
      if (ones_before[i] < m || ones_before[rank] - ones_before[i + 1] < k - m) continue;
      agree = agree && (!known || *known == x.shape()[i]);
      known = x.shape()[i];
    }
    out.push_back(agree && known ? *known : Dim::Any());
  }
  return Type::Tensor(x.dtype(), std::move(out));
}

// dyn.split(data, sizes): a tuple of k parts for k sizes, `?` along the axis (the whole
// extent for one part; 0 for an empty axis).
absl::StatusOr<Type> DynSplitRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t k, StaticLength(call, 1, "sizes"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, IntAttr(call, "axis", 0));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(call, axis_attr, x.rank()));
  if (k < 1) return OpError(call, "sizes must have at least one value, one per output");
  std::vector<Dim> shape = x.shape();
  const Dim& n = shape[axis];
  if (k > 1 && !(n.is_const() && n.const_value() == 0)) shape[axis] = Dim::Any();
  return Type::Tuple(std::vector<Type>(k, Type::Tensor(x.dtype(), std::move(shape))));
}

constexpr OpDef kOps[] = {
    {"reshape", 1, 1, ReshapeRel},         {"transpose", 1, 1, TransposeRel},
    {"expand_dims", 1, 1, ExpandDimsRel},  {"squeeze", 1, 1, SqueezeRel},
    {"concatenate", 1, -1, ConcatenateRel}, {"take", 2, 2, TakeRel},
    {"broadcast_to", 1, 1, BroadcastToRel}, {"tile", 1, 1, TileRel}, {"dyn.tile", 2, 2, DynTileRel},
    {"strided_slice", 1, 1, StridedSliceRel}, {"split", 1, 1, SplitRel},
    {"nn.pad", 1, 2, PadRel}, {"dyn.nn.pad", 2, 3, DynPadRel},              {"gather", 2, 2, GatherRel},
    {"scatter_elements", 3, 3, ScatterElementsRel}, {"cumsum", 1, 1, CumsumRel}, {"dyn.cumsum", 2, 2, DynCumsumRel},
    {"argsort", 1, 1, ArgsortRel},         {"topk", 1, 1, TopkRel}, {"dyn.topk", 2, 2, TopkRel},
    {"argwhere", 1, 1, NonzeroRel<false>}, {"nonzero", 1, 1, NonzeroRel<true>},
    {"unique", 1, 1, UniqueRel},           {"dyn.reshape", 2, 2, DynReshapeRel},
    {"dyn.broadcast_to", 2, 2, DynBroadcastToRel}, {"shape_of", 1, 1, ShapeOfRel},
    {"dyn.strided_slice", 3, 5, DynStridedSliceRel},
    {"dyn.expand_dims", 2, 2, DynExpandDimsRel}, {"dyn.squeeze", 2, 2, DynSqueezeRel},
    {"dyn.split", 2, 2, DynSplitRel},
};

}  // namespace

absl::Span<const OpDef> TransformOps() { return kOps; }

}  // namespace dynvm::compiler::internal
