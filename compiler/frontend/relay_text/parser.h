// Parses TVM Relay's text format, version 0.0.5, with our one extension, named symbolic
// dims (docs/text-format.md): what printer.h prints, and Relay programs as Relay prints
// them.
//
//   absl::StatusOr<Module> mod = ParseModule(R"(
//     #[version = "0.0.5"]
//     def @main(%x: Tensor[(n, 768), float32]) {
//       nn.relu(%x)
//     }
//   )", /*constants=*/{}, "model.relay");
//
// `meta[relay.Constant][i]` is `constants[i]` (the tensors of an .npz that comes with
// the text), or, when the text ends with TVM's `#[metadata]` section (metadata.h),
// element i of its relay.Constant array; a text with a section takes no `constants`. `%N = e;` binds a name to an expression without a let: every use of %N is
// the same node. A name in call position is a constructor if the module defines one of
// that name, else an operator (the type checker rejects unknown operators).
//
// Errors are InvalidArgument, with the position and the line, a caret under the
// token, and what was expected:
//
//   model.relay:3:18: expected ')', got ';'
//     nn.relu(%x;
//               ^
// Nesting (parentheses, blocks, types) deeper than kMaxNesting levels is an error, so
// that hostile text cannot exhaust the stack.
#ifndef DYNVM_COMPILER_FRONTEND_RELAY_TEXT_PARSER_H_
#define DYNVM_COMPILER_FRONTEND_RELAY_TEXT_PARSER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/expr.h"
#include "compiler/ir/module.h"
#include "objects/ndarray.h"

namespace dynvm::compiler {

inline constexpr int kMaxNesting = 256;

// A whole module. Every @name a function uses must be defined in it.
absl::StatusOr<Module> ParseModule(std::string_view text,
                                   absl::Span<const NDArray> constants = {},
                                   std::string_view source_name = "<input>");

// One expression (a block: lets, %N bindings, then the result), with the ADTs of
// `module` in scope. A %name used without a binding is a free variable: each distinct
// name becomes one Var, and they are returned in order of first use.
struct ParsedExpr {
  Expr expr;
  std::vector<Expr> free_vars;
};
absl::StatusOr<ParsedExpr> ParseExpr(std::string_view text, const Module& module,
                                     absl::Span<const NDArray> constants = {},
                                     std::string_view source_name = "<input>");

// `status` with, when its message begins with a position in `text` ("model.relay:3:18:
// ...", as the compiler's errors about parsed expressions do: Expr::source), that line
// and a caret under the column appended, as parse errors show them. Other statuses are
// returned unchanged.
absl::Status ShowSourceLine(const absl::Status& status, std::string_view text, std::string_view source_name);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_FRONTEND_RELAY_TEXT_PARSER_H_
