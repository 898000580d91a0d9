// Prints modules and expressions in TVM Relay's text format, version 0.0.5, with our one
// extension, named symbolic dims (docs/text-format.md). The parser (parser.h) reads the
// output back to the same program.
//
//   RelayText out = PrintModule(mod);
//   // out.text:
//   //   #[version = "0.0.5"]
//   //   def @main(%x: Tensor[(n, 768), float32], %w: Tensor[(768, 768), float32]) {
//   //     %0 = nn.dense(%x, %w, units=768);
//   //     add(%0, %0)
//   //   }
//   // out.constants: the tensors that meta[relay.Constant][i] refers to.
//
// An expression used more than once, and a call used inside another expression, print
// once, bound to `%N = ...;` in the innermost block that encloses all their uses, before
// the first statement that uses them (TVM's graph form).
// Variables print as `%name`, made unique (`%x`, `%x_1`) and made identifiers (other
// characters become `_`). Rank-0 constants of float32, float64, int32, int64 and bool
// print as literals (`1.5f`, `2f64`, `3`, `4i64`, `True`); other constants as
// `meta[relay.Constant][i]`, i counting up from the number already in `constants`.
#ifndef DYNVM_COMPILER_FRONTEND_RELAY_TEXT_PRINTER_H_
#define DYNVM_COMPILER_FRONTEND_RELAY_TEXT_PRINTER_H_

#include <string>
#include <vector>

#include "compiler/ir/expr.h"
#include "compiler/ir/module.h"
#include "objects/ndarray.h"

namespace dynvm::compiler {

struct RelayText {
  std::string text;
  std::vector<NDArray> constants;  // meta[relay.Constant][i] is constants[i]
};

// The whole module: the version line, the ADTs, then the functions in module order.
RelayText PrintModule(const Module& module);

// One expression, as the body of a function would print (bindings, then the result).
// Non-literal constants are appended to `constants`.
std::string PrintExpr(const Expr& expr, std::vector<NDArray>& constants);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_FRONTEND_RELAY_TEXT_PRINTER_H_
