// Every variable is bound once in a well-formed program (variables are identified by
// id), so the free ones are those used minus those bound anywhere inside.
#include "compiler/ir/free_vars.h"

#include "absl/container/flat_hash_set.h"
#include "base/status_macros.h"
#include "compiler/ir/rewrite.h"

namespace dynvm::compiler {
namespace {

void BindPattern(const Pattern& p, absl::flat_hash_set<uint64_t>& bound) {
  if (p.kind() == PatternKind::kVar) bound.insert(p.expr().var_id());
  for (const Pattern& f : p.fields()) BindPattern(f, bound);
}

}  // namespace

absl::StatusOr<std::vector<Expr>> FreeVars(const Expr& e) {
  std::vector<Expr> used;
  absl::flat_hash_set<uint64_t> seen, bound;
  DYNVM_RETURN_IF_ERROR(RewriteBottomUp(e, [&](const Expr& node) -> absl::StatusOr<Expr> {
                          switch (node.kind()) {
                            case ExprKind::kVar:
                              if (seen.insert(node.var_id()).second) used.push_back(node);
                              break;
                            case ExprKind::kLet: bound.insert(node.var().var_id()); break;
                            case ExprKind::kFunction:
                              for (const Expr& p : node.params()) bound.insert(p.var_id());
                              break;
                            case ExprKind::kMatch:
                              for (const Clause& c : node.clauses()) BindPattern(c.pattern, bound);
                              break;
                            default: break;
                          }
                          return node;
                        }).status());
  std::vector<Expr> free;
  for (const Expr& v : used) {
    if (!bound.contains(v.var_id())) free.push_back(v);
  }
  return free;
}

}  // namespace dynvm::compiler
