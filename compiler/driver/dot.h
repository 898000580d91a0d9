// A Graphviz drawing of a function's dataflow, as TVM's BERT write-ups draw models:
// operators as boxes (small constant arguments written inline, attributes below the
// name), tensors as ellipses labelled with their types, edges along the data.
//
//   digraph main {
//     n0 [shape=ellipse, label="%x\nTensor[(n, 768), float32]"];
//     n1 [shape=box, label="nn.dense\nunits=3072"];
//     n0 -> n1; ...
//   }
//
// Lets label the tensor they bind with their variable; if, match and calls of
// functions are boxes like operators. The function should be typed (type labels
// are omitted otherwise).
#ifndef DYNVM_COMPILER_DRIVER_DOT_H_
#define DYNVM_COMPILER_DRIVER_DOT_H_

#include <string>
#include <string_view>

#include "compiler/ir/expr.h"

namespace dynvm::compiler {

std::string DataflowDot(const Expr& function, std::string_view name);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_DRIVER_DOT_H_
