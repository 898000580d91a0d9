// The public surface of kernels/: the calling convention, the registry, and the CPU
// kernel library's registration.
#ifndef DYNVM_KERNELS_API_H_
#define DYNVM_KERNELS_API_H_

#include "kernels/broadcast.h"  // IWYU pragma: export
#include "kernels/kernel.h"     // IWYU pragma: export

#endif  // DYNVM_KERNELS_API_H_
