// Combining parallel dense layers: nn.dense calls in one block that read the same input
// with weights of the same width become one nn.dense on the concatenated weights, split
// back into the parts — BERT's Q, K and V projections become one GEMM, three times as
// wide, which the kernel runs closer to the machine's peak.
//
//   %q = nn.dense(%x, %wq);                 %w = concatenate((%wq, %wk, %wv));
//   %k = nn.dense(%x, %wk);        ->       %y = split(nn.dense(%x, %w), indices_or_sections=[768, 1536], axis=-1);
//   %v = nn.dense(%x, %wv);                 %q = %y.0; %k = %y.1; %v = %y.2
//
// When every projection is read only by the add of a constant bias of its width (how
// ONNX exports spell Linear: MatMul then Add), the biases are concatenated as well and
// the parts replace the adds.
//
// Requires: type inference (weights must have static types); the result needs type
// inference again, and constant folding to concatenate constant weights once. Only
// calls with the same attributes (units aside) and all with or all without a bias are
// combined, and only constant weights and biases (folded into one constant at compile
// time; concatenating parameters would copy every weight on every call); calls in
// different blocks (if branches, match clauses) are never combined, so nothing runs on
// a path that did not run it.
#ifndef DYNVM_COMPILER_PASSES_COMBINE_DENSE_H_
#define DYNVM_COMPILER_PASSES_COMBINE_DENSE_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

absl::StatusOr<Module> CombineParallelDense(const Module& module);
absl::StatusOr<Expr> CombineParallelDense(const Expr& function);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_COMBINE_DENSE_H_
