// The floating-point operations of one kernel call, where the kernel library knows
// them: the matrix products and convolutions that dominate a model's time (a multiply
// and an add count two). The profiler divides by time for GFLOP/s.
//
//   std::optional<double> flops = KernelFlops(kernel.name(), args, kernel.num_inputs());
#ifndef DYNVM_KERNELS_FLOPS_H_
#define DYNVM_KERNELS_FLOPS_H_

#include <optional>
#include <string_view>

#include "objects/ndarray.h"

namespace dynvm::kernels {

// `args` are the call's inputs then outputs (as kernels receive them), `num_inputs` of
// the former. Nothing for a kernel whose count is not known here, or for arguments
// that do not have the shapes the kernel takes (the call failed).
std::optional<double> KernelFlops(std::string_view kernel, NDArrayObj* const* args, int num_inputs);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_FLOPS_H_
