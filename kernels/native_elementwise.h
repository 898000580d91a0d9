// The runtime half of generated elementwise code: the row-function ABI the compiler's
// LLVM code generator emits for a fused program (compiler/llvm/fused_kernel.h), and the
// kernel `native.fused_elementwise`.
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
#ifndef DYNVM_KERNELS_NATIVE_ELEMENTWISE_H_
#define DYNVM_KERNELS_NATIVE_ELEMENTWISE_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "kernels/kernel.h"

namespace dynvm::kernels {

// The registry name of fused_elementwise compiled to native code.
inline constexpr char kNativeElementwiseKernel[] = "native.fused_elementwise";

// One row of the output: out[k] = program(in[0][k * strides[0]], ...) for k in [0, n),
// n >= 1. The contiguous variant assumes every stride is 1 and may ignore `strides`;
// the strided one takes each input's stride, 0 (the input repeats in[j][0]) or 1. `out`
// may be one of the `in` pointers (an input of the output's shape, updated in place),
// never a partial overlap.
using NativeRowFn = void (*)(float* out, const float* const* in, const int64_t* strides,
                             int64_t n);

// The code compiled for one program.
struct NativeElementwiseCode {
  NativeRowFn contiguous = nullptr;
  NativeRowFn strided = nullptr;
  std::shared_ptr<const void> owner;  // keeps the code mapped while a kernel uses it
};

// Adds native.fused_elementwise to `registry`.
absl::Status RegisterNativeElementwiseKernel(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_NATIVE_ELEMENTWISE_H_
