// The kernel `native.fused_elementwise`, the runtime half of generated elementwise code
// whose row-function ABI (NativeRowFn, NativeElementwiseCode) is in kernels/kernel.h.
//
// An executable with native code maps each fused program text it compiled to a pair of
// row functions. The loader (vm/executable.h) hands that map to binding as a
// BindContext (kernels/kernel.h); every kernel that holds a fused program —
// fused_elementwise's `program`, the `prologue` of nn.softmax and nn.layer_norm, the
// `prologue` and `epilogue` of the reductions — then evaluates it with the native rows
// (FusedProgram::Parse looks them up).
//
// `native.fused_elementwise` is fused_elementwise compiled: the compiler renames the
// entries whose program it compiled, so that profiles and vm_dis show native code. It
// takes the same inputs and output, with the same checks and messages (naming
// `native.fused_elementwise`), and binding it without native code for its program is
// an error.
#ifndef DYNVM_KERNELS_ELEMENTWISE_NATIVE_ELEMENTWISE_H_
#define DYNVM_KERNELS_ELEMENTWISE_NATIVE_ELEMENTWISE_H_


#include "absl/status/status.h"
#include "kernels/kernel.h"

namespace dynvm::kernels {

// The registry name of fused_elementwise compiled to native code.
inline constexpr char kNativeElementwiseKernel[] = "native.fused_elementwise";

// Adds native.fused_elementwise to `registry`.
absl::Status RegisterNativeElementwiseKernel(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_ELEMENTWISE_NATIVE_ELEMENTWISE_H_
