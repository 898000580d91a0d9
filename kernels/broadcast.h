// Numpy broadcasting: the output shape of two operands and the per-operand strides that
// walk them over that output.
//
//   BroadcastShapes({7, 1, 3}, {4, 3}) == Shape{7, 4, 3}
#ifndef DYNVM_KERNELS_BROADCAST_H_
#define DYNVM_KERNELS_BROADCAST_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/ndarray.h"

namespace dynvm::kernels {

// The broadcast of `a` and `b` (aligned at the last axis; extents equal or 1), or
// InvalidArgument naming both shapes.
absl::StatusOr<Shape> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b);

// Element strides of a contiguous tensor of `shape` seen as `out_shape` (rank of
// `out_shape`, 0 on broadcast axes). `shape` must broadcast to `out_shape`.
Shape BroadcastStrides(absl::Span<const int64_t> shape, absl::Span<const int64_t> out_shape);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_BROADCAST_H_
