// The IR's types (compiler/ir/type.h): construction, equality, substitution of
// type variables, and their text.
#include "compiler/ir/type.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace dynvm::compiler {

// One node for every kind: the fields a kind does not use stay empty.
struct Type::Node {
  TypeKind kind = TypeKind::kTensor;
  DType dtype = DType::kF32;               // kTensor
  std::vector<Dim> shape;                  // kTensor
  std::vector<Type> fields;                // kTuple fields, kFunc params, kAdt args
  std::optional<Type> ret;                 // kFunc
  std::vector<std::string> type_params;    // kFunc
  std::string name;                        // kVar, kAdt
};

namespace {

constexpr std::pair<DType, std::string_view> kRelayNames[] = {
    {DType::kF32, "float32"}, {DType::kF64, "float64"}, {DType::kF16, "float16"},
    {DType::kBF16, "bfloat16"}, {DType::kI8, "int8"},   {DType::kI16, "int16"},
    {DType::kI32, "int32"},   {DType::kI64, "int64"},   {DType::kU8, "uint8"},
    {DType::kBool, "bool"},   {DType::kU16, "uint16"},  {DType::kU32, "uint32"},
    {DType::kU64, "uint64"},  {DType::kString, "string"}};

}  // namespace

std::string_view RelayDTypeName(DType dtype) {
  for (const auto& [d, name] : kRelayNames) {
    if (d == dtype) return name;
  }
  return "unknown";
}

absl::StatusOr<DType> ParseRelayDType(std::string_view name) {
  for (const auto& [d, known] : kRelayNames) {
    if (known == name) return d;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown dtype '%s': expected one of float32, float64, float16, bfloat16, int8, int16, "
      "int32, int64, uint8, uint16, uint32, uint64, bool, string",
      name));
}

Type::Type() : Type(Tensor(DType::kF32, {})) {}

Type Type::Tensor(DType dtype, std::vector<Dim> shape) {
  auto node = std::make_shared<Node>();
  node->kind = TypeKind::kTensor;
  node->dtype = dtype;
  node->shape = std::move(shape);
  return Type(std::move(node));
}

Type Type::Tuple(std::vector<Type> fields) {
  auto node = std::make_shared<Node>();
  node->kind = TypeKind::kTuple;
  node->fields = std::move(fields);
  return Type(std::move(node));
}

Type Type::Func(std::vector<Type> params, Type ret, std::vector<std::string> type_params) {
  auto node = std::make_shared<Node>();
  node->kind = TypeKind::kFunc;
  node->fields = std::move(params);
  node->ret = std::move(ret);
  node->type_params = std::move(type_params);
  return Type(std::move(node));
}

Type Type::Var(std::string_view name) {
  auto node = std::make_shared<Node>();
  node->kind = TypeKind::kVar;
  node->name = std::string(name);
  return Type(std::move(node));
}

Type Type::Adt(std::string_view name, std::vector<Type> args) {
  auto node = std::make_shared<Node>();
  node->kind = TypeKind::kAdt;
  node->name = std::string(name);
  node->fields = std::move(args);
  return Type(std::move(node));
}

Type Type::Ref(Type value) {
  auto node = std::make_shared<Node>();
  node->kind = TypeKind::kRef;
  node->fields = {std::move(value)};
  return Type(std::move(node));
}

TypeKind Type::kind() const { return node_->kind; }
DType Type::dtype() const { return node_->dtype; }
const std::vector<Dim>& Type::shape() const { return node_->shape; }
const std::vector<Type>& Type::fields() const { return node_->fields; }
const std::vector<std::string>& Type::type_params() const { return node_->type_params; }
const std::string& Type::name() const { return node_->name; }

const Type& Type::ret() const { return node_->ret ? *node_->ret : *this; }

std::string Type::ToString() const {
  const Node& n = *node_;
  const auto join = [](const std::vector<Type>& types) {
    return absl::StrJoin(types, ", ", [](std::string* out, const Type& t) {
      out->append(t.ToString());
    });
  };
  switch (n.kind) {
    case TypeKind::kTensor: {
      if (n.shape.empty()) return std::string(RelayDTypeName(n.dtype));
      const std::string dims = absl::StrJoin(n.shape, ", ", [](std::string* out, const Dim& d) {
        out->append(d.ToString());
      });
      return absl::StrCat("Tensor[(", dims, "), ", std::string(RelayDTypeName(n.dtype)), "]");
    }
    case TypeKind::kTuple:
      return n.fields.size() == 1 ? absl::StrCat("(", n.fields[0].ToString(), ",)")
                                  : absl::StrCat("(", join(n.fields), ")");
    case TypeKind::kFunc: {
      std::string out = "fn ";
      if (!n.type_params.empty()) absl::StrAppend(&out, "[", absl::StrJoin(n.type_params, ", "), "] ");
      absl::StrAppend(&out, "(", join(n.fields), ") -> ", ret().ToString());
      return out;
    }
    case TypeKind::kVar: return n.name;
    case TypeKind::kAdt:
      return n.fields.empty() ? n.name : absl::StrCat(n.name, "[", join(n.fields), "]");
    case TypeKind::kRef: return absl::StrCat("ref(", n.fields[0].ToString(), ")");
  }
  return "";
}

bool operator==(const Type& a, const Type& b) {
  if (a.node_ == b.node_) return true;
  const Type::Node &x = *a.node_, &y = *b.node_;
  if (x.kind != y.kind || x.dtype != y.dtype || x.shape != y.shape || x.fields != y.fields ||
      x.type_params != y.type_params || x.name != y.name) {
    return false;
  }
  return x.kind != TypeKind::kFunc || a.ret() == b.ret();
}

Type Type::SubstituteVars(const std::vector<std::pair<std::string, Type>>& substitution) const {
  const Node& n = *node_;
  const auto all = [&](const std::vector<Type>& types,
                       const std::vector<std::pair<std::string, Type>>& sub) {
    std::vector<Type> out;
    out.reserve(types.size());
    for (const Type& t : types) out.push_back(t.SubstituteVars(sub));
    return out;
  };
  switch (n.kind) {
    case TypeKind::kTensor: return *this;
    case TypeKind::kVar:
      for (const auto& [name, type] : substitution) {
        if (name == n.name) return type;
      }
      return *this;
    case TypeKind::kTuple: return Tuple(all(n.fields, substitution));
    case TypeKind::kAdt: return Adt(n.name, all(n.fields, substitution));
    case TypeKind::kRef: return Ref(n.fields[0].SubstituteVars(substitution));
    case TypeKind::kFunc: {
      std::vector<std::pair<std::string, Type>> inner;
      for (const auto& entry : substitution) {
        if (std::find(n.type_params.begin(), n.type_params.end(), entry.first) ==
            n.type_params.end()) {
          inner.push_back(entry);
        }
      }
      return Func(all(n.fields, inner), ret().SubstituteVars(inner), n.type_params);
    }
  }
  return *this;
}

Type Type::SubstituteDims(const absl::flat_hash_map<std::string, Dim>& substitution) const {
  const Node& n = *node_;
  std::vector<Type> fields;
  fields.reserve(n.fields.size());
  for (const Type& t : n.fields) fields.push_back(t.SubstituteDims(substitution));
  switch (n.kind) {
    case TypeKind::kTensor: {
      std::vector<Dim> shape;
      shape.reserve(n.shape.size());
      for (const Dim& d : n.shape) shape.push_back(d.Substitute(substitution));
      return Tensor(n.dtype, std::move(shape));
    }
    case TypeKind::kVar: return *this;
    case TypeKind::kTuple: return Tuple(std::move(fields));
    case TypeKind::kAdt: return Adt(n.name, std::move(fields));
    case TypeKind::kRef: return Ref(std::move(fields[0]));
    case TypeKind::kFunc:
      return Func(std::move(fields), ret().SubstituteDims(substitution), n.type_params);
  }
  return *this;
}

}  // namespace dynvm::compiler
