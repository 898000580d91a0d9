// The floating-point operations of the matrix products and convolutions, the kernels
// that dominate a model's time: the FlopsFn (kernels/kernel.h) their KernelDefs name,
// for the profiler's GFLOP/s. A multiply and an add count two. Each returns nullopt for
// arguments that do not have the shapes its kernels take (the call failed).
#ifndef DYNVM_KERNELS_GEMM_FLOPS_H_
#define DYNVM_KERNELS_GEMM_FLOPS_H_

#include <optional>

#include "objects/ndarray.h"

namespace dynvm::kernels {

// nn.dense, nn.contrib_dense_pack: x [..., K] -> [..., N], each output a dot product
// of length K.
std::optional<double> DenseFlops(const void* state, NDArrayObj* const* args, int num_inputs);
// matmul, nn.matmul, nn.batch_matmul: K from a's matrix dims ([M, K] or, transposed,
// [K, M]), whatever batch dims it broadcasts.
std::optional<double> MatmulFlops(const void* state, NDArrayObj* const* args, int num_inputs);
// gemm: A [M, K] or, transposed, [K, M]; C [M, N].
std::optional<double> GemmFlops(const void* state, NDArrayObj* const* args, int num_inputs);
// nn.conv1d, nn.conv2d: the weight [out_channels, in_channels / groups, kernel...].
std::optional<double> ConvFlops(const void* state, NDArrayObj* const* args, int num_inputs);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_GEMM_FLOPS_H_
