// Copies of element boxes between tensors, for batching and unbatching
// (tools/serve/tensor_box.h).
#include "tools/serve/tensor_box.h"

#include <cassert>
#include <cstring>
#include <string_view>

#include "objects/string_tensor.h"

namespace dynvm::tools::serve {
namespace {

// Strides in elements of a C-order `shape`.
Shape Strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// Copies `count` elements from flat index `s` of `src` to flat index `t` of `dst`. A
// string element the source's storage does not hold (objects/string_tensor.h) cannot
// come from a request or a kernel; it is copied as "".
void CopyRun(const NDArrayObj& src, int64_t s, NDArrayObj& dst, int64_t t, int64_t count) {
  if (src.dtype() == DType::kString) {
    for (int64_t i = 0; i < count; ++i) {
      SetStringElement(dst, t + i, StringElement(src, s + i).value_or(std::string_view()));
    }
    return;
  }
  const size_t element = DTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst.data()) + t * element,
              static_cast<const char*>(src.data()) + s * element, count * element);
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
  if (rank == 0) {
    CopyRun(src, 0, dst, 0, 1);
    return;
  }
  const Shape src_strides = Strides(src.shape()), dst_strides = Strides(dst.shape());
  Shape index(rank - 1, 0);  // over every axis but the last
  while (true) {
    int64_t s = src_start[rank - 1], t = dst_start[rank - 1];
    for (size_t d = 0; d + 1 < rank; ++d) {
      s += (src_start[d] + index[d]) * src_strides[d];
      t += (dst_start[d] + index[d]) * dst_strides[d];
    }
    CopyRun(src, s, dst, t, extent[rank - 1]);
    size_t d = rank - 1;
    while (d > 0 && ++index[d - 1] == extent[d - 1]) index[--d] = 0;
    if (d == 0) return;
  }
}

void FillTensor(NDArrayObj& array, const NDArrayObj& element) {
  for (int64_t i = 0; i < array.num_elements(); ++i) CopyRun(element, 0, array, i, 1);
}

bool SameFirstElement(const NDArrayObj& a, const NDArrayObj& b) {
  if (a.dtype() == DType::kString) {
    const absl::StatusOr<std::string_view> x = StringElement(a, 0), y = StringElement(b, 0);
    return x.ok() && y.ok() && *x == *y;
  }
  return std::memcmp(a.data(), b.data(), DTypeSize(a.dtype())) == 0;
}

}  // namespace dynvm::tools::serve
