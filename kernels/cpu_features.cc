// The CPU's features read once (CPUID, through the compiler's builtins): which ISA levels
// this CPU runs, and the level DYNVM_ISA selects (kernels/cpu_features.h).
#include "kernels/cpu_features.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string_view>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace dynvm::kernels {

namespace {

// LLVM's name of each feature, and the CPU's answer (__builtin_cpu_supports takes only
// literals, hence one line per feature).
struct Feature {
  std::string_view name;
  bool (*has)();
};

#if defined(__x86_64__)
#define DYNVM_FEATURE(llvm_name, gcc_name) \
  {llvm_name, [] { return __builtin_cpu_supports(gcc_name) != 0; }}
// Clang 14's __builtin_cpu_supports does not know "f16c": CPUID leaf 1, ECX bit 29,
// usable where the OS saves AVX state.
bool HasF16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0 &&
         __builtin_cpu_supports("avx") != 0;
}
#else
#define DYNVM_FEATURE(llvm_name, gcc_name) {llvm_name, [] { return false; }}
bool HasF16c() { return false; }
#endif

constexpr Feature kFeatures[] = {
    DYNVM_FEATURE("sse3", "sse3"),       DYNVM_FEATURE("ssse3", "ssse3"),
    DYNVM_FEATURE("sse4.1", "sse4.1"),   DYNVM_FEATURE("sse4.2", "sse4.2"),
    DYNVM_FEATURE("popcnt", "popcnt"),   DYNVM_FEATURE("avx", "avx"),
    DYNVM_FEATURE("avx2", "avx2"),       DYNVM_FEATURE("fma", "fma"),
    {"f16c", HasF16c},                   DYNVM_FEATURE("bmi", "bmi"),
    DYNVM_FEATURE("bmi2", "bmi2"),       DYNVM_FEATURE("avx512f", "avx512f"),
    DYNVM_FEATURE("avx512dq", "avx512dq"), DYNVM_FEATURE("avx512bw", "avx512bw"),
    DYNVM_FEATURE("avx512vl", "avx512vl"), DYNVM_FEATURE("avx512cd", "avx512cd"),
};

#undef DYNVM_FEATURE

constexpr auto kFeatureNames = [] {
  std::array<std::string_view, std::size(kFeatures)> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kFeatures[i].name;
  return names;
}();

}  // namespace

absl::Span<const std::string_view> KnownCpuFeatures() { return kFeatureNames; }

bool CpuHasFeature(std::string_view feature) {
  for (const Feature& f : kFeatures) {
    if (f.name == feature) return f.has();
  }
  return false;
}

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
  }
  return "unknown";
}

bool CpuRunsIsa(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: {
      static const bool runs = CpuHasFeature("avx2") && CpuHasFeature("fma");
      return runs;
    }
  }
  return false;
}

Isa SelectedIsa() {
  static const Isa selected = [] {
    const char* cap = std::getenv("DYNVM_ISA");
    if (cap != nullptr) {
      bool known = false;
      for (Isa isa : kIsas) known = known || IsaName(isa) == cap;
      // A misspelt level would silently run another: say so, once per process.
      if (!known) std::fprintf(stderr, "dynvm: DYNVM_ISA=%s names no level (scalar, avx2): ignored\n", cap);
    }
    Isa best = Isa::kScalar;
    for (Isa isa : kIsas) {
      if (!CpuRunsIsa(isa)) break;
      best = isa;
      if (cap != nullptr && IsaName(isa) == cap) break;
    }
    return best;
  }();
  return selected;
}

}  // namespace dynvm::kernels
