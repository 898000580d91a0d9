// The rewrite: bottom-up, the value positions of each rebuilt call, tuple and let
// (arguments, fields, bound values) checked for a bare operator or constructor.
#include "compiler/passes/eta_expand.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ir/rewrite.h"
#include "compiler/ops/op_registry.h"

namespace dynvm::compiler {
namespace {

// `e` as a function literal calling it, if it is an operator or a constructor with
// fields; `e` otherwise.
absl::StatusOr<Expr> Expand(const Expr& e, std::string_view function) {
  size_t arity = 0;
  if (e.is(ExprKind::kConstructor)) {
    arity = e.field_types().size();
    if (arity == 0) return e;  // a value already: Nil
  } else if (e.is(ExprKind::kOp)) {
    const OpDef* def = FindOp(e.name());
    if (def == nullptr) return e;  // type inference names the unknown operator
    if (def->min_args != def->max_args) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%sin @%s: operator %s takes %d to %d arguments: to pass it as a function, wrap it in one "
          "(fn (%%x, %%w) { %s(%%x, %%w) })",
          e.source().empty() ? "" : e.source() + ": ", function, e.name(), def->min_args, def->max_args, e.name()));
    }
    arity = static_cast<size_t>(def->min_args);
  } else {
    return e;
  }
  std::vector<Expr> params;
  for (size_t i = 0; i < arity; ++i) params.push_back(Expr::Var(absl::StrCat("x", i)));
  return Expr::Function(params, Expr::Call(e, params, {}, e.source())).WithSource(e.source());
}

absl::Status ExpandAll(std::vector<Expr>& values, std::string_view function, bool& changed) {
  for (Expr& v : values) {
    DYNVM_ASSIGN_OR_RETURN(Expr expanded, Expand(v, function));
    changed |= !expanded.same_as(v);
    v = std::move(expanded);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Expr> EtaExpand(const Expr& expr, std::string_view function) {
  return RewriteBottomUp(expr, [function](const Expr& e) -> absl::StatusOr<Expr> {
    bool changed = false;
    switch (e.kind()) {
      case ExprKind::kCall: {
        std::vector<Expr> args = e.args();
        DYNVM_RETURN_IF_ERROR(ExpandAll(args, function, changed));
        return changed ? Expr::Call(e.callee(), std::move(args), e.attrs(), e.source()) : e;
      }
      case ExprKind::kTuple: {
        std::vector<Expr> fields = e.fields();
        DYNVM_RETURN_IF_ERROR(ExpandAll(fields, function, changed));
        return changed ? Expr::Tuple(std::move(fields)) : e;
      }
      case ExprKind::kLet: {
        DYNVM_ASSIGN_OR_RETURN(Expr value, Expand(e.operand(), function));
        return value.same_as(e.operand()) ? e : Expr::Let(e.var(), std::move(value), e.body());
      }
      default: return e;
    }
  });
}

}  // namespace dynvm::compiler
