// GemmF32: dispatch to the fastest routine for this CPU.
#include "kernels/gemm.h"

namespace dynvm::kernels {

void GemmF32(const GemmArgs& args, ThreadPool& pool) {
  // Rows of C are independent: split them over the pool.
  pool.ParallelFor(args.m, /*grain=*/16, [&](int64_t begin, int64_t end) {
    GemmArgs part = args;
    part.m = end - begin;
    part.a = args.trans_a ? args.a + begin : args.a + begin * args.lda;
    part.c = args.c + begin * args.ldc;
    if (args.residual != nullptr) part.residual = args.residual + begin * args.ldr;
    GemmF32Reference(part);
  });
}

}  // namespace dynvm::kernels
