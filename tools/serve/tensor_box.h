// Copying boxes of elements between tensors: how the batcher concatenates requests
// along axis 0 (padding shorter ones) and cuts a batched output back into requests.
//
// A box is a start index and an extent per axis. Tensors are C-order, so a box is a set
// of contiguous runs along the last axis, each copied with one memcpy — or for string
// tensors element by element, the destination's storage keeping its own copies
// (objects/string_tensor.h).
//
//   FillTensor(*batch, pad_element);                       // pad everywhere first
//   CopyBox(*request, {0, 0}, *batch, {row, 0}, request->shape());
#ifndef DYNVM_TOOLS_SERVE_TENSOR_BOX_H_
#define DYNVM_TOOLS_SERVE_TENSOR_BOX_H_

#include <cstdint>

#include "absl/types/span.h"
#include "objects/ndarray.h"

namespace dynvm::tools::serve {

// Copies the box of `extent` at `src_start` in `src` to `dst_start` in `dst`. Both
// tensors have the same dtype and rank as the spans' length, and both boxes lie inside
// their tensors: callers derive them from shapes they checked (debug-asserted here).
void CopyBox(const NDArrayObj& src, absl::Span<const int64_t> src_start, NDArrayObj& dst,
             absl::Span<const int64_t> dst_start, absl::Span<const int64_t> extent);

// Sets every element of `array` to the one element of `element` (same dtype).
void FillTensor(NDArrayObj& array, const NDArrayObj& element);

// Whether the first elements of `a` and `b` (one dtype) are equal: the same bytes, or
// for strings the same text.
bool SameFirstElement(const NDArrayObj& a, const NDArrayObj& b);

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_TENSOR_BOX_H_
