// nn.softmax and nn.log_softmax along any axis (attribute `axis`, default -1), f32,
// optionally of a fused elementwise prologue (attribute `prologue`).
//
// Both are numerically stable: the slice's maximum is subtracted before exponentiating,
// so no finite input overflows, and log_softmax is x - max - log(sum(exp(x - max)))
// rather than the log of a softmax that may underflow to 0. A slice costs three passes
// over memory that stays in cache (max; exp and sum; scale or shift); slices run in
// parallel, and slices along an inner axis are transposed through a tile
// (ForEachAxisRow) so that the microkernels always see contiguous rows.
//
// With a prologue (a fused_elementwise program, kernels/elementwise/fused_elementwise.h) the kernel
// takes the program's inputs and computes softmax(program(inputs)), so that BERT's
// `softmax(scores * scale + mask)` is one call. Along the last axis, each task evaluates
// the program for a few rows into a per-thread buffer that stays in L1 and runs the
// softmax from there into the output: the program's result never reaches memory. Along
// another axis the program is evaluated into the output and softmaxed in place
// (ForEachPrologueAxisRow, kernels/nn/prologue.h, which layer_norm shares).
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

namespace dynvm::kernels {
namespace {

struct SoftmaxState {
  int64_t axis;
  std::optional<FusedProgram> prologue;
};

absl::StatusOr<std::shared_ptr<const void>> BindSoftmax(const Attrs& attrs,
                                                        const BindContext& context) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis", "prologue"}));
  SoftmaxState state;
  DYNVM_ASSIGN_OR_RETURN(state.axis, GetIntAttr(attrs, "axis", -1));
  if (attrs.contains("prologue")) {
    DYNVM_ASSIGN_OR_RETURN(const std::string text, GetStringAttr(attrs, "prologue"));
    DYNVM_ASSIGN_OR_RETURN(state.prologue, FusedProgram::Parse(text, "prologue", context));
  }
  return std::make_shared<const SoftmaxState>(std::move(state));
}

template <bool kLog>
constexpr std::string_view kOpName = kLog ? "nn.log_softmax" : "nn.softmax";

// The checks the shape function and the kernel share: sets `shape` to the output's
// (the input's, or the broadcast of the prologue's inputs) and returns the normalised
// axis.
template <bool kLog>
absl::StatusOr<int> CheckInputs(const void* state_ptr, absl::Span<NDArrayObj* const> inputs,
                                Shape& shape) {
  const SoftmaxState& state = *static_cast<const SoftmaxState*>(state_ptr);
  if (state.prologue.has_value()) {
    DYNVM_ASSIGN_OR_RETURN(shape, state.prologue->InferShape(kOpName<kLog>, inputs));
  } else {
    if (inputs.size() != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s takes 1 input (data), got %d: more inputs need the attribute 'prologue'",
          kOpName<kLog>, inputs.size()));
    }
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(kOpName<kLog>, "data", *inputs[0]));
    shape = inputs[0]->shape();
  }
  return internal::NormalizeAxis(kOpName<kLog>, state.axis, static_cast<int>(shape.size()));
}

template <bool kLog>
absl::Status SoftmaxShapeFn(const ShapeCall& call) {
  return CheckInputs<kLog>(call.state, call.input_span(), call.output_shapes[0]).status();
}

// softmax or log_softmax of one contiguous slice of `n` elements; `out` may be `in`.
template <bool kLog>
void SoftmaxSlice(const Microkernels& uk, int64_t n, const float* in, float* out) {
  if constexpr (kLog) {
    const float max = uk.elementwise.rmax(n, in);
    const float log_sum = std::log(uk.nn.raddexpminusmax(n, in, max));
    // Two roundings, not x - (max + log_sum): when x is near max the result is small and
    // must not inherit an ulp of max.
    uk.nn.vaddc(n, in, -max, out);
    uk.nn.vaddc(n, out, -log_sum, out);
  } else {
    nn::SoftmaxRow(uk, n, in, out);
  }
}

template <bool kLog>
absl::Status SoftmaxKernel(const KernelCall& call) {
  const SoftmaxState& state = *static_cast<const SoftmaxState*>(call.state);
  Shape shape;
  DYNVM_ASSIGN_OR_RETURN(const int axis, CheckInputs<kLog>(call.state, call.inputs(), shape));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kOpName<kLog>, call, {shape}));
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  const Microkernels& uk = GetMicrokernels();
  const int rank = static_cast<int>(shape.size());
  const int64_t outer = nn::Product(shape, 0, axis), n = shape[axis];
  const int64_t inner = nn::Product(shape, axis + 1, rank);
  float* y = call.outputs()[0]->data_as<float>();
  const auto slice = [&](const float* in, float* out) { SoftmaxSlice<kLog>(uk, n, in, out); };
  if (state.prologue.has_value()) {
    nn::ForEachPrologueAxisRow(*state.prologue, call.inputs(), shape, outer, n, inner, y,
                               *call.pool, slice);
  } else {
    nn::ForEachAxisRow(call.args[0]->data_as<float>(), y, outer, n, inner, *call.pool, slice);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSoftmaxKernels(KernelRegistry& registry) {
  // Variadic for the prologue's inputs; without one, the shape function and the kernel
  // require exactly one.
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kOpName<false>),
                                                    .num_inputs = kVariadic,
                                                    .num_outputs = 1,
                                                    .fn = SoftmaxKernel<false>,
                                                    .shape_fn = SoftmaxShapeFn<false>,
                                                    .bind_in_context = BindSoftmax}));
  return registry.Register(KernelDef{.name = std::string(kOpName<true>),
                                     .num_inputs = kVariadic,
                                     .num_outputs = 1,
                                     .fn = SoftmaxKernel<true>,
                                     .shape_fn = SoftmaxShapeFn<true>,
                                     .bind_in_context = BindSoftmax});
}

}  // namespace dynvm::kernels
