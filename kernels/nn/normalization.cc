// nn.layer_norm and nn.batch_norm (inference), f32, with Relay's attributes; layer_norm
// optionally of a fused elementwise prologue (attribute `prologue`).
//
// layer_norm normalises each 1-D slice along `axis` with its own mean and variance,
// computed in two passes (mean, then the centred second moment) so that the variance
// stays accurate when the mean is large against the spread; a third pass applies
// gamma and beta. The slice stays in cache across the passes.
//
// With a prologue (a fused_elementwise program, kernels/elementwise/fused_elementwise.h) layer_norm
// takes the program's inputs, then gamma and beta, and normalises program(inputs), so
// that a transformer's `layer_norm(add(%x, %residual))` is one call. Contiguous slices
// are evaluated a few rows at a time into a per-thread buffer in L1 and normalised from
// there, so the sum never reaches memory; along another axis the program is evaluated
// into the output, which is normalised in place (ForEachPrologueAxisRow,
// kernels/nn/prologue.h, shared with softmax).
//
// batch_norm uses the moving statistics: with a = gamma / sqrt(var + eps) and
// b = beta - mean * a per channel (folded once per call, in double), y = x * a + b is one
// fused multiply-add per element, as PyTorch's inference path computes it. Relay's
// batch_norm returns a tuple (output, moving_mean, moving_var) whose last two fields
// only training updates; this kernel is registered with the one output inference uses.
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/internal/checks.h"
#include "kernels/microkernels.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/nn/prologue.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

constexpr std::string_view kLayerNorm = "nn.layer_norm";
constexpr std::string_view kBatchNorm = "nn.batch_norm";

// Both kernels take the same attributes, with different default axes; layer_norm also
// takes a prologue.
struct NormState {
  int64_t axis;
  float epsilon;
  bool center;  // add beta
  bool scale;   // multiply by gamma
  std::optional<FusedProgram> prologue;  // layer_norm only: the program computing the data
};

// The attributes both kernels take (the caller checks for unknown ones first).
absl::StatusOr<NormState> ParseNormAttrs(const Attrs& attrs, int64_t default_axis) {
  NormState state;
  DYNVM_ASSIGN_OR_RETURN(state.axis, GetIntAttr(attrs, "axis", default_axis));
  DYNVM_ASSIGN_OR_RETURN(state.epsilon, nn::GetEpsilonAttr(attrs, 1e-5));
  DYNVM_ASSIGN_OR_RETURN(state.center, GetBoolAttr(attrs, "center", true));
  DYNVM_ASSIGN_OR_RETURN(state.scale, GetBoolAttr(attrs, "scale", true));
  return state;
}

absl::StatusOr<std::shared_ptr<const void>> BindLayerNorm(const Attrs& attrs,
                                                          const BindContext& context) {
  DYNVM_RETURN_IF_ERROR(
      CheckKnownAttrs(attrs, {"axis", "epsilon", "center", "scale", "prologue"}));
  DYNVM_ASSIGN_OR_RETURN(NormState state, ParseNormAttrs(attrs, /*default_axis=*/-1));
  if (attrs.contains("prologue")) {
    DYNVM_ASSIGN_OR_RETURN(const std::string text, GetStringAttr(attrs, "prologue"));
    DYNVM_ASSIGN_OR_RETURN(state.prologue, FusedProgram::Parse(text, "prologue", context));
  }
  return std::make_shared<const NormState>(std::move(state));
}
absl::StatusOr<std::shared_ptr<const void>> BindBatchNorm(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis", "epsilon", "center", "scale"}));
  DYNVM_ASSIGN_OR_RETURN(NormState state, ParseNormAttrs(attrs, /*default_axis=*/1));
  return std::make_shared<const NormState>(std::move(state));
}

// Normalises `state`'s axis for data of `shape` and checks the per-position (or
// per-channel) parameter inputs `params`, named `names`: each f32 of shape
// [shape[axis]]. Returns the normalised axis.
absl::StatusOr<int> CheckNormParams(std::string_view op, const void* state,
                                    absl::Span<const int64_t> shape,
                                    absl::Span<NDArrayObj* const> params,
                                    absl::Span<const std::string_view> names) {
  DYNVM_ASSIGN_OR_RETURN(const int axis,
                         internal::NormalizeAxis(op, static_cast<const NormState*>(state)->axis,
                                                 static_cast<int>(shape.size())));
  const int64_t extent[] = {shape[axis]};
  for (size_t i = 0; i < names.size(); ++i) {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(op, names[i], *params[i]));
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(op, names[i], *params[i], extent));
  }
  return axis;
}

// Checks the data input and the parameter inputs after it, named `params`; returns the
// normalised axis.
absl::StatusOr<int> CheckNormInputs(std::string_view op, const void* state,
                                    absl::Span<NDArrayObj* const> inputs,
                                    absl::Span<const std::string_view> params) {
  const NDArrayObj& x = *inputs[0];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(op, "data", x));
  return CheckNormParams(op, state, x.shape(), inputs.subspan(1), params);
}

constexpr std::string_view kLayerNormParams[] = {"gamma", "beta"};
constexpr std::string_view kBatchNormParams[] = {"gamma", "beta", "moving_mean", "moving_var"};

// layer_norm's checks, for the shape function and the kernel: the data (or the
// prologue's inputs), then gamma and beta. Sets `shape` to the output's (the data's, or
// the broadcast of the prologue's inputs) and returns the normalised axis. The kernel
// registers as variadic for the prologue's inputs, so without one the count of 3 is
// checked here rather than by Bind (with Bind's message).
absl::StatusOr<int> CheckLayerNormInputs(const void* state_ptr,
                                         absl::Span<NDArrayObj* const> inputs, Shape& shape) {
  const NormState& state = *static_cast<const NormState*>(state_ptr);
  const int count = static_cast<int>(inputs.size());
  if (!state.prologue.has_value()) {
    if (count != 3) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel '%s' takes 3 inputs and 1 outputs, not %d and 1%s", kLayerNorm, count,
          count > 3 ? ": more inputs need the attribute 'prologue'" : ""));
    }
    DYNVM_ASSIGN_OR_RETURN(const int axis,
                           CheckNormInputs(kLayerNorm, state_ptr, inputs, kLayerNormParams));
    shape = inputs[0]->shape();
    return axis;
  }
  const int k = state.prologue->num_inputs();
  if (count != k + 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the prologue reads inputs up to i%d: expected %d inputs (its %d, then gamma and "
        "beta), got %d",
        kLayerNorm, k - 1, k + 2, k, count));
  }
  DYNVM_ASSIGN_OR_RETURN(shape, state.prologue->InferShape(kLayerNorm, inputs.first(k)));
  return CheckNormParams(kLayerNorm, state_ptr, shape, inputs.subspan(k), kLayerNormParams);
}

absl::Status LayerNormShapeFn(const ShapeCall& call) {
  return CheckLayerNormInputs(call.state, call.input_span(), call.output_shapes[0]).status();
}

absl::Status BatchNormShapeFn(const ShapeCall& call) {
  DYNVM_RETURN_IF_ERROR(
      CheckNormInputs(kBatchNorm, call.state, call.input_span(), kBatchNormParams).status());
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

// Normalises one contiguous slice of `n` elements; `out` may be `in`.
void LayerNormSlice(const Microkernels& uk, int64_t n, float epsilon, const float* gamma,
                    const float* beta, const float* in, float* out) {
  const float inv_n = 1.0f / static_cast<float>(n);
  const float mean = static_cast<float>(uk.elementwise.rsum(n, in)) * inv_n;
  const float var = uk.nn.rsumsqdiff(n, in, mean) * inv_n;
  uk.nn.vnormalize(n, in, mean, 1.0f / std::sqrt(var + epsilon), gamma, beta, out);
}

absl::Status LayerNormKernel(const KernelCall& call) {
  const NormState& state = *static_cast<const NormState*>(call.state);
  Shape shape;
  DYNVM_ASSIGN_OR_RETURN(const int axis, CheckLayerNormInputs(call.state, call.inputs(), shape));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kLayerNorm, call, {shape}));
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  const int data_inputs = call.num_inputs - 2;  // gamma and beta come last
  const float* gamma = state.scale ? call.args[data_inputs]->data_as<float>() : nullptr;
  const float* beta = state.center ? call.args[data_inputs + 1]->data_as<float>() : nullptr;
  const Microkernels& uk = GetMicrokernels();
  const int rank = static_cast<int>(shape.size());
  const int64_t outer = nn::Product(shape, 0, axis), n = shape[axis];
  const int64_t inner = nn::Product(shape, axis + 1, rank);
  float* y = call.outputs()[0]->data_as<float>();
  const auto slice = [&](const float* in, float* out) {
    LayerNormSlice(uk, n, state.epsilon, gamma, beta, in, out);
  };
  if (state.prologue.has_value()) {
    nn::ForEachPrologueAxisRow(*state.prologue, call.inputs().first(data_inputs), shape, outer,
                               n, inner, y, *call.pool, slice);
  } else {
    nn::ForEachAxisRow(call.args[0]->data_as<float>(), y, outer, n, inner, *call.pool, slice);
  }
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

  float* a = ThreadScratch<float>(ScratchSlot::kCall, 2 * channels);
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

  const Microkernels& uk = GetMicrokernels();
  const float* in = x.data_as<float>();
  float* out = call.outputs()[0]->data_as<float>();
  if (inner == 1) {  // channels last: rows of `channels` with per-element a and b
    call.pool->ParallelFor(outer, internal::GrainForBytes(8 * channels),
                           [&](int64_t begin, int64_t end) {
                             for (int64_t r = begin; r < end; ++r) {
                               uk.nn.vmuladd(channels, in + r * channels, a, b,
                                             out + r * channels);
                             }
                           });
    return absl::OkStatus();
  }
  call.pool->ParallelFor(outer * channels, internal::GrainForBytes(8 * inner),
                         [&](int64_t begin, int64_t end) {
                           for (int64_t r = begin; r < end; ++r) {
                             const int64_t c = r % channels;
                             uk.nn.vmuladdc(inner, in + r * inner, a[c], b[c], out + r * inner);
                           }
                         });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterNormalizationKernels(KernelRegistry& registry) {
  // layer_norm is variadic for the prologue's inputs; without one, the shape function and
  // the kernel require exactly 3.
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kLayerNorm),
                                                    .num_inputs = kVariadic,
                                                    .num_outputs = 1,
                                                    .fn = LayerNormKernel,
                                                    .shape_fn = LayerNormShapeFn,
                                                    .bind_in_context = BindLayerNorm}));
  return registry.Register(KernelDef{.name = std::string(kBatchNorm),
                                     .num_inputs = 5,
                                     .num_outputs = 1,
                                     .fn = BatchNormKernel,
                                     .bind = BindBatchNorm,
                                     .shape_fn = BatchNormShapeFn});
}

}  // namespace dynvm::kernels
