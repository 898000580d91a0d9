// Relations of the creation operators with static shapes (kernels/data_movement/creation.cc, and
// one_hot from kernels/data_movement/index.cc).
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"

namespace dynvm::compiler::internal {
namespace {

absl::StatusOr<DType> DTypeAttr(const OpCall& call, std::string_view fallback) {
  absl::StatusOr<std::string> name = kernels::GetStringAttr(call.attrs, "dtype", std::string(fallback));
  if (!name.ok()) return OpError(call, name.status().message());
  absl::StatusOr<DType> dtype = ParseDType(*name);
  if (!dtype.ok()) return OpError(call, dtype.status().message());
  return *dtype;
}

absl::StatusOr<std::vector<Dim>> ShapeAttr(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> shape, IntsAttr(call, "shape", {}));
  for (int64_t d : shape) {
    if (d < 0) return OpError(call, absl::StrFormat("shape %s has a negative extent", ShapeText({shape.begin(), shape.end()})));
  }
  return std::vector<Dim>(shape.begin(), shape.end());
}

// zeros, ones: `shape`, `dtype` (default float32).
absl::StatusOr<Type> ConstantFillRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, DTypeAttr(call, "float32"));
  DYNVM_ASSIGN_OR_RETURN(std::vector<Dim> shape, ShapeAttr(call));
  return Type::Tensor(dtype, std::move(shape));
}

// full(fill_value): `shape`, `dtype` (default: the fill value's).
absl::StatusOr<Type> FullRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type fill, TensorArg(call, 0, "fill_value"));
  if (fill.rank() != 0) return OpError(call, absl::StrFormat("fill_value has shape %s, expected a scalar", ShapeText(fill.shape())));
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, DTypeAttr(call, RelayDTypeName(fill.dtype())));
  DYNVM_ASSIGN_OR_RETURN(std::vector<Dim> shape, ShapeAttr(call));
  return Type::Tensor(dtype, std::move(shape));
}

// one_hot(indices, on_value, off_value): the depth axis inserted at `axis`.
absl::StatusOr<Type> OneHotRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type indices, TensorArg(call, 0, "indices", kIndex));
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, DTypeAttr(call, "float32"));
  const DType value_dtype[] = {dtype};
  for (int i : {1, 2}) {
    DYNVM_ASSIGN_OR_RETURN(const Type v, TensorArg(call, i, i == 1 ? "on_value" : "off_value", value_dtype));
    if (v.rank() != 0) return OpError(call, absl::StrFormat("%s must be a scalar", i == 1 ? "on_value" : "off_value"));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t depth, IntAttr(call, "depth", -1));
  if (depth < 0) return OpError(call, absl::StrFormat("attribute 'depth' is %d: expected >= 0", depth));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", -1));
  DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, indices.rank() + 1));
  std::vector<Dim> shape = indices.shape();
  shape.insert(shape.begin() + a, Dim(depth));
  return Type::Tensor(dtype, std::move(shape));
}

// dyn.zeros(shape), dyn.ones(shape), dyn.full(fill_value, shape): the shape's length
// is the rank; the extents are read at run time.
template <bool kFill>
absl::StatusOr<Type> DynFillRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DType dtype;
  if (kFill) {
    DYNVM_ASSIGN_OR_RETURN(const Type fill, TensorArg(call, 0, "fill_value"));
    DYNVM_ASSIGN_OR_RETURN(dtype, DTypeAttr(call, RelayDTypeName(fill.dtype())));
  } else {
    DYNVM_ASSIGN_OR_RETURN(dtype, DTypeAttr(call, "float32"));
  }
  DYNVM_ASSIGN_OR_RETURN(const Type shape, TensorArg(call, kFill ? 1 : 0, "shape", kIndex));
  if (shape.rank() != 1 || !shape.shape()[0].is_const()) {
    return OpError(call, absl::StrFormat("shape %s must be a 1-D tensor of static length", ShapeText(shape.shape())));
  }
  return Type::Tensor(dtype, std::vector<Dim>(shape.shape()[0].const_value(), Dim::Any()));
}

// arange(start, stop, step): 0-d tensors of one dtype; the length is read at run time.
absl::StatusOr<Type> ArangeRel(const OpCall& call) {
  static constexpr DType kNumeric[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type start, TensorArg(call, 0, "start", kNumeric));
  for (int i = 0; i < 3; ++i) {
    if (call.args[i] != Type::Scalar(start.dtype())) {
      return OpError(call, absl::StrFormat("start, stop and step must be scalars of one dtype, got %s",
                                           call.args[i].ToString()));
    }
  }
  return Type::Tensor(start.dtype(), {Dim::Any()});
}

// random_uniform_like(x): x's shape, `dtype` float32 (default) or float64; `seed`
// required, `low` <= `high`.
absl::StatusOr<Type> RandomUniformLikeRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data"));
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, DTypeAttr(call, "float32"));
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    return OpError(call, absl::StrFormat("dtype %s, expected float32 or float64", RelayDTypeName(dtype)));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t seed, IntAttr(call, "seed", -1));
  if (seed < 0 || seed > int64_t{0xffffffff}) {
    return OpError(call, absl::StrFormat("attribute 'seed' is %d: expected one in [0, 2^32)", seed));
  }
  return Type::Tensor(dtype, x.shape());
}

constexpr OpDef kOps[] = {
    {"zeros", 0, 0, ConstantFillRel},
    {"ones", 0, 0, ConstantFillRel},
    {"full", 1, 1, FullRel},
    {"one_hot", 3, 3, OneHotRel},
    {"dyn.zeros", 1, 1, DynFillRel<false>},
    {"dyn.ones", 1, 1, DynFillRel<false>},
    {"dyn.full", 2, 2, DynFillRel<true>},
    {"arange", 3, 3, ArangeRel},
    {"random_uniform_like", 1, 1, RandomUniformLikeRel},
};

}  // namespace

absl::Span<const OpDef> CreationOps() { return kOps; }

}  // namespace dynvm::compiler::internal
