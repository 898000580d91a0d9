// Kernels whose output shape depends on the input's values: argwhere (Relay: the
// coordinates of the nonzero elements as [count, rank]) and nonzero (ONNX NonZero: the
// same coordinates as [rank, count]). Their shape functions count the nonzero elements;
// unique, the third such kernel, lives with the sorts (kernels/data_movement/sort.cc). Here too is
// shape_of, whose output holds its input's shape: the values that the dyn.* kernels
// take as shape and index inputs (it reads the input's shape only, never its data).
//
// Any dtype is accepted. An element is nonzero when its bits are, ignoring the sign of
// floats: -0.0 is zero and NaN is nonzero, as in numpy. Coordinates are i64 or i32 (the
// output's dtype; i32 only when every extent fits).
//
// The kernel works in fixed chunks of elements: count each chunk in parallel, take
// prefix sums, then let each chunk write its coordinates from its offset in parallel.
#include "kernels/data_movement/dynamic.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"

namespace dynvm::kernels {
namespace {

using internal::Dims;

constexpr int64_t kChunk = int64_t{1} << 16;

// The bits of an element of `dtype` that make it nonzero.
uint64_t NonzeroMask(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 0x7fffffffu;
    case DType::kF64: return 0x7fffffffffffffffu;
    case DType::kF16:
    case DType::kBF16: return 0x7fffu;
    default: return ~uint64_t{0};
  }
}

template <typename T>
int64_t CountNonzero(const T* p, int64_t begin, int64_t end, T mask) {
  int64_t count = 0;
  for (int64_t i = begin; i < end; ++i) count += (p[i] & mask) != 0;
  return count;
}

int64_t CountAll(const NDArrayObj& t) {
  return internal::DispatchElementSize(DTypeSize(t.dtype()), [&](auto tag) {
    using T = decltype(tag);
    return CountNonzero(t.data_as<T>(), 0, t.num_elements(),
                        static_cast<T>(NonzeroMask(t.dtype())));
  });
}

// Coordinate `d` of nonzero number `k` goes to out[k * k_stride + d * d_stride].
struct Layout {
  int64_t k_stride, d_stride;
};

// Writes the coordinates of the nonzero elements of `t`, chunk by chunk.
template <typename T, typename Idx>
void WriteCoordinates(const NDArrayObj& t, Layout layout, Idx* out, ThreadPool& pool) {
  const T* p = t.data_as<T>();
  const T mask = static_cast<T>(NonzeroMask(t.dtype()));
  const int64_t n = t.num_elements();
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<int64_t> offsets(static_cast<size_t>(chunks) + 1, 0);
  pool.ParallelFor(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      offsets[c + 1] = CountNonzero(p, c * kChunk, std::min(n, (c + 1) * kChunk), mask);
    }
  });
  for (int64_t c = 0; c < chunks; ++c) offsets[c + 1] += offsets[c];
  const int rank = t.ndim();
  const Dims strides = internal::ContiguousStrides(t.shape());
  pool.ParallelFor(chunks, 1, [&](int64_t b, int64_t e) {
    internal::Odometer od(t.shape(), strides, strides);
    od.Seek(b * kChunk);
    int64_t k = offsets[b];
    for (int64_t i = b * kChunk, end = std::min(n, e * kChunk); i < end; ++i, od.Next()) {
      if ((p[i] & mask) == 0) continue;
      for (int d = 0; d < rank; ++d) {
        out[k * layout.k_stride + d * layout.d_stride] = static_cast<Idx>(od.index()[d]);
      }
      ++k;
    }
  });
}

// The output shape for `count` nonzeros in `t`: [count, rank] or, `transposed`,
// [rank, count].
Shape CoordinatesShape(const NDArrayObj& t, int64_t count, bool transposed) {
  return transposed ? Shape{t.ndim(), count} : Shape{count, t.ndim()};
}

template <bool kTransposed>
absl::Status CoordinatesShapeFn(const ShapeCall& call) {
  const NDArrayObj& t = *call.inputs[0];
  call.output_shapes[0] = CoordinatesShape(t, CountAll(t), kTransposed);
  return absl::OkStatus();
}

template <bool kTransposed>
absl::Status CoordinatesKernel(const KernelCall& call) {
  const char* op = kTransposed ? "nonzero" : "argwhere";
  const NDArrayObj& t = *call.args[0];
  const NDArrayObj& out = *call.args[1];
  DYNVM_RETURN_IF_ERROR(internal::CheckIndexDType(op, "output", out));
  const int64_t count = CountAll(t);
  DYNVM_RETURN_IF_ERROR(
      internal::CheckOutputShape(op, out, CoordinatesShape(t, count, kTransposed)));
  const int64_t max_extent =
      t.ndim() == 0 ? 0 : *std::max_element(t.shape().begin(), t.shape().end());
  DYNVM_RETURN_IF_ERROR(internal::CheckIndexCapacity(op, "output", out.dtype(), max_extent));
  if (out.num_elements() == 0) return absl::OkStatus();
  const Layout layout = kTransposed ? Layout{1, count} : Layout{t.ndim(), 1};
  internal::DispatchElementSize(DTypeSize(t.dtype()), [&](auto tag) {
    using T = decltype(tag);
    if (out.dtype() == DType::kI64) {
      WriteCoordinates<T>(t, layout, out.data_as<int64_t>(), *call.pool);
    } else {
      WriteCoordinates<T>(t, layout, out.data_as<int32_t>(), *call.pool);
    }
  });
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// shape_of

struct ShapeOfState {
  DType dtype;                       // i64 or i32
  std::optional<int64_t> start, end;  // ONNX Shape-15's range of axes; absent: all
};

absl::StatusOr<std::shared_ptr<const void>> BindShapeOf(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"dtype", "start", "end"}));
  auto state = std::make_shared<ShapeOfState>();
  DYNVM_ASSIGN_OR_RETURN(state->dtype, internal::GetDTypeAttr(attrs, "dtype", DType::kI64));
  if (state->dtype != DType::kI64 && state->dtype != DType::kI32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute 'dtype' is %s: expected i64 or i32", DTypeName(state->dtype)));
  }
  if (attrs.contains("start")) {
    DYNVM_ASSIGN_OR_RETURN(state->start, GetIntAttr(attrs, "start"));
  }
  if (attrs.contains("end")) {
    DYNVM_ASSIGN_OR_RETURN(state->end, GetIntAttr(attrs, "end"));
  }
  return std::shared_ptr<const void>(std::move(state));
}

// The axes [first, last) of `in` whose extents shape_of returns: ONNX's rule, a negative
// bound counting from the end, both clamped to [0, rank]. Checks that every one fits the
// output dtype.
absl::StatusOr<std::pair<int, int>> ShapeOfAxes(const ShapeOfState& s, const NDArrayObj& in) {
  const int64_t rank = in.ndim();
  auto bound = [rank](std::optional<int64_t> v, int64_t absent) {
    if (!v) return absent;
    return std::clamp(*v < 0 ? *v + rank : *v, int64_t{0}, rank);
  };
  const int first = static_cast<int>(bound(s.start, 0));
  const int last = static_cast<int>(std::max(bound(s.end, rank), int64_t{first}));
  for (int d = first; d < last; ++d) {
    if (s.dtype == DType::kI32 && in.shape()[d] > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "shape_of: extent %d of axis %d does not fit dtype i32", in.shape()[d], d));
    }
  }
  return std::make_pair(first, last);
}

absl::StatusOr<Shape> ShapeOfShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(const auto axes,
                         ShapeOfAxes(*static_cast<const ShapeOfState*>(state), *inputs[0]));
  return Shape{axes.second - axes.first};
}

absl::Status ShapeOfKernel(const KernelCall& call) {
  const auto& s = *static_cast<const ShapeOfState*>(call.state);
  const NDArrayObj& in = *call.args[0];
  const NDArrayObj& out = *call.args[1];
  DYNVM_ASSIGN_OR_RETURN(const auto axes, ShapeOfAxes(s, in));
  const auto [first, last] = axes;
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput("shape_of", out, s.dtype, {last - first}));
  for (int d = first; d < last; ++d) {
    if (s.dtype == DType::kI64) {
      out.data_as<int64_t>()[d - first] = in.shape()[d];
    } else {
      out.data_as<int32_t>()[d - first] = static_cast<int32_t>(in.shape()[d]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterDynamicKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {"argwhere", 1, 1, CoordinatesKernel<false>, nullptr, CoordinatesShapeFn<false>},
      {"nonzero", 1, 1, CoordinatesKernel<true>, nullptr, CoordinatesShapeFn<true>},
      {"shape_of", 1, 1, ShapeOfKernel, BindShapeOf, internal::SingleShapeFn<ShapeOfShape>},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
