// The one table of the kernel library's micro-kernels, and the one place that chooses
// which instruction set runs them.
//
// A micro-kernel is the inner loop of a kernel family over contiguous memory: an
// elementwise map, a row reduction, a recurrent cell's row, a GEMM tile. Each exists
// once per level of `Isa` (kernels/cpu_features.h), named as XNNPACK names them —
// f32_<operation>__<isa>, `r` for a reduction, `v` for an elementwise vector operation,
// a trailing `c` for a scalar operand — and gathered in a `Microkernels` table per
// level. The families keep their parts of it beside their kernels:
//
//   elementwise  kernels/elementwise/ukernels.h  unary maps, row reductions, column
//                                                accumulations (reduce/, softmax, norms)
//   nn           kernels/nn/ukernels.h           softmax, normalisation, pooling and
//                                                recurrent-cell rows
//   gemm         kernels/gemm/gemm_internal.h    GEMM tiles, packing, few-rows paths
//
// Every level's table is complete and computes what the scalar one does (within the
// bounds the tests state); the scalar table is the reference and runs anywhere. The
// library uses GetMicrokernels(), chosen once per process; tests and benchmarks walk
// every level this CPU runs with MicrokernelsFor.
//
//   const Microkernels& uk = GetMicrokernels();
//   const float max = uk.elementwise.rmax(n, x);
//   uk.nn.vmulc(n, x, 1.0f / max, y);
#ifndef DYNVM_KERNELS_MICROKERNELS_H_
#define DYNVM_KERNELS_MICROKERNELS_H_

#include "kernels/cpu_features.h"
#include "kernels/elementwise/ukernels.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/nn/ukernels.h"

namespace dynvm::kernels {

// One level's implementation of every micro-kernel.
struct Microkernels {
  Isa isa;                                       // the level every part is compiled for
  elementwise::ElementwiseUkernels elementwise;  // maps, row reductions, column sums
  nn::NnUkernels nn;                             // softmax, norm, pooling, cell rows
  internal::GemmUkernels gemm;                   // tiles, packing, few-rows products
};

// The table of SelectedIsa(): what the library runs. Chosen on first call.
const Microkernels& GetMicrokernels();

// The table of `isa`, or null if this CPU does not run it (CpuRunsIsa).
const Microkernels* MicrokernelsFor(Isa isa);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_MICROKERNELS_H_
