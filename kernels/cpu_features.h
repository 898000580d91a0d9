// The instruction sets the kernel library dispatches on, read once per process.
//
// Every family with vector microkernels (elementwise, nn, gemm) keeps a portable table
// and an AVX2+FMA one, and uses the AVX2 table when UseAvx2Fma() says so. Setting
// DYNVM_ISA=scalar in the environment makes the whole library take the portable tables
// on any CPU: the way to run, on an AVX2 machine, what a machine without AVX2 runs (CI
// runs the test suite both ways). Other values of DYNVM_ISA change nothing.
//
// This header and cpu_features.cc are compiled for the baseline instruction set.
#ifndef DYNVM_KERNELS_CPU_FEATURES_H_
#define DYNVM_KERNELS_CPU_FEATURES_H_

#include <string_view>

#include "absl/types/span.h"

namespace dynvm::kernels {

// Whether this CPU can execute AVX2 and FMA instructions.
bool CpuHasAvx2Fma();

// Whether the library uses its AVX2+FMA kernels: the CPU has them and DYNVM_ISA is not
// "scalar".
bool UseAvx2Fma();

// The CPU features native code (compiler/llvm) may require and the runtime can check,
// by LLVM's names: "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", ... Generated
// code records those its target has; the loader refuses code needing one this CPU lacks.
absl::Span<const std::string_view> KnownCpuFeatures();

// Whether this CPU has `feature`, a name of KnownCpuFeatures(); false for other names.
// The CPU's own answer: DYNVM_ISA does not change it.
bool CpuHasFeature(std::string_view feature);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_CPU_FEATURES_H_
