// Operator fusion: chains of operators become one kernel call, so intermediate tensors
// are never written to memory and read back.
//
// Dense epilogues. A dense layer followed by its bias, activation and residual add runs
// as one GEMM whose epilogue applies them while the output tile is in registers:
//
//   %0 = nn.dense(%x, %w);                   nn.dense(%x, %w, %b, activation="gelu")
//   %1 = add(%0, %b);               becomes
//   gelu(%1)
//
// in that order: bias (a vector of the output's width, either side of add), then
// nn.relu or gelu (either form), then a residual add of a tensor of the output's shape,
// which makes the call a `gemm` (the library's GEMM with its whole epilogue) when %x is
// a matrix.
//
// Elementwise chains. Connected f32 elementwise operators (the fused_elementwise
// kernel's: kernels/elementwise/fused_elementwise.h) become one fused_elementwise call whose
// program computes them per element; scalar constants become literals of the program:
//
//   %0 = multiply(%x, 0.5f);                 fused_elementwise(%x, %y,
//   %1 = add(%0, %y);               becomes    program="t0 = multiply(i0, 0.5); t1 = add(t0, i1); t2 = tanh(t1)")
//   tanh(%1)
//
// Reductions. A softmax, log_softmax, layer_norm or float reduction (sum, mean, max,
// min, prod, l2_norm) whose data is such a group reads it through the group's program
// (the kernel's `prologue`; the program's inputs take the data's place among the
// arguments), so BERT's scaled and masked attention scores, or a residual sum before a
// norm, are never written to memory:
//
//   nn.softmax(add(multiply(%s, 0.125f), %mask))   becomes
//   nn.softmax(%s, %mask, axis=-1, prologue="t0 = multiply(i0, 0.125); t1 = add(t0, i1)")
//
// and a group whose one input is a float reduction (its only user) becomes that
// reduction's `epilogue`, applied to each reduced value as it is written:
//
//   rsqrt(add(mean(multiply(%x, %x), axis=[-1]), 1e-06f))   becomes
//   mean(%x, axis=[-1], prologue="t0 = multiply(i0, i0)",
//        epilogue="t0 = add(i0, 9.99999997e-07); t1 = rsqrt(t0)")
//
// An operator joins the call of its consumer only when the consumer is its one user
// (else its value would be computed twice) and its output has the consumer's shape (a
// smaller one would be recomputed for every element it is broadcast to). At most 64
// operators per call.
//
// Requires: a typed module. Keeps checked types; the new calls are typed.
#ifndef DYNVM_COMPILER_PASSES_FUSE_OPS_H_
#define DYNVM_COMPILER_PASSES_FUSE_OPS_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

absl::StatusOr<Module> FuseOps(const Module& module);
absl::StatusOr<Expr> FuseOps(const Expr& expr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_FUSE_OPS_H_
