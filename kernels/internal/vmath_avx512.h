// AVX-512 vector math on sixteen f32 lanes, shared by every family's AVX-512 microkernels
// (elementwise, nn, gemm): the zmm counterpart of kernels/internal/vmath_avx2.h, with
// the same functions, methods, polynomial coefficients and order of operations, so that
// each lane computes what an AVX2 lane does and the accuracy bounds stated there hold
// here unchanged. What differs is the width (16 lanes) and the masks: comparisons yield
// __mmask16 mask registers, selects are mask blends, and tails are masked loads and
// stores (_mm512_maskz_loadu_ps, _mm512_mask_storeu_ps) under TailMask.
//
//   const __m512 y = vmath512::GeluErf(_mm512_loadu_ps(x));
//
// Include it only from translation units compiled with -mavx512f -mavx512dq -mavx512bw
// -mavx512vl (and -mavx2 -mfma), and run those only on CPUs that have all of them: every
// function here is inline, and the linker keeps one copy of an inline function, so a
// translation unit without AVX-512 must never include this header. The namespace is not
// vmath_avx2.h's, so the two levels' inline functions never share a mangled name.
#ifndef DYNVM_KERNELS_INTERNAL_VMATH_AVX512_H_
#define DYNVM_KERNELS_INTERNAL_VMATH_AVX512_H_

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace dynvm::kernels::vmath512 {

inline __m512 Set(float v) { return _mm512_set1_ps(v); }

// Lanes where `mask` is set take `a`, the others `b`.
inline __m512 Select(__mmask16 mask, __m512 a, __m512 b) {
  return _mm512_mask_blend_ps(mask, b, a);
}

inline __m512 SignBit() { return Set(-0.0f); }
inline __m512 Abs(__m512 x) { return _mm512_andnot_ps(SignBit(), x); }
inline __mmask16 IsNan(__m512 x) { return _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q); }

// Lanes [0, n) set, for the tail of a row (0 < n < 16).
inline __mmask16 TailMask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }

// Lanes [0, count) set: none for count <= 0, all for count >= 16.
inline __mmask16 LaneMask(int64_t count) {
  return count <= 0 ? 0 : count >= 16 ? 0xffff : TailMask(count);
}

// The sum of the lanes: the two halves added, then vmath_avx2.h's HorizontalSum. The low
// half is extracted rather than cast: GCC 12's _mm512_castps512_ps256 (and
// _mm512_reduce_add_ps) go through _mm256_undefined_pd, which -Wuninitialized flags.
inline float HorizontalSum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_extractf32x8_ps(v, 0), _mm512_extractf32x8_ps(v, 1));
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// c[0] x^(k-1) + ... + c[k-1], by Horner's rule.
template <int kCount>
inline __m512 Poly(__m512 x, const float (&c)[kCount]) {
  __m512 p = Set(c[0]);
  for (int i = 1; i < kCount; ++i) p = _mm512_fmadd_ps(p, x, Set(c[i]));
  return p;
}

// e^x to 1 ulp, subnormal results rounded once (vmath_avx2.h's Exp).
inline __m512 Exp(__m512 x) {
  // Beyond these e^x is inf or rounds to 0. max/min return their second operand when
  // either is NaN, so NaN passes through.
  x = _mm512_min_ps(Set(88.8f), _mm512_max_ps(Set(-104.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, Set(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, Set(0.693359375f), x);  // ln2 in two parts (Cody-Waite)
  r = _mm512_fnmadd_ps(n, Set(-2.12194440e-4f), r);
  static constexpr float kP[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  const __m512 p = _mm512_add_ps(_mm512_fmadd_ps(Poly(r, kP), _mm512_mul_ps(r, r), r), Set(1.0f));
  // n is in [-150, 128]: two factors 2^(n/2) keep both exponents normal.
  const __m512i ni = _mm512_cvtps_epi32(n);
  const __m512i n1 = _mm512_srai_epi32(ni, 1);
  const __m512i n2 = _mm512_sub_epi32(ni, n1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
  const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
  return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
}

// exp(x) for x <= 0 (NaN stays NaN), for softmax: vmath_avx2.h's ExpNonPositive
// (XNNPACK's "rr2_p5" scheme), below 2 ulp on [-87.3, 0]; results below FLT_MIN are
// flushed to 0.
inline __m512 ExpNonPositive(__m512 x) {
  // Adding the magic bias 1.5 * 2^23 rounds x / ln2 to an integer n in the low mantissa
  // bits; the bias also carries 127, the exponent's bias, so shifting those bits by 23
  // yields the float 2^n directly.
  const __m512 magic_bias = Set(0x1.8000FEp23f);
  __m512 n = _mm512_fmadd_ps(x, Set(0x1.715476p+0f), magic_bias);
  const __m512 s = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(n), 23));
  n = _mm512_sub_ps(n, magic_bias);
  // t = x - n ln2 with ln2 in two parts (Cody-Waite): n * ln2_hi is exact, as ln2_hi has
  // only 15 significant bits.
  __m512 t = _mm512_fmadd_ps(n, Set(-0x1.62E400p-1f), x);
  t = _mm512_fmadd_ps(n, Set(-0x1.7F7D1Cp-20f), t);
  __m512 p = _mm512_fmadd_ps(Set(0x1.0F9F9Cp-7f), t, Set(0x1.573A1Ap-5f));
  p = _mm512_fmadd_ps(p, t, Set(0x1.555A80p-3f));
  p = _mm512_fmadd_ps(p, t, Set(0x1.FFFDC6p-2f));
  p = _mm512_fmadd_ps(p, t, Set(0x1.FFFFF6p-1f));
  t = _mm512_mul_ps(t, s);
  const __m512 f = _mm512_fmadd_ps(t, p, s);
  // Below the cutoff 2^n would be denormal and the shift garbage: the answer is 0 (a
  // NaN compares false and stays).
  const __mmask16 underflow = _mm512_cmp_ps_mask(x, Set(-0x1.5D589Ep6f), _CMP_LT_OS);
  return Select(underflow, _mm512_setzero_ps(), f);
}

// ln x to 1 ulp (Cephes' logf): -inf at 0, NaN below, +inf at +inf, NaN stays NaN.
inline __m512 Log(__m512 x) {
  // Subnormals are scaled into the normal range first.
  const __mmask16 sub = _mm512_cmp_ps_mask(x, Set(1.17549435e-38f), _CMP_LT_OQ);
  const __m512 xs = Select(sub, _mm512_mul_ps(x, Set(8388608.0f)), x);
  const __m512i bits = _mm512_castps_si512(xs);
  __m512 e =
      _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(126)));
  e = _mm512_add_ps(e, _mm512_maskz_mov_ps(sub, Set(-23.0f)));
  // xs = m 2^e with m in [0.5, 1); below sqrt(1/2) use 2m and e - 1 instead.
  __m512 m = _mm512_or_ps(_mm512_and_ps(xs, _mm512_castsi512_ps(_mm512_set1_epi32(0x007fffff))),
                          Set(0.5f));
  const __mmask16 small = _mm512_cmp_ps_mask(m, Set(0.707106781186547524f), _CMP_LT_OQ);
  e = _mm512_sub_ps(e, _mm512_maskz_mov_ps(small, Set(1.0f)));
  m = _mm512_add_ps(_mm512_sub_ps(m, Set(1.0f)), _mm512_maskz_mov_ps(small, m));
  const __m512 z = _mm512_mul_ps(m, m);
  static constexpr float kP[] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                                 -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                                 2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
  __m512 y = _mm512_mul_ps(_mm512_mul_ps(Poly(m, kP), m), z);
  y = _mm512_fmadd_ps(e, Set(-2.12194440e-4f), y);
  y = _mm512_fnmadd_ps(Set(0.5f), z, y);
  __m512 r = _mm512_fmadd_ps(e, Set(0.693359375f), _mm512_add_ps(m, y));
  const __m512 inf = Set(INFINITY);
  r = Select(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ), Set(-INFINITY), r);
  r = Select(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), Set(NAN), r);
  r = Select(_mm512_cmp_ps_mask(x, inf, _CMP_EQ_OQ), inf, r);
  return Select(IsNan(x), x, r);
}

// 1 / (1 + e^-x), through e^-|x| so that nothing overflows and x << 0 keeps its
// relative accuracy.
inline __m512 Sigmoid(__m512 x) {
  const __m512 e = Exp(_mm512_or_ps(Abs(x), SignBit()));
  const __m512 s = _mm512_div_ps(Set(1.0f), _mm512_add_ps(Set(1.0f), e));
  return Select(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ), s, _mm512_mul_ps(e, s));
}

// Odd polynomial for |x| < 0.625, else 1 - 2 / (e^2|x| + 1) with x's sign (Cephes).
inline __m512 Tanh(__m512 x) {
  const __m512 a = Abs(x);
  const __m512 z = _mm512_mul_ps(x, x);
  static constexpr float kP[] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                 1.33314422036e-1f, -3.33332819422e-1f};
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(Poly(z, kP), z), x, x);
  const __m512 e = Exp(_mm512_add_ps(a, a));
  __m512 large = _mm512_sub_ps(Set(1.0f), _mm512_div_ps(Set(2.0f), _mm512_add_ps(e, Set(1.0f))));
  large = _mm512_or_ps(large, _mm512_and_ps(x, SignBit()));
  return Select(_mm512_cmp_ps_mask(a, Set(0.625f), _CMP_LT_OQ), small, large);
}

// x P(x^2) / Q(x^2) for |x| <= 3.92, +-1 beyond (vmath_avx2.h's rational fit).
inline __m512 Erf(__m512 x) {
  // Clamped where erf rounds to +-1 (NaN passes through: max/min return their second
  // operand when either is NaN).
  const __m512 xc = _mm512_min_ps(Set(3.92f), _mm512_max_ps(Set(-3.92f), x));
  const __m512 x2 = _mm512_mul_ps(xc, xc);
  static constexpr float kP[] = {1.996311119e-08f, -1.943511162e-06f, 1.385973542e-04f,
                                 3.571814021e-03f, 5.016705846e-02f,  1.969316670e-01f,
                                 1.128379148e+00f};
  static constexpr float kQ[] = {9.241199074e-04f, 1.409175896e-02f, 1.137520429e-01f,
                                 5.078584346e-01f, 1.0f};
  const __m512 r = _mm512_div_ps(_mm512_mul_ps(xc, Poly(x2, kP)), Poly(x2, kQ));
  // The fit may round just past 1 near the clamp; gelu(x) must stay within |x|.
  return _mm512_min_ps(Set(1.0f), _mm512_max_ps(Set(-1.0f), r));
}

// 0.5 x (1 + erf(x / sqrt 2)), as kernels::ApplyActivation computes it.
inline __m512 GeluErf(__m512 x) {
  const __m512 half_x = _mm512_mul_ps(x, Set(0.5f));
  return _mm512_fmadd_ps(half_x, Erf(_mm512_mul_ps(x, Set(0.70710678118654752f))), half_x);
}

// (1 + tanh u) / 2 == sigmoid(2u): no cancellation for x << 0.
inline __m512 GeluTanh(__m512 x) {
  const __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  const __m512 u = _mm512_fmadd_ps(x3, Set(0.044715f), x);
  return _mm512_mul_ps(x, Sigmoid(_mm512_mul_ps(u, Set(2.0f * 0.79788456080286536f))));
}

// sin(x) (kCos false) or cos(x) for |x| <= 8192; other lanes are garbage.
template <bool kCos>
inline __m512 SinCosReduced(__m512 x) {
  const __m512 ax = Abs(x);
  // j = the octant rounded up to even, so that r = |x| - j pi/4 is in [-pi/4, pi/4].
  __m512i j = _mm512_cvttps_epi32(_mm512_mul_ps(ax, Set(1.27323954473516f)));
  j = _mm512_and_si512(_mm512_add_epi32(j, _mm512_set1_epi32(1)), _mm512_set1_epi32(~1));
  const __m512 y = _mm512_cvtepi32_ps(j);
  __m512 r = _mm512_fnmadd_ps(y, Set(0.78515625f), ax);
  r = _mm512_fnmadd_ps(y, Set(2.4187564849853515625e-4f), r);
  r = _mm512_fnmadd_ps(y, Set(3.77489497744594108e-8f), r);
  const __m512 z = _mm512_mul_ps(r, r);
  static constexpr float kCosP[] = {2.443315711809948e-5f, -1.388731625493765e-3f,
                                    4.166664568298827e-2f};
  static constexpr float kSinP[] = {-1.9515295891e-4f, 8.3321608736e-3f, -1.6666654611e-1f};
  const __m512 c = _mm512_add_ps(
      _mm512_fnmadd_ps(Set(0.5f), z, _mm512_mul_ps(Poly(z, kCosP), _mm512_mul_ps(z, z))),
      Set(1.0f));
  const __m512 s = _mm512_fmadd_ps(_mm512_mul_ps(Poly(z, kSinP), z), r, r);
  __m512i sign;
  if constexpr (kCos) {
    j = _mm512_sub_epi32(j, _mm512_set1_epi32(2));
    sign = _mm512_slli_epi32(_mm512_andnot_si512(j, _mm512_set1_epi32(4)), 29);
  } else {
    sign = _mm512_xor_si512(_mm512_slli_epi32(_mm512_and_si512(j, _mm512_set1_epi32(4)), 29),
                            _mm512_castps_si512(_mm512_and_ps(x, SignBit())));
  }
  const __mmask16 use_cos = _mm512_test_epi32_mask(j, _mm512_set1_epi32(2));
  return _mm512_xor_ps(Select(use_cos, c, s), _mm512_castsi512_ps(sign));
}

// Only the lanes out of range take the standard library's value, so that a lane's
// result never depends on its neighbours (nor on where a chunk or a fused block starts).
template <bool kCos>
inline __m512 SinCos(__m512 x) {
  const __mmask16 out_of_range = _mm512_cmp_ps_mask(Abs(x), Set(8192.0f), _CMP_NLE_UQ);
  const __m512 reduced = SinCosReduced<kCos>(x);
  if (out_of_range == 0) return reduced;
  alignas(64) float v[16];
  _mm512_store_ps(v, x);
  for (float& e : v) e = kCos ? std::cos(e) : std::sin(e);
  return Select(out_of_range, _mm512_load_ps(v), reduced);
}

}  // namespace dynvm::kernels::vmath512

#endif  // DYNVM_KERNELS_INTERNAL_VMATH_AVX512_H_
