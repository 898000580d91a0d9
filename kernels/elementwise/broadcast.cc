// Numpy broadcasting (kernels/elementwise/broadcast.h): the output shape of two
// operands and the strides that walk each over it.
#include "kernels/elementwise/broadcast.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace dynvm::kernels {

absl::StatusOr<Shape> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "shapes %s and %s do not broadcast (axis %d: %d vs %d)", ShapeToString(a),
          ShapeToString(b), i, da, db));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape BroadcastStrides(absl::Span<const int64_t> shape, absl::Span<const int64_t> out_shape) {
  Shape strides(out_shape.size(), 0);
  int64_t stride = 1;
  const size_t lead = out_shape.size() - shape.size();
  for (size_t i = shape.size(); i-- > 0;) {
    strides[lead + i] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

}  // namespace dynvm::kernels
