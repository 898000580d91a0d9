// Uses are counted over the whole expression (variables are unique, so a count per
// variable is exact), then unused lets are dropped bottom-up; dropping a let drops the
// uses in its value, so the pass repeats until nothing changes.
#include "compiler/passes/dead_code.h"

#include "absl/container/flat_hash_map.h"
#include "base/status_macros.h"
#include "compiler/ir/rewrite.h"
#include "compiler/passes/effects.h"

namespace dynvm::compiler {
namespace {

// How often each variable occurs in `e` in a use (not a binding) position. The rewrite
// visits every node once, shared ones included, and each counts its children.
absl::StatusOr<absl::flat_hash_map<uint64_t, int>> CountUses(const Expr& e) {
  absl::flat_hash_map<uint64_t, int> uses;
  const auto count = [&uses](const Expr& child) {
    if (child.is(ExprKind::kVar)) ++uses[child.var_id()];
  };
  DYNVM_RETURN_IF_ERROR(RewriteBottomUp(e, [&](const Expr& node) -> absl::StatusOr<Expr> {
                          ForEachChild(node, count);
                          return node;
                        }).status());
  if (e.is(ExprKind::kVar)) ++uses[e.var_id()];
  return uses;
}

// `impure`: the code uses references (effects.h): a let whose value may have an effect
// stays, used or not.
absl::StatusOr<Expr> EliminateDeadCode(const Expr& expr, bool impure) {
  Expr current = expr;
  while (true) {
    DYNVM_ASSIGN_OR_RETURN(const auto uses, CountUses(current));
    bool removed = false;
    DYNVM_ASSIGN_OR_RETURN(Expr next, RewriteBottomUp(current, [&](const Expr& node) -> absl::StatusOr<Expr> {
                             if (node.is(ExprKind::kLet) && !uses.contains(node.var().var_id()) &&
                                 !MayHaveEffects(node.operand(), impure)) {
                               removed = true;
                               return node.body();
                             }
                             return node;
                           }));
    if (!removed) return next;
    current = std::move(next);
  }
}

}  // namespace

absl::StatusOr<Expr> EliminateDeadCode(const Expr& expr) { return EliminateDeadCode(expr, UsesReferences(expr)); }

absl::StatusOr<Module> EliminateDeadCode(const Module& module) {
  const bool impure = UsesReferences(module);
  return module.MapFunctions([impure](const Expr& fn) { return EliminateDeadCode(fn, impure); });
}

}  // namespace dynvm::compiler
