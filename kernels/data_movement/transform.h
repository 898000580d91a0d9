// Registration of the layout-transform kernel family (kernels/data_movement/transform.cc).
#ifndef DYNVM_KERNELS_DATA_MOVEMENT_TRANSFORM_H_
#define DYNVM_KERNELS_DATA_MOVEMENT_TRANSFORM_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds reshape, dyn.reshape, squeeze, dyn.squeeze, expand_dims, dyn.expand_dims,
// transpose, broadcast_to, dyn.broadcast_to and tile.
absl::Status RegisterTransformKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DATA_MOVEMENT_TRANSFORM_H_
