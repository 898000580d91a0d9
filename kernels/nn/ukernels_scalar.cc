// The scalar reference microkernels of kernels/nn/ukernels.h: the plainest loops over
// the standard library's math, one element at a time. They define what the vectorised
// versions must compute, and run on CPUs without AVX2.
#include <cmath>
#include <cstdint>

#include "kernels/nn/ukernels.h"

namespace dynvm::kernels::nn {
namespace {

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

float f32_rsumsqdiff__scalar(int64_t n, const float* x, float c) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += (x[i] - c) * (x[i] - c);
  return sum;
}

float f32_raddexpminusmax__scalar(int64_t n, const float* x, float max) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - max);
  return sum;
}

float f32_raddstoreexpminusmax__scalar(int64_t n, const float* x, float max, float* y) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - max);
    sum += y[i];
  }
  return sum;
}

void f32_vmulc__scalar(int64_t n, const float* x, float c, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * c;
}

void f32_vaddc__scalar(int64_t n, const float* x, float c, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + c;
}

void f32_vadd__scalar(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void f32_vmuladdc__scalar(int64_t n, const float* x, float a, float b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + b;
}

void f32_vmuladd__scalar(int64_t n, const float* x, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a[i] + b[i];
}

void f32_vmaxacc__scalar(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > y[i] ? x[i] : y[i];
}

void f32_vaddacc__scalar(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void f32_vmulcacc__scalar(int64_t n, const float* x, float c, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i] * c;
}

void f32_vnormalize__scalar(int64_t n, const float* x, float mean, float rstd, const float* gamma,
                            const float* beta, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gamma != nullptr ? gamma[i] : 1.0f;
    const float b = beta != nullptr ? beta[i] : 0.0f;
    y[i] = (x[i] - mean) * rstd * g + b;
  }
}

// One LSTM row, with the peepholes `p` ([p_i | p_o | p_f], ONNX's order) when kPeephole.
template <bool kPeephole>
void LstmGates(int64_t n, const float* gates, const float* c, const float* p, float* h_out,
               float* c_out) {
  for (int64_t j = 0; j < n; ++j) {
    float gi = gates[j], gf = gates[n + j], go = gates[3 * n + j];
    if constexpr (kPeephole) {
      gi += p[j] * c[j];
      gf += p[2 * n + j] * c[j];
    }
    const float i = Sigmoid(gi);
    const float f = Sigmoid(gf);
    const float g = std::tanh(gates[2 * n + j]);
    const float cell = f * c[j] + i * g;
    if constexpr (kPeephole) go += p[n + j] * cell;
    const float o = Sigmoid(go);
    c_out[j] = cell;
    h_out[j] = o * std::tanh(cell);
  }
}

void f32_lstm_gates__scalar(int64_t n, const float* gates, const float* c, float* h_out,
                            float* c_out) {
  LstmGates<false>(n, gates, c, nullptr, h_out, c_out);
}

void f32_lstm_peephole_gates__scalar(int64_t n, const float* gates, const float* c,
                                     const float* p, float* h_out, float* c_out) {
  LstmGates<true>(n, gates, c, p, h_out, c_out);
}

// One GRU row; kReset: r multiplies gh's n block here (linear_before_reset = 1), else
// that block already holds the product of the reset state.
template <bool kReset>
void GruGates(int64_t n, const float* gi, const float* gh, const float* h, float* h_out) {
  for (int64_t j = 0; j < n; ++j) {
    const float z = Sigmoid(gi[n + j] + gh[n + j]);
    float hidden = gh[2 * n + j];
    if constexpr (kReset) hidden *= Sigmoid(gi[j] + gh[j]);
    const float m = std::tanh(gi[2 * n + j] + hidden);
    h_out[j] = (1.0f - z) * m + z * h[j];
  }
}

void f32_gru_gates__scalar(int64_t n, const float* gi, const float* gh, const float* h,
                           float* h_out) {
  GruGates<true>(n, gi, gh, h, h_out);
}

void f32_gru_prereset_gates__scalar(int64_t n, const float* gi, const float* gh, const float* h,
                                    float* h_out) {
  GruGates<false>(n, gi, gh, h, h_out);
}

void f32_gru_reset__scalar(int64_t n, const float* gi, const float* gh, const float* h,
                           float* rh_out) {
  for (int64_t j = 0; j < n; ++j) rh_out[j] = Sigmoid(gi[j] + gh[j]) * h[j];
}

}  // namespace

const NnUkernels& NnUkernelsScalar() {
  static constexpr NnUkernels kScalar = {
      .rsumsqdiff = f32_rsumsqdiff__scalar,
      .raddexpminusmax = f32_raddexpminusmax__scalar,
      .raddstoreexpminusmax = f32_raddstoreexpminusmax__scalar,
      .vmulc = f32_vmulc__scalar,
      .vaddc = f32_vaddc__scalar,
      .vadd = f32_vadd__scalar,
      .vmuladdc = f32_vmuladdc__scalar,
      .vmuladd = f32_vmuladd__scalar,
      .vmaxacc = f32_vmaxacc__scalar,
      .vaddacc = f32_vaddacc__scalar,
      .vmulcacc = f32_vmulcacc__scalar,
      .vnormalize = f32_vnormalize__scalar,
      .lstm_gates = f32_lstm_gates__scalar,
      .gru_gates = f32_gru_gates__scalar,
      .lstm_peephole_gates = f32_lstm_peephole_gates__scalar,
      .gru_reset = f32_gru_reset__scalar,
      .gru_prereset_gates = f32_gru_prereset_gates__scalar,
  };
  return kScalar;
}

}  // namespace dynvm::kernels::nn
