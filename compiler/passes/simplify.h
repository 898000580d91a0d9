// Algebraic simplification: rules that remove or merge operators without changing
// values, each named where it applies.
//
//   [reshape-chain]      reshape(reshape(x, a), b) -> reshape(x, b) when b has only
//                        positive extents and -1 (codes that do not read the input)
//   [reshape-identity]   reshape(x, ...) -> x when both types are the same static shape
//   [transpose-chain]    transpose(transpose(x, p), q) -> transpose(x, p[q]), or x when
//                        that is the identity permutation
//   [bias-add]           nn.bias_add(x, b, axis) -> add(x, b) for x's last axis, else
//                        add(x, reshape(b, newshape=[-1, 1, ...])): operators fusion knows
//   [arith-identity]     add(x, 0), subtract(x, 0), multiply(x, 1), divide(x, 1) -> x
//                        for a scalar constant, when x already has the result's type
//   [layer-norm]         d = x - mean(x); d / sqrt(mean(d^2) + eps) * gamma + beta ->
//                        nn.layer_norm(x, gamma, beta, axis=-1, epsilon=eps): LayerNorm
//                        over the last axis as ONNX exporters spell it (f32, 1-D
//                        gamma and beta, d^2 as power(d, 2) or d * d)
//   [gelu]               x * (erf(x / sqrt(2)) + 1) * 0.5 -> gelu(x), the 0.5 on x or
//                        on the product, x / sqrt(2) also as x * (1 / sqrt(2))
//   [attention]          matmul(softmax(matmul(q, kᵀ) * scale [+ mask]), v) ->
//                        nn.attention(q, k, v[, mask], scale) for rank-4 f32 operands
//   [attention-layout]   nn.attention(transpose(x, [0, 2, 1, 3]) for each of q, k, v
//                        [, mask]) -> transpose(nn.attention(x_q, x_k, x_v[, mask],
//                        layout="BSHD"), [0, 2, 1, 3]), heads read in place
//
// Requires: type inference (the rules that compare types skip untyped nodes); keeps
// checked types and sharing.
#ifndef DYNVM_COMPILER_PASSES_SIMPLIFY_H_
#define DYNVM_COMPILER_PASSES_SIMPLIFY_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

absl::StatusOr<Module> SimplifyAlgebra(const Module& module);
absl::StatusOr<Expr> SimplifyAlgebra(const Expr& expr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_SIMPLIFY_H_
