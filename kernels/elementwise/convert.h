// Conversions between element types, one element at a time, with every rounding and
// range rule stated: the arithmetic behind `cast` and behind comparisons of f16 and
// bf16. Written branch-free where the compiler can vectorise the loops around them.
//
//   FloatToHalfBits(1.0f) == 0x3c00
//   SaturatingCast<int32_t>(3e9f) == INT32_MAX, SaturatingCast<int32_t>(NAN) == 0
//
// The rules:
//   - to f16 and bf16: round to nearest even, overflow to infinity, NaN stays a (quiet)
//     NaN; sources wider than f32 (f64, i32, i64) round exactly once, by first
//     narrowing to f32 with round-to-odd (which then rounds to even correctly, f32
//     having more than two extra bits);
//   - floating to integer: truncation toward zero, saturating at the integer's range,
//     NaN gives 0 (a C++ cast of such values would be undefined);
//   - integer to integer: two's complement wrap-around (numpy's and C++20's rule);
//   - to bool: nonzero is true (NaN included).
#ifndef DYNVM_KERNELS_ELEMENTWISE_CONVERT_H_
#define DYNVM_KERNELS_ELEMENTWISE_CONVERT_H_

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/elementwise/dtypes.h"

namespace dynvm::kernels::elementwise {

// f16 bits -> f32, exactly (subnormals, infinities and NaN included).
inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t magnitude = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t exponent = magnitude & (0x1fu << 23);
  const uint32_t rebiased = magnitude + ((127u - 15u) << 23);
  // Infinity and NaN keep an all-ones exponent; subnormals are normalised by letting
  // the FPU subtract the implicit bit back out.
  const float normal =
      std::bit_cast<float>(exponent == (0x1fu << 23) ? rebiased + ((128u - 16u) << 23) : rebiased);
  const float subnormal =
      std::bit_cast<float>(rebiased + (1u << 23)) - std::bit_cast<float>(113u << 23);
  const float value = exponent == 0 ? subnormal : normal;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(value) |
                              (static_cast<uint32_t>(h & 0x8000u) << 16));
}

// f32 -> f16 bits, rounding to nearest even.
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t a = bits & 0x7fffffffu;
  // At or above 2^16 only infinity remains (values in [65520, 65536) carry into it
  // below); NaN becomes the quiet NaN.
  const uint32_t special = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
  // Below 2^-14 the result is a subnormal: adding 0.5 makes the FPU round the value to a
  // multiple of 2^-24 (to even), which then sits in the low mantissa bits.
  const uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + 0.5f) - 0x3f000000u;
  // Otherwise rebias the exponent and round 23 mantissa bits to 10, ties to even; a
  // carry correctly bumps the exponent.
  const uint32_t normal = (a - ((127u - 15u) << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
  const uint32_t h = a >= (143u << 23) ? special : (a < (113u << 23) ? subnormal : normal);
  return static_cast<uint16_t>(sign | h);
}

// bf16 bits -> f32, exactly.
inline float BFloat16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// f32 -> bf16 bits, rounding to nearest even; NaN stays NaN (quieted).
inline uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(nan ? (bits >> 16) | 0x40u : rounded);
}

// `v` narrowed to f32 rounding to odd: truncated toward zero, then the last bit set if
// anything was lost. Infinity and NaN stay; finite values beyond f32's range become
// +-FLT_MAX (odd), which any narrower format then rounds to infinity.
inline float DoubleToFloatRoundToOdd(double v) {
  if (!(std::fabs(v) <= static_cast<double>(FLT_MAX))) {
    if (!std::isfinite(v)) return static_cast<float>(v);
    return v < 0 ? -FLT_MAX : FLT_MAX;
  }
  float f = static_cast<float>(v);
  if (static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// The magnitude `a` narrowed to f32 rounding to odd (see DoubleToFloatRoundToOdd),
// exactly as an integer: a 64-bit integer through f64 would round twice.
inline float MagnitudeToFloatRoundToOdd(uint64_t a) {
  const int shift = std::max(0, static_cast<int>(std::bit_width(a)) - 24);
  uint64_t kept = a >> shift;
  if ((a & ((uint64_t{1} << shift) - 1)) != 0) kept |= 1;
  return std::ldexp(static_cast<float>(kept), shift);  // exact: kept < 2^24
}

// The integer `v` narrowed to f32 rounding to odd.
template <typename I>
float IntToFloatRoundToOdd(I v) {
  static_assert(std::is_integral_v<I>);
  if constexpr (std::is_signed_v<I>) {
    const uint64_t a = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    const float f = MagnitudeToFloatRoundToOdd(a);
    return v < 0 ? -f : f;
  } else {
    return MagnitudeToFloatRoundToOdd(v);
  }
}

// A floating value truncated toward zero into the integer `I`, saturating; NaN gives 0.
template <typename I, typename F>
I SaturatingCast(F v) {
  static_assert(std::is_floating_point_v<F> && std::is_integral_v<I>);
  // Both bounds are powers of two (or 0) and so exact in every floating type.
  constexpr F kLow = static_cast<F>(std::numeric_limits<I>::min());
  constexpr F kHighExclusive = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * 2;
  if (!(v > kLow)) return v <= kLow ? std::numeric_limits<I>::min() : I{0};
  if (v >= kHighExclusive) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// The value of an element as the arithmetic type computations use: f16 and bf16 widen
// to float exactly, bool to 0/1; other types are their own.
inline float Widen(Half h) { return HalfBitsToFloat(h.bits); }
inline float Widen(BFloat16 b) { return BFloat16BitsToFloat(b.bits); }
inline uint8_t Widen(Bool b) { return b.value != 0 ? 1 : 0; }
template <typename T>
T Widen(T v) {
  return v;
}

// Converts one element of storage type `S` to storage type `D` by the rules above.
template <typename D, typename S>
D Convert(S s) {
  const auto v = Widen(s);
  using V = std::remove_const_t<decltype(v)>;
  if constexpr (std::is_same_v<D, Bool>) {
    return Bool{static_cast<uint8_t>(v != 0 ? 1 : 0)};
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    float f;
    if constexpr (std::is_same_v<V, double>) {
      f = DoubleToFloatRoundToOdd(v);
    } else if constexpr (std::is_integral_v<V> && sizeof(V) >= 4) {
      f = IntToFloatRoundToOdd(v);
    } else {
      f = static_cast<float>(v);  // exact: f32, f16, bf16, 8- and 16-bit integers
    }
    if constexpr (std::is_same_v<D, Half>)
      return Half{FloatToHalfBits(f)};
    else
      return BFloat16{FloatToBFloat16Bits(f)};
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<V>) {
    return SaturatingCast<D>(v);
  } else {
    return static_cast<D>(v);  // correctly rounded, or integer wrap-around
  }
}

}  // namespace dynvm::kernels::elementwise

#endif  // DYNVM_KERNELS_ELEMENTWISE_CONVERT_H_
