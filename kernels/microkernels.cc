// The micro-kernel table of each level, assembled from the families' parts, and the
// choice of one for this CPU.
//
// Compiled for the baseline instruction set: it asks the CPU what it runs before handing
// out a table whose code needs more, and only copies the parts' function pointers.
#include "kernels/microkernels.h"

namespace dynvm::kernels {

const Microkernels* MicrokernelsFor(Isa isa) {
  if (!CpuRunsIsa(isa)) return nullptr;
  switch (isa) {
    case Isa::kScalar: {
      static const Microkernels table = {Isa::kScalar,
                                         elementwise::ElementwiseUkernelsScalar(),
                                         nn::NnUkernelsScalar(),
                                         internal::GemmUkernelsScalar()};
      return &table;
    }
    case Isa::kAvx2: {
      static const Microkernels table = {Isa::kAvx2,
                                         elementwise::ElementwiseUkernelsAvx2(),
                                         nn::NnUkernelsAvx2(),
                                         internal::GemmUkernelsAvx2()};
      return &table;
    }
    case Isa::kAvx512: {
      static const Microkernels table = {Isa::kAvx512,
                                         elementwise::ElementwiseUkernelsAvx512(),
                                         nn::NnUkernelsAvx512(),
                                         internal::GemmUkernelsAvx512()};
      return &table;
    }
  }
  return nullptr;
}

const Microkernels& GetMicrokernels() {
  static const Microkernels* const selected = MicrokernelsFor(SelectedIsa());
  return *selected;
}

}  // namespace dynvm::kernels
