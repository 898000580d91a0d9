// Numpy broadcasting: the output shape of two operands, the per-operand strides that
// walk them over that output, and the loop driver every elementwise kernel with
// broadcast operands runs on (binary arithmetic, comparisons, where).
//
//   BroadcastShapes({7, 1, 3}, {4, 3}) == Shape{7, 4, 3}
//
//   // c = a + b over the broadcast output, in contiguous runs, on the pool:
//   BroadcastLoop<2> loop = MakeBroadcastLoop<2>({a.shape(), b.shape()}, c.shape());
//   ParallelForEachBroadcastRun(loop, pool, /*grain=*/8192,
//       [&](const std::array<int64_t, 2>& in, int64_t out, int64_t n) {
//         // loop.inner_strides() say whether a and b advance (1) or repeat (0)
//       });
#ifndef DYNVM_KERNELS_ELEMENTWISE_BROADCAST_H_
#define DYNVM_KERNELS_ELEMENTWISE_BROADCAST_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/thread_pool.h"
#include "objects/ndarray.h"

namespace dynvm::kernels {

// The broadcast of `a` and `b` (aligned at the last axis; extents equal or 1), or
// InvalidArgument naming both shapes.
absl::StatusOr<Shape> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b);

// Element strides of a contiguous tensor of `shape` seen as `out_shape` (rank of
// `out_shape`, 0 on broadcast axes). `shape` must broadcast to `out_shape`.
Shape BroadcastStrides(absl::Span<const int64_t> shape, absl::Span<const int64_t> out_shape);

// The iteration space of an elementwise operation on `N` operands broadcast to a
// contiguous output, simplified so that the innermost loop is as long as possible:
// axes of extent 1 are dropped and neighbouring axes merged wherever every operand
// walks them as one (same-shape operands become one run of all elements; [384, 768] +
// [768] stays two axes). On the innermost axis each operand's stride is 1 (it advances)
// or 0 (it repeats one value), never anything else.
template <size_t N>
struct BroadcastLoop {
  int rank = 1;  // of the simplified space, >= 1
  int64_t extents[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};  // element strides of each operand; 0 = broadcast
  int64_t num_elements = 0;

  // Per operand: 1 if it advances along the innermost axis, 0 if it repeats.
  std::array<int64_t, N> inner_strides() const {
    std::array<int64_t, N> s;
    for (size_t k = 0; k < N; ++k) s[k] = strides[k][rank - 1];
    return s;
  }
};

// The loop of contiguous operands of `shapes` over `out_shape`, which must be their
// broadcast (BroadcastShapes) and of rank <= kMaxRank.
template <size_t N>
BroadcastLoop<N> MakeBroadcastLoop(const std::array<absl::Span<const int64_t>, N>& shapes,
                                   absl::Span<const int64_t> out_shape) {
  BroadcastLoop<N> loop;
  loop.num_elements = 1;
  for (int64_t d : out_shape) loop.num_elements *= d;
  // Collected innermost first, reversed at the end.
  int rank = 0;
  int64_t extents[kMaxRank];
  int64_t strides[N][kMaxRank];
  std::array<int64_t, N> contiguous;  // each operand's stride at the current axis
  contiguous.fill(1);
  const int out_rank = static_cast<int>(out_shape.size());
  for (int i = out_rank - 1; i >= 0; --i) {
    std::array<int64_t, N> s;
    bool mergeable = rank > 0;
    for (size_t k = 0; k < N; ++k) {
      const int lead = out_rank - static_cast<int>(shapes[k].size());
      const int64_t d = i >= lead ? shapes[k][i - lead] : 1;
      s[k] = d == 1 ? 0 : contiguous[k];
      contiguous[k] *= d;
      if (rank > 0) mergeable = mergeable && s[k] == strides[k][rank - 1] * extents[rank - 1];
    }
    if (out_shape[i] == 1) continue;
    if (mergeable) {
      extents[rank - 1] *= out_shape[i];
      continue;
    }
    extents[rank] = out_shape[i];
    for (size_t k = 0; k < N; ++k) strides[k][rank] = s[k];
    ++rank;
  }
  if (rank == 0) {  // a single element
    extents[0] = 1;
    for (size_t k = 0; k < N; ++k) strides[k][0] = 0;
    rank = 1;
  }
  loop.rank = rank;
  for (int d = 0; d < rank; ++d) {
    loop.extents[d] = extents[rank - 1 - d];
    for (size_t k = 0; k < N; ++k) loop.strides[k][d] = strides[k][rank - 1 - d];
  }
  return loop;
}

// Calls fn(offsets, out_offset, n) for each run of output elements [out_offset,
// out_offset + n) within [begin, end) that lies on the innermost axis; offsets[k] is
// operand k's element offset at the start of the run. Index arithmetic happens once per
// run, so `fn` is a tight loop.
template <size_t N, typename Fn>
void ForEachBroadcastRun(const BroadcastLoop<N>& loop, int64_t begin, int64_t end, Fn&& fn) {
  if (begin >= end) return;
  const int r = loop.rank;
  const int64_t inner = loop.extents[r - 1];
  int64_t index[kMaxRank];
  std::array<int64_t, N> base{};  // operand offsets at the start of the current row
  int64_t row = begin / inner;
  int64_t j = begin % inner;
  for (int d = r - 2; d >= 0; --d) {
    index[d] = row % loop.extents[d];
    row /= loop.extents[d];
    for (size_t k = 0; k < N; ++k) base[k] += index[d] * loop.strides[k][d];
  }
  for (int64_t pos = begin; pos < end;) {
    const int64_t n = std::min(inner - j, end - pos);
    std::array<int64_t, N> offsets;
    for (size_t k = 0; k < N; ++k) offsets[k] = base[k] + j * loop.strides[k][r - 1];
    fn(offsets, pos, n);
    pos += n;
    j = 0;
    for (int d = r - 2; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) base[k] += loop.strides[k][d];
      if (++index[d] < loop.extents[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= loop.strides[k][d] * loop.extents[d];
      index[d] = 0;
    }
  }
}

// ForEachBroadcastRun over all output elements, split over `pool` in chunks of at
// least `grain` elements.
template <size_t N, typename Fn>
void ParallelForEachBroadcastRun(const BroadcastLoop<N>& loop, ThreadPool& pool, int64_t grain,
                                 Fn&& fn) {
  pool.ParallelFor(loop.num_elements, grain, [&](int64_t begin, int64_t end) {
    ForEachBroadcastRun(loop, begin, end, fn);
  });
}

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_ELEMENTWISE_BROADCAST_H_
