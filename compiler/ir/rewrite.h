// Bottom-up rewriting of expressions, the skeleton of most passes.
//
//   Expr folded = RewriteBottomUp(body, [](const Expr& e) -> absl::StatusOr<Expr> {
//     return IsFoldable(e) ? Fold(e) : e;
//   });
//
// Each node is visited once, after its children were rewritten (a node shared by
// several parents is rewritten once, so the result keeps the sharing); `fn` receives
// the node with the new children in place (the node itself when none changed, so
// `same_as` tells whether anything did) and returns its replacement. A replacement for
// a node that carried a checked type keeps the type unless `fn` set one. Let chains are
// walked in a loop; other nesting recurses. Variables, constants, operators, globals
// and constructors have no children and are passed to `fn` as they are; pattern
// variables are not passed at all.
#ifndef DYNVM_COMPILER_IR_REWRITE_H_
#define DYNVM_COMPILER_IR_REWRITE_H_

#include <functional>

#include "absl/status/statusor.h"
#include "compiler/ir/expr.h"

namespace dynvm::compiler {

using RewriteFn = std::function<absl::StatusOr<Expr>(const Expr&)>;

absl::StatusOr<Expr> RewriteBottomUp(const Expr& e, const RewriteFn& fn);

// The same walk, for passes that decide on the original graph (use counts, groups) and
// rewrite the new one: `fn` receives the original node as well.
using RewriteWithOriginalFn =
    std::function<absl::StatusOr<Expr>(const Expr& original, const Expr& rebuilt)>;

absl::StatusOr<Expr> RewriteBottomUp(const Expr& e, const RewriteWithOriginalFn& fn);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_IR_REWRITE_H_
