// Chooses the microkernel table of kernels/nn/ukernels.h for this CPU, once.
//
// This file is compiled for the baseline instruction set: it asks the CPU what it
// supports before touching anything compiled with -mavx2.
#include "kernels/nn/ukernels.h"

#include "kernels/cpu_features.h"

namespace dynvm::kernels::nn {

const NnMicrokernels* GetNnMicrokernelsAvx2() {
  return CpuHasAvx2Fma() ? &internal::NnMicrokernelsAvx2Table() : nullptr;
}

const NnMicrokernels& GetNnMicrokernels() {
  static const NnMicrokernels* const best = [] {
    return UseAvx2Fma() ? &internal::NnMicrokernelsAvx2Table() : &GetNnMicrokernelsScalar();
  }();
  return *best;
}

}  // namespace dynvm::kernels::nn
