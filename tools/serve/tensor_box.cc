#include "tools/serve/tensor_box.h"

#include <cassert>
#include <cstring>

namespace dynvm::tools::serve {
namespace {

// Strides in elements of a C-order `shape`.
Shape Strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

}  // namespace

void CopyBox(const NDArrayObj& src, absl::Span<const int64_t> src_start, NDArrayObj& dst,
             absl::Span<const int64_t> dst_start, absl::Span<const int64_t> extent) {
  const size_t rank = extent.size();
  assert(src.dtype() == dst.dtype() && src.ndim() == static_cast<int>(rank) &&
         dst.ndim() == static_cast<int>(rank));
  for (size_t d = 0; d < rank; ++d) {
    assert(src_start[d] + extent[d] <= src.shape()[d] && dst_start[d] + extent[d] <= dst.shape()[d]);
    if (extent[d] == 0) return;
  }
  const size_t element = DTypeSize(src.dtype());
  if (rank == 0) {
    std::memcpy(dst.data(), src.data(), element);
    return;
  }
  const Shape src_strides = Strides(src.shape()), dst_strides = Strides(dst.shape());
  const size_t run = static_cast<size_t>(extent[rank - 1]) * element;
  Shape index(rank - 1, 0);  // over every axis but the last
  while (true) {
    int64_t s = src_start[rank - 1], t = dst_start[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) {
      s += (src_start[d] + index[d]) * src_strides[d];
      t += (dst_start[d] + index[d]) * dst_strides[d];
    }
    std::memcpy(static_cast<char*>(dst.data()) + t * element,
                static_cast<const char*>(src.data()) + s * element, run);
    size_t d = rank - 1;
    while (d > 0 && ++index[d - 1] == extent[d - 1]) index[--d] = 0;
    if (d == 0) return;
  }
}

void FillTensor(NDArrayObj& array, const NDArrayObj& element) {
  const size_t size = DTypeSize(array.dtype());
  char* out = static_cast<char*>(array.data());
  for (int64_t i = 0; i < array.num_elements(); ++i) std::memcpy(out + i * size, element.data(), size);
}

}  // namespace dynvm::tools::serve
