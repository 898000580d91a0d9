// Registration of the tensor-creation kernel family (kernels/data_movement/creation.cc).
#ifndef DYNVM_KERNELS_DATA_MOVEMENT_CREATION_H_
#define DYNVM_KERNELS_DATA_MOVEMENT_CREATION_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds arange, full, zeros, ones, dyn.full, dyn.zeros, dyn.ones and
// random_uniform_like.
absl::Status RegisterCreationKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DATA_MOVEMENT_CREATION_H_
