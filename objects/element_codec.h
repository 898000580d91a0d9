// Reading and writing one element of a tensor of any dtype, and the f16 and bf16
// conversions behind it: the one place where the edges that parse numbers (vm_run's
// text inputs and printed outputs, vm_serve's JSON) and the `cast` kernels turn outside
// numbers into elements and back. (The Python module and the C API take tensors whole,
// by buffer or DLPack, and need no element access.)
//
//   FloatToHalfBits(1.0f) == 0x3c00
//   DoubleToHalfBits(0.1) == 0x2e66        // rounded once, to nearest even
//   double v = ElementAsDouble(*t, 5);     // any numeric dtype
//   absl::Status s = SetIntegerElement(*t, 0, 300);   // "out of range [0, 255]" for u8
//
// The rules: to f16 and bf16, round to nearest even, overflow to infinity, NaN stays a
// quiet NaN with its sign; f16 and bf16 widen to f32 exactly (subnormals, infinities and
// NaN included). Elements are addressed by their flat (C-order) index, which callers
// keep below num_elements() (debug-asserted). String tensors are not numbers: their
// elements are objects/string_tensor.h's.
#ifndef DYNVM_OBJECTS_ELEMENT_CODEC_H_
#define DYNVM_OBJECTS_ELEMENT_CODEC_H_

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"

namespace dynvm {

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

// f32 -> f16 bits, rounding to nearest even. Written branch-free so that the loops of
// the cast kernels around it vectorise.
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
// +-FLT_MAX (odd), which any narrower format then rounds to infinity. Narrowing this
// result to f16 or bf16 rounds `v` exactly once (f32 has more than two extra bits).
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

// f64 -> f16 bits, rounding once to nearest even.
inline uint16_t DoubleToHalfBits(double v) { return FloatToHalfBits(DoubleToFloatRoundToOdd(v)); }
// f64 -> bf16 bits, rounding once to nearest even.
inline uint16_t DoubleToBFloat16Bits(double v) {
  return FloatToBFloat16Bits(DoubleToFloatRoundToOdd(v));
}

// Whether `dtype` is f32, f64, f16 or bf16.
bool IsFloatDType(DType dtype);
// Whether `dtype` is a signed or unsigned integer (not bool, not string).
bool IsIntegerDType(DType dtype);

// The range of an integer `dtype` as text: "[-128, 127]", "[0, 18446744073709551615]".
std::string IntegerRangeText(DType dtype);

// Element `index` of a numeric or bool `array` as a double: exact for every dtype
// except i64 and u64 values beyond 2^53, which round to nearest.
double ElementAsDouble(const NDArrayObj& array, int64_t index);
// Element `index` of an integer or bool `array` (bool as 0 or 1). A u64 element beyond
// INT64_MAX comes back as its bits (negative): equal elements stay equal, but its
// decimal text must come from IntElementText.
int64_t ElementAsInt(const NDArrayObj& array, int64_t index);
// Element `index` of an integer or bool `array` in decimal ("-3", "18446744073709551615").
std::string IntElementText(const NDArrayObj& array, int64_t index);

// Sets element `index` of a float `array` to `value` rounded to its dtype (to nearest,
// ties to even; a finite value past the dtype's range becomes infinity: callers that
// refuse that compare ElementAsDouble's result). For an integer or bool `array` see
// SetIntegerElement and SetBoolElement.
void SetFloatElement(NDArrayObj& array, int64_t index, double value);
// Sets element `index` of an integer `array` to `value`, or InvalidArgument
// "out of range [min, max]" (the dtype's range) when it does not fit, leaving the
// element as it was.
absl::Status SetIntegerElement(NDArrayObj& array, int64_t index, int64_t value);
// The same for a value given as unsigned (beyond INT64_MAX for u64).
absl::Status SetUnsignedElement(NDArrayObj& array, int64_t index, uint64_t value);
// Sets element `index` of a bool `array` to 1 or 0.
void SetBoolElement(NDArrayObj& array, int64_t index, bool value);

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_ELEMENT_CODEC_H_
