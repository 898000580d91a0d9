// Chooses the microkernel table of kernels/nn/ukernels.h for this CPU, once.
//
// This file is compiled for the baseline instruction set: it asks the CPU what it
// supports before touching anything compiled with -mavx2.
#include "kernels/nn/ukernels.h"

namespace dynvm::kernels::nn {

const NnMicrokernels* GetNnMicrokernelsAvx2() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported ? &internal::NnMicrokernelsAvx2Table() : nullptr;
}

const NnMicrokernels& GetNnMicrokernels() {
  static const NnMicrokernels* const best = [] {
    const NnMicrokernels* avx2 = GetNnMicrokernelsAvx2();
    return avx2 != nullptr ? avx2 : &GetNnMicrokernelsScalar();
  }();
  return *best;
}

}  // namespace dynvm::kernels::nn
