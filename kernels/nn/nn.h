// Registration of the neural-network kernel families (kernels/nn/), one function per
// family, each called once from RegisterCpuKernels (kernels/cpu_kernels.cc).
//
// docs/kernels.md documents every kernel: inputs, outputs, attributes and dtypes.
#ifndef DYNVM_KERNELS_NN_NN_H_
#define DYNVM_KERNELS_NN_NN_H_

#include "absl/status/status.h"
#include "kernels/kernel.h"

namespace dynvm::kernels {

// nn.softmax and nn.log_softmax (kernels/nn/softmax.cc).
absl::Status RegisterSoftmaxKernels(KernelRegistry& registry);
// nn.layer_norm and nn.batch_norm, inference form (kernels/nn/normalization.cc).
absl::Status RegisterNormalizationKernels(KernelRegistry& registry);
// nn.attention, fused multi-head scaled dot-product attention (kernels/nn/attention.cc).
absl::Status RegisterAttentionKernels(KernelRegistry& registry);
// sequence_positions and sequence_rows, over sequences packed without padding
// (kernels/nn/packed_sequences.cc).
absl::Status RegisterPackedSequenceKernels(KernelRegistry& registry);
// nn.conv1d and nn.conv2d, grouped and depthwise included (kernels/nn/conv.cc).
absl::Status RegisterConvKernels(KernelRegistry& registry);
// nn.max_pool2d, nn.avg_pool2d and nn.global_avg_pool2d (kernels/nn/pool.cc).
absl::Status RegisterPoolKernels(KernelRegistry& registry);
// image.resize2d and dyn.image.resize2d: nearest, bilinear and bicubic (kernels/nn/resize.cc).
absl::Status RegisterResizeKernels(KernelRegistry& registry);
// nn.grid_sample, ONNX's GridSample (kernels/nn/grid_sample.cc).
absl::Status RegisterGridSampleKernels(KernelRegistry& registry);
// nn.lstm_cell, nn.gru_cell, nn.lstm, nn.gru and nn.rnn, PyTorch's cells and ONNX's layers
// with every activation ONNX lists (kernels/nn/rnn.cc, rnn_activation.cc).
absl::Status RegisterRnnKernels(KernelRegistry& registry);
// vision.all_class_non_max_suppression and vision.roi_align, ONNX's reference semantics
// (kernels/nn/detection.cc).
absl::Status RegisterDetectionKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_NN_NN_H_
