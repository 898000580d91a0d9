#include "kernels/native_elementwise.h"

#include <array>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/broadcast.h"
#include "kernels/fused_elementwise.h"
#include "kernels/internal/checks.h"

namespace dynvm::kernels {
namespace {

constexpr size_t kMaxInputs = kFusedElementwiseMaxInputs;

struct State {
  FusedProgram program;
  NativeElementwiseCode code;
};

absl::StatusOr<Shape> InferShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  return static_cast<const State*>(state)->program.InferShape(kNativeElementwiseKernel, inputs);
}

// Walks the broadcast loop of the call in runs along its innermost axis, split over the
// pool; each run is one call of a row function. The contiguous variant serves a loop
// whose inputs all advance along that axis; otherwise the strided one does.
absl::Status NativeElementwise(const KernelCall& call) {
  const State& state = *static_cast<const State*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, InferShape(call.state, call.inputs()));
  const NDArrayObj& out = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(
      internal::CheckOutput(kNativeElementwiseKernel, out, DType::kF32, shape));
  if (out.num_elements() == 0) return absl::OkStatus();

  const size_t num_inputs = call.inputs().size();
  std::array<absl::Span<const int64_t>, kMaxInputs> shapes{};  // absent inputs: scalars
  std::array<const float*, kMaxInputs> data{};
  for (size_t j = 0; j < num_inputs; ++j) {
    shapes[j] = call.inputs()[j]->shape();
    data[j] = call.inputs()[j]->data_as<float>();
  }
  const BroadcastLoop<kMaxInputs> loop = MakeBroadcastLoop<kMaxInputs>(shapes, shape);
  const std::array<int64_t, kMaxInputs> strides = loop.inner_strides();
  bool contiguous = true;
  for (size_t j = 0; j < num_inputs; ++j) contiguous = contiguous && strides[j] == 1;
  const NativeRowFn row = contiguous ? state.code.contiguous : state.code.strided;
  float* y = out.data_as<float>();
  // Each statement costs about as much as streaming one more array.
  const int64_t bytes_per_element =
      sizeof(float) * static_cast<int64_t>(num_inputs + 1 + state.program.num_statements());
  ParallelForEachBroadcastRun(
      loop, *call.pool, internal::GrainForBytes(bytes_per_element),
      [&](const std::array<int64_t, kMaxInputs>& offsets, int64_t begin, int64_t n) {
        std::array<const float*, kMaxInputs> in;
        for (size_t j = 0; j < num_inputs; ++j) in[j] = data[j] + offsets[j];
        row(y + begin, in.data(), strides.data(), n);
      });
  return absl::OkStatus();
}

const KernelDef& NativeElementwiseDef() {
  static const KernelDef def{.name = kNativeElementwiseKernel,
                             .num_inputs = kVariadic,
                             .num_outputs = 1,
                             .fn = NativeElementwise,
                             .bind = nullptr,
                             .shape_fn = internal::SingleShapeFn<InferShape>};
  return def;
}

}  // namespace

absl::StatusOr<BoundKernel> BindNativeElementwise(const Attrs& attrs, NativeElementwiseCode code,
                                                  int num_inputs, int num_outputs) {
  const auto error = [](const absl::Status& status) {
    return absl::InvalidArgumentError(
        absl::StrFormat("kernel '%s': %s", kNativeElementwiseKernel, status.message()));
  };
  if (absl::Status s = CheckKnownAttrs(attrs, {"program", "symbol"}); !s.ok()) return error(s);
  absl::StatusOr<std::string> text = GetStringAttr(attrs, "program");
  if (!text.ok()) return error(text.status());
  absl::StatusOr<FusedProgram> program = FusedProgram::Parse(*text);
  if (!program.ok()) return error(program.status());
  if (num_inputs != program->num_inputs() || num_outputs != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kernel '%s' with this program takes %d inputs and 1 output, not %d and %d",
        kNativeElementwiseKernel, program->num_inputs(), num_inputs, num_outputs));
  }
  if (code.contiguous == nullptr || code.strided == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kernel '%s': both row functions are required", kNativeElementwiseKernel));
  }
  auto state = std::make_shared<const State>(State{*std::move(program), std::move(code)});
  return BoundKernel(&NativeElementwiseDef(), std::move(state), num_inputs, num_outputs);
}

}  // namespace dynvm::kernels
