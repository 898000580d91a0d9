// The public surface of kernels/: the calling convention and registry (kernels/kernel.h)
// and the CPU kernel library, whose every family registers here.
//
//   const kernels::KernelRegistry& registry = kernels::DefaultRegistry();
//   absl::StatusOr<kernels::BoundKernel> add = registry.Bind("add", {}, 2, 1);
//
// The vm/ and the compiler IR need only the calling convention: they include
// kernels/kernel.h and link the small `dynvm_kernels_core` target. Whatever binds
// executables to the library's kernels includes this header and links `dynvm_kernels`.
#ifndef DYNVM_KERNELS_API_H_
#define DYNVM_KERNELS_API_H_

#include "absl/status/status.h"
#include "kernels/kernel.h"  // IWYU pragma: export

namespace dynvm::kernels {

// A registry with every CPU kernel of the library, built on first use.
const KernelRegistry& DefaultRegistry();

// Adds every CPU kernel of the library to `registry`. AlreadyExists if `registry`
// already holds one of them.
absl::Status RegisterCpuKernels(KernelRegistry& registry);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_API_H_
