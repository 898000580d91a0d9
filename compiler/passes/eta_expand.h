// Eta-expansion of operators and constructors used as values: an operator or a
// constructor with fields passed to a function, stored in a tuple or bound by a let
// becomes a function literal that calls it, so that the rest of the compiler only ever
// calls them.
//
//   @map(nn.relu, %l)        becomes   @map(fn (%x0) { nn.relu(%x0) }, %l)
//   let %cons = Cons;        becomes   let %cons = fn (%x0, %x1) { Cons(%x0, %x1) };
//
// The literal's parameters are untyped: type inference gives them the types the
// callee expects (type_infer.h). An operator's arity is its one argument count; one
// that takes a varying number (nn.dense: 2 or 3) is an error naming it and its place.
// Requires: nothing; runs at the start of type inference.
#ifndef DYNVM_COMPILER_PASSES_ETA_EXPAND_H_
#define DYNVM_COMPILER_PASSES_ETA_EXPAND_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/ir/expr.h"

namespace dynvm::compiler {

// `expr`, a part of function @`function` (named in errors), expanded.
absl::StatusOr<Expr> EtaExpand(const Expr& expr, std::string_view function);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_ETA_EXPAND_H_
