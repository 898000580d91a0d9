// Registration of the indexing kernel family (kernels/data_movement/index.cc).
#ifndef DYNVM_KERNELS_DATA_MOVEMENT_INDEX_H_
#define DYNVM_KERNELS_DATA_MOVEMENT_INDEX_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds take, gather, scatter_elements and one_hot.
absl::Status RegisterIndexKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DATA_MOVEMENT_INDEX_H_
