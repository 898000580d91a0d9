// The one place that lists every CPU kernel family of the library.
#include <cstdio>
#include <cstdlib>

#include "base/status_macros.h"
#include "kernels/binary.h"
#include "kernels/creation.h"
#include "kernels/dynamic.h"
#include "kernels/fused_elementwise.h"
#include "kernels/index.h"
#include "kernels/kernel.h"
#include "kernels/matmul.h"
#include "kernels/native_elementwise.h"
#include "kernels/nn/nn.h"
#include "kernels/reduce.h"
#include "kernels/slice.h"
#include "kernels/sort.h"
#include "kernels/transform.h"
#include "kernels/unary.h"

namespace dynvm::kernels {

absl::Status RegisterCpuKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(RegisterBinaryKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterUnaryKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterFusedElementwiseKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterNativeElementwiseKernel(registry));
  DYNVM_RETURN_IF_ERROR(RegisterReduceKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterTransformKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterSliceKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterIndexKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterCreationKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterSortKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterDynamicKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterMatmulKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterSoftmaxKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterNormalizationKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterAttentionKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterConvKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterPoolKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterResizeKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterRnnKernels(registry));
  return absl::OkStatus();
}

const KernelRegistry& DefaultRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    absl::Status status = RegisterCpuKernels(*r);
    if (!status.ok()) {  // a bug in the library's own registrations, not bad input
      std::fprintf(stderr, "dynvm: %s\n", status.ToString().c_str());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

}  // namespace dynvm::kernels
