// What the neural-network kernel families (kernels/nn/) share: attribute parsing in
// TVM Relay's conventions, the checks their wrappers make, the walk over the 1-D slices
// of a tensor along one axis (softmax, layer_norm), sliding-window geometry
// (convolution, pooling), and cubic interpolation weights (resize, grid_sample).
//
//   // Relay's padding forms, for a 2-D window: [p], [ph, pw] or [top, left, bottom, right].
//   DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> pad, GetPaddingAttr(attrs, "padding", 2));
//   WindowAxis h{.kernel = 3, .stride = 1, .dilation = 1, .pad_before = pad[0],
//                .pad_after = pad[2]};
//   DYNVM_ASSIGN_OR_RETURN(int64_t out_h, WindowOutputSize("nn.conv2d", "height", in_h, h));
#ifndef DYNVM_KERNELS_NN_COMMON_H_
#define DYNVM_KERNELS_NN_COMMON_H_

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/kernel.h"
#include "kernels/microkernels.h"
#include "kernels/thread_pool.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::nn {

// The largest stride, dilation, padding, window or size attribute accepted: large
// enough for any tensor that fits in memory, small enough that window arithmetic on
// int64 cannot overflow.
inline constexpr int64_t kMaxWindowAttr = int64_t{1} << 31;

// ---------------------------------------------------------------------------------------
// Attributes

// An int list attribute of `rank` values, each in [min, kMaxWindowAttr); a single value
// stands for all `rank`. `fallback` (one value) when absent.
absl::StatusOr<std::vector<int64_t>> GetSpatialAttr(const Attrs& attrs, std::string_view name,
                                                    int rank, int64_t fallback, int64_t min);
// Relay's padding for a `rank`-D window, as 2 * rank values (all the befores, then all
// the afters): given as 1 value (every side), `rank` values (before = after per axis)
// or 2 * rank values. Zero padding when absent; negative values are InvalidArgument.
absl::StatusOr<std::vector<int64_t>> GetPaddingAttr(const Attrs& attrs, std::string_view name,
                                                    int rank);
// A layout attribute that must be `expected` (or absent, or empty when `allow_empty`):
// the kernels implement one layout, and a model asking for another must fail at load.
absl::Status CheckLayoutAttr(const Attrs& attrs, std::string_view name, std::string_view expected,
                             bool allow_empty = false);
// A non-negative finite epsilon attribute (default `fallback`).
absl::StatusOr<float> GetEpsilonAttr(const Attrs& attrs, double fallback);

// ---------------------------------------------------------------------------------------
// Checks

// InvalidArgument "unsupported dtype X for `op` `what`: expected f32" unless `t` is f32.
absl::Status CheckF32(std::string_view op, std::string_view what, const NDArrayObj& t);
// InvalidArgument unless `num_inputs` is one of `allowed` (for kernels with optional
// inputs, which register as variadic); `signature` names the inputs for the message.
absl::Status CheckInputCount(std::string_view op, int num_inputs,
                             std::initializer_list<int> allowed, std::string_view signature);
// InvalidArgument unless `t` has shape `expected`; `what` names it.
absl::Status CheckShape(std::string_view op, std::string_view what, const NDArrayObj& t,
                        absl::Span<const int64_t> expected);
// Checks every output of `call` against `shapes`: f32 and exactly the shape the shape
// function gives.
absl::Status CheckF32Outputs(std::string_view op, const KernelCall& call,
                             std::initializer_list<absl::Span<const int64_t>> shapes);

// ---------------------------------------------------------------------------------------
// Slices along an axis

// The product of shape[begin, end). Only for a shape with elements: when another extent
// is 0, the product of the rest may exceed int64 (kernels return early on empty tensors).
int64_t Product(absl::Span<const int64_t> shape, int begin, int end);

// Calls `row_fn(in, out)` for every 1-D slice along the middle axis of the contiguous
// [outer, n, inner] tensors `x` and `y` (`y` may be `x`); the slice arrives contiguous
// (n floats) and `row_fn` writes its n results contiguously, in place allowed. Strided
// slices (inner > 1) are transposed through a per-thread tile of a few slices, so that
// every access stays contiguous. Parallel over slices on `pool`.
void ForEachAxisRow(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                    ThreadPool& pool, absl::FunctionRef<void(const float*, float*)> row_fn);

// ---------------------------------------------------------------------------------------
// Sliding windows

// One spatial axis of a sliding window. Tap k of output o reads input position
// o * stride - pad_before + k * dilation; positions outside [0, in) are padding.
struct WindowAxis {
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_before = 0;
  int64_t pad_after = 0;
};

// The number of outputs along an axis of `in` inputs: Relay's
// (in + pads - dilation * (kernel - 1) - 1 [+ stride - 1 if ceil_mode]) / stride + 1.
// InvalidArgument naming `op` and `axis_name` when the dilated window does not fit in
// the padded input.
absl::StatusOr<int64_t> WindowOutputSize(std::string_view op, std::string_view axis_name,
                                         int64_t in, const WindowAxis& w, bool ceil_mode = false);

// The outputs [*lo, *hi) (within [0, out)) whose tap `k` reads inside [0, in).
void ValidOutputs(const WindowAxis& w, int64_t k, int64_t in, int64_t out, int64_t* lo,
                  int64_t* hi);
// The taps [*lo, *hi) (within [0, kernel)) of output `o` that read inside [0, in).
void ValidTaps(const WindowAxis& w, int64_t o, int64_t in, int64_t* lo, int64_t* hi);

// ---------------------------------------------------------------------------------------
// Interpolation

// Keys' cubic convolution weights, with parameter `a`, of the four taps floor(v) - 1 ...
// floor(v) + 2 of a sample at v, `t` = v - floor(v) in [0, 1), into `w`; ONNX's
// arithmetic (Resize's cubic mode and GridSample's bicubic, which fixes a = -0.75).
inline void CubicWeights(float a, float t, float* w) {
  const float t1 = t + 1.0f, s = 1.0f - t, s1 = s + 1.0f;
  w[0] = ((a * t1 - 5.0f * a) * t1 + 8.0f * a) * t1 - 4.0f * a;
  w[1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  w[2] = ((a + 2.0f) * s - (a + 3.0f)) * s * s + 1.0f;
  w[3] = ((a * s1 - 5.0f * a) * s1 + 8.0f * a) * s1 - 4.0f * a;
}

// softmax(x) into `y` (which may be `x`) for one row of `n` elements: three passes over
// a row that stays in cache. Shared by nn.softmax and nn.attention.
inline void SoftmaxRow(const Microkernels& uk, int64_t n, const float* x, float* y) {
  if (n == 0) return;
  const float max = uk.elementwise.rmax(n, x);
  const float sum = uk.nn.raddstoreexpminusmax(n, x, max, y);
  uk.nn.vmulc(n, y, 1.0f / sum, y);
}

}  // namespace dynvm::kernels::nn

#endif  // DYNVM_KERNELS_NN_COMMON_H_
