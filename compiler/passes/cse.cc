// A recursive rewrite with a stack of tables, one per block (a function body, an if
// branch, a match clause); a node is looked up from the innermost table outwards and
// entered into the innermost. Keys are the node's kind, callee, attributes and the
// identities of its (already rewritten) children, so equal subtrees meet bottom-up.
#include "compiler/passes/cse.h"

#include <bit>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/passes/effects.h"

namespace dynvm::compiler {
namespace {

class Cse {
 public:
  // `impure`: the code uses references (effects.h), so calls of functions are not merged.
  explicit Cse(bool impure) : impure_(impure) {}
  absl::StatusOr<Expr> Visit(const Expr& e);

 private:
  absl::StatusOr<Expr> VisitBlock(const Expr& e);
  absl::StatusOr<Expr> VisitLetChain(const Expr& e);
  absl::StatusOr<Expr> VisitChildren(const Expr& e);
  // The key of a call, tuple or projection whose children are final; empty otherwise.
  std::string Key(const Expr& e) const;
  // The node equal to `e` in scope, or `e` entered as the one.
  Expr Share(const Expr& e);

  bool impure_;
  std::vector<absl::flat_hash_map<std::string, Expr>> scopes_ = {{}};
  absl::flat_hash_map<uintptr_t, Expr> done_;
};

// Attributes, exactly: names in order, each value with its kind, floats by their bits.
void AppendAttrs(const kernels::Attrs& attrs, std::string& key) {
  const auto bits = [](double d) { return std::bit_cast<uint64_t>(d); };
  for (const auto& [name, value] : attrs) {
    absl::StrAppend(&key, " ", name, "=", value.index(), ":");
    if (const auto* i = std::get_if<int64_t>(&value)) absl::StrAppend(&key, *i);
    if (const auto* d = std::get_if<double>(&value)) absl::StrAppend(&key, bits(*d));
    if (const auto* s = std::get_if<std::string>(&value)) absl::StrAppend(&key, s->size(), ":", *s);
    if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
      for (int64_t i : *ints) absl::StrAppend(&key, i, ",");
    }
    if (const auto* doubles = std::get_if<std::vector<double>>(&value)) {
      for (double d : *doubles) absl::StrAppend(&key, bits(d), ",");
    }
  }
}

std::string Cse::Key(const Expr& e) const {
  if (MayHaveEffects(e, impure_)) return "";  // each evaluation its own
  std::string key;
  const auto add = [&key](const Expr& child) { absl::StrAppend(&key, ",", child.identity()); };
  switch (e.kind()) {
    case ExprKind::kCall: {
      const Expr& callee = e.callee();
      if (callee.is(ExprKind::kOp) || callee.is(ExprKind::kConstructor) || callee.is(ExprKind::kGlobalVar)) {
        absl::StrAppend(&key, "call ", static_cast<int>(callee.kind()), " ", callee.name());
      } else {
        absl::StrAppend(&key, "call @", callee.identity());
      }
      for (const Expr& arg : e.args()) add(arg);
      AppendAttrs(e.attrs(), key);
      return key;
    }
    case ExprKind::kTuple:
      key = "tuple";
      for (const Expr& field : e.fields()) add(field);
      return key;
    case ExprKind::kTupleGetItem:
      absl::StrAppend(&key, "get ", e.index());
      add(e.tuple());
      return key;
    case ExprKind::kConstant:  // the same tensor, wherever the text named it
      return absl::StrCat("const ", reinterpret_cast<uintptr_t>(e.value().get()));
    default: return key;
  }
}

Expr Cse::Share(const Expr& e) {
  const std::string key = Key(e);
  if (key.empty()) return e;
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    const auto found = it->find(key);
    if (found != it->end()) return found->second;
  }
  scopes_.back().emplace(key, e);
  return e;
}

absl::StatusOr<Expr> Cse::VisitBlock(const Expr& e) {
  scopes_.emplace_back();
  absl::StatusOr<Expr> out = Visit(e);
  scopes_.pop_back();
  return out;
}

absl::StatusOr<Expr> Cse::VisitLetChain(const Expr& e) {
  std::vector<std::pair<Expr, Expr>> chain;
  Expr cur = e;
  for (; cur.is(ExprKind::kLet); cur = cur.body()) {
    DYNVM_ASSIGN_OR_RETURN(Expr value, Visit(cur.operand()));
    // Later equal expressions become the variable, not a second use of the value.
    if (const std::string key = Key(value); !key.empty()) scopes_.back()[key] = cur.var();
    chain.emplace_back(cur, std::move(value));
  }
  DYNVM_ASSIGN_OR_RETURN(Expr body, Visit(cur));
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Expr& let = it->first;
    if (!it->second.same_as(let.operand()) || !body.same_as(let.body())) {
      Expr rebuilt = Expr::Let(let.var(), it->second, body);
      body = let.checked_type() ? rebuilt.WithType(*let.checked_type()) : rebuilt;
    } else {
      body = let;
    }
  }
  return body;
}

absl::StatusOr<Expr> Cse::VisitChildren(const Expr& e) {
  bool changed = false;
  const auto visit_all = [&](const std::vector<Expr>& items) -> absl::StatusOr<std::vector<Expr>> {
    std::vector<Expr> out;
    for (const Expr& item : items) {
      DYNVM_ASSIGN_OR_RETURN(Expr r, Visit(item));
      changed |= !r.same_as(item);
      out.push_back(std::move(r));
    }
    return out;
  };
  Expr out = e;
  switch (e.kind()) {
    case ExprKind::kCall: {
      DYNVM_ASSIGN_OR_RETURN(Expr callee, Visit(e.callee()));
      changed = !callee.same_as(e.callee());
      DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> args, visit_all(e.args()));
      if (changed) out = Expr::Call(std::move(callee), std::move(args), e.attrs(), e.source());
      break;
    }
    case ExprKind::kTuple: {
      DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> fields, visit_all(e.fields()));
      if (changed) out = Expr::Tuple(std::move(fields));
      break;
    }
    case ExprKind::kTupleGetItem: {
      DYNVM_ASSIGN_OR_RETURN(Expr tuple, Visit(e.tuple()));
      if (!tuple.same_as(e.tuple())) out = Expr::TupleGetItem(std::move(tuple), e.index());
      break;
    }
    case ExprKind::kIf: {
      DYNVM_ASSIGN_OR_RETURN(Expr cond, Visit(e.cond()));
      DYNVM_ASSIGN_OR_RETURN(Expr then_branch, VisitBlock(e.then_branch()));
      DYNVM_ASSIGN_OR_RETURN(Expr else_branch, VisitBlock(e.else_branch()));
      if (!cond.same_as(e.cond()) || !then_branch.same_as(e.then_branch()) ||
          !else_branch.same_as(e.else_branch())) {
        out = Expr::If(std::move(cond), std::move(then_branch), std::move(else_branch));
      }
      break;
    }
    case ExprKind::kFunction: {
      DYNVM_ASSIGN_OR_RETURN(Expr body, VisitBlock(e.body()));
      if (!body.same_as(e.body())) {
        out = Expr::Function(e.params(), std::move(body), e.annotation(), e.type_params(), e.attrs());
      }
      break;
    }
    case ExprKind::kMatch: {
      DYNVM_ASSIGN_OR_RETURN(Expr data, Visit(e.data()));
      changed = !data.same_as(e.data());
      std::vector<Clause> clauses;
      for (const Clause& c : e.clauses()) {
        DYNVM_ASSIGN_OR_RETURN(Expr body, VisitBlock(c.body));
        changed |= !body.same_as(c.body);
        clauses.push_back({c.pattern, std::move(body)});
      }
      if (changed) out = Expr::Match(std::move(data), std::move(clauses), e.complete());
      break;
    }
    default: break;
  }
  if (!out.same_as(e) && e.checked_type()) out = out.WithType(*e.checked_type());
  return out;
}

absl::StatusOr<Expr> Cse::Visit(const Expr& e) {
  if (e.is(ExprKind::kLet)) return VisitLetChain(e);
  if (const auto it = done_.find(e.identity()); it != done_.end()) return it->second;
  DYNVM_ASSIGN_OR_RETURN(const Expr rebuilt, VisitChildren(e));
  const Expr out = Share(rebuilt);
  done_[e.identity()] = out;
  return out;
}

}  // namespace

absl::StatusOr<Expr> EliminateCommonSubexpressions(const Expr& expr) { return Cse(UsesReferences(expr)).Visit(expr); }

absl::StatusOr<Module> EliminateCommonSubexpressions(const Module& module) {
  const bool impure = UsesReferences(module);
  return module.MapFunctions([impure](const Expr& fn) { return Cse(impure).Visit(fn); });
}

}  // namespace dynvm::compiler
