// The bottom-up expression rewriter (compiler/ir/rewrite.h) that most passes are
// built on.
#include "compiler/ir/rewrite.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/status_macros.h"

namespace dynvm::compiler {
namespace {

class Rewriter {
 public:
  explicit Rewriter(const RewriteWithOriginalFn& fn) : fn_(fn) {}

  absl::StatusOr<Expr> Visit(const Expr& e);

 private:
  absl::StatusOr<std::vector<Expr>> VisitAll(const std::vector<Expr>& items, bool& changed);
  // `fn` on `rebuilt` (which replaces `original`), keeping the original's type.
  absl::StatusOr<Expr> Apply(const Expr& original, const Expr& rebuilt);
  absl::StatusOr<Expr> VisitLetChain(const Expr& e);

  const RewriteWithOriginalFn& fn_;
  absl::flat_hash_map<uintptr_t, Expr> done_;
};

absl::StatusOr<std::vector<Expr>> Rewriter::VisitAll(const std::vector<Expr>& items, bool& changed) {
  std::vector<Expr> out;
  out.reserve(items.size());
  for (const Expr& item : items) {
    DYNVM_ASSIGN_OR_RETURN(Expr r, Visit(item));
    changed |= !r.same_as(item);
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<Expr> Rewriter::Apply(const Expr& original, const Expr& rebuilt) {
  const Expr input = rebuilt.same_as(original) || !original.checked_type()
                         ? rebuilt
                         : rebuilt.WithType(*original.checked_type());
  DYNVM_ASSIGN_OR_RETURN(Expr out, fn_(original, input));
  if (!out.checked_type() && original.checked_type()) out = out.WithType(*original.checked_type());
  done_[original.identity()] = out;
  return out;
}

absl::StatusOr<Expr> Rewriter::VisitLetChain(const Expr& e) {
  std::vector<std::pair<Expr, Expr>> chain;  // (let, its rewritten value)
  Expr cur = e;
  for (; cur.is(ExprKind::kLet) && !done_.contains(cur.identity()); cur = cur.body()) {
    DYNVM_ASSIGN_OR_RETURN(Expr value, Visit(cur.operand()));
    chain.emplace_back(cur, std::move(value));
  }
  DYNVM_ASSIGN_OR_RETURN(Expr body, Visit(cur));
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Expr& let = it->first;
    const bool same = it->second.same_as(let.operand()) && body.same_as(let.body());
    DYNVM_ASSIGN_OR_RETURN(body, Apply(let, same ? let : Expr::Let(let.var(), it->second, body)));
  }
  return body;
}

absl::StatusOr<Expr> Rewriter::Visit(const Expr& e) {
  if (const auto it = done_.find(e.identity()); it != done_.end()) return it->second;
  bool changed = false;
  switch (e.kind()) {
    case ExprKind::kLet: return VisitLetChain(e);
    case ExprKind::kCall: {
      DYNVM_ASSIGN_OR_RETURN(Expr callee, Visit(e.callee()));
      changed = !callee.same_as(e.callee());
      DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> args, VisitAll(e.args(), changed));
      return Apply(e, changed ? Expr::Call(std::move(callee), std::move(args), e.attrs(), e.source()) : e);
    }
    case ExprKind::kIf: {
      DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> parts,
                             VisitAll({e.cond(), e.then_branch(), e.else_branch()}, changed));
      return Apply(e, changed ? Expr::If(parts[0], parts[1], parts[2]) : e);
    }
    case ExprKind::kTuple: {
      DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> fields, VisitAll(e.fields(), changed));
      return Apply(e, changed ? Expr::Tuple(std::move(fields)) : e);
    }
    case ExprKind::kTupleGetItem: {
      DYNVM_ASSIGN_OR_RETURN(Expr tuple, Visit(e.tuple()));
      return Apply(e, tuple.same_as(e.tuple()) ? e : Expr::TupleGetItem(std::move(tuple), e.index()));
    }
    case ExprKind::kFunction: {
      DYNVM_ASSIGN_OR_RETURN(Expr body, Visit(e.body()));
      return Apply(e, body.same_as(e.body()) ? e
                                             : Expr::Function(e.params(), std::move(body), e.annotation(),
                                                              e.type_params(), e.attrs()));
    }
    case ExprKind::kMatch: {
      DYNVM_ASSIGN_OR_RETURN(Expr data, Visit(e.data()));
      changed = !data.same_as(e.data());
      std::vector<Clause> clauses;
      for (const Clause& c : e.clauses()) {
        DYNVM_ASSIGN_OR_RETURN(Expr body, Visit(c.body));
        changed |= !body.same_as(c.body);
        clauses.push_back({c.pattern, std::move(body)});
      }
      return Apply(e, changed ? Expr::Match(std::move(data), std::move(clauses), e.complete()) : e);
    }
    default: return Apply(e, e);
  }
}

}  // namespace

absl::StatusOr<Expr> RewriteBottomUp(const Expr& e, const RewriteWithOriginalFn& fn) {
  return Rewriter(fn).Visit(e);
}

absl::StatusOr<Expr> RewriteBottomUp(const Expr& e, const RewriteFn& fn) {
  const RewriteWithOriginalFn with_original = [&](const Expr&, const Expr& rebuilt) { return fn(rebuilt); };
  return Rewriter(with_original).Visit(e);
}

}  // namespace dynvm::compiler
