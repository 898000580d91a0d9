// The instruction sets the kernel library dispatches on, read once per process.
//
// The library's micro-kernels (kernels/microkernels.h) come in one table per level of
// `Isa`; the library runs the table of SelectedIsa(), the highest level this CPU runs.
// DYNVM_ISA in the environment caps that level by name (`DYNVM_ISA=scalar` makes the
// whole library take the portable kernels on any CPU: the way to run, on an AVX2
// machine, what a machine without AVX2 runs; CI runs the test suite both ways). A level
// above the CPU's changes nothing; a name that is no level changes nothing either, and
// is reported on stderr once.
//
// This header and cpu_features.cc are compiled for the baseline instruction set.
#ifndef DYNVM_KERNELS_CPU_FEATURES_H_
#define DYNVM_KERNELS_CPU_FEATURES_H_

#include <cstdint>
#include <string_view>

#include "absl/types/span.h"

namespace dynvm::kernels {

// The levels of micro-kernels, lowest first. A level's kernels may use every
// instruction of the levels below it.
enum class Isa : uint8_t {
  kScalar,  // portable C++, vectorised by the compiler for the baseline x86-64
  kAvx2,    // AVX2 and FMA (x86-64-v3)
};
// Every level, lowest first: what tests and benchmarks walk.
inline constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2};

// "scalar", "avx2": the level's name, as DYNVM_ISA and the benchmarks write it.
std::string_view IsaName(Isa isa);

// Whether this CPU executes every instruction of `isa` (kScalar: always).
bool CpuRunsIsa(Isa isa);

// The level the library runs: the highest that CpuRunsIsa, capped by DYNVM_ISA.
Isa SelectedIsa();

// The CPU features native code (compiler/llvm) may require and the runtime can check,
// by LLVM's names: "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", ... Generated
// code records those its target has; the loader refuses code needing one this CPU lacks.
absl::Span<const std::string_view> KnownCpuFeatures();

// Whether this CPU has `feature`, a name of KnownCpuFeatures(); false for other names.
// The CPU's own answer: DYNVM_ISA does not change it.
bool CpuHasFeature(std::string_view feature);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_CPU_FEATURES_H_
