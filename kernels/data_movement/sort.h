// Registration of the sorting kernel family (kernels/data_movement/sort.cc).
#ifndef DYNVM_KERNELS_DATA_MOVEMENT_SORT_H_
#define DYNVM_KERNELS_DATA_MOVEMENT_SORT_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds topk, argsort and unique.
absl::Status RegisterSortKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DATA_MOVEMENT_SORT_H_
