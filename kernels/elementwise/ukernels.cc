// Chooses the microkernel table of kernels/elementwise/ukernels.h for this CPU, once.
//
// This file is compiled for the baseline instruction set: it asks the CPU what it
// supports before touching anything compiled with -mavx2.
#include "kernels/elementwise/ukernels.h"

namespace dynvm::kernels::elementwise {

const ElementwiseMicrokernels* GetElementwiseMicrokernelsAvx2() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported ? &internal::ElementwiseMicrokernelsAvx2Table() : nullptr;
}

const ElementwiseMicrokernels& GetElementwiseMicrokernels() {
  static const ElementwiseMicrokernels* const best = [] {
    const ElementwiseMicrokernels* avx2 = GetElementwiseMicrokernelsAvx2();
    return avx2 != nullptr ? avx2 : &GetElementwiseMicrokernelsScalar();
  }();
  return *best;
}

}  // namespace dynvm::kernels::elementwise
