// Registration of fused_elementwise (kernels/fused_elementwise.cc): a chain of f32
// elementwise operators, given as a small program, evaluated in one pass over memory.
// The compiler's operator-fusion pass emits it in place of chains such as
// `tanh(add(multiply(%x, %y), %b))`:
//
//   Attrs attrs = {{"program", std::string("t0 = multiply(i0, i1); t1 = add(t0, i2);"
//                                          " t2 = tanh(t1)")}};
//   absl::StatusOr<BoundKernel> k = registry.Bind("fused_elementwise", attrs, 3, 1);
//
// The grammar, the operators and the numerics are in docs/kernels.md.
#ifndef DYNVM_KERNELS_FUSED_ELEMENTWISE_H_
#define DYNVM_KERNELS_FUSED_ELEMENTWISE_H_

#include <string_view>

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds fused_elementwise: inputs i0..iN-1 (f32, broadcast together numpy-style), one f32
// output of their broadcast shape, and the attribute `program` (string, required),
// parsed and checked once by Bind.
absl::Status RegisterFusedElementwiseKernels(KernelRegistry& registry);

// A program's limits.
inline constexpr int kFusedElementwiseMaxStatements = 64;
inline constexpr int kFusedElementwiseMaxInputs = 16;

// For the fusion pass: how many arguments operator `op` takes in a program (operands,
// then its literal parameters: 2 for nn.leaky_relu, 3 for clip), or -1 if programs do
// not have it.
int FusedElementwiseArity(std::string_view op);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_FUSED_ELEMENTWISE_H_
