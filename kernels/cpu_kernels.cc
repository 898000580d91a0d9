// The one place that lists every CPU kernel family of the library: RegisterCpuKernels
// and DefaultRegistry (kernels/api.h).
#include "kernels/api.h"

#include <cstdio>
#include <cstdlib>

#include "base/status_macros.h"
#include "kernels/data_movement/creation.h"
#include "kernels/data_movement/dynamic.h"
#include "kernels/data_movement/index.h"
#include "kernels/data_movement/slice.h"
#include "kernels/data_movement/sort.h"
#include "kernels/data_movement/text.h"
#include "kernels/data_movement/transform.h"
#include "kernels/elementwise/binary.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/elementwise/native_elementwise.h"
#include "kernels/elementwise/unary.h"
#include "kernels/gemm/matmul.h"
#include "kernels/nn/nn.h"
#include "kernels/reduce/reduce.h"

namespace dynvm::kernels {

absl::Status RegisterCpuKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(RegisterBinaryKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterUnaryKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterFusedElementwiseKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterNativeElementwiseKernel(registry));
  DYNVM_RETURN_IF_ERROR(RegisterReduceKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterDetKernel(registry));
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
  DYNVM_RETURN_IF_ERROR(RegisterPackedSequenceKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterConvKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterPoolKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterResizeKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterGridSampleKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterRnnKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterDetectionKernels(registry));
  DYNVM_RETURN_IF_ERROR(RegisterTextKernels(registry));
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
