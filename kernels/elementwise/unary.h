// Registration of the elementwise unary kernel family (kernels/elementwise/unary.cc).
#ifndef DYNVM_KERNELS_ELEMENTWISE_UNARY_H_
#define DYNVM_KERNELS_ELEMENTWISE_UNARY_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds negative, abs, exp, log, sqrt, rsqrt, reciprocal, tanh, sigmoid, nn.relu,
// nn.leaky_relu, gelu, erf, sin, cos, floor, ceil, round, sign, clip, isnan,
// logical_not and cast.
absl::Status RegisterUnaryKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_ELEMENTWISE_UNARY_H_
