// The scalar reference GEMM and the activation functions of GEMM epilogues.
#include <cmath>

#include "kernels/gemm/gemm.h"

namespace dynvm::kernels {

float ApplyActivation(Activation activation, float x) {
  switch (activation) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x > 0.0f ? x : 0.0f;
    case Activation::kGeluErf: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case Activation::kGeluTanh: {
      const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
      return 0.5f * x * (1.0f + std::tanh(inner));
    }
  }
  return x;
}

void GemmF32Reference(const GemmArgs& g) {
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < g.k; ++p) {
        const float a = g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p];
        const float b = g.b_packed ? g.b[(j / kGemmPanelWidth * g.k + p) * kGemmPanelWidth +
                                         j % kGemmPanelWidth]
                        : g.trans_b ? g.b[j * g.ldb + p]
                                    : g.b[p * g.ldb + j];
        sum += static_cast<double>(a) * b;
      }
      float v = g.alpha * static_cast<float>(sum);
      if (g.bias != nullptr) v += g.bias[j];
      v = ApplyActivation(g.activation, v);
      if (g.residual != nullptr) v += g.residual[i * g.ldr + j];
      g.c[i * g.ldc + j] = v;
    }
  }
}

}  // namespace dynvm::kernels
