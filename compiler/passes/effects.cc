// A reference operator is found by a walk over each function (RewriteBottomUp visits
// every node once, returning it unchanged).
#include "compiler/passes/effects.h"

#include <string>

#include "compiler/ir/rewrite.h"
#include "compiler/ops/op_registry.h"

namespace dynvm::compiler {
namespace {

bool IsReferenceOp(const Expr& callee) {
  if (!callee.is(ExprKind::kOp)) return false;
  const OpDef* def = FindOp(callee.name());
  return def != nullptr && def->effects;
}

}  // namespace

bool UsesReferences(const Expr& expr) {
  bool found = false;
  (void)RewriteBottomUp(expr, [&found](const Expr& e) -> absl::StatusOr<Expr> {
    found |= e.is(ExprKind::kCall) && IsReferenceOp(e.callee());
    return e;
  });
  return found;
}

bool UsesReferences(const Module& module) {
  for (const std::string& name : module.function_names()) {
    if (UsesReferences(*module.Function(name))) return true;
  }
  return false;
}

bool MayHaveEffects(const Expr& e, bool module_uses_references) {
  if (!e.is(ExprKind::kCall)) return false;
  const Expr& callee = e.callee();
  if (IsReferenceOp(callee)) return true;
  return module_uses_references && !callee.is(ExprKind::kOp) && !callee.is(ExprKind::kConstructor);
}

}  // namespace dynvm::compiler
