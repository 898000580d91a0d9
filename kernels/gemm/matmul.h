// Registration of the matrix-multiply kernel family (kernels/gemm/matmul.cc): nn.dense,
// nn.matmul and matmul (numpy semantics), nn.batch_matmul, gemm (GemmF32 with its
// whole epilogue, for fused code), and nn.contrib_dense_pack with the layout_transform
// that packs its weight. All f32, all computed by GemmF32 (kernels/gemm/gemm.h).
//
// docs/kernels.md documents every kernel: inputs, outputs, attributes and dtypes.
#ifndef DYNVM_KERNELS_GEMM_MATMUL_H_
#define DYNVM_KERNELS_GEMM_MATMUL_H_

#include "absl/status/status.h"
#include "kernels/kernel.h"

namespace dynvm::kernels {

// Adds nn.dense, nn.matmul, matmul, nn.batch_matmul, gemm, layout_transform and
// nn.contrib_dense_pack.
absl::Status RegisterMatmulKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_GEMM_MATMUL_H_
