// NodeContext: a node's inputs, attributes and the calls its converter builds.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/converters.h"
#include "compiler/frontend/onnx/tensor_proto.h"
#include "compiler/ops/op_registry.h"
#include "compiler/passes/fold_constant.h"
#include "kernels/elementwise/convert.h"
#include "objects/allocator.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

// Integer tensors of at most this many elements carry their elements (shapes, axes).
constexpr int64_t kMaxTrackedElements = 64;

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, std::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::string_view AttrTypeName(onnx::AttributeProto::AttributeType t) {
  return onnx::AttributeProto::AttributeType_Name(t);
}

}  // namespace

std::optional<std::vector<int64_t>> ConstantDims(const std::vector<Dim>& dims) {
  std::vector<int64_t> out;
  for (const Dim& d : dims) {
    if (!d.is_const()) return std::nullopt;
    out.push_back(d.const_value());
  }
  return out;
}

std::optional<std::vector<int64_t>> OnnxValue::ConstantElements() const {
  if (!elements) return std::nullopt;
  return ConstantDims(*elements);
}

std::string NodeContext::Where() const {
  return absl::StrFormat("node '%s' (%s, opset %d)", node_.name(), node_.op_type(), opset_);
}

std::string NodeContext::Source() const {
  if (!node_.name().empty()) return absl::StrFormat("ONNX node '%s' (%s)", node_.name(), node_.op_type());
  if (node_.output_size() == 0) return absl::StrFormat("ONNX node (%s)", node_.op_type());
  return absl::StrFormat("ONNX node (%s) making '%s'", node_.op_type(), node_.output(0));
}

absl::Status NodeContext::Unimplemented(std::string_view message) const {
  return absl::UnimplementedError(absl::StrFormat("%s: %s", Where(), message));
}

absl::Status NodeContext::Invalid(std::string_view message) const {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", Where(), message));
}

absl::StatusOr<OnnxValue> NodeContext::Input(int i) const {
  if (i >= num_inputs() || !inputs_[i].has_value()) {
    return Invalid(absl::StrFormat("input %d is required", i));
  }
  return *inputs_[i];
}

std::optional<OnnxValue> NodeContext::OptionalInput(int i) const {
  if (i >= num_inputs()) return std::nullopt;
  return inputs_[i];
}

absl::StatusOr<std::vector<int64_t>> NodeContext::ConstantInts(int i) const {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue v, Input(i));
  std::optional<std::vector<int64_t>> values = v.ConstantElements();
  if (!values) {
    return Unimplemented(absl::StrFormat(
        "input %d ('%s') must be known when the model is compiled (a constant, or shape "
        "arithmetic over constant extents)", i, node_.input(i)));
  }
  return *values;
}

absl::StatusOr<double> NodeContext::ConstantScalar(int i) const {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue v, Input(i));
  if (!v.expr.is(ExprKind::kConstant) || v.expr.value()->num_elements() != 1 ||
      v.expr.value()->dtype() == DType::kString) {
    return Unimplemented(absl::StrFormat("input %d ('%s') must be a constant numeric scalar", i,
                                         node_.input(i)));
  }
  const NDArray& t = v.expr.value();
  return kernels::elementwise::VisitDType(t->dtype(), [&](auto tag) {
    using T = decltype(tag);
    return kernels::elementwise::Convert<double>(*t->data_as<T>());
  });
}

bool NodeContext::HasAttr(std::string_view name) const { return FindAttr(node_, name) != nullptr; }

#define DYNVM_ONNX_ATTR_GETTER(Method, Result, Kind, Read)                                  \
  absl::StatusOr<Result> NodeContext::Method(std::string_view name,                          \
                                             std::optional<Result> fallback) const {         \
    const onnx::AttributeProto* a = FindAttr(node_, name);                                  \
    if (a == nullptr) {                                                                      \
      if (fallback) return *std::move(fallback);                                             \
      return Invalid(absl::StrFormat("attribute '%s' is required", name));                   \
    }                                                                                        \
    if (a->type() != onnx::AttributeProto::Kind) { /* another opset's form */               \
      return Unimplemented(absl::StrFormat("attribute '%s' is %s, expected " #Kind, name,     \
                                           AttrTypeName(a->type())));                        \
    }                                                                                        \
    return Read;                                                                             \
  }
DYNVM_ONNX_ATTR_GETTER(Int, int64_t, INT, a->i())
DYNVM_ONNX_ATTR_GETTER(Float, double, FLOAT, static_cast<double>(a->f()))
DYNVM_ONNX_ATTR_GETTER(String, std::string, STRING, a->s())
DYNVM_ONNX_ATTR_GETTER(Ints, std::vector<int64_t>, INTS,
                       std::vector<int64_t>(a->ints().begin(), a->ints().end()))
DYNVM_ONNX_ATTR_GETTER(Floats, std::vector<double>, FLOATS,
                       std::vector<double>(a->floats().begin(), a->floats().end()))
DYNVM_ONNX_ATTR_GETTER(Strings, std::vector<std::string>, STRINGS,
                       std::vector<std::string>(a->strings().begin(), a->strings().end()))
#undef DYNVM_ONNX_ATTR_GETTER

absl::StatusOr<NDArray> NodeContext::Tensor(std::string_view name) const {
  const onnx::AttributeProto* a = FindAttr(node_, name);
  if (a == nullptr) return Invalid(absl::StrFormat("attribute '%s' is required", name));
  if (a->type() != onnx::AttributeProto::TENSOR) {
    return Invalid(absl::StrFormat("attribute '%s' is %s, expected TENSOR", name, AttrTypeName(a->type())));
  }
  absl::StatusOr<NDArray> t = TensorFromProto(a->t(), base_dir_);
  if (!t.ok()) return absl::Status(t.status().code(), absl::StrFormat("%s: %s", Where(), std::string(t.status().message())));
  return t;
}

absl::StatusOr<Type> NodeContext::TypeAttr(std::string_view name) const {
  const onnx::AttributeProto* a = FindAttr(node_, name);
  if (a == nullptr) return Invalid(absl::StrFormat("attribute '%s' is required", name));
  if (a->type() != onnx::AttributeProto::TYPE_PROTO) {
    return Invalid(absl::StrFormat("attribute '%s' is %s, expected TYPE_PROTO", name, AttrTypeName(a->type())));
  }
  return TypeFromProto(absl::StrFormat("%s: attribute '%s'", Where(), name), a->tp());
}

std::optional<int> NodeContext::SubgraphInputRank(std::string_view name, int i) const {
  const onnx::AttributeProto* a = FindAttr(node_, name);
  if (a == nullptr || a->type() != onnx::AttributeProto::GRAPH || i >= a->g().input_size()) {
    return std::nullopt;
  }
  const onnx::TypeProto& t = a->g().input(i).type();
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  return t.tensor_type().shape().dim_size();
}

std::optional<std::vector<int64_t>> NodeContext::SubgraphOutputShape(std::string_view name, int i) const {
  const onnx::AttributeProto* a = FindAttr(node_, name);
  if (a == nullptr || a->type() != onnx::AttributeProto::GRAPH || i >= a->g().output_size()) {
    return std::nullopt;
  }
  const onnx::TypeProto& t = a->g().output(i).type();
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> shape;
  for (const onnx::TensorShapeProto::Dimension& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    shape.push_back(d.dim_value());
  }
  return shape;
}

absl::StatusOr<OnnxValue> NodeContext::Subgraph(std::string_view name,
                                                const std::vector<OnnxValue>& inputs) const {
  const onnx::AttributeProto* a = FindAttr(node_, name);
  if (a == nullptr) return Invalid(absl::StrFormat("attribute '%s' is required", name));
  if (a->type() != onnx::AttributeProto::GRAPH) {
    return Invalid(absl::StrFormat("attribute '%s' is %s, expected GRAPH", name, AttrTypeName(a->type())));
  }
  absl::StatusOr<OnnxValue> g = ImportSubgraph(a->g(), scope_, inputs, opset_, base_dir_);
  if (!g.ok()) {
    return absl::Status(g.status().code(), absl::StrFormat("%s: in '%s': %s", Where(), name,
                                                           std::string(g.status().message())));
  }
  return g;
}

absl::StatusOr<OnnxValue> NodeContext::Call(std::string_view op, std::vector<OnnxValue> args,
                                            kernels::Attrs attrs) const {
  const OpDef* def = FindOp(op);
  if (def == nullptr) return absl::InternalError(absl::StrFormat("%s: no operator %s", Where(), op));
  std::vector<Type> types;
  std::vector<Expr> exprs;
  for (OnnxValue& a : args) {
    types.push_back(a.type);
    exprs.push_back(std::move(a.expr));
  }
  // The checker has accepted the model, so a relation that rejects the call means the
  // operator lacks a case (a dtype, a layout): unsupported rather than invalid.
  absl::StatusOr<Type> type = InferCallType(*def, types, attrs);
  if (!type.ok()) {
    if (std::optional<OnnxValue> wide = CallWidened(op, args, types, exprs, attrs)) return *std::move(wide);
    return Unimplemented(std::string(type.status().message()));
  }
  Expr call = Expr::Call(Expr::Op(op), std::move(exprs), std::move(attrs), Source());
  // A call over constants is evaluated now, so that the shape arithmetic after it
  // (Neg of an axis, ConstantOfShape, a Cast) still sees elements.
  if (type->is_tensor() && std::all_of(call.args().begin(), call.args().end(), [](const Expr& a) {
        return a.is(ExprKind::kConstant);
      })) {
    DYNVM_ASSIGN_OR_RETURN(Expr folded, FoldConstants(call));
    if (folded.is(ExprKind::kConstant)) return Constant(folded.value());
  }
  return OnnxValue{std::move(call), *std::move(type), std::nullopt};
}

std::optional<OnnxValue> NodeContext::CallWidened(std::string_view op, const std::vector<OnnxValue>& args,
                                                  const std::vector<Type>& types, const std::vector<Expr>& exprs,
                                                  const kernels::Attrs& attrs) const {
  std::optional<DType> half;
  for (const Type& t : types) {
    if (!t.is_tensor() || (t.dtype() != DType::kF16 && t.dtype() != DType::kBF16)) continue;
    if (half && *half != t.dtype()) return std::nullopt;  // both half types: no one to store back in
    half = t.dtype();
  }
  if (!half) return std::nullopt;
  const kernels::Attrs to_f32 = {{"dtype", std::string(RelayDTypeName(DType::kF32))}};
  std::vector<OnnxValue> wide;
  for (size_t i = 0; i < args.size(); ++i) {
    const OnnxValue arg{exprs[i], types[i], args[i].elements};
    if (!types[i].is_tensor() || types[i].dtype() != *half) {
      wide.push_back(arg);
      continue;
    }
    absl::StatusOr<OnnxValue> cast = Call("cast", {arg}, to_f32);
    if (!cast.ok()) return std::nullopt;
    wide.push_back(*std::move(cast));
  }
  absl::StatusOr<OnnxValue> out = Call(op, std::move(wide), attrs);
  if (!out.ok()) return std::nullopt;
  if (!out->type.is_tensor() || out->type.dtype() != DType::kF32) return *std::move(out);
  absl::StatusOr<OnnxValue> narrow = Call("cast", {*std::move(out)}, {{"dtype", std::string(RelayDTypeName(*half))}});
  if (!narrow.ok()) return std::nullopt;
  return *std::move(narrow);
}

OnnxValue NodeContext::Narrow(const OnnxValue& v, Type type) const {
  Expr var = Expr::Var(absl::StrFormat("%s_narrowed", node_.output(0)), type);
  bindings_.emplace_back(var, v.expr);
  return OnnxValue{std::move(var), std::move(type), v.elements};
}

OnnxValue NodeContext::Field(const OnnxValue& tuple, int index) {
  return OnnxValue{Expr::TupleGetItem(tuple.expr, index), tuple.type.fields()[index], std::nullopt};
}

OnnxValue NodeContext::Constant(NDArray value) {
  std::vector<Dim> dims;
  for (const int64_t d : value->shape()) dims.emplace_back(d);
  OnnxValue v{Expr::Constant(value), Type::Tensor(value->dtype(), std::move(dims)), std::nullopt};
  const DType dtype = value->dtype();
  if ((dtype == DType::kI64 || dtype == DType::kI32) && value->ndim() <= 1 &&
      value->num_elements() <= kMaxTrackedElements) {
    std::vector<Dim> elements;
    for (int64_t i = 0; i < value->num_elements(); ++i) {
      elements.emplace_back(dtype == DType::kI64 ? value->data_as<int64_t>()[i]
                                                 : int64_t{value->data_as<int32_t>()[i]});
    }
    v.elements = std::move(elements);
  }
  return v;
}

OnnxValue NodeContext::ConstantI64(const std::vector<int64_t>& values, bool scalar) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(values.size()));
  NDArray t = *NDArrayObj::Empty(shape, DType::kI64, MakeNaiveAllocator());
  if (!values.empty()) std::memcpy(t->data(), values.data(), values.size() * sizeof(int64_t));
  return Constant(std::move(t));
}

absl::StatusOr<OnnxValue> NodeContext::ConstantScalarOf(DType dtype, double value) {
  if (dtype == DType::kString) {
    return absl::UnimplementedError("a numeric scalar constant of dtype string");
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray t, NDArrayObj::Empty({}, dtype, MakeNaiveAllocator()));
  // The kernels' conversion rules (an integer saturates, NaN becomes 0), never a cast
  // out of range.
  kernels::elementwise::VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    *t->data_as<T>() = kernels::elementwise::Convert<T>(value);
  });
  return Constant(std::move(t));
}

}  // namespace dynvm::compiler::onnx_frontend
