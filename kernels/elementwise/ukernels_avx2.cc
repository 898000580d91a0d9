// The AVX2+FMA microkernels of kernels/elementwise/ukernels.h. This translation unit
// alone is compiled with -mavx2 -mfma; nothing here runs unless the CPU has both.
//
// Eight lanes per step; the tail goes through masked loads and stores, so it computes
// exactly what a full vector would. The math functions are kernels/elementwise/
// vmath_avx2.h's.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/elementwise/ukernels.h"
#include "kernels/internal/vmath_avx2.h"

namespace dynvm::kernels::elementwise {
namespace {

using vmath::Abs;
using vmath::Erf;
using vmath::Exp;
using vmath::GeluErf;
using vmath::GeluTanh;
using vmath::IsNan;
using vmath::Log;
using vmath::Select;
using vmath::Set;
using vmath::Sigmoid;
using vmath::SignBit;
using vmath::SinCos;
using vmath::TailMask;
using vmath::Tanh;

// One loop per operation; `Op(v, params)` maps a vector.
template <auto Op>
void Map(int64_t n, const float* x, float* y, const VUnaryParams* params) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Op(_mm256_loadu_ps(x + i), params));
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    _mm256_maskstore_ps(y + i, mask, Op(_mm256_maskload_ps(x + i, mask), params));
  }
}

__m256 Sign(__m256 x) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256 s = _mm256_or_ps(_mm256_and_ps(_mm256_cmp_ps(x, zero, _CMP_GT_OQ), Set(1.0f)),
                                _mm256_and_ps(_mm256_cmp_ps(x, zero, _CMP_LT_OQ), Set(-1.0f)));
  return Select(IsNan(x), x, s);
}

// ---------------------------------------------------------------------------------------
// Reductions.

// Four doubles from four floats at `x`.
__m256d Widen4(const float* x) { return _mm256_cvtps_pd(_mm_loadu_ps(x)); }

// acc + v, or acc + v^2.
template <bool kSquare>
__m256d AddTerm(__m256d acc, __m256d v) {
  return kSquare ? _mm256_fmadd_pd(v, v, acc) : _mm256_add_pd(acc, v);
}

// The sum (of squares) of x[0, n) in double: four independent accumulators of four
// lanes hide the add latency.
template <bool kSquare>
double RowSum(int64_t n, const float* x) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = AddTerm<kSquare>(a0, Widen4(x + i));
    a1 = AddTerm<kSquare>(a1, Widen4(x + i + 4));
    a2 = AddTerm<kSquare>(a2, Widen4(x + i + 8));
    a3 = AddTerm<kSquare>(a3, Widen4(x + i + 12));
  }
  for (; i + 4 <= n; i += 4) a0 = AddTerm<kSquare>(a0, Widen4(x + i));
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
  double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i) sum += kSquare ? static_cast<double>(x[i]) * x[i] : x[i];
  return sum;
}

template <bool kMax>
__m256 Extreme(__m256 a, __m256 b) {
  return kMax ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b);
}

// max or min of x[0, n). max_ps/min_ps drop a NaN in their first operand, so NaN is
// tracked on the side, one unordered compare per pair of vectors. Four accumulators of
// 32 elements a step keep softmax's row max (this kernel's hottest caller) at the load
// rate.
template <bool kMax>
float RowExtreme(int64_t n, const float* x) {
  const __m256 init = Set(kMax ? -INFINITY : INFINITY);
  __m256 a0 = init, a1 = init, a2 = init, a3 = init, nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    a0 = Extreme<kMax>(a0, v0);
    a1 = Extreme<kMax>(a1, v1);
    a2 = Extreme<kMax>(a2, v2);
    a3 = Extreme<kMax>(a3, v3);
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(v0, v1, _CMP_UNORD_Q),
                                         _mm256_cmp_ps(v2, v3, _CMP_UNORD_Q)));
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    a0 = Extreme<kMax>(a0, v);
    nan = _mm256_or_ps(nan, IsNan(v));
  }
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    const __m256 v = Select(_mm256_castsi256_ps(mask), _mm256_maskload_ps(x + i, mask), init);
    a1 = Extreme<kMax>(a1, v);
    nan = _mm256_or_ps(nan, IsNan(v));
  }
  if (_mm256_movemask_ps(nan) != 0) return NAN;
  // Neither operand is NaN from here on: the order of the folds does not matter.
  const __m256 a = Extreme<kMax>(Extreme<kMax>(a0, a1), Extreme<kMax>(a2, a3));
  __m128 h = kMax ? _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1))
                  : _mm_min_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  h = kMax ? _mm_max_ps(h, _mm_movehl_ps(h, h)) : _mm_min_ps(h, _mm_movehl_ps(h, h));
  h = kMax ? _mm_max_ss(h, _mm_movehdup_ps(h)) : _mm_min_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

template <bool kSquare>
void AccumulateSum(int64_t n, const float* x, double* acc) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    _mm256_storeu_pd(acc + j, AddTerm<kSquare>(_mm256_loadu_pd(acc + j), Widen4(x + j)));
  }
  for (; j < n; ++j) acc[j] += kSquare ? static_cast<double>(x[j]) * x[j] : x[j];
}

// acc = extreme(acc, x) keeping NaN from either side: Extreme(x, acc) returns acc when
// either is NaN, so a NaN in x is selected explicitly.
template <bool kMax>
__m256 AccumulateExtremeStep(__m256 acc, __m256 x) {
  return Select(IsNan(x), x, Extreme<kMax>(x, acc));
}

template <bool kMax>
void AccumulateExtreme(int64_t n, const float* x, float* acc) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    _mm256_storeu_ps(acc + j,
                     AccumulateExtremeStep<kMax>(_mm256_loadu_ps(acc + j), _mm256_loadu_ps(x + j)));
  }
  if (j < n) {
    const __m256i mask = TailMask(n - j);
    _mm256_maskstore_ps(acc + j, mask,
                        AccumulateExtremeStep<kMax>(_mm256_maskload_ps(acc + j, mask),
                                                    _mm256_maskload_ps(x + j, mask)));
  }
}

constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
constexpr int kUp = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;

using P = const VUnaryParams*;

constexpr ElementwiseUkernels kAvx2 = {
    .vunary =
        {
            Map<([](__m256 x, P) { return _mm256_xor_ps(x, SignBit()); })>,
            Map<([](__m256 x, P) { return Abs(x); })>,
            Map<([](__m256 x, P) { return Exp(x); })>,
            Map<([](__m256 x, P) { return Log(x); })>,
            Map<([](__m256 x, P) { return _mm256_sqrt_ps(x); })>,
            Map<([](__m256 x, P) { return _mm256_div_ps(Set(1.0f), _mm256_sqrt_ps(x)); })>,
            Map<([](__m256 x, P) { return _mm256_div_ps(Set(1.0f), x); })>,
            Map<([](__m256 x, P) { return Tanh(x); })>,
            Map<([](__m256 x, P) { return Sigmoid(x); })>,
            Map<([](__m256 x, P) {
              return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ), x);
            })>,
            Map<([](__m256 x, P p) {
              return Select(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ), x,
                            _mm256_mul_ps(x, Set(p->alpha)));
            })>,
            Map<([](__m256 x, P) { return GeluErf(x); })>,
            Map<([](__m256 x, P) { return GeluTanh(x); })>,
            Map<([](__m256 x, P) { return Erf(x); })>,
            Map<([](__m256 x, P) { return SinCos<false>(x); })>,
            Map<([](__m256 x, P) { return SinCos<true>(x); })>,
            Map<([](__m256 x, P) { return _mm256_round_ps(x, kDown); })>,
            Map<([](__m256 x, P) { return _mm256_round_ps(x, kUp); })>,
            Map<([](__m256 x, P) { return _mm256_round_ps(x, kNearest); })>,
            Map<([](__m256 x, P) { return Sign(x); })>,
            // max/min return their second operand when either is NaN: NaN stays NaN.
            Map<([](__m256 x, P p) {
              return _mm256_min_ps(Set(p->max), _mm256_max_ps(Set(p->min), x));
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

const ElementwiseUkernels& ElementwiseUkernelsAvx2() { return kAvx2; }

}  // namespace dynvm::kernels::elementwise
