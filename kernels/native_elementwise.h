// The runtime half of generated elementwise kernels: the row-function ABI the compiler's
// LLVM code generator (compiler/llvm/fused_kernel.h) emits, and the kernel that drives
// those functions over a broadcast call, in parallel, under the one calling convention.
//
// An executable whose fused chains were compiled to native code names them
// `native.fused_elementwise` in its kernel table, with the attributes `program` (the
// fused_elementwise program the code computes) and `symbol`. The loader (vm/executable.h)
// finds `symbol`_contiguous and `symbol`_strided in the executable's native code and
// binds them here:
//
//   NativeElementwiseCode code{contiguous, strided, /*owner=*/module};
//   DYNVM_ASSIGN_OR_RETURN(BoundKernel k, BindNativeElementwise(entry.attrs, code, 2, 1));
//
// A call computes what fused_elementwise with the same program computes (the same input
// and output checks, the same errors), with `native.fused_elementwise` in messages.
#ifndef DYNVM_KERNELS_NATIVE_ELEMENTWISE_H_
#define DYNVM_KERNELS_NATIVE_ELEMENTWISE_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/kernel.h"

namespace dynvm::kernels {

inline constexpr char kNativeElementwiseKernel[] = "native.fused_elementwise";

// One row of the output: out[k] = program(in[0][k * strides[0]], ...) for k in [0, n),
// n >= 1. The contiguous variant assumes every stride is 1 and may ignore `strides`;
// the strided one takes each input's stride, 0 (the input repeats in[j][0]) or 1. `out`
// may be one of the `in` pointers (an input of the output's shape, updated in place),
// never a partial overlap.
using NativeRowFn = void (*)(float* out, const float* const* in, const int64_t* strides,
                             int64_t n);

struct NativeElementwiseCode {
  NativeRowFn contiguous = nullptr;
  NativeRowFn strided = nullptr;
  std::shared_ptr<const void> owner;  // keeps the code mapped while the kernel lives
};

// Binds a `native.fused_elementwise` entry: `attrs` are its attributes (`program` and
// `symbol`, both strings), `code` the functions found for `symbol`. InvalidArgument for
// a bad program or attribute, or an arity other than the program's inputs and 1 output.
absl::StatusOr<BoundKernel> BindNativeElementwise(const Attrs& attrs, NativeElementwiseCode code,
                                                  int num_inputs, int num_outputs);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_NATIVE_ELEMENTWISE_H_
