// Registration of the sorting kernel family (kernels/sort.cc).
#ifndef DYNVM_KERNELS_SORT_H_
#define DYNVM_KERNELS_SORT_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds topk, argsort and unique.
absl::Status RegisterSortKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_SORT_H_
