// Registration of the slicing and joining kernel family (kernels/data_movement/slice.cc).
#ifndef DYNVM_KERNELS_DATA_MOVEMENT_SLICE_H_
#define DYNVM_KERNELS_DATA_MOVEMENT_SLICE_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds concatenate, split, dyn.split, strided_slice, dyn.strided_slice and nn.pad.
absl::Status RegisterSliceKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DATA_MOVEMENT_SLICE_H_
