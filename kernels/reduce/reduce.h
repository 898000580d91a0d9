// Registration of the reduction kernel family (kernels/reduce/reduce.cc, det.cc).
#ifndef DYNVM_KERNELS_REDUCE_REDUCE_H_
#define DYNVM_KERNELS_REDUCE_REDUCE_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds sum, mean, max, min, prod, l2_norm, argmax, argmin and cumsum. The f32 value
// reductions take optional `prologue` / `epilogue` fused_elementwise programs (see
// reduce.cc and docs/kernels.md).
absl::Status RegisterReduceKernels(KernelRegistry& registry);

// Adds det, the determinant of each matrix of the last two axes (kernels/reduce/det.cc).
absl::Status RegisterDetKernel(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_REDUCE_REDUCE_H_
