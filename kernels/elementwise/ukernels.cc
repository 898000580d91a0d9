// Chooses the microkernel table of kernels/elementwise/ukernels.h for this CPU, once.
//
// This file is compiled for the baseline instruction set: it asks the CPU what it
// supports before touching anything compiled with -mavx2.
#include "kernels/elementwise/ukernels.h"

#include "kernels/cpu_features.h"

namespace dynvm::kernels::elementwise {

const ElementwiseMicrokernels* GetElementwiseMicrokernelsAvx2() {
  return CpuHasAvx2Fma() ? &internal::ElementwiseMicrokernelsAvx2Table() : nullptr;
}

const ElementwiseMicrokernels& GetElementwiseMicrokernels() {
  static const ElementwiseMicrokernels* const best = [] {
    return UseAvx2Fma() ? &internal::ElementwiseMicrokernelsAvx2Table()
                        : &GetElementwiseMicrokernelsScalar();
  }();
  return *best;
}

}  // namespace dynvm::kernels::elementwise
