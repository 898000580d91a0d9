// Registration of the data-dependent-shape kernel family (kernels/data_movement/dynamic.cc).
#ifndef DYNVM_KERNELS_DATA_MOVEMENT_DYNAMIC_H_
#define DYNVM_KERNELS_DATA_MOVEMENT_DYNAMIC_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds argwhere, nonzero and shape_of.
absl::Status RegisterDynamicKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DATA_MOVEMENT_DYNAMIC_H_
