// The microkernels of the neural-network kernels (kernels/nn/): the row operations that
// softmax, the normalisations, attention, pooling and the recurrent cells spend their
// time in, each in a scalar reference (ukernels_scalar.cc) and vector versions for
// AVX2+FMA (ukernels_avx2.cc) and AVX-512 (ukernels_avx512.cc), each its own translation
// unit compiled for its level. They are the
// `nn` part of the library's one micro-kernel table (kernels/microkernels.h); the row
// max and sum these kernels also use are the `elementwise` part's.
//
// Names follow XNNPACK: f32_<operation>__<isa>, with r = reduction and v = elementwise
// vector operation; a trailing c means a scalar operand. Every function takes `n >= 0`
// elements at unaligned pointers and assumes its arguments are valid (the kernel
// wrappers check). An output may be the same array as an input (in-place), but must not
// otherwise overlap one.
//
//   const Microkernels& uk = GetMicrokernels();
//   const float max = uk.elementwise.rmax(n, x);
//   const float sum = uk.nn.raddstoreexpminusmax(n, x, max, y);  // y = exp(x - max)
//   uk.nn.vmulc(n, y, 1.0f / sum, y);                             // y = softmax(x)
#ifndef DYNVM_KERNELS_NN_UKERNELS_H_
#define DYNVM_KERNELS_NN_UKERNELS_H_

#include <cstdint>

namespace dynvm::kernels::nn {

// One implementation of every microkernel, for one instruction set.
struct NnUkernels {
  // sum((x[i] - c)^2): the centred second moment, which keeps the variance accurate
  // when the mean is large compared to the spread.
  float (*rsumsqdiff)(int64_t n, const float* x, float c);
  // sum(exp(x[i] - max)) for max >= every x[i] (softmax's denominator).
  float (*raddexpminusmax)(int64_t n, const float* x, float max);
  // y[i] = exp(x[i] - max), returning sum(y) (softmax's numerators and denominator).
  float (*raddstoreexpminusmax)(int64_t n, const float* x, float max, float* y);

  // y[i] = x[i] * c.
  void (*vmulc)(int64_t n, const float* x, float c, float* y);
  // y[i] = x[i] + c.
  void (*vaddc)(int64_t n, const float* x, float c, float* y);
  // y[i] = a[i] + b[i].
  void (*vadd)(int64_t n, const float* a, const float* b, float* y);
  // y[i] = x[i] * a + b.
  void (*vmuladdc)(int64_t n, const float* x, float a, float b, float* y);
  // y[i] = x[i] * a[i] + b[i].
  void (*vmuladd)(int64_t n, const float* x, const float* a, const float* b, float* y);
  // y[i] = max(y[i], x[i]) (max pooling's accumulation).
  void (*vmaxacc)(int64_t n, const float* x, float* y);
  // y[i] += x[i] (average pooling's accumulation).
  void (*vaddacc)(int64_t n, const float* x, float* y);
  // y[i] += x[i] * c (a depthwise convolution tap over a row).
  void (*vmulcacc)(int64_t n, const float* x, float c, float* y);
  // y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i]; a null `gamma` means 1, a null
  // `beta` means 0 (layer normalisation without scale or center).
  void (*vnormalize)(int64_t n, const float* x, float mean, float rstd, const float* gamma,
                     const float* beta, float* y);

  // One row of an LSTM cell with PyTorch's gate order: `gates` holds the 4n
  // pre-activations [i | f | g | o]; c_out = sigmoid(f) * c + sigmoid(i) * tanh(g) and
  // h_out = sigmoid(o) * tanh(c_out). `c_out` may be `c`.
  void (*lstm_gates)(int64_t n, const float* gates, const float* c, float* h_out, float* c_out);
  // One row of a GRU cell with PyTorch's semantics: `gi` = W_i x + b_i and
  // `gh` = W_h h + b_h, each 3n values [r | z | n]; r = sigmoid(gi_r + gh_r),
  // z = sigmoid(gi_z + gh_z), m = tanh(gi_n + r * gh_n), h_out = (1 - z) * m + z * h.
  // `h_out` may be `h`.
  void (*gru_gates)(int64_t n, const float* gi, const float* gh, const float* h, float* h_out);

  // The LSTM row with ONNX's peepholes: as lstm_gates, with `p` holding 3n weights in
  // ONNX's order [p_i | p_o | p_f]: i = sigmoid(gates_i + p_i * c), f = sigmoid(gates_f +
  // p_f * c), and o = sigmoid(gates_o + p_o * c_out), from the new cell state. `c_out`
  // may be `c`.
  void (*lstm_peephole_gates)(int64_t n, const float* gates, const float* c, const float* p,
                              float* h_out, float* c_out);
  // The first pass of a GRU row that resets before the hidden product (ONNX's
  // linear_before_reset = 0): rh_out = sigmoid(gi_r + gh_r) * h, over the r blocks (the
  // first n values) of `gi` and `gh`. The caller then computes gh's n block from rh_out.
  void (*gru_reset)(int64_t n, const float* gi, const float* gh, const float* h, float* rh_out);
  // The second pass of that GRU row: as gru_gates, but gh's n block is already
  // W_hn (r * h) + b_hn, so m = tanh(gi_n + gh_n). `h_out` may be `h`.
  void (*gru_prereset_gates)(int64_t n, const float* gi, const float* gh, const float* h,
                             float* h_out);
};

// The portable table, the AVX2+FMA one and the AVX-512 one; GetMicrokernels
// (kernels/microkernels.h) hands out a vector table only on CPUs that run its level.
const NnUkernels& NnUkernelsScalar();
const NnUkernels& NnUkernelsAvx2();
const NnUkernels& NnUkernelsAvx512();

}  // namespace dynvm::kernels::nn

#endif  // DYNVM_KERNELS_NN_UKERNELS_H_
