#include "tools/run/elements.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "objects/string_tensor.h"

namespace dynvm::tools {
namespace {

// A 16-bit binary float with one sign bit, `kMantissaBits` stored mantissa bits and the
// rest exponent: IEEE half (10) and bfloat16 (7).
template <int kMantissaBits>
struct Narrow {
  static constexpr int kExponentBits = 15 - kMantissaBits;
  static constexpr int kBias = (1 << (kExponentBits - 1)) - 1;
  static constexpr int kMinNormalExponent = 1 - kBias;
  static constexpr uint16_t kInfinity = ((1 << kExponentBits) - 1) << kMantissaBits;
  static constexpr uint16_t kQuietNan = kInfinity | (1 << (kMantissaBits - 1));

  // Scaling by powers of two is exact in double over these ranges, so std::nearbyint
  // (round-to-nearest-even, the default mode) does the only rounding.
  static uint16_t FromDouble(double value) {
    const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
    if (std::isnan(value)) return sign | kQuietNan;
    if (std::isinf(value)) return sign | kInfinity;
    const double a = std::fabs(value);
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1)
    int exponent = e - 1;
    if (a == 0 || exponent < kMinNormalExponent) {
      // Subnormal: units of 2^(kMinNormalExponent - kMantissaBits). A result of
      // 2^kMantissaBits is the smallest normal, whose bits are the same number.
      const double q = std::nearbyint(std::ldexp(a, kMantissaBits - kMinNormalExponent));
      return sign | static_cast<uint16_t>(q);
    }
    double q = std::nearbyint(std::ldexp(a, kMantissaBits - exponent));
    if (q == std::ldexp(1.0, kMantissaBits + 1)) {  // rounded up to the next power of two
      q /= 2;
      ++exponent;
    }
    if (exponent > kBias) return sign | kInfinity;
    const int mantissa = static_cast<int>(q) - (1 << kMantissaBits);
    return sign | static_cast<uint16_t>(((exponent + kBias) << kMantissaBits) | mantissa);
  }

  static double ToDouble(uint16_t bits) {
    const int exponent = (bits >> kMantissaBits) & ((1 << kExponentBits) - 1);
    const int mantissa = bits & ((1 << kMantissaBits) - 1);
    double magnitude;
    if (exponent == (1 << kExponentBits) - 1) {
      magnitude = mantissa != 0 ? NAN : INFINITY;
    } else if (exponent == 0) {
      magnitude = std::ldexp(mantissa, kMinNormalExponent - kMantissaBits);
    } else {
      magnitude = std::ldexp(mantissa + (1 << kMantissaBits), exponent - kBias - kMantissaBits);
    }
    return (bits & 0x8000) != 0 ? -magnitude : magnitude;
  }
};

using Half = Narrow<10>;
using BFloat16 = Narrow<7>;

template <typename T>
T Load(const NDArrayObj& array, int64_t index) {
  T v;
  std::memcpy(&v, static_cast<const char*>(array.data()) + index * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

uint16_t DoubleToF16(double value) { return Half::FromDouble(value); }
double F16ToDouble(uint16_t bits) { return Half::ToDouble(bits); }
uint16_t DoubleToBF16(double value) { return BFloat16::FromDouble(value); }
double BF16ToDouble(uint16_t bits) { return BFloat16::ToDouble(bits); }

bool IsFloatDType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kF16 ||
         dtype == DType::kBF16;
}

double ElementAsDouble(const NDArrayObj& array, int64_t index) {
  switch (array.dtype()) {
    case DType::kF32: return Load<float>(array, index);
    case DType::kF64: return Load<double>(array, index);
    case DType::kF16: return F16ToDouble(Load<uint16_t>(array, index));
    case DType::kBF16: return BF16ToDouble(Load<uint16_t>(array, index));
    case DType::kU64: return static_cast<double>(Load<uint64_t>(array, index));
    default: return static_cast<double>(ElementAsInt(array, index));
  }
}

int64_t ElementAsInt(const NDArrayObj& array, int64_t index) {
  switch (array.dtype()) {
    case DType::kI8: return Load<int8_t>(array, index);
    case DType::kI16: return Load<int16_t>(array, index);
    case DType::kI32: return Load<int32_t>(array, index);
    case DType::kI64: return Load<int64_t>(array, index);
    case DType::kU8: return Load<uint8_t>(array, index);
    case DType::kU16: return Load<uint16_t>(array, index);
    case DType::kU32: return Load<uint32_t>(array, index);
    case DType::kU64: return static_cast<int64_t>(Load<uint64_t>(array, index));
    case DType::kBool: return Load<uint8_t>(array, index) != 0 ? 1 : 0;
    default: assert(false && "ElementAsInt of a float tensor"); return 0;
  }
}

std::string StringElementRepr(const NDArrayObj& array, int64_t index) {
  const absl::StatusOr<std::string_view> s = StringElement(array, index);
  if (!s.ok()) return "<invalid string>";
  return absl::StrCat("'", absl::CHexEscape(absl::string_view(s->data(), s->size())), "'");
}

std::string IntElementText(const NDArrayObj& array, int64_t index) {
  if (array.dtype() == DType::kU64) return std::to_string(Load<uint64_t>(array, index));
  return std::to_string(ElementAsInt(array, index));
}

}  // namespace dynvm::tools
