// Registration of the data-dependent-shape kernel family (kernels/dynamic.cc).
#ifndef DYNVM_KERNELS_DYNAMIC_H_
#define DYNVM_KERNELS_DYNAMIC_H_

#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds argwhere, nonzero and shape_of.
absl::Status RegisterDynamicKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DYNAMIC_H_
