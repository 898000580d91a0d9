// Lowers one fused_elementwise program (kernels/elementwise/fused_elementwise.h) to LLVM IR: the
// row functions of kernels/kernel.h (NativeRowFn), one per shape bucket.
//
//   // t0 = add(i0, i1); t1 = gelu(t0)
//   EmitFusedKernel(program, "dynvm_fused_0", module, /*width=*/8, /*has_fma=*/true);
//   // defines dynvm_fused_0_contiguous and dynvm_fused_0_strided in `module`
//
// Both walk a row of n elements a vector of `width` lanes at a time; the last partial
// vector goes through masked loads and stores, so it computes what a whole one would.
// The program's statements become straight-line vector code: temporaries live in
// registers, and only the inputs and the output touch memory.
//   - `_contiguous`: every input advances along the row (the common case: operands of
//     the output's shape, or broadcast along outer axes only).
//   - `_strided`: each input advances (stride 1) or repeats its first element (stride 0),
//     as kernels::BroadcastLoop's innermost axis has them: [b, s, 1] + [b, s, 768].
#ifndef DYNVM_COMPILER_LLVM_FUSED_KERNEL_H_
#define DYNVM_COMPILER_LLVM_FUSED_KERNEL_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "llvm/IR/Module.h"

namespace dynvm::compiler::llvm_codegen {

// The suffixes of the two row functions of a kernel named `base`.
inline constexpr std::string_view kContiguousSuffix = "_contiguous";
inline constexpr std::string_view kStridedSuffix = "_strided";

// Adds `base`_contiguous and `base`_strided, computing `program`, to `module`.
// Unimplemented if the program has an operator this generator does not lower.
absl::Status EmitFusedKernel(const kernels::FusedProgram& program, const std::string& base,
                             llvm::Module& module, int width, bool has_fma);

}  // namespace dynvm::compiler::llvm_codegen

#endif  // DYNVM_COMPILER_LLVM_FUSED_KERNEL_H_
