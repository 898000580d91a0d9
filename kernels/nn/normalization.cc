// nn.layer_norm and nn.batch_norm (inference), f32, with Relay's attributes.
//
// layer_norm normalises each 1-D slice along `axis` with its own mean and variance,
// computed in two passes (mean, then the centred second moment) so that the variance
// stays accurate when the mean is large against the spread; a third pass applies
// gamma and beta. The slice stays in cache across the passes.
//
// batch_norm uses the moving statistics: with a = gamma / sqrt(var + eps) and
// b = beta - mean * a per channel (folded once per call, in double), y = x * a + b is one
// fused multiply-add per element, as PyTorch's inference path computes it. Relay's
// batch_norm returns a tuple (output, moving_mean, moving_var) whose last two fields
// only training updates; this kernel is registered with the one output inference uses.
#include <cmath>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/nn/scratch.h"
#include "kernels/nn/ukernels.h"

namespace dynvm::kernels {
namespace {

constexpr std::string_view kLayerNorm = "nn.layer_norm";
constexpr std::string_view kBatchNorm = "nn.batch_norm";

// Both kernels take the same attributes, with different default axes.
struct NormState {
  int64_t axis;
  float epsilon;
  bool center;  // add beta
  bool scale;   // multiply by gamma
};

absl::StatusOr<std::shared_ptr<const void>> BindNorm(const Attrs& attrs, int64_t default_axis) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis", "epsilon", "center", "scale"}));
  NormState state;
  DYNVM_ASSIGN_OR_RETURN(state.axis, GetIntAttr(attrs, "axis", default_axis));
  DYNVM_ASSIGN_OR_RETURN(state.epsilon, nn::GetEpsilonAttr(attrs, 1e-5));
  DYNVM_ASSIGN_OR_RETURN(state.center, GetBoolAttr(attrs, "center", true));
  DYNVM_ASSIGN_OR_RETURN(state.scale, GetBoolAttr(attrs, "scale", true));
  return std::make_shared<const NormState>(state);
}

absl::StatusOr<std::shared_ptr<const void>> BindLayerNorm(const Attrs& attrs) {
  return BindNorm(attrs, /*default_axis=*/-1);
}
absl::StatusOr<std::shared_ptr<const void>> BindBatchNorm(const Attrs& attrs) {
  return BindNorm(attrs, /*default_axis=*/1);
}

// Checks the data input and the per-position (or per-channel) parameter inputs, named
// `params`, which must all be [data.shape[axis]]; returns the normalised axis.
absl::StatusOr<int> CheckNormInputs(std::string_view op, const void* state,
                                    absl::Span<NDArrayObj* const> inputs,
                                    absl::Span<const std::string_view> params) {
  const NDArrayObj& x = *inputs[0];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(op, "data", x));
  DYNVM_ASSIGN_OR_RETURN(
      const int axis,
      internal::NormalizeAxis(op, static_cast<const NormState*>(state)->axis, x.ndim()));
  const int64_t extent[] = {x.shape()[axis]};
  int i = 1;
  for (std::string_view name : params) {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(op, name, *inputs[i]));
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(op, name, *inputs[i], extent));
    ++i;
  }
  return axis;
}

constexpr std::string_view kLayerNormParams[] = {"gamma", "beta"};
constexpr std::string_view kBatchNormParams[] = {"gamma", "beta", "moving_mean", "moving_var"};

absl::Status LayerNormShapeFn(const ShapeCall& call) {
  DYNVM_RETURN_IF_ERROR(
      CheckNormInputs(kLayerNorm, call.state, call.input_span(), kLayerNormParams).status());
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

absl::Status BatchNormShapeFn(const ShapeCall& call) {
  DYNVM_RETURN_IF_ERROR(
      CheckNormInputs(kBatchNorm, call.state, call.input_span(), kBatchNormParams).status());
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

// Normalises one contiguous slice of `n` elements; `out` may be `in`.
void LayerNormSlice(const nn::NnMicrokernels& uk, int64_t n, float epsilon, const float* gamma,
                    const float* beta, const float* in, float* out) {
  const float inv_n = 1.0f / static_cast<float>(n);
  const float mean = uk.rsum(n, in) * inv_n;
  const float var = uk.rsumsqdiff(n, in, mean) * inv_n;
  uk.vnormalize(n, in, mean, 1.0f / std::sqrt(var + epsilon), gamma, beta, out);
}

absl::Status LayerNormKernel(const KernelCall& call) {
  const NormState& state = *static_cast<const NormState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const int axis,
                         CheckNormInputs(kLayerNorm, call.state, call.inputs(), kLayerNormParams));
  const NDArrayObj& x = *call.args[0];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kLayerNorm, call, {x.shape()}));
  if (x.num_elements() == 0) return absl::OkStatus();
  const float* gamma = state.scale ? call.args[1]->data_as<float>() : nullptr;
  const float* beta = state.center ? call.args[2]->data_as<float>() : nullptr;
  const nn::NnMicrokernels& uk = nn::GetNnMicrokernels();
  const int64_t outer = nn::Product(x.shape(), 0, axis), n = x.shape()[axis];
  const int64_t inner = nn::Product(x.shape(), axis + 1, x.ndim());
  nn::ForEachAxisRow(x.data_as<float>(), call.outputs()[0]->data_as<float>(), outer, n, inner,
                     *call.pool, [&](const float* in, float* out) {
                       LayerNormSlice(uk, n, state.epsilon, gamma, beta, in, out);
                     });
  return absl::OkStatus();
}

absl::Status BatchNormKernel(const KernelCall& call) {
  const NormState& state = *static_cast<const NormState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const int axis,
                         CheckNormInputs(kBatchNorm, call.state, call.inputs(), kBatchNormParams));
  const NDArrayObj& x = *call.args[0];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kBatchNorm, call, {x.shape()}));
  if (x.num_elements() == 0) return absl::OkStatus();
  const int64_t channels = x.shape()[axis];
  const int64_t outer = nn::Product(x.shape(), 0, axis);
  const int64_t inner = nn::Product(x.shape(), axis + 1, x.ndim());

  float* a = nn::ThreadScratch<float>(nn::ScratchSlot::kCall, 2 * channels);
  float* b = a + channels;
  const float* gamma = call.args[1]->data_as<float>();
  const float* beta = call.args[2]->data_as<float>();
  const float* mean = call.args[3]->data_as<float>();
  const float* var = call.args[4]->data_as<float>();
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = (state.scale ? gamma[c] : 1.0) / std::sqrt(double{var[c]} + state.epsilon);
    a[c] = static_cast<float>(scale);
    b[c] = static_cast<float>((state.center ? beta[c] : 0.0) - mean[c] * scale);
  }

  const nn::NnMicrokernels& uk = nn::GetNnMicrokernels();
  const float* in = x.data_as<float>();
  float* out = call.outputs()[0]->data_as<float>();
  if (inner == 1) {  // channels last: rows of `channels` with per-element a and b
    call.pool->ParallelFor(outer, internal::GrainForBytes(8 * channels),
                           [&](int64_t begin, int64_t end) {
                             for (int64_t r = begin; r < end; ++r) {
                               uk.vmuladd(channels, in + r * channels, a, b, out + r * channels);
                             }
                           });
    return absl::OkStatus();
  }
  call.pool->ParallelFor(outer * channels, internal::GrainForBytes(8 * inner),
                         [&](int64_t begin, int64_t end) {
                           for (int64_t r = begin; r < end; ++r) {
                             const int64_t c = r % channels;
                             uk.vmuladdc(inner, in + r * inner, a[c], b[c], out + r * inner);
                           }
                         });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterNormalizationKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kLayerNorm),
                                                    .num_inputs = 3,
                                                    .num_outputs = 1,
                                                    .fn = LayerNormKernel,
                                                    .bind = BindLayerNorm,
                                                    .shape_fn = LayerNormShapeFn}));
  return registry.Register(KernelDef{.name = std::string(kBatchNorm),
                                     .num_inputs = 5,
                                     .num_outputs = 1,
                                     .fn = BatchNormKernel,
                                     .bind = BindBatchNorm,
                                     .shape_fn = BatchNormShapeFn});
}

}  // namespace dynvm::kernels
