// Relations of the layout and indexing operators (kernels/transform.cc, slice.cc,
// index.cc): reshape with Relay's special codes, transpose, expand_dims, squeeze,
// concatenate and take.
#include <numeric>
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

constexpr OpDef kOps[] = {
    {"reshape", 1, 1, ReshapeRel},         {"transpose", 1, 1, TransposeRel},
    {"expand_dims", 1, 1, ExpandDimsRel},  {"squeeze", 1, 1, SqueezeRel},
    {"concatenate", 1, -1, ConcatenateRel}, {"take", 2, 2, TakeRel},
};

}  // namespace

absl::Span<const OpDef> TransformOps() { return kOps; }

}  // namespace dynvm::compiler::internal
