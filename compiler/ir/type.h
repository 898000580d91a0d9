// Types of the IR, as in Relay: tensors with a dtype and symbolic dims, tuples,
// functions (possibly generic over type variables), type variables, and instances of
// algebraic data types (`List[A]`, `Tree[Tensor[(?, 64), float32]]`).
//
//   const Dim n = Dim::Symbol("n");
//   Type x = Type::Tensor(DType::kF32, {n, 768});    // Tensor[(n, 768), float32]
//   Type f = Type::Func({x}, x);                      // fn (Tensor[...]) -> Tensor[...]
//   Type l = Type::Adt("List", {Type::Var("A")});     // List[A]
//   x.shape()[0] == n                                  // true
//
// Types are immutable values sharing their nodes; copying one copies a pointer.
// Equality is structural (dims compared in canonical form, type variables by name).
#ifndef DYNVM_COMPILER_IR_TYPE_H_
#define DYNVM_COMPILER_IR_TYPE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/dim.h"
#include "objects/dtype.h"

namespace dynvm::compiler {

enum class TypeKind : uint8_t {
  kTensor,  // dtype and shape; a scalar is a tensor of rank 0
  kTuple,   // fields
  kFunc,    // type params, params -> ret
  kVar,     // a type variable, by name
  kAdt,     // an algebraic data type applied to type arguments
  kRef,     // a mutable reference cell holding a value of one type
};

class Type {
 public:
  // A rank-0 float32 tensor (so that containers of Types can default-construct).
  Type();

  static Type Tensor(DType dtype, std::vector<Dim> shape);
  static Type Scalar(DType dtype) { return Tensor(dtype, {}); }
  static Type Tuple(std::vector<Type> fields);
  // fn[type_params](params) -> ret.
  static Type Func(std::vector<Type> params, Type ret, std::vector<std::string> type_params = {});
  static Type Var(std::string_view name);
  static Type Adt(std::string_view name, std::vector<Type> args = {});
  // ref(value): what Relay's ref(e) makes, ref_read reads and ref_write writes.
  static Type Ref(Type value);

  TypeKind kind() const;
  bool is_tensor() const { return kind() == TypeKind::kTensor; }

  // kTensor
  DType dtype() const;
  const std::vector<Dim>& shape() const;
  int rank() const { return static_cast<int>(shape().size()); }
  // kTuple: the fields; kFunc: the parameters; kAdt: the type arguments; kRef: the one
  // type of its value. Empty otherwise.
  const std::vector<Type>& fields() const;
  const std::vector<Type>& params() const { return fields(); }
  const std::vector<Type>& args() const { return fields(); }
  // kFunc: the result; the type itself otherwise.
  const Type& ret() const;
  // kFunc: the type variables it is generic over.
  const std::vector<std::string>& type_params() const;
  // kVar and kAdt: the name. Empty otherwise.
  const std::string& name() const;

  // Relay's text: `Tensor[(n, 768), float32]`, `float32` (rank 0), `(T1, T2)`, `(T,)`,
  // `fn (T1, T2) -> R`, `fn [A] (A) -> A`, `A`, `List[A]`, `ref(T)`.
  std::string ToString() const;

  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

  // This type with type variables replaced as `substitution` maps them (a function's own
  // type parameters shadow the map inside it).
  Type SubstituteVars(const std::vector<std::pair<std::string, Type>>& substitution) const;
  // This type with symbolic dims replaced as `substitution` maps them.
  Type SubstituteDims(const absl::flat_hash_map<std::string, Dim>& substitution) const;

 private:
  struct Node;
  explicit Type(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};

// Relay's dtype names: float32, float64, float16, bfloat16, int8, int16, int32, int64,
// uint8, uint16, uint32, uint64, bool, string.
std::string_view RelayDTypeName(DType dtype);
// The dtype of a Relay dtype name; InvalidArgument naming the known ones otherwise.
absl::StatusOr<DType> ParseRelayDType(std::string_view name);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_IR_TYPE_H_
