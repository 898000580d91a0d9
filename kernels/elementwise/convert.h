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
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/elementwise/dtypes.h"
#include "objects/element_codec.h"

namespace dynvm::kernels::elementwise {

// The f16 and bf16 conversions are the objects library's, shared with the runtime's edges.
using ::dynvm::BFloat16BitsToFloat;
using ::dynvm::DoubleToFloatRoundToOdd;
using ::dynvm::FloatToBFloat16Bits;
using ::dynvm::FloatToHalfBits;
using ::dynvm::HalfBitsToFloat;

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
