// Four walks over each def that has literals: the function (the def or a literal) each
// node is used in;
// the literals that lets bind (and the variables binding them); which of those capture
// nothing (in evaluation order, so that a literal using an earlier one that became a
// global does not capture it); then the rewrite, bottom-up, so that a literal's own
// literals are lifted before it and what it captures is final.
//
// In graph form a node may be used both inside a literal and outside it
// (`%1 = ...; let %f = fn (...) { ... %1 ... }`). It is computed once, outside, and
// captured, as it was before lifting: the literal's global takes it as a parameter.
#include "compiler/passes/lambda_lift.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/free_vars.h"
#include "compiler/ir/rewrite.h"
#include "compiler/passes/type_infer.h"

namespace dynvm::compiler {
namespace {

class Lifter {
 public:
  Lifter(const Module& module, Module& out) : module_(module), out_(out) {}

  absl::StatusOr<Expr> Run(const std::string& def_name, const Expr& def);

 private:
  absl::Status Internal(std::string_view what) const {
    return absl::InternalError(absl::StrCat("lambda lifting in @", def_name_, ": ", std::string(what)));
  }
  std::string NewName();
  absl::StatusOr<Type> TypeOf(const Expr& e) const;
  // Finds the function each node is used in.
  void FindScopes(const Expr& body);
  // Whether scope `inner` is `outer` or nested in it.
  bool Within(int inner, int outer) const;
  // The outermost nodes of `literal`'s body (through its own literals) that are also
  // used outside it.
  std::vector<Expr> SharedWithOutside(const Expr& literal) const;
  // Finds the let-bound literals and decides which capture nothing.
  absl::Status Classify(const Expr& body);
  // The global a literal becomes, and what stands in its place. `original` is the
  // literal as the def had it, `rebuilt` with its body rewritten.
  absl::StatusOr<Expr> Lift(const Expr& original, const Expr& rebuilt);

  const Module& module_;
  Module& out_;
  std::string def_name_;
  std::vector<std::string> def_type_params_;
  int next_ = 0;
  // Scopes: 0 the def, then one per literal (by the literal's identity), each with the
  // scope it is in; per node, the scopes it is used in.
  std::vector<int> parent_scope_;
  absl::flat_hash_map<uintptr_t, int> literal_scope_;
  absl::flat_hash_map<uintptr_t, std::vector<int>> used_in_;
  // The rewritten node of each node of the def.
  absl::flat_hash_map<uintptr_t, Expr> rebuilt_;
  // Per let-bound literal (by identity): the variable the let binds it to.
  absl::flat_hash_map<uintptr_t, Expr> let_var_;
  // Let-bound literals that capture nothing: the let's variable id -> the global.
  absl::flat_hash_map<uint64_t, std::string> global_of_;
};

std::string Lifter::NewName() {
  std::string name;
  do {
    name = absl::StrCat(def_name_, ".fn", next_++);
  } while (module_.HasFunction(name) || out_.HasFunction(name));
  return name;
}

absl::StatusOr<Type> Lifter::TypeOf(const Expr& e) const {
  if (!e.checked_type()) return Internal("the module is not typed (run type inference first)");
  return *e.checked_type();
}

void Lifter::FindScopes(const Expr& body) {
  parent_scope_ = {-1};
  std::vector<std::pair<Expr, int>> stack = {{body, 0}};
  absl::flat_hash_set<std::pair<uintptr_t, int>> seen;
  while (!stack.empty()) {
    const Expr e = stack.back().first;
    const int scope = stack.back().second;
    stack.pop_back();
    if (IsAtom(e) || !seen.insert({e.identity(), scope}).second) continue;
    used_in_[e.identity()].push_back(scope);
    if (e.is(ExprKind::kFunction)) {
      const auto [it, inserted] = literal_scope_.try_emplace(e.identity(), static_cast<int>(parent_scope_.size()));
      if (inserted) {
        parent_scope_.push_back(scope);
        stack.push_back({e.body(), it->second});
      }
      continue;
    }
    ForEachChild(e, [&](const Expr& child) { stack.push_back({child, scope}); });
  }
}

bool Lifter::Within(int inner, int outer) const {
  for (int s = inner; s >= 0; s = parent_scope_[s]) {
    if (s == outer) return true;
  }
  return false;
}

std::vector<Expr> Lifter::SharedWithOutside(const Expr& literal) const {
  const int scope = literal_scope_.at(literal.identity());
  std::vector<Expr> shared;
  std::vector<Expr> stack = {literal.body()};
  absl::flat_hash_set<uintptr_t> seen;
  while (!stack.empty()) {
    const Expr e = stack.back();
    stack.pop_back();
    if (IsAtom(e) || !seen.insert(e.identity()).second) continue;
    if (!e.is(ExprKind::kFunction)) {
      const std::vector<int>& scopes = used_in_.at(e.identity());
      if (std::any_of(scopes.begin(), scopes.end(), [&](int s) { return !Within(s, scope); })) {
        shared.push_back(e);
        continue;
      }
    }
    ForEachChild(e, [&](const Expr& child) { stack.push_back(child); });
  }
  return shared;
}

absl::Status Lifter::Classify(const Expr& body) {
  DYNVM_RETURN_IF_ERROR(RewriteBottomUp(body, [&](const Expr& e) -> absl::StatusOr<Expr> {
                          if (e.is(ExprKind::kLet) && e.operand().is(ExprKind::kFunction)) {
                            let_var_.emplace(e.operand().identity(), e.var());
                          }
                          return e;
                        }).status());
  return RewriteBottomUp(body, [&](const Expr& e) -> absl::StatusOr<Expr> {
           const auto let = let_var_.find(e.identity());
           if (!e.is(ExprKind::kFunction) || let == let_var_.end()) return e;
           DYNVM_ASSIGN_OR_RETURN(const std::vector<Expr> free, FreeVars(e));
           for (const Expr& v : free) {
             if (v.var_id() != let->second.var_id() && !global_of_.contains(v.var_id())) return e;
           }
           global_of_[let->second.var_id()] = NewName();
           return e;
         }).status();
}

absl::StatusOr<Expr> Lifter::Lift(const Expr& original, const Expr& rebuilt) {
  DYNVM_ASSIGN_OR_RETURN(const Type type, TypeOf(original));
  const auto let = let_var_.find(original.identity());
  const Expr* self = let == let_var_.end() ? nullptr : &let->second;
  const auto global = self == nullptr ? global_of_.end() : global_of_.find(self->var_id());
  const std::string name = global != global_of_.end() ? global->second : NewName();

  // Nodes computed outside as well become parameters first (not for a literal that
  // was found to capture nothing: what it shares depends on no variable).
  absl::flat_hash_map<uintptr_t, Expr> replace;
  std::vector<Expr> captured, captured_params;
  absl::flat_hash_set<uint64_t> shared_params;
  if (global == global_of_.end()) {
    for (const Expr& node : SharedWithOutside(original)) {
      const auto it = rebuilt_.find(node.identity());
      if (it == rebuilt_.end()) return Internal("a shared node was not rewritten before its user");
      DYNVM_ASSIGN_OR_RETURN(const Type t, TypeOf(it->second));
      captured.push_back(it->second);
      captured_params.push_back(Expr::Var("shared", t));
      replace[it->second.identity()] = captured_params.back();
      shared_params.insert(captured_params.back().var_id());
    }
  }
  const auto substitute = [&replace](const Expr& e) {
    return RewriteBottomUp(e, [&replace](const Expr& node) -> absl::StatusOr<Expr> {
      const auto it = replace.find(node.identity());
      return it == replace.end() ? node : it->second;
    });
  };
  DYNVM_ASSIGN_OR_RETURN(const Expr with_shared, substitute(rebuilt.body()));
  DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> free, FreeVars(Expr::Function(rebuilt.params(), with_shared)));
  std::erase_if(free, [&](const Expr& v) {
    return (self != nullptr && v.var_id() == self->var_id()) || shared_params.contains(v.var_id());
  });
  if (global != global_of_.end() && !free.empty()) {
    return Internal(absl::StrCat("%", self->name(), " was found to capture nothing, but captures %",
                                 free[0].name()));
  }

  // Fresh, annotated variables for the captured values and the parameters.
  for (const Expr& c : free) {
    DYNVM_ASSIGN_OR_RETURN(const Type t, TypeOf(c));
    captured.push_back(c);
    captured_params.push_back(Expr::Var(c.name(), t));
    replace[c.identity()] = captured_params.back();
  }
  std::vector<Expr> params;
  for (const Expr& p : rebuilt.params()) {
    DYNVM_ASSIGN_OR_RETURN(const Type t, TypeOf(p));
    params.push_back(Expr::Var(p.name(), p.annotation() ? *p.annotation() : t));
    replace[p.identity()] = params.back();
  }
  if (self != nullptr && !captured.empty()) {
    replace[self->identity()] = Expr::Call(Expr::GlobalVar(name), captured_params);
  }
  DYNVM_ASSIGN_OR_RETURN(const Expr body, substitute(with_shared));

  if (captured.empty()) {
    std::vector<std::string> type_params = def_type_params_;
    for (const std::string& t : rebuilt.type_params()) {
      if (std::find(type_params.begin(), type_params.end(), t) == type_params.end()) type_params.push_back(t);
    }
    DYNVM_RETURN_IF_ERROR(out_.AddFunction(
        name, Expr::Function(std::move(params), body, type.ret(), std::move(type_params), rebuilt.attrs())));
    return Expr::GlobalVar(name).WithSource(original.source());
  }
  const Expr literal = Expr::Function(std::move(params), body, type.ret(), rebuilt.type_params(), rebuilt.attrs());
  DYNVM_RETURN_IF_ERROR(out_.AddFunction(
      name, Expr::Function(captured_params, literal, type, def_type_params_, {{std::string(kClosureCodeAttr), int64_t{1}}})));
  return Expr::Call(Expr::GlobalVar(name), std::move(captured), {}, original.source());
}

absl::StatusOr<Expr> Lifter::Run(const std::string& def_name, const Expr& def) {
  def_name_ = def_name;
  def_type_params_ = def.type_params();
  next_ = 0;
  literal_scope_.clear();
  used_in_.clear();
  rebuilt_.clear();
  let_var_.clear();
  global_of_.clear();
  FindScopes(def.body());
  DYNVM_RETURN_IF_ERROR(Classify(def.body()));
  DYNVM_ASSIGN_OR_RETURN(
      const Expr body, RewriteBottomUp(def.body(), [&](const Expr& original, const Expr& e) -> absl::StatusOr<Expr> {
        Expr out = e;
        if (e.is(ExprKind::kVar)) {
          if (const auto it = global_of_.find(e.var_id()); it != global_of_.end()) out = Expr::GlobalVar(it->second);
        } else if (e.is(ExprKind::kLet) && global_of_.contains(e.var().var_id())) {
          out = e.body();  // a literal that became a global: its uses name it
        } else if (e.is(ExprKind::kFunction)) {
          DYNVM_ASSIGN_OR_RETURN(out, Lift(original, e));
        }
        rebuilt_[original.identity()] = out;
        return out;
      }));
  return Expr::Function(def.params(), body, def.annotation(), def.type_params(), def.attrs());
}

// Whether `body` holds a function literal: one walk, so that a def without any (every
// ONNX model's) costs no more.
bool HasLiterals(const Expr& body) {
  std::vector<Expr> stack = {body};
  absl::flat_hash_set<uintptr_t> seen;
  while (!stack.empty()) {
    const Expr e = std::move(stack.back());
    stack.pop_back();
    if (e.is(ExprKind::kFunction)) return true;
    if (IsAtom(e) || !seen.insert(e.identity()).second) continue;
    ForEachChild(e, [&](const Expr& child) { stack.push_back(child); });
  }
  return false;
}

}  // namespace

absl::StatusOr<Module> LiftLambdas(const Module& module) {
  Module out = module;
  Lifter lifter(module, out);
  for (const std::string& name : module.function_names()) {
    const Expr def = *module.Function(name);
    if (IsClosureCode(def) || !HasLiterals(def.body())) continue;  // closure code keeps its literal
    DYNVM_ASSIGN_OR_RETURN(Expr lifted, lifter.Run(name, def));
    DYNVM_RETURN_IF_ERROR(out.SetFunction(name, std::move(lifted)));
  }
  // No literal (every ONNX model): nothing to type again.
  if (out.function_names().size() == module.function_names().size()) return module;
  return InferTypes(out);
}

}  // namespace dynvm::compiler
