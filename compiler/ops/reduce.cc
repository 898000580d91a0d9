// Relations of the reductions (kernels/reduce/reduce.cc): `axis` (an int or a list, absent
// for all axes), `keepdims`, `exclude`, as Relay's; and det (kernels/reduce/det.cc). argmax and argmin give int64. The
// float reductions may carry fusion's `prologue` (the data is that program of the
// arguments) and `epilogue` (a program of the reduced value), checked by the kernel.
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"

namespace dynvm::compiler::internal {
namespace {

enum class Result { kSame, kInt64 };

// kNoIdentity: max, min, argmax, argmin, which cannot reduce zero elements.
template <Result kResult, bool kFloatOnly, bool kNoIdentity = false>
absl::StatusOr<Type> ReduceRel(const OpCall& call) {
  static constexpr DType kFloat[] = {DType::kF32, DType::kF64};
  static constexpr DType kNumeric[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};
  const absl::Span<const DType> dtypes = kFloatOnly ? absl::Span<const DType>(kFloat) : kNumeric;
  const bool fused = call.attrs.contains("prologue") || call.attrs.contains("epilogue");
  if (!call.attrs.contains("prologue") && call.args.size() != 1) {
    return OpError(call, absl::StrFormat("takes 1 argument without a prologue, got %d", call.args.size()));
  }
  DYNVM_ASSIGN_OR_RETURN(const Type x,
                         fused ? FusedProgramRel(call, call.attrs.contains("prologue") ? call.args.size() : 1)
                               : TensorArg(call, 0, "x", dtypes));
  const int rank = x.rank();
  std::vector<bool> reduced(rank, !HasAttr(call, "axis"));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, IntsAttr(call, "axis", {}));
  for (int64_t axis : axes) {
    DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, rank));
    if (reduced[a]) return OpError(call, absl::StrFormat("axis %d is repeated", axis));
    reduced[a] = true;
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t keepdims, IntAttr(call, "keepdims", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t exclude, IntAttr(call, "exclude", 0));
  std::vector<Dim> shape;
  Dim reduced_size = 1;
  for (int i = 0; i < rank; ++i) {
    const bool reduce = reduced[i] != (exclude != 0 && HasAttr(call, "axis"));
    if (reduce) reduced_size = reduced_size * x.shape()[i];
    if (!reduce) {
      shape.push_back(x.shape()[i]);
    } else if (keepdims != 0) {
      shape.push_back(1);
    }
  }
  // Symbolic sizes are checked when the kernel runs.
  if (kNoIdentity && reduced_size.is_const() && reduced_size.const_value() == 0) {
    return OpError(call, absl::StrFormat("cannot reduce zero elements (input shape %s)",
                                         ShapeText(x.shape())));
  }
  return Type::Tensor(kResult == Result::kInt64 ? DType::kI64 : x.dtype(), std::move(shape));
}

// dyn.sum(data, axes) and the other dyn. reductions: the axes a rank-1 int tensor read
// at run time. With keepdims the rank stays and every extent is `?` (1 or the input's);
// without, the rank drops by the number of axes, which must be known (an empty list
// reduces every axis, or none with noop_with_empty_axes).
template <bool kFloatOnly>
absl::StatusOr<Type> DynReduceRel(const OpCall& call) {
  static constexpr DType kFloat[] = {DType::kF32, DType::kF64};
  static constexpr DType kNumeric[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "x", kFloatOnly ? absl::Span<const DType>(kFloat) : kNumeric));
  DYNVM_ASSIGN_OR_RETURN(const Type axes, TensorArg(call, 1, "axes", kIndex));
  if (axes.rank() != 1) {
    return OpError(call, absl::StrFormat("the axes must be a list (rank 1), got %s", axes.ToString()));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t keepdims, IntAttr(call, "keepdims", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t noop, IntAttr(call, "noop_with_empty_axes", 0));
  const Dim count = axes.shape()[0];
  if (count == Dim(0)) {
    if (noop != 0) return x;
    return Type::Tensor(x.dtype(), keepdims != 0 ? std::vector<Dim>(x.rank(), Dim(1)) : std::vector<Dim>{});
  }
  if (keepdims != 0) return Type::Tensor(x.dtype(), std::vector<Dim>(x.rank(), Dim::Any()));
  if (!count.is_const() || count.const_value() > x.rank()) {
    return OpError(call, absl::StrFormat("without keepdims the number of axes must be static and at "
                                         "most the rank %d, got axes %s", x.rank(), axes.ToString()));
  }
  return Type::Tensor(x.dtype(), std::vector<Dim>(x.rank() - count.const_value(), Dim::Any()));
}

// det(x): x [..., n, n], f32 or f64; the determinants [...].
absl::StatusOr<Type> DetRel(const OpCall& call) {
  static constexpr DType kFloat[] = {DType::kF32, DType::kF64};
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "x", kFloat));
  const int rank = x.rank();
  if (rank < 2) return OpError(call, absl::StrFormat("x must have rank 2 or more, got %d", rank));
  const Dim& rows = x.shape()[rank - 2];
  const Dim& cols = x.shape()[rank - 1];
  if (rows.is_const() && cols.is_const() && rows != cols) {
    return OpError(call, absl::StrFormat("x's matrices are %s x %s, expected square ones", rows.ToString(),
                                         cols.ToString()));
  }
  return Type::Tensor(x.dtype(), std::vector<Dim>(x.shape().begin(), x.shape().end() - 2));
}

constexpr OpDef kOps[] = {
    {"det", 1, 1, DetRel},
    {"dyn.sum", 2, 2, DynReduceRel<false>},  {"dyn.prod", 2, 2, DynReduceRel<false>},
    {"dyn.max", 2, 2, DynReduceRel<false>},  {"dyn.min", 2, 2, DynReduceRel<false>},
    {"dyn.mean", 2, 2, DynReduceRel<true>},  {"dyn.l2_norm", 2, 2, DynReduceRel<true>},
    {"sum", 1, -1, ReduceRel<Result::kSame, false>},   {"prod", 1, -1, ReduceRel<Result::kSame, false>},
    {"max", 1, -1, ReduceRel<Result::kSame, false, true>},
    {"min", 1, -1, ReduceRel<Result::kSame, false, true>},
    {"mean", 1, -1, ReduceRel<Result::kSame, true>},   {"l2_norm", 1, -1, ReduceRel<Result::kSame, true>},
    {"argmax", 1, 1, ReduceRel<Result::kInt64, false, true>},
    {"argmin", 1, 1, ReduceRel<Result::kInt64, false, true>},
};

}  // namespace

absl::Span<const OpDef> ReduceOps() { return kOps; }

}  // namespace dynvm::compiler::internal
