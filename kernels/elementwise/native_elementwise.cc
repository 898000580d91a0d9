// native.fused_elementwise: binds a program only with native code for it, then runs
// FusedProgram's native evaluation under fused_elementwise's checks.
#include "kernels/elementwise/native_elementwise.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/internal/checks.h"

namespace dynvm::kernels {
namespace {

absl::StatusOr<std::shared_ptr<const void>> Bind(const Attrs& attrs, const BindContext& context) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"program"}));
  DYNVM_ASSIGN_OR_RETURN(const std::string text, GetStringAttr(attrs, "program"));
  DYNVM_ASSIGN_OR_RETURN(FusedProgram program, FusedProgram::Parse(text, "program", context));
  if (!program.native()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the executable has no native code for program \"%s\": expected it in its native "
        "code's programs (vm_compile with a --target-cpu)", text));
  }
  return std::shared_ptr<const void>(std::make_shared<const FusedProgram>(std::move(program)));
}

absl::StatusOr<Shape> InferShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  return static_cast<const FusedProgram*>(state)->InferShape(kNativeElementwiseKernel, inputs);
}

absl::Status NativeElementwise(const KernelCall& call) {
  const FusedProgram& program = *static_cast<const FusedProgram*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, InferShape(call.state, call.inputs()));
  const NDArrayObj& out = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kNativeElementwiseKernel, out, DType::kF32, shape));
  if (out.num_elements() == 0) return absl::OkStatus();
  program.Evaluate(call.inputs(), shape, out.data_as<float>(), *call.pool);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterNativeElementwiseKernel(KernelRegistry& registry) {
  return registry.Register(KernelDef{.name = kNativeElementwiseKernel,
                                     .num_inputs = kVariadic,
                                     .num_outputs = 1,
                                     .fn = NativeElementwise,
                                     .shape_fn = internal::SingleShapeFn<InferShape>,
                                     .bind_in_context = Bind});
}

}  // namespace dynvm::kernels
