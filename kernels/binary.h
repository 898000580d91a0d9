// Registration of the elementwise binary kernel family (kernels/binary.cc).
#ifndef DYNVM_KERNELS_BINARY_H_
#define DYNVM_KERNELS_BINARY_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds add, subtract, multiply, divide, maximum and minimum.
absl::Status RegisterBinaryKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_BINARY_H_
