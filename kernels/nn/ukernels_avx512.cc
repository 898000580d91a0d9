// The AVX-512 microkernels of kernels/nn/ukernels.h, 16 floats per register. This file
// is compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl (and -mavx2 -mfma,
// kernels/CMakeLists.txt): nothing here may run before kernels/microkernels.cc has
// checked the CPU.
//
// The zmm counterpart of ukernels_avx2.cc, kernel for kernel: twice the lanes, and tails
// shorter than a register through mask registers (masked loads that read nothing past
// the row, masked stores, masked adds into the accumulators) rather than lane-mask
// vectors, so that every element still sees the same arithmetic (softmax rows sum to 1
// the same way whatever their length). Reductions keep as many accumulators as the AVX2
// ones, each twice as wide, to hide the latency of the adds.
//
// exp, sigmoid and tanh are kernels/internal/vmath_avx512.h's; softmax uses its
// ExpNonPositive, as its arguments are x - max(x) <= 0.
#include <immintrin.h>

#include <cstdint>

#include "kernels/internal/vmath_avx512.h"
#include "kernels/nn/ukernels.h"

namespace dynvm::kernels::nn {
namespace {

constexpr int64_t kLanes = 16;

using vmath512::ExpNonPositive;
using vmath512::HorizontalSum;
using vmath512::Sigmoid;
using vmath512::TailMask;
using vmath512::Tanh;

// sum(f(x[i])) over `n` elements for an elementwise f given on registers.
template <typename F>
float ReduceSum(int64_t n, const float* x, F f) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    a0 = _mm512_add_ps(a0, f(_mm512_loadu_ps(x + i)));
    a1 = _mm512_add_ps(a1, f(_mm512_loadu_ps(x + i + 16)));
    a2 = _mm512_add_ps(a2, f(_mm512_loadu_ps(x + i + 32)));
    a3 = _mm512_add_ps(a3, f(_mm512_loadu_ps(x + i + 48)));
  }
  for (; i + kLanes <= n; i += kLanes) a0 = _mm512_add_ps(a0, f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    // f of the zeros past the row is not added.
    const __mmask16 mask = TailMask(n - i);
    a1 = _mm512_mask_add_ps(a1, mask, a1, f(_mm512_maskz_loadu_ps(mask, x + i)));
  }
  return HorizontalSum(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

float f32_rsumsqdiff__avx512f(int64_t n, const float* x, float c) {
  const __m512 vc = _mm512_set1_ps(c);
  return ReduceSum(n, x, [vc](__m512 v) {
    const __m512 d = _mm512_sub_ps(v, vc);
    return _mm512_mul_ps(d, d);
  });
}

float f32_raddexpminusmax__avx512f(int64_t n, const float* x, float max) {
  const __m512 vmax = _mm512_set1_ps(max);
  return ReduceSum(n, x, [vmax](__m512 v) { return ExpNonPositive(_mm512_sub_ps(v, vmax)); });
}

// y[i] = f(i, x-part) over `n` elements: `f` maps the element offset, a register of `x`
// and the tail's mask (null for a full register) to a register of results; the tail is
// masked on load and store.
template <typename F>
void Map(int64_t n, const float* x, float* y, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    _mm512_storeu_ps(y + i, f(i, _mm512_loadu_ps(x + i), nullptr));
  if (i < n) {
    const __mmask16 mask = TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, mask, f(i, _mm512_maskz_loadu_ps(mask, x + i), &mask));
  }
}

// Loads 16 floats at `p`, or the lanes of `mask` (the others 0) when it is not null.
inline __m512 Load(const float* p, const __mmask16* mask) {
  return mask == nullptr ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(*mask, p);
}

float f32_raddstoreexpminusmax__avx512f(int64_t n, const float* x, float max, float* y) {
  const __m512 vmax = _mm512_set1_ps(max);
  __m512 a0 = _mm512_setzero_ps(), a1 = a0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const __m512 e0 = ExpNonPositive(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmax));
    const __m512 e1 = ExpNonPositive(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vmax));
    _mm512_storeu_ps(y + i, e0);
    _mm512_storeu_ps(y + i + 16, e1);
    a0 = _mm512_add_ps(a0, e0);
    a1 = _mm512_add_ps(a1, e1);
  }
  Map(n - i, x + i, y + i, [&](int64_t, __m512 v, const __mmask16* mask) {
    const __m512 e = ExpNonPositive(_mm512_sub_ps(v, vmax));
    a0 = mask == nullptr ? _mm512_add_ps(a0, e) : _mm512_mask_add_ps(a0, *mask, a0, e);
    return e;
  });
  return HorizontalSum(_mm512_add_ps(a0, a1));
}

void f32_vmulc__avx512f(int64_t n, const float* x, float c, float* y) {
  const __m512 vc = _mm512_set1_ps(c);
  Map(n, x, y, [vc](int64_t, __m512 v, const __mmask16*) { return _mm512_mul_ps(v, vc); });
}

void f32_vaddc__avx512f(int64_t n, const float* x, float c, float* y) {
  const __m512 vc = _mm512_set1_ps(c);
  Map(n, x, y, [vc](int64_t, __m512 v, const __mmask16*) { return _mm512_add_ps(v, vc); });
}

void f32_vadd__avx512f(int64_t n, const float* a, const float* b, float* y) {
  Map(n, a, y, [b](int64_t i, __m512 v, const __mmask16* mask) {
    return _mm512_add_ps(v, Load(b + i, mask));
  });
}

void f32_vmuladdc__avx512f(int64_t n, const float* x, float a, float b, float* y) {
  const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
  Map(n, x, y,
      [va, vb](int64_t, __m512 v, const __mmask16*) { return _mm512_fmadd_ps(v, va, vb); });
}

void f32_vmuladd__avx512f(int64_t n, const float* x, const float* a, const float* b, float* y) {
  Map(n, x, y, [a, b](int64_t i, __m512 v, const __mmask16* mask) {
    return _mm512_fmadd_ps(v, Load(a + i, mask), Load(b + i, mask));
  });
}

void f32_vmaxacc__avx512f(int64_t n, const float* x, float* y) {
  Map(n, y, y, [x](int64_t i, __m512 v, const __mmask16* mask) {
    return _mm512_max_ps(Load(x + i, mask), v);
  });
}

void f32_vaddacc__avx512f(int64_t n, const float* x, float* y) {
  Map(n, y, y, [x](int64_t i, __m512 v, const __mmask16* mask) {
    return _mm512_add_ps(v, Load(x + i, mask));
  });
}

void f32_vmulcacc__avx512f(int64_t n, const float* x, float c, float* y) {
  const __m512 vc = _mm512_set1_ps(c);
  Map(n, y, y, [x, vc](int64_t i, __m512 v, const __mmask16* mask) {
    return _mm512_fmadd_ps(Load(x + i, mask), vc, v);
  });
}

template <bool kGamma, bool kBeta>
void Normalize(int64_t n, const float* x, float mean, float rstd, const float* gamma,
               const float* beta, float* y) {
  const __m512 vmean = _mm512_set1_ps(mean), vrstd = _mm512_set1_ps(rstd);
  Map(n, x, y, [&](int64_t i, __m512 v, const __mmask16* mask) {
    __m512 r = _mm512_mul_ps(_mm512_sub_ps(v, vmean), vrstd);
    if constexpr (kGamma) r = _mm512_mul_ps(r, Load(gamma + i, mask));
    if constexpr (kBeta) r = _mm512_add_ps(r, Load(beta + i, mask));
    return r;
  });
}

void f32_vnormalize__avx512f(int64_t n, const float* x, float mean, float rstd,
                             const float* gamma, const float* beta, float* y) {
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
  Map(n, c, c_out, [&](int64_t j, __m512 vc, const __mmask16* mask) {
    __m512 gi = Load(gates + j, mask), gf = Load(gates + n + j, mask);
    __m512 go = Load(gates + 3 * n + j, mask);
    if constexpr (kPeephole) {
      gi = _mm512_fmadd_ps(Load(p + j, mask), vc, gi);
      gf = _mm512_fmadd_ps(Load(p + 2 * n + j, mask), vc, gf);
    }
    const __m512 i = Sigmoid(gi);
    const __m512 f = Sigmoid(gf);
    const __m512 g = Tanh(Load(gates + 2 * n + j, mask));
    const __m512 cell = _mm512_fmadd_ps(f, vc, _mm512_mul_ps(i, g));
    if constexpr (kPeephole) go = _mm512_fmadd_ps(Load(p + n + j, mask), cell, go);
    const __m512 h = _mm512_mul_ps(Sigmoid(go), Tanh(cell));
    if (mask == nullptr) {
      _mm512_storeu_ps(h_out + j, h);
    } else {
      _mm512_mask_storeu_ps(h_out + j, *mask, h);
    }
    return cell;
  });
}

void f32_lstm_gates__avx512f(int64_t n, const float* gates, const float* c, float* h_out,
                             float* c_out) {
  LstmGates<false>(n, gates, c, nullptr, h_out, c_out);
}

void f32_lstm_peephole_gates__avx512f(int64_t n, const float* gates, const float* c,
                                      const float* p, float* h_out, float* c_out) {
  LstmGates<true>(n, gates, c, p, h_out, c_out);
}

// One GRU row; kReset: r multiplies gh's n block here (linear_before_reset = 1), else
// that block already holds the product of the reset state.
template <bool kReset>
void GruGates(int64_t n, const float* gi, const float* gh, const float* h, float* h_out) {
  Map(n, h, h_out, [&](int64_t j, __m512 vh, const __mmask16* mask) {
    const __m512 z = Sigmoid(_mm512_add_ps(Load(gi + n + j, mask), Load(gh + n + j, mask)));
    const __m512 gh_n = Load(gh + 2 * n + j, mask), gi_n = Load(gi + 2 * n + j, mask);
    __m512 m;
    if constexpr (kReset) {
      const __m512 r = Sigmoid(_mm512_add_ps(Load(gi + j, mask), Load(gh + j, mask)));
      m = Tanh(_mm512_fmadd_ps(r, gh_n, gi_n));
    } else {
      m = Tanh(_mm512_add_ps(gi_n, gh_n));
    }
    // (1 - z) m + z h = m + z (h - m)
    return _mm512_fmadd_ps(z, _mm512_sub_ps(vh, m), m);
  });
}

void f32_gru_gates__avx512f(int64_t n, const float* gi, const float* gh, const float* h,
                            float* h_out) {
  GruGates<true>(n, gi, gh, h, h_out);
}

void f32_gru_prereset_gates__avx512f(int64_t n, const float* gi, const float* gh, const float* h,
                                     float* h_out) {
  GruGates<false>(n, gi, gh, h, h_out);
}

void f32_gru_reset__avx512f(int64_t n, const float* gi, const float* gh, const float* h,
                            float* rh_out) {
  Map(n, h, rh_out, [&](int64_t j, __m512 vh, const __mmask16* mask) {
    return _mm512_mul_ps(Sigmoid(_mm512_add_ps(Load(gi + j, mask), Load(gh + j, mask))), vh);
  });
}

constexpr NnUkernels kAvx512 = {
    .rsumsqdiff = f32_rsumsqdiff__avx512f,
    .raddexpminusmax = f32_raddexpminusmax__avx512f,
    .raddstoreexpminusmax = f32_raddstoreexpminusmax__avx512f,
    .vmulc = f32_vmulc__avx512f,
    .vaddc = f32_vaddc__avx512f,
    .vadd = f32_vadd__avx512f,
    .vmuladdc = f32_vmuladdc__avx512f,
    .vmuladd = f32_vmuladd__avx512f,
    .vmaxacc = f32_vmaxacc__avx512f,
    .vaddacc = f32_vaddacc__avx512f,
    .vmulcacc = f32_vmulcacc__avx512f,
    .vnormalize = f32_vnormalize__avx512f,
    .lstm_gates = f32_lstm_gates__avx512f,
    .gru_gates = f32_gru_gates__avx512f,
    .lstm_peephole_gates = f32_lstm_peephole_gates__avx512f,
    .gru_reset = f32_gru_reset__avx512f,
    .gru_prereset_gates = f32_gru_prereset_gates__avx512f,
};

}  // namespace

const NnUkernels& NnUkernelsAvx512() { return kAvx512; }

}  // namespace dynvm::kernels::nn
