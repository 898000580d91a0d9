// Relations of the elementwise operators (kernels/elementwise/unary.cc, kernels/elementwise/binary.cc): maps
// keep their argument's type (isnan gives bool, cast the `dtype` attribute); binary
// operators broadcast two tensors of one dtype (comparisons give bool); where
// broadcasts all three; fused_elementwise (the fusion pass's) broadcasts all its inputs.
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"

namespace dynvm::compiler::internal {
namespace {

constexpr DType kFloat[] = {DType::kF32};
constexpr DType kFloats[] = {DType::kF32, DType::kF64};  // f32 maps that take f64 too
constexpr DType kSigned[] = {DType::kF32, DType::kI32, DType::kI64};
constexpr DType kBool[] = {DType::kBool};
// The dtypes of the binary kernels (kernels/elementwise/binary.cc): arithmetic, and power.
constexpr DType kArithmetic[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                 DType::kU8,  DType::kI8,  DType::kI16, DType::kI32,
                                 DType::kI64, DType::kU16, DType::kU32, DType::kU64};
constexpr DType kPowerDTypes[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};

template <const auto& kDTypes>
absl::StatusOr<Type> MapRel(const OpCall& call) {
  return TensorArg(call, 0, "x", kDTypes);
}

absl::StatusOr<Type> IsNanRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "x", kFloat));
  return Type::Tensor(DType::kBool, x.shape());
}

absl::StatusOr<Type> LogicalNotRel(const OpCall& call) {
  return TensorArg(call, 0, "x", kBool);
}

absl::StatusOr<Type> CastRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "x"));
  absl::StatusOr<std::string> name = kernels::GetStringAttr(call.attrs, "dtype");
  if (!name.ok()) return OpError(call, name.status().message());
  absl::StatusOr<DType> dtype = ParseDType(*name);
  if (!dtype.ok()) return OpError(call, dtype.status().message());
  return Type::Tensor(*dtype, x.shape());
}

// Two tensors of one dtype broadcast; the result has `result` dtype, or theirs.
absl::StatusOr<Type> Broadcast2(const OpCall& call, std::optional<DType> result) {
  DYNVM_ASSIGN_OR_RETURN(const Type a, TensorArg(call, 0, "lhs"));
  DYNVM_ASSIGN_OR_RETURN(const Type b, TensorArg(call, 1, "rhs"));
  if (a.dtype() != b.dtype()) {
    return OpError(call, absl::StrFormat("operands have dtypes %s and %s, expected one dtype",
                                         std::string(RelayDTypeName(a.dtype())),
                                         std::string(RelayDTypeName(b.dtype()))));
  }
  DYNVM_ASSIGN_OR_RETURN(std::vector<Dim> shape, BroadcastShapes(call, a.shape(), b.shape()));
  return Type::Tensor(result.value_or(a.dtype()), std::move(shape));
}

absl::StatusOr<Type> ArithmeticRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(
      TensorArg(call, 0, "lhs", call.op == "power" ? absl::Span<const DType>(kPowerDTypes) : kArithmetic)
          .status());
  return Broadcast2(call, std::nullopt);
}
absl::StatusOr<Type> ShiftRel(const OpCall& call) {
  static constexpr DType kIntegers[] = {DType::kU8, DType::kU16, DType::kU32, DType::kU64,
                                        DType::kI8, DType::kI16, DType::kI32, DType::kI64};
  DYNVM_RETURN_IF_ERROR(TensorArg(call, 0, "lhs", kIntegers).status());
  return Broadcast2(call, std::nullopt);
}
absl::StatusOr<Type> CompareRel(const OpCall& call) { return Broadcast2(call, DType::kBool); }
absl::StatusOr<Type> LogicalRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(TensorArg(call, 0, "lhs", kBool).status());
  return Broadcast2(call, std::nullopt);
}

// Relay's nn.bias_add: data [..., c (at axis), ...] + bias [c] -> data's type.
absl::StatusOr<Type> BiasAddRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type data, TensorArg(call, 0, "data", kArithmetic));
  const DType dtype[] = {data.dtype()};
  DYNVM_ASSIGN_OR_RETURN(const Type bias, TensorArg(call, 1, "bias", dtype));
  DYNVM_RETURN_IF_ERROR(CheckKernelAttrs(call));
  DYNVM_ASSIGN_OR_RETURN(const int64_t attr, IntAttr(call, "axis", 1));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(call, attr, data.rank()));
  if (bias.rank() != 1 || !MayEqual(bias.shape()[0], data.shape()[axis])) {
    return OpError(call, absl::StrFormat("bias has shape %s, expected [%s] (data %s, axis %d)",
                                         ShapeText(bias.shape()), data.shape()[axis].ToString(),
                                         ShapeText(data.shape()), attr));
  }
  std::vector<Dim> shape = data.shape();
  shape[axis] = Unify(shape[axis], bias.shape()[0]);
  return Type::Tensor(data.dtype(), std::move(shape));
}

absl::StatusOr<Type> WhereRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type cond, TensorArg(call, 0, "condition", kBool));
  const Type values[] = {call.args[1], call.args[2]};
  DYNVM_ASSIGN_OR_RETURN(const Type xy, Broadcast2(OpCall{call.op, values, call.attrs}, std::nullopt));
  DYNVM_ASSIGN_OR_RETURN(std::vector<Dim> shape, BroadcastShapes(call, cond.shape(), xy.shape()));
  return Type::Tensor(xy.dtype(), std::move(shape));
}

absl::StatusOr<Type> FusedElementwiseRel(const OpCall& call) {
  return FusedProgramRel(call, call.args.size());
}

constexpr OpDef kOps[] = {
    {"negative", 1, 1, MapRel<kSigned>},     {"abs", 1, 1, MapRel<kSigned>},
    {"sign", 1, 1, MapRel<kSigned>},         {"exp", 1, 1, MapRel<kFloats>},
    {"log", 1, 1, MapRel<kFloats>},          {"sqrt", 1, 1, MapRel<kFloats>},
    {"sinh", 1, 1, MapRel<kFloats>},         {"cosh", 1, 1, MapRel<kFloats>},
    {"asin", 1, 1, MapRel<kFloats>},         {"acos", 1, 1, MapRel<kFloats>},
    {"atan", 1, 1, MapRel<kFloats>},         {"asinh", 1, 1, MapRel<kFloats>},
    {"acosh", 1, 1, MapRel<kFloats>},        {"atanh", 1, 1, MapRel<kFloats>},
    {"rsqrt", 1, 1, MapRel<kFloat>},         {"reciprocal", 1, 1, MapRel<kFloat>},
    {"tanh", 1, 1, MapRel<kFloat>},          {"sigmoid", 1, 1, MapRel<kFloat>},
    {"erf", 1, 1, MapRel<kFloat>},           {"sin", 1, 1, MapRel<kFloat>},
    {"cos", 1, 1, MapRel<kFloat>},           {"floor", 1, 1, MapRel<kFloat>},
    {"ceil", 1, 1, MapRel<kFloat>},          {"round", 1, 1, MapRel<kFloat>},
    {"nn.relu", 1, 1, MapRel<kFloat>},       {"nn.leaky_relu", 1, 1, MapRel<kFloat>},
    {"gelu", 1, 1, MapRel<kFloat>},          {"clip", 1, 1, MapRel<kFloat>},
    {"isnan", 1, 1, IsNanRel},                {"logical_not", 1, 1, LogicalNotRel},
    {"cast", 1, 1, CastRel},
    {"add", 2, 2, ArithmeticRel},             {"subtract", 2, 2, ArithmeticRel},
    {"multiply", 2, 2, ArithmeticRel},        {"divide", 2, 2, ArithmeticRel},
    {"power", 2, 2, ArithmeticRel},           {"maximum", 2, 2, ArithmeticRel},
    {"minimum", 2, 2, ArithmeticRel},         {"mod", 2, 2, ArithmeticRel},
    {"floor_mod", 2, 2, ArithmeticRel},
    {"left_shift", 2, 2, ShiftRel},           {"right_shift", 2, 2, ShiftRel},
    {"equal", 2, 2, CompareRel},              {"not_equal", 2, 2, CompareRel},
    {"less", 2, 2, CompareRel},               {"less_equal", 2, 2, CompareRel},
    {"greater", 2, 2, CompareRel},            {"greater_equal", 2, 2, CompareRel},
    {"logical_and", 2, 2, LogicalRel},        {"logical_or", 2, 2, LogicalRel},
    {"logical_xor", 2, 2, LogicalRel},        {"where", 3, 3, WhereRel},
    {"nn.bias_add", 2, 2, BiasAddRel},
    {"fused_elementwise", 1, -1, FusedElementwiseRel},
};

}  // namespace

absl::Span<const OpDef> ElementwiseOps() { return kOps; }

}  // namespace dynvm::compiler::internal
