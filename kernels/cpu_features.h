// What this CPU is and which instruction sets it runs, read once per process, and the
// level of micro-kernels the kernel library dispatches on.
//
// The library's micro-kernels (kernels/microkernels.h) come in one table per level of
// `Isa`; the library runs the table of SelectedIsa(), the highest level this CPU runs.
// DYNVM_ISA in the environment caps that level by name (`DYNVM_ISA=scalar` makes the
// whole library take the portable kernels on any CPU: the way to run, on an AVX2
// machine, what a machine without AVX2 runs; CI runs the test suite at every level the
// machine has). A level above the CPU's changes nothing; a name that is no level changes
// nothing either, and is reported on stderr once.
//
// Features are read from CPUID and count only where the OS saves their registers on a
// context switch (XCR0): AVX needs the YMM state, AVX-512 the opmask and ZMM states, AMX
// the tile states. A CPU that has AVX-512 under an OS (or hypervisor) that does not
// enable it lacks AVX-512 here.
//
// This header and cpu_features.cc are compiled for the baseline instruction set.
#ifndef DYNVM_KERNELS_CPU_FEATURES_H_
#define DYNVM_KERNELS_CPU_FEATURES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace dynvm::kernels {

// The levels of micro-kernels, lowest first. A level's kernels may use every
// instruction of the levels below it.
enum class Isa : uint8_t {
  kScalar,  // portable C++, vectorised by the compiler for the baseline x86-64
  kAvx2,    // AVX2 and FMA (x86-64-v3)
  kAvx512,  // AVX-512 F, DQ, BW and VL with AVX2 and FMA (x86-64-v4)
};
// Every level, lowest first: what tests and benchmarks walk.
inline constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};

// "scalar", "avx2", "avx512": the level's name, as DYNVM_ISA and the benchmarks write it.
std::string_view IsaName(Isa isa);

// Whether this CPU executes every instruction of `isa` (kScalar: always).
bool CpuRunsIsa(Isa isa);

// The level the library runs: the highest that CpuRunsIsa, capped by DYNVM_ISA.
Isa SelectedIsa();

// The CPU features native code (compiler/llvm) may require and the runtime can check,
// by LLVM's names: "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512vnni",
// "avxvnni", "avx512bf16", ... Generated code records those its target has; the loader
// refuses code needing one this CPU lacks.
absl::Span<const std::string_view> KnownCpuFeatures();

// Every feature this file detects, by LLVM's names: KnownCpuFeatures() and the AMX ones
// ("amx-tile", "amx-int8", "amx-bf16"), which no generated code uses (LLVM emits AMX
// only from intrinsics) and which a Linux process must still request
// (arch_prctl(ARCH_REQ_XCOMP_PERM)) before it uses them.
absl::Span<const std::string_view> DetectedCpuFeatures();

// Whether this CPU has `feature`, a name of DetectedCpuFeatures(); false for other
// names. The CPU's own answer: DYNVM_ISA does not change it.
bool CpuHasFeature(std::string_view feature);

// This CPU's marketing name and identity: "AMD EPYC (AuthenticAMD family 25 model 1
// stepping 1)".
std::string CpuName();

// What tools print for --version and benchmarks record: four lines, each ending in
// '\n':
//   cpu: AMD EPYC (AuthenticAMD family 25 model 1 stepping 1)
//   features: sse3 ssse3 ... avx2 fma f16c bmi bmi2
//   lacks: avx512f ... amx-bf16
//   kernels: avx2 (levels this CPU runs: scalar avx2)
// The last names SelectedIsa(), and DYNVM_ISA when it is set.
std::string CpuReport();

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_CPU_FEATURES_H_
