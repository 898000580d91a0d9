// A module: the global functions of a program (@main and the functions it calls, which
// may be recursive and mutually recursive) and its algebraic data types.
//
//   Module mod;
//   const Type a = Type::Var("A"), list_a = Type::Adt("List", {a});
//   DYNVM_RETURN_IF_ERROR(mod.AddType(          // type List[A] { Cons(A, List[A]), Nil }
//       {"List", {"A"}, {Expr::Constructor("Cons", "List", 0, {a, list_a}),
//                        Expr::Constructor("Nil", "List", 1, {})}}));
//   DYNVM_RETURN_IF_ERROR(mod.AddFunction("main", Expr::Function({x}, body)));
//   DYNVM_ASSIGN_OR_RETURN(const Expr main, mod.Function("main"));
//
// Functions keep the order they were added in (the printer and codegen use it);
// passes replace them with SetFunction.
#ifndef DYNVM_COMPILER_IR_MODULE_H_
#define DYNVM_COMPILER_IR_MODULE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/expr.h"

namespace dynvm::compiler {

// `type Name[type_params] { constructors }`. Constructor i has tag i.
struct TypeData {
  std::string name;
  std::vector<std::string> type_params;
  std::vector<Expr> constructors;  // kConstructor, adt() == name, tag() == position

  // The type of a value of this ADT with its own type parameters: `List[A]`.
  Type SelfType() const;
};

class Module {
 public:
  // This module with each function replaced by `fn` of it (a pass applied function by
  // function); the first error stops and is returned.
  absl::StatusOr<Module> MapFunctions(
      const std::function<absl::StatusOr<Expr>(const Expr&)>& fn) const;

  // Adds @`name`. AlreadyExists if the module has one; InvalidArgument unless
  // `function` is a kFunction.
  absl::Status AddFunction(std::string_view name, Expr function);
  // Replaces @`name`, which must exist (NotFound otherwise), with the kFunction
  // `function`.
  absl::Status SetFunction(std::string_view name, Expr function);
  // @`name`; NotFound naming it otherwise.
  absl::StatusOr<Expr> Function(std::string_view name) const;
  bool HasFunction(std::string_view name) const;
  // The names of the functions, in the order they were added.
  const std::vector<std::string>& function_names() const { return function_order_; }

  // Names @`function`'s results in the executable's signature (ONNX graph outputs): one
  // per field when it returns a tuple, else one. NotFound without the function. Codegen
  // checks the count against the function's type.
  absl::Status SetResultNames(std::string_view function, std::vector<std::string> names);
  // The names SetResultNames gave, or empty.
  const std::vector<std::string>& ResultNames(std::string_view function) const;

  // Adds an ADT. AlreadyExists if a type or a constructor of the same name exists;
  // InvalidArgument unless each constructor is a kConstructor of this ADT whose tag is
  // its position.
  absl::Status AddType(TypeData type);
  // The ADT `name`, or null.
  const TypeData* FindType(std::string_view name) const;
  // The constructor `name` of any ADT, or null.
  const Expr* FindConstructor(std::string_view name) const;
  // The names of the ADTs, in the order they were added.
  const std::vector<std::string>& type_names() const { return type_order_; }

 private:
  absl::flat_hash_map<std::string, Expr> functions_;
  std::vector<std::string> function_order_;
  absl::flat_hash_map<std::string, std::vector<std::string>> result_names_;
  absl::flat_hash_map<std::string, TypeData> types_;
  std::vector<std::string> type_order_;
  absl::flat_hash_map<std::string, Expr> constructors_;
};

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_IR_MODULE_H_
