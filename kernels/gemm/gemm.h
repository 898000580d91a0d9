// Single-precision GEMM with a fused epilogue: the one matrix-multiply routine behind
// matmul, dense, batch_matmul, attention, convolution (im2col) and the recurrent cells.
//
//   C[i, j] = act(sum_k op(A)[i, k] * op(B)[k, j] + bias[j]) + residual[i, j]
//
// op(X) is X or its transpose. Matrices are row-major with leading dimensions
// (elements between rows). Every term of the epilogue is optional.
//
//   GemmF32({.m = m, .n = n, .k = k, .a = x, .lda = k, .b = w, .ldb = k, .trans_b = true,
//            .c = y, .ldc = n, .bias = b, .activation = Activation::kGeluErf}, pool);
#ifndef DYNVM_KERNELS_GEMM_GEMM_H_
#define DYNVM_KERNELS_GEMM_GEMM_H_

#include <cstdint>

#include "kernels/thread_pool.h"

namespace dynvm::kernels {

enum class Activation : uint8_t {
  kNone,
  kRelu,
  kGeluErf,   // x * Phi(x), the exact form
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
};

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;   // m x k, or k x m when trans_a
  int64_t lda = 0;
  bool trans_a = false;
  const float* b = nullptr;   // k x n, or n x k when trans_b, or packed (b_packed)
  int64_t ldb = 0;
  bool trans_b = false;
  bool b_packed = false;      // b is op(B) as GemmPackB packed it; ldb, trans_b unused
  float* c = nullptr;         // m x n, written (not accumulated into)
  int64_t ldc = 0;
  float alpha = 1.0f;         // scales the product before the epilogue
  const float* bias = nullptr;      // n values, or null
  Activation activation = Activation::kNone;
  const float* residual = nullptr;  // m x n, row stride ldr, or null; may alias c
  int64_t ldr = 0;
};

// Computes `args` with the fastest routine the CPU supports, parallelised on `pool`.
// Arguments are assumed valid (kernel wrappers check shapes): m, n, k >= 0 and leading
// dimensions at least the row lengths. k == 0 gives the epilogue applied to zeros.
void GemmF32(const GemmArgs& args, ThreadPool& pool);

// Constant operands (weights) can be packed once into the layout the micro-kernels read,
// so that products with them skip packing B (about 8% of a GEMM's time at BERT's
// shapes): op(B) as ceil(n / kGemmPanelWidth) panels of k x kGemmPanelWidth floats,
// panel q holding columns [16 q, 16 q + 16) row by row, zeros past column n (the layout
// TVM calls NC16n for a dense weight, padded). Every instruction set reads this layout.
inline constexpr int64_t kGemmPanelWidth = 16;

// The number of floats GemmPackB writes for a k x n op(B).
int64_t GemmPackedBSize(int64_t k, int64_t n);

// Packs op(B) (k x n; b[p * ldb + j], or b[j * ldb + p] when trans_b) into `dst`, which
// holds GemmPackedBSize(k, n) floats (best 64-byte aligned). Pass the result as
// GemmArgs::b with b_packed set.
void GemmPackB(int64_t k, int64_t n, const float* b, int64_t ldb, bool trans_b, float* dst);

// The plain reference: three loops in double precision, one thread. For tests.
void GemmF32Reference(const GemmArgs& args);

// Applies the activation to one value (shared by GEMM epilogues and elementwise kernels).
float ApplyActivation(Activation activation, float x);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_GEMM_GEMM_H_
