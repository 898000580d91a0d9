// Registration of the elementwise binary kernel family (kernels/elementwise/binary.cc): arithmetic,
// comparisons and logical operations with numpy broadcasting, and `where`.
#ifndef DYNVM_KERNELS_ELEMENTWISE_BINARY_H_
#define DYNVM_KERNELS_ELEMENTWISE_BINARY_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds add, subtract, multiply, divide, maximum, minimum, power, mod, floor_mod, equal,
// not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or,
// logical_xor, left_shift, right_shift, where and nn.bias_add.
absl::Status RegisterBinaryKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_ELEMENTWISE_BINARY_H_
