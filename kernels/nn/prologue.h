// The walk over the 1-D slices along one axis of a fused elementwise program's result,
// for the row kernels that take a `prologue` (nn.softmax, nn.log_softmax in
// kernels/nn/softmax.cc; nn.layer_norm in kernels/nn/normalization.cc): the prologue's
// counterpart of ForEachAxisRow (kernels/nn/common.h).
//
//   nn::ForEachPrologueAxisRow(program, call.inputs(), shape, outer, n, inner, y,
//                              *call.pool, [&](const float* in, float* out) {
//                                SoftmaxRow(uk, n, in, out);
//                              });
//
// Contiguous slices (inner == 1) are evaluated a few whole rows at a time into a
// per-thread buffer that stays in L1, and `row_fn` reads them from there: the program's
// result never reaches memory. Strided slices are evaluated into the output, which
// ForEachAxisRow then transforms in place.
#ifndef DYNVM_KERNELS_NN_PROLOGUE_H_
#define DYNVM_KERNELS_NN_PROLOGUE_H_

#include <algorithm>
#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"
#include "kernels/scratch.h"
#include "kernels/thread_pool.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::nn {

// Floats of program results a task evaluates at once (whole rows, at least one): 8 KiB,
// which stays in L1 until `row_fn` reads it.
inline constexpr int64_t kPrologueChunk = 2048;

// Calls `row_fn(in, out)` for every 1-D slice along the middle axis of the [outer, n,
// inner] result of `program` over `inputs` broadcast to `shape` (what
// program.InferShape returned for them; outer * n * inner elements, at least one), with
// `out` the slice's place in `y` (contiguous, of that shape), as ForEachAxisRow does:
// the slice arrives contiguous and `row_fn` writes its n results contiguously, and must
// allow `out` == `in`. `y` may alias an input of `shape` (each row of it is read before
// it is written). Parallel over slices on `pool`; uses the kTask scratch slot.
inline void ForEachPrologueAxisRow(const FusedProgram& program,
                                   absl::Span<NDArrayObj* const> inputs,
                                   absl::Span<const int64_t> shape, int64_t outer, int64_t n,
                                   int64_t inner, float* y, ThreadPool& pool,
                                   absl::FunctionRef<void(const float*, float*)> row_fn) {
  if (inner != 1) {
    program.Evaluate(inputs, shape, y, pool);
    ForEachAxisRow(y, y, outer, n, inner, pool, row_fn);
    return;
  }
  const int64_t per_chunk = std::max<int64_t>(1, kPrologueChunk / n);
  // Each input and statement costs about one more stream over the row.
  const int64_t grain = internal::GrainForBytes(
      sizeof(float) * n * (2 + program.num_inputs() + program.num_statements()));
  program.Prepare(inputs, shape, [&](const FusedRangeEvaluator& eval) {
    pool.ParallelFor(outer, grain, [&](int64_t begin, int64_t end) {
      const int64_t chunk = std::min(per_chunk, end - begin);
      float* x = ThreadScratch<float>(ScratchSlot::kTask, chunk * n);
      for (int64_t r = begin; r < end; r += chunk) {
        const int64_t m = std::min(chunk, end - r);
        eval.EvaluateRange(r * n, m * n, x);
        for (int64_t i = 0; i < m; ++i) row_fn(x + i * n, y + (r + i) * n);
      }
    });
  });
}

}  // namespace dynvm::kernels::nn

#endif  // DYNVM_KERNELS_NN_PROLOGUE_H_
