// AVX2+FMA vector math on eight f32 lanes, shared by every family's AVX2 microkernels
// (elementwise, nn, gemm): exp, log, sigmoid, tanh, erf, gelu, sin and cos, branch-free
// after range reduction, and the lane masks and horizontal reductions of tails. Include
// it only from translation units compiled with -mavx2 -mfma, and run those only on CPUs
// that have both: every function here is inline, and the linker keeps one copy of an
// inline function, so a translation unit without AVX2 must never include this header.
//
//   const __m256 y = vmath::GeluErf(_mm256_loadu_ps(x));
//
// Accuracy (tests/kernels/unary_test.cc, ulp of the exact result): exp 1, log 1, tanh
// 1.5, sigmoid 2.5, erf 5, sin and cos 1.5 for |x| <= 8192; gelu as its formula
// 0.5 x (1 + erf(x / sqrt 2)) allows (the 1 + erf cancels for x << 0, as it does in
// kernels::ApplyActivation). NaN propagates through all of them.
//
// The methods:
//   exp(x)   = 2^n p(r), x = n ln2 + r, |r| <= ln2 / 2 (Cephes' polynomial); 2^n applied
//              in two halves so that results in the subnormal range are rounded once
//   log(x)   = Cephes' logf: x = m 2^e with m in [sqrt(1/2), sqrt 2), polynomial in m - 1
//   erf(x)   = x P(x^2) / Q(x^2) for |x| <= 3.92 (beyond, erf rounds to +-1): a rational
//              function of degrees 6 and 4 in x^2, our fit (iterated weighted least
//              squares of the relative error on Chebyshev nodes); no exponential, so gelu
//              costs about 27 flops per element
//   tanh(x)  = odd polynomial for |x| < 0.625, else 1 - 2 / (e^2|x| + 1) (Cephes)
//   gelu     = 0.5 x + 0.5 x erf(x / sqrt 2); the tanh form as x sigmoid(2u), which is
//              0.5 x (1 + tanh u) without its cancellation
//   sin, cos = Cody-Waite reduction by pi/4 in three f32 pieces for |x| <= 8192 (Cephes);
//              a vector holding a larger or non-finite lane goes to the standard library
#ifndef DYNVM_KERNELS_INTERNAL_VMATH_AVX2_H_
#define DYNVM_KERNELS_INTERNAL_VMATH_AVX2_H_

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace dynvm::kernels::vmath {

inline __m256 Set(float v) { return _mm256_set1_ps(v); }

// Lanes where `mask` is set take `a`, the others `b`.
inline __m256 Select(__m256 mask, __m256 a, __m256 b) { return _mm256_blendv_ps(b, a, mask); }

inline __m256 SignBit() { return Set(-0.0f); }
inline __m256 Abs(__m256 x) { return _mm256_andnot_ps(SignBit(), x); }
inline __m256 IsNan(__m256 x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }

// Lanes [0, n) set, for the tail of a row (0 < n < 8).
inline __m256i TailMask(int64_t n) {
  static constexpr int32_t kMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask + 8 - n));
}

// Lanes [0, count) set: none for count <= 0, all for count >= 8.
inline __m256i LaneMask(int64_t count) {
  const int32_t c = static_cast<int32_t>(count < 0 ? 0 : count > 8 ? 8 : count);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

inline float HorizontalSum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// c[0] x^(k-1) + ... + c[k-1], by Horner's rule.
template <int kCount>
inline __m256 Poly(__m256 x, const float (&c)[kCount]) {
  __m256 p = Set(c[0]);
  for (int i = 1; i < kCount; ++i) p = _mm256_fmadd_ps(p, x, Set(c[i]));
  return p;
}

inline __m256 Exp(__m256 x) {
  // Beyond these e^x is inf or rounds to 0. max/min return their second operand when
  // either is NaN, so NaN passes through.
  x = _mm256_min_ps(Set(88.8f), _mm256_max_ps(Set(-104.0f), x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, Set(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, Set(0.693359375f), x);  // ln2 in two parts (Cody-Waite)
  r = _mm256_fnmadd_ps(n, Set(-2.12194440e-4f), r);
  static constexpr float kP[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  const __m256 p = _mm256_add_ps(_mm256_fmadd_ps(Poly(r, kP), _mm256_mul_ps(r, r), r), Set(1.0f));
  // n is in [-150, 128]: two factors 2^(n/2) keep both exponents normal.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// exp(x) for x <= 0 (NaN stays NaN), for softmax: XNNPACK's "rr2_p5" scheme, exp(x) =
// 2^n p(t) with n = round(x / ln2), t = x - n ln2 (ln2 in two parts) and p a degree-5
// minimax polynomial, below 2 ulp on [-87.3, 0]; results below FLT_MIN are flushed to 0.
// About half the cost of Exp, which must also cover x > 0 and subnormal results.
inline __m256 ExpNonPositive(__m256 x) {
  // Adding the magic bias 1.5 * 2^23 rounds x / ln2 to an integer n in the low mantissa
  // bits; the bias also carries 127, the exponent's bias, so shifting those bits by 23
  // yields the float 2^n directly.
  const __m256 magic_bias = _mm256_set1_ps(0x1.8000FEp23f);
  __m256 n = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), magic_bias);
  const __m256 s = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(n), 23));
  n = _mm256_sub_ps(n, magic_bias);
  // t = x - n ln2 with ln2 in two parts (Cody-Waite): n * ln2_hi is exact, as ln2_hi has
  // only 15 significant bits.
  __m256 t = _mm256_fmadd_ps(n, _mm256_set1_ps(-0x1.62E400p-1f), x);
  t = _mm256_fmadd_ps(n, _mm256_set1_ps(-0x1.7F7D1Cp-20f), t);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(0x1.0F9F9Cp-7f), t, _mm256_set1_ps(0x1.573A1Ap-5f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0x1.555A80p-3f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0x1.FFFDC6p-2f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0x1.FFFFF6p-1f));
  t = _mm256_mul_ps(t, s);
  const __m256 f = _mm256_fmadd_ps(t, p, s);
  // Below the cutoff 2^n would be denormal and the shift garbage: the answer is 0.
  const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-0x1.5D589Ep6f), _CMP_LT_OS);
  return _mm256_andnot_ps(underflow, f);
}

inline __m256 Log(__m256 x) {
  // Subnormals are scaled into the normal range first.
  const __m256 sub = _mm256_cmp_ps(x, Set(1.17549435e-38f), _CMP_LT_OQ);
  const __m256 xs = Select(sub, _mm256_mul_ps(x, Set(8388608.0f)), x);
  const __m256i bits = _mm256_castps_si256(xs);
  __m256 e =
      _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126)));
  e = _mm256_add_ps(e, _mm256_and_ps(sub, Set(-23.0f)));
  // xs = m 2^e with m in [0.5, 1); below sqrt(1/2) use 2m and e - 1 instead.
  __m256 m = _mm256_or_ps(_mm256_and_ps(xs, _mm256_castsi256_ps(_mm256_set1_epi32(0x007fffff))),
                          Set(0.5f));
  const __m256 small = _mm256_cmp_ps(m, Set(0.707106781186547524f), _CMP_LT_OQ);
  e = _mm256_sub_ps(e, _mm256_and_ps(small, Set(1.0f)));
  m = _mm256_add_ps(_mm256_sub_ps(m, Set(1.0f)), _mm256_and_ps(small, m));
  const __m256 z = _mm256_mul_ps(m, m);
  static constexpr float kP[] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                                 -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                                 2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(Poly(m, kP), m), z);
  y = _mm256_fmadd_ps(e, Set(-2.12194440e-4f), y);
  y = _mm256_fnmadd_ps(Set(0.5f), z, y);
  __m256 r = _mm256_fmadd_ps(e, Set(0.693359375f), _mm256_add_ps(m, y));
  const __m256 inf = Set(INFINITY);
  r = Select(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ), Set(-INFINITY), r);
  r = Select(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ), Set(NAN), r);
  r = Select(_mm256_cmp_ps(x, inf, _CMP_EQ_OQ), inf, r);
  return Select(IsNan(x), x, r);
}

// 1 / (1 + e^-x), through e^-|x| so that nothing overflows and x << 0 keeps its
// relative accuracy.
inline __m256 Sigmoid(__m256 x) {
  const __m256 e = Exp(_mm256_or_ps(Abs(x), SignBit()));
  const __m256 s = _mm256_div_ps(Set(1.0f), _mm256_add_ps(Set(1.0f), e));
  return Select(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ), s, _mm256_mul_ps(e, s));
}

inline __m256 Tanh(__m256 x) {
  const __m256 a = Abs(x);
  const __m256 z = _mm256_mul_ps(x, x);
  static constexpr float kP[] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                 1.33314422036e-1f, -3.33332819422e-1f};
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(Poly(z, kP), z), x, x);
  const __m256 e = Exp(_mm256_add_ps(a, a));
  __m256 large = _mm256_sub_ps(Set(1.0f), _mm256_div_ps(Set(2.0f), _mm256_add_ps(e, Set(1.0f))));
  large = _mm256_or_ps(large, _mm256_and_ps(x, SignBit()));
  return Select(_mm256_cmp_ps(a, Set(0.625f), _CMP_LT_OQ), small, large);
}

inline __m256 Erf(__m256 x) {
  // Clamped where erf rounds to +-1 (NaN passes through: max/min return their second
  // operand when either is NaN).
  const __m256 xc = _mm256_min_ps(Set(3.92f), _mm256_max_ps(Set(-3.92f), x));
  const __m256 x2 = _mm256_mul_ps(xc, xc);
  static constexpr float kP[] = {1.996311119e-08f, -1.943511162e-06f, 1.385973542e-04f,
                                 3.571814021e-03f, 5.016705846e-02f,  1.969316670e-01f,
                                 1.128379148e+00f};
  static constexpr float kQ[] = {9.241199074e-04f, 1.409175896e-02f, 1.137520429e-01f,
                                 5.078584346e-01f, 1.0f};
  const __m256 r = _mm256_div_ps(_mm256_mul_ps(xc, Poly(x2, kP)), Poly(x2, kQ));
  // The fit may round just past 1 near the clamp; gelu(x) must stay within |x|.
  return _mm256_min_ps(Set(1.0f), _mm256_max_ps(Set(-1.0f), r));
}

// 0.5 x (1 + erf(x / sqrt 2)), as kernels::ApplyActivation computes it.
inline __m256 GeluErf(__m256 x) {
  const __m256 half_x = _mm256_mul_ps(x, Set(0.5f));
  return _mm256_fmadd_ps(half_x, Erf(_mm256_mul_ps(x, Set(0.70710678118654752f))), half_x);
}

// (1 + tanh u) / 2 == sigmoid(2u): no cancellation for x << 0.
inline __m256 GeluTanh(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 u = _mm256_fmadd_ps(x3, Set(0.044715f), x);
  return _mm256_mul_ps(x, Sigmoid(_mm256_mul_ps(u, Set(2.0f * 0.79788456080286536f))));
}

// sin(x) (kCos false) or cos(x) for |x| <= 8192; other lanes are garbage.
template <bool kCos>
inline __m256 SinCosReduced(__m256 x) {
  const __m256 ax = Abs(x);
  // j = the octant rounded up to even, so that r = |x| - j pi/4 is in [-pi/4, pi/4].
  __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(ax, Set(1.27323954473516f)));
  j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
  const __m256 y = _mm256_cvtepi32_ps(j);
  __m256 r = _mm256_fnmadd_ps(y, Set(0.78515625f), ax);
  r = _mm256_fnmadd_ps(y, Set(2.4187564849853515625e-4f), r);
  r = _mm256_fnmadd_ps(y, Set(3.77489497744594108e-8f), r);
  const __m256 z = _mm256_mul_ps(r, r);
  static constexpr float kCosP[] = {2.443315711809948e-5f, -1.388731625493765e-3f,
                                    4.166664568298827e-2f};
  static constexpr float kSinP[] = {-1.9515295891e-4f, 8.3321608736e-3f, -1.6666654611e-1f};
  const __m256 c = _mm256_add_ps(
      _mm256_fnmadd_ps(Set(0.5f), z, _mm256_mul_ps(Poly(z, kCosP), _mm256_mul_ps(z, z))),
      Set(1.0f));
  const __m256 s = _mm256_fmadd_ps(_mm256_mul_ps(Poly(z, kSinP), z), r, r);
  __m256i sign;
  if constexpr (kCos) {
    j = _mm256_sub_epi32(j, _mm256_set1_epi32(2));
    sign = _mm256_slli_epi32(_mm256_andnot_si256(j, _mm256_set1_epi32(4)), 29);
  } else {
    sign = _mm256_xor_si256(_mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29),
                            _mm256_castps_si256(_mm256_and_ps(x, SignBit())));
  }
  const __m256 use_sin = _mm256_castsi256_ps(
      _mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
  return _mm256_xor_ps(Select(use_sin, s, c), _mm256_castsi256_ps(sign));
}

// Only the lanes out of range take the standard library's value, so that a lane's
// result never depends on its neighbours (nor on where a chunk or a fused block starts).
template <bool kCos>
inline __m256 SinCos(__m256 x) {
  const __m256 out_of_range = _mm256_cmp_ps(Abs(x), Set(8192.0f), _CMP_NLE_UQ);
  const __m256 reduced = SinCosReduced<kCos>(x);
  if (_mm256_movemask_ps(out_of_range) == 0) return reduced;
  alignas(32) float v[8];
  _mm256_store_ps(v, x);
  for (float& e : v) e = kCos ? std::cos(e) : std::sin(e);
  return Select(out_of_range, _mm256_load_ps(v), reduced);
}

}  // namespace dynvm::kernels::vmath

#endif  // DYNVM_KERNELS_INTERNAL_VMATH_AVX2_H_
