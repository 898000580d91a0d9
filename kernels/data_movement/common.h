// Helpers shared by the data-movement kernel families (transform, slice, index,
// creation, sort, dynamic): copies written once per element SIZE rather than per dtype,
// a strided N-d copy that every layout kernel reduces to, and reading index and shape
// tensors. The argument checks every family shares are in kernels/internal/checks.h.
//
// Copies move bits: an f32 and an i32 tensor go through the same 4-byte code, as
// XNNPACK's x32 kernels do. Typed access through unsigned integers of the element's
// size is safe because tensors are aligned to their element size (NDArray guarantees
// it).
//
//   // out[i, j] = in[j, i] for a [rows, cols] tensor, 4-byte elements:
//   CopyStrided(4, {cols, rows}, out, {rows, 1}, in, {1, cols}, pool);
#ifndef DYNVM_KERNELS_DATA_MOVEMENT_COMMON_H_
#define DYNVM_KERNELS_DATA_MOVEMENT_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/internal/checks.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::internal {

// Extents or strides of an iteration space. Tile doubles the rank of its view, so this
// holds up to 2 * kMaxRank axes.
using Dims = absl::InlinedVector<int64_t, 8>;

// Calls `fn(U{})` with U the unsigned integer of `elem_size` bytes (1, 2, 4 or 8:
// every runtime dtype is one of these), the carrier of an element when copying, and
// returns its result.
template <typename Fn>
decltype(auto) DispatchElementSize(size_t elem_size, Fn&& fn) {
  switch (elem_size) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    default: return fn(uint64_t{});
  }
}

// Row-major element strides of `shape`. When `shape` has an empty axis the strides
// left of it are meaningless (computed wrapping, so never undefined) and unused.
Dims ContiguousStrides(absl::Span<const int64_t> shape);

// The product of `extents`: 0 if any is 0. A valid shape with an empty axis may have
// other extents whose product overflows; without one, a valid shape bounds them all.
int64_t ProductOf(absl::Span<const int64_t> extents);

// Copies the elements of an N-d iteration space of `shape`: element `i` (a
// multi-index) goes from src + dot(i, src_strides) to dst + dot(i, dst_strides), in
// elements of `elem_size` bytes. Strides may be 0 (broadcast) or negative (reversal).
// Axes are merged where both operands allow; a contiguous run becomes a memcpy, a
// moved unit-stride axis a blocked 2-D transpose, and large copies are split over
// `pool`. Destination elements must not overlap each other or the source.
void CopyStrided(size_t elem_size, absl::Span<const int64_t> shape, void* dst,
                 absl::Span<const int64_t> dst_strides, const void* src,
                 absl::Span<const int64_t> src_strides, ThreadPool& pool);

// memcpy of `nbytes`, split over `pool` when large. Does nothing when `nbytes` is 0
// (pointers of empty tensors may be null) or when `dst == src`.
void ParallelCopy(void* dst, const void* src, size_t nbytes, ThreadPool& pool);

// Writes the `elem_size`-byte element at `value` to `count` consecutive elements at
// `dst`, split over `pool` when large.
void FillElements(void* dst, int64_t count, const void* value, size_t elem_size, ThreadPool& pool);

// Walks the multi-indices of `extents` in row-major order, tracking the element offsets
// of two operands with strides `strides0` and `strides1`. Seek() positions it at a
// linear index (one division per axis); Next() advances by one (amortised O(1)).
class Odometer {
 public:
  Odometer(absl::Span<const int64_t> extents, absl::Span<const int64_t> strides0,
           absl::Span<const int64_t> strides1);
  void Seek(int64_t linear);
  void Next();
  int64_t offset0() const { return offset0_; }
  int64_t offset1() const { return offset1_; }
  // The current multi-index.
  const Dims& index() const { return index_; }

 private:
  Dims extents_, strides0_, strides1_, index_;
  int64_t offset0_ = 0;
  int64_t offset1_ = 0;
};

// Element `i` of an i32 or i64 tensor's `data`.
inline int64_t LoadIndex(const void* data, bool is_i64, int64_t i) {
  return is_i64 ? static_cast<const int64_t*>(data)[i] : static_cast<const int32_t*>(data)[i];
}
// The values of a 1-D i32/i64 tensor (a shape or a list of integers), or
// InvalidArgument naming `what`.
absl::StatusOr<Dims> ReadIntVector(std::string_view op, std::string_view what, const NDArrayObj& t);
// The shape a shape tensor holds: ReadIntVector plus a valid-shape check.
absl::StatusOr<Shape> ReadShapeTensor(std::string_view op, const NDArrayObj& t);
// Element `i` of `t` widened to double (f16/bf16 exactly; i64 rounds beyond 2^53;
// bool is 0 or 1).
double LoadAsDouble(const NDArrayObj& t, int64_t i);
// Writes `value` as one element of `dtype` to `out`, by cast's rules
// (kernels/elementwise/convert.h): floats round to nearest even, once; integers truncate
// toward zero and saturate, NaN gives 0; bool is `value != 0`.
void StoreFromDouble(double value, DType dtype, void* out);

}  // namespace dynvm::kernels::internal

#endif  // DYNVM_KERNELS_DATA_MOVEMENT_COMMON_H_
