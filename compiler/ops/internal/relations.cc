// The helpers every operator family's type relation shares
// (compiler/ops/internal/relations.h), and shape functions run through the kernels.
#include "compiler/ops/internal/relations.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/api.h"
#include "kernels/kernel.h"

namespace dynvm::compiler::internal {

std::string ShapeText(const std::vector<Dim>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", ", [](std::string* out, const Dim& d) {
                        out->append(d.ToString());
                      }),
                      "]");
}

absl::Status OpError(const OpCall& call, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(call.op), ": ", std::string(message)));
}

absl::StatusOr<Type> FusedProgramRel(const OpCall& call, size_t inputs) {
  static constexpr DType kF32[] = {DType::kF32};
  std::vector<Dim> shape;
  for (int i = 0; i < static_cast<int>(inputs); ++i) {
    DYNVM_ASSIGN_OR_RETURN(const Type t, TensorArg(call, i, absl::StrCat("input ", i), kF32));
    DYNVM_ASSIGN_OR_RETURN(shape, BroadcastShapes(call, shape, t.shape()));
  }
  DYNVM_RETURN_IF_ERROR(CheckKernelAttrs(call));
  return Type::Tensor(DType::kF32, std::move(shape));
}

absl::Status CheckKernelAttrs(const OpCall& call) {
  const absl::Status bound = kernels::DefaultRegistry()
                                 .Bind(call.op, call.attrs, static_cast<int>(call.args.size()), 1)
                                 .status();
  return bound.ok() ? bound : OpError(call, bound.message());
}

absl::StatusOr<Type> TensorArg(const OpCall& call, int i, std::string_view what,
                               absl::Span<const DType> dtypes) {
  const Type& t = call.args[i];
  if (!t.is_tensor()) {
    return OpError(call, absl::StrFormat("%s must be a tensor, got %s", what, t.ToString()));
  }
  if (t.dtype() == DType::kString) {  // only the kernels made for them take strings
    const kernels::KernelDef* def = kernels::DefaultRegistry().Find(call.op);
    if (def == nullptr || !def->takes_strings) {
      return OpError(call, absl::StrFormat("%s is a string tensor: %s takes none (only cast "
                                           "converts strings)",
                                           what, call.op));
    }
  }
  if (!dtypes.empty() && std::find(dtypes.begin(), dtypes.end(), t.dtype()) == dtypes.end()) {
    const std::string expected = absl::StrJoin(dtypes, " or ", [](std::string* out, DType d) {
      out->append(std::string(RelayDTypeName(d)));
    });
    return OpError(call, absl::StrFormat("unsupported dtype %s for %s: expected %s",
                                         std::string(RelayDTypeName(t.dtype())), what, expected));
  }
  return t;
}

// Whether `m` is min(x, C) or min(C, x) for a constant C >= 1: an extent clamped to a
// constant, as slicing a constant table by a run-time length gives (BERT's position ids).
// Broadcast with x, it always gives x: m is x when x <= C, and otherwise m = C < x,
// which broadcasts only if C = 1, the result again x.
namespace {
bool IsClampOf(const Dim& m, const Dim& x) {
  if (m.form() != Dim::Form::kMin) return false;
  const auto [p, q] = m.operands();
  const auto at_least_one = [](const Dim& d) { return d.is_const() && d.const_value() >= 1; };
  return (p == x && at_least_one(q)) || (q == x && at_least_one(p));
}
}  // namespace

absl::StatusOr<std::vector<Dim>> BroadcastShapes(const OpCall& call, const std::vector<Dim>& a,
                                                 const std::vector<Dim>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  const auto is_one = [](const Dim& d) { return d.is_const() && d.const_value() == 1; };
  const auto is_big = [](const Dim& d) { return d.is_const() && d.const_value() != 1; };
  for (size_t i = 0; i < rank; ++i) {
    const Dim x = i < rank - a.size() ? Dim(1) : a[i - (rank - a.size())];
    const Dim y = i < rank - b.size() ? Dim(1) : b[i - (rank - b.size())];
    if (x == y || is_one(y)) {
      out[i] = x;
    } else if (is_one(x)) {
      out[i] = y;
    } else if (is_big(x) && is_big(y)) {
      return OpError(call, absl::StrFormat("cannot broadcast %s and %s: dims %s and %s differ",
                                           ShapeText(a), ShapeText(b), x.ToString(), y.ToString()));
    } else if (is_big(x) || is_big(y)) {
      out[i] = is_big(x) ? x : y;  // the other must be 1 or equal to it
    } else if (IsClampOf(y, x) || IsClampOf(x, y)) {
      out[i] = IsClampOf(y, x) ? x : y;
    } else {
      out[i] = Dim::Any();  // two different unknowns: either one
    }
  }
  return out;
}

Dim Unify(const Dim& a, const Dim& b) {
  if (a.is_const()) return a;
  if (b.is_const()) return b;
  return a.is_any() ? b : a;
}

absl::StatusOr<int> NormalizeAxis(const OpCall& call, int64_t axis, int rank,
                                  std::string_view attr) {
  if (axis < -rank || axis >= rank) {
    return OpError(call, absl::StrFormat("%s %d out of range for rank %d", attr, axis, rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<int64_t> IntAttr(const OpCall& call, std::string_view name, int64_t fallback) {
  absl::StatusOr<int64_t> v = kernels::GetIntAttr(call.attrs, name, fallback);
  if (!v.ok()) return OpError(call, v.status().message());
  return v;
}

absl::StatusOr<std::vector<int64_t>> IntsAttr(const OpCall& call, std::string_view name,
                                              std::vector<int64_t> fallback) {
  if (!HasAttr(call, name)) return fallback;
  const kernels::AttrValue& v = call.attrs.find(name)->second;
  if (const auto* one = std::get_if<int64_t>(&v)) return std::vector<int64_t>{*one};
  absl::StatusOr<std::vector<int64_t>> list = kernels::GetIntsAttr(call.attrs, name);
  if (!list.ok()) return OpError(call, list.status().message());
  return list;
}

bool HasAttr(const OpCall& call, std::string_view name) { return call.attrs.find(name) != call.attrs.end(); }

}  // namespace dynvm::compiler::internal
