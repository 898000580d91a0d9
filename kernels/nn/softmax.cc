// nn.softmax and nn.log_softmax along any axis (attribute `axis`, default -1), f32.
//
// Both are numerically stable: the slice's maximum is subtracted before exponentiating,
// so no finite input overflows, and log_softmax is x - max - log(sum(exp(x - max)))
// rather than the log of a softmax that may underflow to 0. A slice costs three passes
// over memory that stays in cache (max; exp and sum; scale or shift); slices run in
// parallel, and slices along an inner axis are transposed through a tile
// (ForEachAxisRow) so that the microkernels always see contiguous rows.
#include <cmath>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/nn/ukernels.h"

namespace dynvm::kernels {
namespace {

struct SoftmaxState {
  int64_t axis;
};

absl::StatusOr<std::shared_ptr<const void>> BindSoftmax(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis"}));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, GetIntAttr(attrs, "axis", -1));
  return std::make_shared<const SoftmaxState>(SoftmaxState{axis});
}

template <bool kLog>
constexpr std::string_view kOpName = kLog ? "nn.log_softmax" : "nn.softmax";

// The checks the shape function and the kernel share; returns the normalised axis.
template <bool kLog>
absl::StatusOr<int> CheckInput(const void* state, const NDArrayObj& x) {
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kOpName<kLog>, "data", x));
  return internal::NormalizeAxis(kOpName<kLog>, static_cast<const SoftmaxState*>(state)->axis,
                                 x.ndim());
}

template <bool kLog>
absl::Status SoftmaxShapeFn(const ShapeCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckInput<kLog>(call.state, *call.inputs[0]).status());
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

// softmax or log_softmax of one contiguous slice of `n` elements; `out` may be `in`.
template <bool kLog>
void SoftmaxSlice(const nn::NnMicrokernels& uk, int64_t n, const float* in, float* out) {
  if constexpr (kLog) {
    const float max = uk.rmax(n, in);
    const float log_sum = std::log(uk.raddexpminusmax(n, in, max));
    // Two roundings, not x - (max + log_sum): when x is near max the result is small and
    // must not inherit an ulp of max.
    uk.vaddc(n, in, -max, out);
    uk.vaddc(n, out, -log_sum, out);
  } else {
    nn::SoftmaxRow(uk, n, in, out);
  }
}

template <bool kLog>
absl::Status SoftmaxKernel(const KernelCall& call) {
  const NDArrayObj& x = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(const int axis, CheckInput<kLog>(call.state, x));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kOpName<kLog>, call, {x.shape()}));
  if (x.num_elements() == 0) return absl::OkStatus();
  const nn::NnMicrokernels& uk = nn::GetNnMicrokernels();
  const int64_t outer = nn::Product(x.shape(), 0, axis), n = x.shape()[axis];
  const int64_t inner = nn::Product(x.shape(), axis + 1, x.ndim());
  nn::ForEachAxisRow(x.data_as<float>(), call.outputs()[0]->data_as<float>(), outer, n, inner,
                     *call.pool,
                     [&](const float* in, float* out) { SoftmaxSlice<kLog>(uk, n, in, out); });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSoftmaxKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kOpName<false>),
                                                    .num_inputs = 1,
                                                    .num_outputs = 1,
                                                    .fn = SoftmaxKernel<false>,
                                                    .bind = BindSoftmax,
                                                    .shape_fn = SoftmaxShapeFn<false>}));
  return registry.Register(KernelDef{.name = std::string(kOpName<true>),
                                     .num_inputs = 1,
                                     .num_outputs = 1,
                                     .fn = SoftmaxKernel<true>,
                                     .bind = BindSoftmax,
                                     .shape_fn = SoftmaxShapeFn<true>});
}

}  // namespace dynvm::kernels
