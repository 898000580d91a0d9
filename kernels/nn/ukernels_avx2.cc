// The AVX2+FMA microkernels of kernels/nn/ukernels.h, 8 floats per register. This file
// is compiled with -mavx2 -mfma (kernels/CMakeLists.txt): nothing here may run before
// ukernels.cc has checked the CPU.
//
// Tails shorter than a register go through masked loads and stores rather than a scalar
// loop, so that every element sees the same arithmetic (softmax rows sum to 1 the same
// way whatever their length). Reductions keep several accumulators to hide the latency
// of the adds.
//
// exp, sigmoid and tanh are kernels/internal/vmath_avx2.h's; softmax uses its
// ExpNonPositive, as its arguments are x - max(x) <= 0.
#include <immintrin.h>

#include <cstdint>

#include "kernels/internal/vmath_avx2.h"
#include "kernels/nn/ukernels.h"

namespace dynvm::kernels::nn {
namespace {

constexpr int64_t kLanes = 8;

using vmath::ExpNonPositive;
using vmath::HorizontalSum;
using vmath::Sigmoid;
using vmath::TailMask;
using vmath::Tanh;

// sum(f(x[i])) over `n` elements for an elementwise f given on registers.
template <typename F>
float ReduceSum(int64_t n, const float* x, F f) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    a0 = _mm256_add_ps(a0, f(_mm256_loadu_ps(x + i)));
    a1 = _mm256_add_ps(a1, f(_mm256_loadu_ps(x + i + 8)));
    a2 = _mm256_add_ps(a2, f(_mm256_loadu_ps(x + i + 16)));
    a3 = _mm256_add_ps(a3, f(_mm256_loadu_ps(x + i + 24)));
  }
  for (; i + kLanes <= n; i += kLanes) a0 = _mm256_add_ps(a0, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    const __m256 v = f(_mm256_maskload_ps(x + i, mask));
    a1 = _mm256_add_ps(a1, _mm256_and_ps(v, _mm256_castsi256_ps(mask)));
  }
  return HorizontalSum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

float f32_rsumsqdiff__avx2(int64_t n, const float* x, float c) {
  const __m256 vc = _mm256_set1_ps(c);
  return ReduceSum(n, x, [vc](__m256 v) {
    const __m256 d = _mm256_sub_ps(v, vc);
    return _mm256_mul_ps(d, d);
  });
}

float f32_raddexpminusmax__avx2(int64_t n, const float* x, float max) {
  const __m256 vmax = _mm256_set1_ps(max);
  return ReduceSum(n, x, [vmax](__m256 v) { return ExpNonPositive(_mm256_sub_ps(v, vmax)); });
}

// y[i] = f(i, x-part) over `n` elements: `f` maps the element offset and a register of
// `x` to a register of results; the tail is masked on load and store.
template <typename F>
void Map(int64_t n, const float* x, float* y, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    _mm256_storeu_ps(y + i, f(i, _mm256_loadu_ps(x + i), nullptr));
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    _mm256_maskstore_ps(y + i, mask, f(i, _mm256_maskload_ps(x + i, mask), &mask));
  }
}

// Loads 8 floats at `p`, or the lanes of `mask` when it is not null.
inline __m256 Load(const float* p, const __m256i* mask) {
  return mask == nullptr ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, *mask);
}

float f32_raddstoreexpminusmax__avx2(int64_t n, const float* x, float max, float* y) {
  const __m256 vmax = _mm256_set1_ps(max);
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const __m256 e0 = ExpNonPositive(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
    const __m256 e1 = ExpNonPositive(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vmax));
    _mm256_storeu_ps(y + i, e0);
    _mm256_storeu_ps(y + i + 8, e1);
    a0 = _mm256_add_ps(a0, e0);
    a1 = _mm256_add_ps(a1, e1);
  }
  Map(n - i, x + i, y + i, [&](int64_t, __m256 v, const __m256i* mask) {
    __m256 e = ExpNonPositive(_mm256_sub_ps(v, vmax));
    if (mask != nullptr) e = _mm256_and_ps(e, _mm256_castsi256_ps(*mask));
    a0 = _mm256_add_ps(a0, e);
    return e;
  });
  return HorizontalSum(_mm256_add_ps(a0, a1));
}

void f32_vmulc__avx2(int64_t n, const float* x, float c, float* y) {
  const __m256 vc = _mm256_set1_ps(c);
  Map(n, x, y, [vc](int64_t, __m256 v, const __m256i*) { return _mm256_mul_ps(v, vc); });
}

void f32_vaddc__avx2(int64_t n, const float* x, float c, float* y) {
  const __m256 vc = _mm256_set1_ps(c);
  Map(n, x, y, [vc](int64_t, __m256 v, const __m256i*) { return _mm256_add_ps(v, vc); });
}

void f32_vadd__avx2(int64_t n, const float* a, const float* b, float* y) {
  Map(n, a, y, [b](int64_t i, __m256 v, const __m256i* mask) {
    return _mm256_add_ps(v, Load(b + i, mask));
  });
}

void f32_vmuladdc__avx2(int64_t n, const float* x, float a, float b, float* y) {
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  Map(n, x, y, [va, vb](int64_t, __m256 v, const __m256i*) { return _mm256_fmadd_ps(v, va, vb); });
}

void f32_vmuladd__avx2(int64_t n, const float* x, const float* a, const float* b, float* y) {
  Map(n, x, y, [a, b](int64_t i, __m256 v, const __m256i* mask) {
    return _mm256_fmadd_ps(v, Load(a + i, mask), Load(b + i, mask));
  });
}

void f32_vmaxacc__avx2(int64_t n, const float* x, float* y) {
  Map(n, y, y, [x](int64_t i, __m256 v, const __m256i* mask) {
    return _mm256_max_ps(Load(x + i, mask), v);
  });
}

void f32_vaddacc__avx2(int64_t n, const float* x, float* y) {
  Map(n, y, y, [x](int64_t i, __m256 v, const __m256i* mask) {
    return _mm256_add_ps(v, Load(x + i, mask));
  });
}

void f32_vmulcacc__avx2(int64_t n, const float* x, float c, float* y) {
  const __m256 vc = _mm256_set1_ps(c);
  Map(n, y, y, [x, vc](int64_t i, __m256 v, const __m256i* mask) {
    return _mm256_fmadd_ps(Load(x + i, mask), vc, v);
  });
}

template <bool kGamma, bool kBeta>
void Normalize(int64_t n, const float* x, float mean, float rstd, const float* gamma,
               const float* beta, float* y) {
  const __m256 vmean = _mm256_set1_ps(mean), vrstd = _mm256_set1_ps(rstd);
  Map(n, x, y, [&](int64_t i, __m256 v, const __m256i* mask) {
    __m256 r = _mm256_mul_ps(_mm256_sub_ps(v, vmean), vrstd);
    if constexpr (kGamma) r = _mm256_mul_ps(r, Load(gamma + i, mask));
    if constexpr (kBeta) r = _mm256_add_ps(r, Load(beta + i, mask));
    return r;
  });
}

void f32_vnormalize__avx2(int64_t n, const float* x, float mean, float rstd, const float* gamma,
                          const float* beta, float* y) {
  if (gamma != nullptr) {
    if (beta != nullptr) return Normalize<true, true>(n, x, mean, rstd, gamma, beta, y);
    return Normalize<true, false>(n, x, mean, rstd, gamma, beta, y);
  }
  if (beta != nullptr) return Normalize<false, true>(n, x, mean, rstd, gamma, beta, y);
  Normalize<false, false>(n, x, mean, rstd, gamma, beta, y);
}

// One LSTM row, with the peepholes `p` ([p_i | p_o | p_f], ONNX's order) when kPeephole.
// Two outputs: walk c_out with Map and store h_out beside it.
template <bool kPeephole>
void LstmGates(int64_t n, const float* gates, const float* c, const float* p, float* h_out,
               float* c_out) {
  Map(n, c, c_out, [&](int64_t j, __m256 vc, const __m256i* mask) {
    __m256 gi = Load(gates + j, mask), gf = Load(gates + n + j, mask);
    __m256 go = Load(gates + 3 * n + j, mask);
    if constexpr (kPeephole) {
      gi = _mm256_fmadd_ps(Load(p + j, mask), vc, gi);
      gf = _mm256_fmadd_ps(Load(p + 2 * n + j, mask), vc, gf);
    }
    const __m256 i = Sigmoid(gi);
    const __m256 f = Sigmoid(gf);
    const __m256 g = Tanh(Load(gates + 2 * n + j, mask));
    const __m256 cell = _mm256_fmadd_ps(f, vc, _mm256_mul_ps(i, g));
    if constexpr (kPeephole) go = _mm256_fmadd_ps(Load(p + n + j, mask), cell, go);
    const __m256 h = _mm256_mul_ps(Sigmoid(go), Tanh(cell));
    if (mask == nullptr) {
      _mm256_storeu_ps(h_out + j, h);
    } else {
      _mm256_maskstore_ps(h_out + j, *mask, h);
    }
    return cell;
  });
}

void f32_lstm_gates__avx2(int64_t n, const float* gates, const float* c, float* h_out,
                          float* c_out) {
  LstmGates<false>(n, gates, c, nullptr, h_out, c_out);
}

void f32_lstm_peephole_gates__avx2(int64_t n, const float* gates, const float* c, const float* p,
                                   float* h_out, float* c_out) {
  LstmGates<true>(n, gates, c, p, h_out, c_out);
}

// One GRU row; kReset: r multiplies gh's n block here (linear_before_reset = 1), else
// that block already holds the product of the reset state.
template <bool kReset>
void GruGates(int64_t n, const float* gi, const float* gh, const float* h, float* h_out) {
  Map(n, h, h_out, [&](int64_t j, __m256 vh, const __m256i* mask) {
    const __m256 z = Sigmoid(_mm256_add_ps(Load(gi + n + j, mask), Load(gh + n + j, mask)));
    const __m256 gh_n = Load(gh + 2 * n + j, mask), gi_n = Load(gi + 2 * n + j, mask);
    __m256 m;
    if constexpr (kReset) {
      const __m256 r = Sigmoid(_mm256_add_ps(Load(gi + j, mask), Load(gh + j, mask)));
      m = Tanh(_mm256_fmadd_ps(r, gh_n, gi_n));
    } else {
      m = Tanh(_mm256_add_ps(gi_n, gh_n));
    }
    // (1 - z) m + z h = m + z (h - m)
    return _mm256_fmadd_ps(z, _mm256_sub_ps(vh, m), m);
  });
}

void f32_gru_gates__avx2(int64_t n, const float* gi, const float* gh, const float* h,
                         float* h_out) {
  GruGates<true>(n, gi, gh, h, h_out);
}

void f32_gru_prereset_gates__avx2(int64_t n, const float* gi, const float* gh, const float* h,
                                  float* h_out) {
  GruGates<false>(n, gi, gh, h, h_out);
}

void f32_gru_reset__avx2(int64_t n, const float* gi, const float* gh, const float* h,
                         float* rh_out) {
  Map(n, h, rh_out, [&](int64_t j, __m256 vh, const __m256i* mask) {
    return _mm256_mul_ps(Sigmoid(_mm256_add_ps(Load(gi + j, mask), Load(gh + j, mask))), vh);
  });
}

constexpr NnUkernels kAvx2 = {
    .rsumsqdiff = f32_rsumsqdiff__avx2,
    .raddexpminusmax = f32_raddexpminusmax__avx2,
    .raddstoreexpminusmax = f32_raddstoreexpminusmax__avx2,
    .vmulc = f32_vmulc__avx2,
    .vaddc = f32_vaddc__avx2,
    .vadd = f32_vadd__avx2,
    .vmuladdc = f32_vmuladdc__avx2,
    .vmuladd = f32_vmuladd__avx2,
    .vmaxacc = f32_vmaxacc__avx2,
    .vaddacc = f32_vaddacc__avx2,
    .vmulcacc = f32_vmulcacc__avx2,
    .vnormalize = f32_vnormalize__avx2,
    .lstm_gates = f32_lstm_gates__avx2,
    .gru_gates = f32_gru_gates__avx2,
    .lstm_peephole_gates = f32_lstm_peephole_gates__avx2,
    .gru_reset = f32_gru_reset__avx2,
    .gru_prereset_gates = f32_gru_prereset_gates__avx2,
};

}  // namespace

const NnUkernels& NnUkernelsAvx2() { return kAvx2; }

}  // namespace dynvm::kernels::nn
