// Expressions of the IR, in the style of Relay: a functional language of variables,
// constants, operator calls with typed attributes, calls of functions, closures and
// constructors, let, if, tuples and projections, anonymous functions (which capture
// the variables they use), and `match` over algebraic data types.
//
//   const Type t = Type::Tensor(DType::kF32, {Dim::Symbol("n"), 768});
//   Expr x = Expr::Var("x", t), w = Expr::Var("w");
//   Expr y = Expr::Call(Expr::Op("nn.dense"), {x, w}, {{"units", int64_t{768}}});
//   Expr f = Expr::Function({x, w}, Expr::Call(Expr::Op("nn.relu"), {y}));
//
// Expressions are immutable values that share their nodes; copying one copies a
// pointer, and passes build new nodes only where something changed. A Var's identity
// is its id, fixed at creation: two Vars named "x" are different variables, and a copy
// of a Var (with a type attached, say) is the same variable. Other nodes are identified
// by their node (same_as).
//
// Accessors belong to kinds (a Call's `args`, a Let's `var`...). Called on another kind
// they return an empty value, never fail.
#ifndef DYNVM_COMPILER_IR_EXPR_H_
#define DYNVM_COMPILER_IR_EXPR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/type.h"
#include "kernels/kernel.h"
#include "objects/ndarray.h"

namespace dynvm::compiler {

enum class ExprKind : uint8_t {
  kVar,           // a local variable: a parameter or let-bound
  kGlobalVar,     // @name, a function of the module
  kConstant,      // a tensor value
  kOp,            // a primitive operator by name (nn.dense), only as a callee
  kCall,          // callee(args) with attrs; callee: Op, GlobalVar, Var, Function, Constructor
  kLet,           // let var = value; body
  kIf,            // if (cond) { then } else { else }; cond a bool scalar tensor
  kTuple,         // (fields)
  kTupleGetItem,  // tuple.index
  kFunction,      // fn (params) -> ret_type { body }
  kConstructor,   // a constructor of an ADT, as a callee (or a value if it takes nothing)
  kMatch,         // match (data) { clauses }
};

class Pattern;
struct Clause;

class Expr {
 public:
  // An empty tuple (so that containers of Exprs can default-construct).
  Expr();

  // A fresh variable: distinct from every other, however named. `annotation` is its
  // declared type, if any.
  static Expr Var(std::string_view name_hint, std::optional<Type> annotation = std::nullopt);
  static Expr GlobalVar(std::string_view name);
  static Expr Constant(NDArray value);
  static Expr Op(std::string_view name);
  // `source`: see source() below.
  static Expr Call(Expr callee, std::vector<Expr> args, kernels::Attrs attrs = {}, std::string source = {});
  static Expr Let(Expr var, Expr value, Expr body);
  static Expr If(Expr cond, Expr then_branch, Expr else_branch);
  static Expr Tuple(std::vector<Expr> fields);
  static Expr TupleGetItem(Expr tuple, int index);
  // `params` are Vars. `attrs` mark functions for the passes (Primitive=1 on a fused
  // group, for instance).
  static Expr Function(std::vector<Expr> params, Expr body,
                       std::optional<Type> ret_type = std::nullopt,
                       std::vector<std::string> type_params = {}, kernels::Attrs attrs = {});
  // Constructor `name` of the ADT `adt`, whose values carry `tag` and fields of
  // `field_types` (in terms of the ADT's type parameters).
  static Expr Constructor(std::string_view name, std::string_view adt, int tag,
                          std::vector<Type> field_types);
  // `complete`: the clauses cover every value (checked by the type checker); an
  // incomplete match that finds no clause stops the program with an error.
  static Expr Match(Expr data, std::vector<Clause> clauses, bool complete = true);

  ExprKind kind() const;
  bool is(ExprKind k) const { return kind() == k; }

  // kVar: its id, unique per variable; 0 for other kinds.
  uint64_t var_id() const;
  // kVar: its name hint; kGlobalVar, kOp, kConstructor: the name.
  const std::string& name() const;
  // kVar: the declared type; kFunction: the declared result type.
  const std::optional<Type>& annotation() const;
  // kConstant
  const NDArray& value() const;
  // kCall: the callee; kLet: the value; kTupleGetItem: the tuple; kFunction: the body;
  // kMatch: the data; kIf: the condition.
  const Expr& operand() const;
  // kCall: args; kTuple: fields; kFunction: params.
  const std::vector<Expr>& operands() const;
  const std::vector<Expr>& args() const { return operands(); }
  const std::vector<Expr>& fields() const { return operands(); }
  const std::vector<Expr>& params() const { return operands(); }
  const Expr& callee() const { return operand(); }
  const Expr& tuple() const { return operand(); }
  const Expr& data() const { return operand(); }
  const Expr& cond() const { return operand(); }
  // kCall, kFunction
  const kernels::Attrs& attrs() const;
  // Where the expression comes from in the model a front end read ("ONNX node
  // 'Gather_3' (Gather)", "model.relay:3:18"), for messages: code generation keeps a
  // call's beside its instructions, so that a run-time failure names it, and names it
  // when it refuses an expression. Empty when unknown.
  const std::string& source() const;
  // This expression with `source` (the same variable, for a Var).
  Expr WithSource(std::string source) const;
  // kLet: the bound Var.
  const Expr& var() const;
  // kLet: the body; kFunction: the body; kIf: the then branch.
  const Expr& body() const;
  const Expr& then_branch() const { return body(); }
  // kIf
  const Expr& else_branch() const;
  // kTupleGetItem: the index; kConstructor: the tag.
  int index() const;
  int tag() const { return index(); }
  // kFunction
  const std::vector<std::string>& type_params() const;
  // kConstructor: the ADT's name and the fields' types.
  const std::string& adt() const;
  const std::vector<Type>& field_types() const;
  // kMatch
  const std::vector<Clause>& clauses() const;
  bool complete() const;

  // The type inferred by type checking; empty before.
  const std::optional<Type>& checked_type() const;
  // This expression with `type` as its checked type (the same variable, for a Var).
  Expr WithType(Type type) const;

  // The same node (for a Var, the same variable).
  bool same_as(const Expr& other) const;
  // A key for hash maps keyed by identity (a Var's id, else the node's address).
  uintptr_t identity() const;

 private:
  struct Node;
  explicit Expr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  static Expr Make(Node node);
  std::shared_ptr<const Node> node_;
};

// One source for a call that stands for several (a fused group, dense layers merged):
// the distinct non-empty `sources` in order, joined by ", ", the fourth and later
// counted ("and 2 more").
std::string JoinSources(const std::vector<std::string>& sources);

enum class PatternKind : uint8_t {
  kWildcard,     // _
  kVar,          // binds the value to a Var
  kConstructor,  // Cons(p1, p2): the value has this constructor, its fields match p1, p2
  kTuple,        // (p1, p2)
};

class Pattern {
 public:
  static Pattern Wildcard();
  static Pattern Bind(Expr var);
  static Pattern Constructor(Expr constructor, std::vector<Pattern> fields);
  static Pattern Tuple(std::vector<Pattern> fields);

  PatternKind kind() const { return kind_; }
  // kVar: the Var; kConstructor: the Constructor.
  const Expr& expr() const { return expr_; }
  // kConstructor, kTuple
  const std::vector<Pattern>& fields() const { return fields_; }

 private:
  Pattern(PatternKind kind, Expr expr, std::vector<Pattern> fields)
      : kind_(kind), expr_(std::move(expr)), fields_(std::move(fields)) {}
  PatternKind kind_;
  Expr expr_;
  std::vector<Pattern> fields_;
};

struct Clause {
  Pattern pattern;
  Expr body;
};

// Whether `e` has no subexpressions: a variable, global, constant, operator or
// constructor (an atom of A-normal form; what the printer never binds to %N).
bool IsAtom(const Expr& e);

// A global function marked Closure=1 (by lambda lifting, passes/lambda_lift.h) is a
// closure's code: its parameters are the values the closure captures and its body is a
// function literal over them; a call of it makes the closure.
inline constexpr std::string_view kClosureCodeAttr = "Closure";
bool IsClosureCode(const Expr& fn);

// Calls `f` on each expression `e` is made of, in evaluation order: a call's callee then
// its arguments; a tuple's fields; a projection's tuple; a let's value then its body; an
// if's condition then its branches; a function's body; a match's data then its clauses'
// bodies. The variables a let, function or pattern binds are not visited.
void ForEachChild(const Expr& e, const std::function<void(const Expr&)>& f);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_IR_EXPR_H_
