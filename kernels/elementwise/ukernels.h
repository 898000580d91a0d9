// The microkernels of the elementwise unary kernels (kernels/elementwise/unary.cc) and of the f32
// reductions (kernels/reduce/reduce.cc): one function per f32 operation over a contiguous
// array, each in a scalar reference (ukernels_scalar.cc, the standard library's math one
// element at a time) and vector versions for AVX2+FMA (ukernels_avx2.cc) and AVX-512
// (ukernels_avx512.cc), each its own translation unit compiled for its level, with
// vectorised exp, log, erf, tanh, sin and cos. They are
// the `elementwise` part of the library's one micro-kernel table (kernels/microkernels.h),
// which also holds the row reductions the nn family uses (softmax's max, layer norm's
// mean).
//
// Every function takes `n >= 0` elements at unaligned pointers; `y` may be `x`
// (in-place) but must not otherwise overlap it. The vectorised transcendental functions
// are accurate to a few ulp (the tests state the bounds); the others are exact.
//
//   const ElementwiseUkernels& uk = GetMicrokernels().elementwise;
//   uk.vunary[static_cast<int>(VUnaryOp::kExp)](n, x, y, nullptr);  // y = exp(x)
#ifndef DYNVM_KERNELS_ELEMENTWISE_UKERNELS_H_
#define DYNVM_KERNELS_ELEMENTWISE_UKERNELS_H_

#include <cstdint>

namespace dynvm::kernels::elementwise {

// The f32 -> f32 operations, each with its meaning for one element. NaN inputs give NaN
// unless stated otherwise.
enum class VUnaryOp : uint8_t {
  kNeg,         // -x
  kAbs,         // |x|
  kExp,         // e^x
  kLog,         // ln x; -inf at 0, NaN below
  kSqrt,        // sqrt(x); NaN below 0
  kRsqrt,       // 1 / sqrt(x), correctly rounded division of a correctly rounded root
  kReciprocal,  // 1 / x
  kTanh,        // tanh(x)
  kSigmoid,     // 1 / (1 + e^-x), accurate for large |x| too
  kRelu,        // x > 0 ? x : 0 (NaN gives 0, as kernels::ApplyActivation)
  kLeakyRelu,   // x > 0 ? x : alpha * x
  kGeluErf,     // x Phi(x) = x (1 + erf(x / sqrt 2)) / 2
  kGeluTanh,    // x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2
  kErf,         // erf(x)
  kSin,         // sin(x)
  kCos,         // cos(x)
  kFloor,       // largest integer <= x
  kCeil,        // smallest integer >= x
  kRound,       // nearest integer, halves to even (numpy, ONNX)
  kSign,        // -1, 0 or 1 (0 for both zeros)
  kClip,        // min(max(x, min), max)
};
inline constexpr int kNumVUnaryOps = static_cast<int>(VUnaryOp::kClip) + 1;

// The constants of the operations that take some; the others ignore `params`, which
// may then be null.
struct VUnaryParams {
  float alpha = 0.0f;  // kLeakyRelu
  float min = 0.0f;    // kClip
  float max = 0.0f;    // kClip
};

// y[i] = op(x[i]) for i < n.
using VUnaryUkernel = void (*)(int64_t n, const float* x, float* y, const VUnaryParams* params);

// One implementation of every microkernel, for one instruction set.
struct ElementwiseUkernels {
  // Indexed by VUnaryOp.
  VUnaryUkernel vunary[kNumVUnaryOps];

  // Row reductions of x[0, n) (the f32 reductions' contiguous case). The sums accumulate
  // in double and return it unrounded, so that partial sums combine without loss; max
  // and min propagate NaN and give -inf and +inf when n == 0.
  double (*rsum)(int64_t n, const float* x);
  double (*rsumsq)(int64_t n, const float* x);  // sum of x[i]^2
  float (*rmax)(int64_t n, const float* x);
  float (*rmin)(int64_t n, const float* x);

  // Column accumulations (the f32 reductions over outer axes): acc[j] op= x[j] for
  // j < n; the sums in double, max and min propagating NaN (a NaN in acc stays).
  void (*vaccsum)(int64_t n, const float* x, double* acc);
  void (*vaccsumsq)(int64_t n, const float* x, double* acc);  // acc[j] += x[j]^2
  void (*vaccmax)(int64_t n, const float* x, float* acc);
  void (*vaccmin)(int64_t n, const float* x, float* acc);
};

// The portable table, the AVX2+FMA one and the AVX-512 one; GetMicrokernels
// (kernels/microkernels.h) hands out a vector table only on CPUs that run its level.
const ElementwiseUkernels& ElementwiseUkernelsScalar();
const ElementwiseUkernels& ElementwiseUkernelsAvx2();
const ElementwiseUkernels& ElementwiseUkernelsAvx512();

}  // namespace dynvm::kernels::elementwise

#endif  // DYNVM_KERNELS_ELEMENTWISE_UKERNELS_H_
