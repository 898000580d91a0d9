#include "kernels/cpu_features.h"

#include <cstdlib>
#include <string_view>

namespace dynvm::kernels {

bool CpuHasAvx2Fma() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

bool UseAvx2Fma() {
  static const bool use = [] {
    const char* isa = std::getenv("DYNVM_ISA");
    return CpuHasAvx2Fma() && !(isa != nullptr && std::string_view(isa) == "scalar");
  }();
  return use;
}

}  // namespace dynvm::kernels
