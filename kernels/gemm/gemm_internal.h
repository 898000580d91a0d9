// The pieces GemmF32 is built from: micro-kernels that compute one MR x NR tile of C
// from packed panels of A and B, the routines that pack A and B into panels (handling
// the transposes), and the per-ISA tables that hold them: the `gemm` part of the
// library's one micro-kernel table (kernels/microkernels.h).
//
// The driver (driver.cc) blocks C, A and B for the caches, packs, and calls a table's
// micro-kernel once per tile, from the table GetMicrokernels() chose for this CPU. Every
// table is a complete implementation: tests run the driver over each table the CPU can
// execute (GemmF32With), and the scalar table runs anywhere.
//
// Translation units compiled with ISA flags (-mavx2 -mfma, -mavx512f...) include this
// header, so it defines no inline code, and such units call nothing inline from headers
// that other units include too (kernels/internal/vmath_avx2.h is only ever included by
// AVX2 units, vmath_avx512.h by AVX-512 ones): the linker keeps one copy of an inline
// function, and an AVX2 copy of it would then run on CPUs without AVX2.
#ifndef DYNVM_KERNELS_GEMM_GEMM_INTERNAL_H_
#define DYNVM_KERNELS_GEMM_GEMM_INTERNAL_H_

#include <cstdint>

#include "kernels/gemm/gemm.h"

namespace dynvm::kernels::internal {

// How far ahead of its loads a kernel that streams a packed B from memory prefetches
// it, in bytes (32 k steps of a panel).
constexpr int64_t kStreamPrefetchBytes = 2048;

// One call of a micro-kernel: tile C[0:mr, 0:nr] (mr <= MR, nr <= NR) of the product
// of a packed panel of A (kc x MR) and NR / 16 consecutive packed panels of B (each
// kc x 16: B is packed 16 columns wide for every table, kGemmPanelWidth, and a table
// whose NR is wider reads several panels side by side).
struct GemmTile {
  int64_t mr, nr, kc;
  const float* a;   // packed A panel: a[p * MR + r]; rows past mr are zeros
  const float* b;   // packed B panels: b[q * b_stride + p * 16 + j] is column 16 q + j;
                    // columns past nr are zeros, panels past them are not read
  int64_t b_stride;  // floats from one 16-column panel of B to the next
  float* c;
  int64_t ldc;
  bool accumulate;  // add the product to what C holds (the partial sum of earlier k blocks)
  bool last;        // the last k block: apply alpha and the epilogue, else store the sum
  float alpha;
  const float* bias;      // at the tile's first column, or null
  const float* residual;  // at the tile's first element, row stride ldr, or null
  int64_t ldr;
  // Where the k loop prefetches from, one 64-byte line (a k step of B) per step, when
  // the driver streams B from memory (B ahead of the loads); 0: no prefetch. An
  // address, not a pointer, since it may lie past the end of B: it is only a hint.
  uintptr_t prefetch;
};

// Computes one tile. Rows past mr and columns past nr of C, bias and residual are
// neither read nor written.
using GemmMicroKernelFn = void (*)(const GemmTile& tile);

// Packs op(A)[0:mc, 0:kc] (a[i * lda + p], or a[p * lda + i] when `trans`) into
// ceil(mc / MR) consecutive panels of kc x MR floats, dst[panel][p][r]; rows past mc are
// zeros. Writes nothing outside the panels.
using PackAFn = void (*)(bool trans, int64_t mc, int64_t kc, const float* a, int64_t lda,
                         float* dst);

// Packs op(B)[0:kc, 0:nc] (b[p * ldb + j], or b[j * ldb + p] when `trans`) into
// ceil(nc / NR) consecutive panels of kc x NR floats, dst[panel][p][j]; columns past nc
// are zeros. No alignment is required (the driver's buffers are 64-byte aligned, which
// keeps a panel's rows within cache lines).
using PackBFn = void (*)(bool trans, int64_t kc, int64_t nc, const float* b, int64_t ldb,
                         float* dst);

// The product of a few rows of A (`rows` <= 4, row-major, `lda` apart) with
// op(B)[0:k, 0:nc], B read in place (b[p * ldb + j], or b[j * ldb + p] when `trans_b`):
// sums[i * ld + j] = sum_p a[i * lda + p] op(B)[p, j], with no epilogue. For products of
// a few rows, where packing B would cost as much as the product itself.
using SmallMFn = void (*)(int64_t rows, int64_t nc, int64_t k, const float* a, int64_t lda,
                          const float* b, int64_t ldb, bool trans_b, float* sums, int64_t ld);

// SmallMFn for B packed ahead (GemmPackB's layout): sums[i * ld + j] for the 16
// columns of each of `panels` consecutive panels, those past n included (zeros in B).
using SmallMPackedFn = void (*)(int64_t rows, int64_t panels, int64_t k, const float* a,
                                int64_t lda, const float* b, float* sums, int64_t ld);

// The epilogue on one row of n raw sums: c[j] = act(alpha sums[j] + bias[j]) +
// residual[j]; bias and residual may be null, residual may be c.
using EpilogueFn = void (*)(Activation activation, int64_t n, const float* sums, float alpha,
                            const float* bias, const float* residual, float* c);

// One instruction set's implementation of GEMM's building blocks.
struct GemmUkernels {
  int mr, nr;        // the micro-kernels' tile; nr a multiple of kGemmPanelWidth
  int kc;            // the longest k block: a kc x nr block of B stays in L1 across tiles
  GemmMicroKernelFn micro_kernel[4];  // indexed by Activation
  PackAFn pack_a;
  PackBFn pack_b;
  SmallMFn small_m;
  SmallMPackedFn small_m_packed;
  EpilogueFn epilogue;
};

// The portable table (plain C++, vectorised by the compiler for the baseline ISA), the
// AVX2+FMA one and the AVX-512 one; GetMicrokernels (kernels/microkernels.h) hands out a
// vector table only on CPUs that run its level.
const GemmUkernels& GemmUkernelsScalar();
const GemmUkernels& GemmUkernelsAvx2();
const GemmUkernels& GemmUkernelsAvx512();

// GemmF32 on the given table (for tests and benchmarks of a specific ISA).
void GemmF32With(const GemmUkernels& kernels, const GemmArgs& args, ThreadPool& pool);

}  // namespace dynvm::kernels::internal

#endif  // DYNVM_KERNELS_GEMM_GEMM_INTERNAL_H_
