// The AVX-512 microkernels of kernels/elementwise/ukernels.h. This translation unit alone
// is compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl (and -mavx2 -mfma);
// nothing here runs unless the CPU has them all.
//
// The zmm counterpart of ukernels_avx2.cc, operation for operation: sixteen lanes per
// step instead of eight, and tails through mask registers (masked loads that read
// nothing past the row, masked stores), so a tail computes exactly what a full vector
// would. The math functions are kernels/internal/vmath_avx512.h's, which compute per
// lane what vmath_avx2.h's do. The double sums widen eight floats to a zmm of doubles
// and take their tails masked too, where the AVX2 ones finish with a scalar loop: each
// element adds the same exact term in double, only the order of the additions differs.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/elementwise/ukernels.h"
#include "kernels/internal/vmath_avx512.h"

namespace dynvm::kernels::elementwise {
namespace {

using vmath512::Abs;
using vmath512::Erf;
using vmath512::Exp;
using vmath512::GeluErf;
using vmath512::GeluTanh;
using vmath512::IsNan;
using vmath512::Log;
using vmath512::Select;
using vmath512::Set;
using vmath512::Sigmoid;
using vmath512::SignBit;
using vmath512::SinCos;
using vmath512::TailMask;
using vmath512::Tanh;

// One loop per operation; `Op(v, params)` maps a vector.
template <auto Op>
void Map(int64_t n, const float* x, float* y, const VUnaryParams* params) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, Op(_mm512_loadu_ps(x + i), params));
  if (i < n) {
    const __mmask16 mask = TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, mask, Op(_mm512_maskz_loadu_ps(mask, x + i), params));
  }
}

__m512 Sign(__m512 x) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 s = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, zero, _CMP_GT_OQ), Set(1.0f));
  s = _mm512_mask_mov_ps(s, _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), Set(-1.0f));
  return Select(IsNan(x), x, s);
}

// ---------------------------------------------------------------------------------------
// Reductions.

// Lanes [0, n) of eight doubles (0 < n < 8).
__mmask8 TailMask8(int64_t n) { return static_cast<__mmask8>((1u << n) - 1); }

// Eight doubles from eight floats at `x`, or from the lanes of `mask` (the others 0).
__m512d Widen8(const float* x) { return _mm512_cvtps_pd(_mm256_loadu_ps(x)); }
__m512d Widen8(const float* x, __mmask8 mask) {
  return _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, x));
}

// acc + v, or acc + v^2 (exact: the square of a float fits in a double).
template <bool kSquare>
__m512d AddTerm(__m512d acc, __m512d v) {
  return kSquare ? _mm512_fmadd_pd(v, v, acc) : _mm512_add_pd(acc, v);
}

// The sum (of squares) of x[0, n) in double: four independent accumulators of eight
// lanes hide the add latency; the tail adds zeros in its masked-off lanes.
template <bool kSquare>
double RowSum(int64_t n, const float* x) {
  __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = AddTerm<kSquare>(a0, Widen8(x + i));
    a1 = AddTerm<kSquare>(a1, Widen8(x + i + 8));
    a2 = AddTerm<kSquare>(a2, Widen8(x + i + 16));
    a3 = AddTerm<kSquare>(a3, Widen8(x + i + 24));
  }
  for (; i + 8 <= n; i += 8) a0 = AddTerm<kSquare>(a0, Widen8(x + i));
  if (i < n) a1 = AddTerm<kSquare>(a1, Widen8(x + i, TailMask8(n - i)));
  const __m512d a = _mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3));
  alignas(64) double l[8];
  _mm512_store_pd(l, a);
  return ((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7]));
}

template <bool kMax>
__m512 Extreme(__m512 a, __m512 b) {
  return kMax ? _mm512_max_ps(a, b) : _mm512_min_ps(a, b);
}
template <bool kMax>
__m256 Extreme(__m256 a, __m256 b) {
  return kMax ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b);
}
template <bool kMax>
__m128 Extreme(__m128 a, __m128 b) {
  return kMax ? _mm_max_ps(a, b) : _mm_min_ps(a, b);
}

// max or min of x[0, n). max_ps/min_ps drop a NaN in their first operand, so NaN is
// tracked on the side in a mask register: Extreme(acc, v) returns v when either is NaN,
// so a NaN of x sits in its accumulator at least until the next step, and one unordered
// compare per pair of accumulators after every step sees it. (ukernels_avx2.cc compares
// the loaded vectors instead; GCC then loads each of them twice, as a memory operand of
// the max and of the compare, and the row max ran 1.7 times slower at n = 4096.) Four
// accumulators of 64 elements a step keep softmax's row max (this kernel's hottest
// caller) at the load rate.
template <bool kMax>
float RowExtreme(int64_t n, const float* x) {
  const __m512 init = Set(kMax ? -INFINITY : INFINITY);
  __m512 a0 = init, a1 = init, a2 = init, a3 = init;
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = Extreme<kMax>(a0, _mm512_loadu_ps(x + i));
    a1 = Extreme<kMax>(a1, _mm512_loadu_ps(x + i + 16));
    a2 = Extreme<kMax>(a2, _mm512_loadu_ps(x + i + 32));
    a3 = Extreme<kMax>(a3, _mm512_loadu_ps(x + i + 48));
    nan |= _mm512_cmp_ps_mask(a0, a1, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(a2, a3, _CMP_UNORD_Q);
  }
  for (; i + 16 <= n; i += 16) {
    a0 = Extreme<kMax>(a0, _mm512_loadu_ps(x + i));
    nan |= IsNan(a0);
  }
  if (i < n) {
    // The lanes past the row hold `init`, which changes no extreme.
    a1 = Extreme<kMax>(a1, _mm512_mask_loadu_ps(init, TailMask(n - i), x + i));
    nan |= IsNan(a1);
  }
  if (nan != 0) return NAN;
  // Neither operand is NaN from here on: the order of the folds does not matter.
  const __m512 a = Extreme<kMax>(Extreme<kMax>(a0, a1), Extreme<kMax>(a2, a3));
  const __m256 a8 = Extreme<kMax>(_mm512_extractf32x8_ps(a, 0), _mm512_extractf32x8_ps(a, 1));
  __m128 h = Extreme<kMax>(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
  h = Extreme<kMax>(h, _mm_movehl_ps(h, h));
  h = Extreme<kMax>(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

template <bool kSquare>
void AccumulateSum(int64_t n, const float* x, double* acc) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    _mm512_storeu_pd(acc + j, AddTerm<kSquare>(_mm512_loadu_pd(acc + j), Widen8(x + j)));
  }
  if (j < n) {
    const __mmask8 mask = TailMask8(n - j);
    _mm512_mask_storeu_pd(
        acc + j, mask,
        AddTerm<kSquare>(_mm512_maskz_loadu_pd(mask, acc + j), Widen8(x + j, mask)));
  }
}

// acc = extreme(acc, x) keeping NaN from either side: Extreme(x, acc) returns acc when
// either is NaN, so a NaN in x is selected explicitly.
template <bool kMax>
__m512 AccumulateExtremeStep(__m512 acc, __m512 x) {
  return Select(IsNan(x), x, Extreme<kMax>(x, acc));
}

template <bool kMax>
void AccumulateExtreme(int64_t n, const float* x, float* acc) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    _mm512_storeu_ps(acc + j,
                     AccumulateExtremeStep<kMax>(_mm512_loadu_ps(acc + j), _mm512_loadu_ps(x + j)));
  }
  if (j < n) {
    const __mmask16 mask = TailMask(n - j);
    _mm512_mask_storeu_ps(acc + j, mask,
                          AccumulateExtremeStep<kMax>(_mm512_maskz_loadu_ps(mask, acc + j),
                                                      _mm512_maskz_loadu_ps(mask, x + j)));
  }
}

// _mm512_roundscale_ps's immediate: scale 2^0, the rounding mode, no precision exception.
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
constexpr int kUp = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;

using P = const VUnaryParams*;

constexpr ElementwiseUkernels kAvx512 = {
    .vunary =
        {
            Map<([](__m512 x, P) { return _mm512_xor_ps(x, SignBit()); })>,
            Map<([](__m512 x, P) { return Abs(x); })>,
            Map<([](__m512 x, P) { return Exp(x); })>,
            Map<([](__m512 x, P) { return Log(x); })>,
            Map<([](__m512 x, P) { return _mm512_sqrt_ps(x); })>,
            Map<([](__m512 x, P) { return _mm512_div_ps(Set(1.0f), _mm512_sqrt_ps(x)); })>,
            Map<([](__m512 x, P) { return _mm512_div_ps(Set(1.0f), x); })>,
            Map<([](__m512 x, P) { return Tanh(x); })>,
            Map<([](__m512 x, P) { return Sigmoid(x); })>,
            Map<([](__m512 x, P) {
              return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ),
                                         x);
            })>,
            Map<([](__m512 x, P p) {
              return Select(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), x,
                            _mm512_mul_ps(x, Set(p->alpha)));
            })>,
            Map<([](__m512 x, P) { return GeluErf(x); })>,
            Map<([](__m512 x, P) { return GeluTanh(x); })>,
            Map<([](__m512 x, P) { return Erf(x); })>,
            Map<([](__m512 x, P) { return SinCos<false>(x); })>,
            Map<([](__m512 x, P) { return SinCos<true>(x); })>,
            Map<([](__m512 x, P) { return _mm512_roundscale_ps(x, kDown); })>,
            Map<([](__m512 x, P) { return _mm512_roundscale_ps(x, kUp); })>,
            Map<([](__m512 x, P) { return _mm512_roundscale_ps(x, kNearest); })>,
            Map<([](__m512 x, P) { return Sign(x); })>,
            // max/min return their second operand when either is NaN: NaN stays NaN.
            Map<([](__m512 x, P p) {
              return _mm512_min_ps(Set(p->max), _mm512_max_ps(Set(p->min), x));
            })>,
        },
    .rsum = RowSum<false>,
    .rsumsq = RowSum<true>,
    .rmax = RowExtreme<true>,
    .rmin = RowExtreme<false>,
    .vaccsum = AccumulateSum<false>,
    .vaccsumsq = AccumulateSum<true>,
    .vaccmax = AccumulateExtreme<true>,
    .vaccmin = AccumulateExtreme<false>,
};

}  // namespace

const ElementwiseUkernels& ElementwiseUkernelsAvx512() { return kAvx512; }

}  // namespace dynvm::kernels::elementwise
