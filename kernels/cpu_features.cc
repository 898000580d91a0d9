// The CPU's features read once, from CPUID and the OS-enabled register state (XCR0):
// which ISA levels this CPU runs, and the level DYNVM_ISA selects (kernels/cpu_features.h).
#include "kernels/cpu_features.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace dynvm::kernels {

namespace {

// Where a feature's bit lives: CPUID leaf 1; leaf 7 subleaf 0 (EBX, ECX, EDX); leaf 7
// subleaf 1 (EAX).
enum class Word : uint8_t { k1Ecx, k7Ebx, k7Ecx, k7Edx, k71Eax };

// The register state a feature needs the OS to save (XCR0 bits).
enum class State : uint8_t {
  kSse,     // XMM (bit 1): always enabled where x86-64 runs
  kAvx,     // XMM and YMM (bits 1, 2)
  kAvx512,  // YMM, opmask, ZMM_Hi256, Hi16_ZMM (bits 1, 2, 5, 6, 7)
  kAmx,     // XTILECFG, XTILEDATA (bits 17, 18)
};

struct Feature {
  std::string_view name;  // LLVM's
  Word word;
  int bit;
  State state;
  bool native;  // generated code may use it (KnownCpuFeatures)
};

constexpr Feature kFeatures[] = {
    {"sse3", Word::k1Ecx, 0, State::kSse, true},
    {"ssse3", Word::k1Ecx, 9, State::kSse, true},
    {"sse4.1", Word::k1Ecx, 19, State::kSse, true},
    {"sse4.2", Word::k1Ecx, 20, State::kSse, true},
    {"popcnt", Word::k1Ecx, 23, State::kSse, true},
    {"avx", Word::k1Ecx, 28, State::kAvx, true},
    {"avx2", Word::k7Ebx, 5, State::kAvx, true},
    {"fma", Word::k1Ecx, 12, State::kAvx, true},
    {"f16c", Word::k1Ecx, 29, State::kAvx, true},
    {"bmi", Word::k7Ebx, 3, State::kSse, true},
    {"bmi2", Word::k7Ebx, 8, State::kSse, true},
    {"avx512f", Word::k7Ebx, 16, State::kAvx512, true},
    {"avx512dq", Word::k7Ebx, 17, State::kAvx512, true},
    {"avx512bw", Word::k7Ebx, 30, State::kAvx512, true},
    {"avx512vl", Word::k7Ebx, 31, State::kAvx512, true},
    {"avx512cd", Word::k7Ebx, 28, State::kAvx512, true},
    {"avx512vnni", Word::k7Ecx, 11, State::kAvx512, true},
    {"avxvnni", Word::k71Eax, 4, State::kAvx, true},
    {"avx512bf16", Word::k71Eax, 5, State::kAvx512, true},
    {"amx-tile", Word::k7Edx, 24, State::kAmx, false},
    {"amx-int8", Word::k7Edx, 25, State::kAmx, false},
    {"amx-bf16", Word::k7Edx, 22, State::kAmx, false},
};
constexpr size_t kNumFeatures = std::size(kFeatures);

template <bool kNativeOnly>
constexpr auto FeatureNames() {
  constexpr size_t count = [] {
    size_t n = 0;
    for (const Feature& f : kFeatures) n += !kNativeOnly || f.native;
    return n;
  }();
  std::array<std::string_view, count> names{};
  size_t i = 0;
  for (const Feature& f : kFeatures) {
    if (!kNativeOnly || f.native) names[i++] = f.name;
  }
  return names;
}
constexpr auto kNativeNames = FeatureNames<true>();
constexpr auto kAllNames = FeatureNames<false>();

// What CPUID and XCR0 say, read once.
struct CpuState {
  std::string vendor, brand;
  int family = 0, model = 0, stepping = 0;
  std::array<bool, kNumFeatures> has{};
};

#if defined(__x86_64__)
// XCR0, the register state the OS saves: only readable (XGETBV) where CPUID says the OS
// has turned XSAVE on.
uint64_t ReadXcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

CpuState ReadCpu() {
  CpuState cpu;
  unsigned max_leaf, ebx, ecx, edx;
  if (__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx) == 0) return cpu;
  char vendor[12];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  cpu.vendor.assign(vendor, sizeof(vendor));

  unsigned words[5] = {};  // indexed by Word
  unsigned eax1 = 0, unused;
  __get_cpuid(1, &eax1, &unused, &words[0], &edx);
  const int base_family = (eax1 >> 8) & 0xf, base_model = (eax1 >> 4) & 0xf;
  cpu.family = base_family == 0xf ? base_family + ((eax1 >> 20) & 0xff) : base_family;
  cpu.model = base_family == 0x6 || base_family == 0xf
                  ? (((eax1 >> 16) & 0xf) << 4) + base_model
                  : base_model;
  cpu.stepping = eax1 & 0xf;
  if (max_leaf >= 7) {
    unsigned subleaves;
    __cpuid_count(7, 0, subleaves, words[1], words[2], words[3]);
    if (subleaves >= 1) __cpuid_count(7, 1, words[4], unused, unused, unused);
  }
  const bool osxsave = (words[0] & bit_OSXSAVE) != 0;
  const uint64_t xcr0 = osxsave ? ReadXcr0() : 0;
  const auto enabled = [xcr0](State state) {
    constexpr uint64_t kYmm = 0x6, kZmm = 0xe6, kTiles = 0x60000;
    switch (state) {
      case State::kSse: return true;
      case State::kAvx: return (xcr0 & kYmm) == kYmm;
      case State::kAvx512: return (xcr0 & kZmm) == kZmm;
      case State::kAmx: return (xcr0 & kTiles) == kTiles;
    }
    return false;
  };
  for (size_t i = 0; i < kNumFeatures; ++i) {
    const Feature& f = kFeatures[i];
    cpu.has[i] = ((words[static_cast<int>(f.word)] >> f.bit) & 1) != 0 && enabled(f.state);
  }

  unsigned max_extended;
  __get_cpuid(0x80000000, &max_extended, &ebx, &ecx, &edx);
  if (max_extended >= 0x80000004) {
    unsigned brand[12];
    for (unsigned leaf = 0; leaf < 3; ++leaf) {
      __get_cpuid(0x80000002 + leaf, &brand[4 * leaf], &brand[4 * leaf + 1],
                  &brand[4 * leaf + 2], &brand[4 * leaf + 3]);
    }
    char text[sizeof(brand) + 1] = {};
    std::memcpy(text, brand, sizeof(brand));
    std::string_view name(text);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    cpu.brand = std::string(name);
  }
  return cpu;
}
#else
CpuState ReadCpu() { return {}; }
#endif

const CpuState& Cpu() {
  static const CpuState cpu = ReadCpu();
  return cpu;
}

}  // namespace

absl::Span<const std::string_view> KnownCpuFeatures() { return kNativeNames; }

absl::Span<const std::string_view> DetectedCpuFeatures() { return kAllNames; }

bool CpuHasFeature(std::string_view feature) {
  for (size_t i = 0; i < kNumFeatures; ++i) {
    if (kFeatures[i].name == feature) return Cpu().has[i];
  }
  return false;
}

std::string CpuName() {
  const CpuState& cpu = Cpu();
  if (cpu.vendor.empty()) return "unknown (no CPUID)";
  return absl::StrFormat("%s (%s family %d model %d stepping %d)",
                         cpu.brand.empty() ? "unnamed" : cpu.brand, cpu.vendor, cpu.family,
                         cpu.model, cpu.stepping);
}

std::string CpuReport() {
  std::string has, lacks, levels;
  for (size_t i = 0; i < kNumFeatures; ++i) {
    (Cpu().has[i] ? has : lacks).append(" ").append(kFeatures[i].name);
  }
  for (Isa isa : kIsas) {
    if (CpuRunsIsa(isa)) levels.append(" ").append(IsaName(isa));
  }
  const char* cap = std::getenv("DYNVM_ISA");
  return absl::StrCat("cpu: ", CpuName(), "\nfeatures:", has.empty() ? " none" : has,
                      "\nlacks:", lacks.empty() ? " none" : lacks, "\nkernels: ",
                      std::string(IsaName(SelectedIsa())), " (",
                      cap != nullptr ? absl::StrCat("DYNVM_ISA=", cap, "; ") : "",
                      "levels this CPU runs:", levels, ")\n");
}

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "unknown";
}

bool CpuRunsIsa(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return CpuHasFeature("avx2") && CpuHasFeature("fma");
    case Isa::kAvx512:
      return CpuRunsIsa(Isa::kAvx2) && CpuHasFeature("avx512f") && CpuHasFeature("avx512dq") &&
             CpuHasFeature("avx512bw") && CpuHasFeature("avx512vl");
  }
  return false;
}

Isa SelectedIsa() {
  static const Isa selected = [] {
    const char* cap = std::getenv("DYNVM_ISA");
    if (cap != nullptr) {
      std::string names;
      bool known = false;
      for (Isa isa : kIsas) {
        known = known || IsaName(isa) == cap;
        names.append(names.empty() ? "" : ", ").append(IsaName(isa));
      }
      // A misspelt level would silently run another: say so, once per process.
      if (!known) {
        std::fprintf(stderr, "dynvm: DYNVM_ISA=%s names no level (%s): ignored\n", cap,
                     names.c_str());
      }
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
