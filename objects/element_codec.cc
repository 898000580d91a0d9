// Element read and write for every dtype, through one dispatch from a DType to the C++
// type of its storage (VisitStorage): the only per-dtype switch of the runtime's edges.
#include "objects/element_codec.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dynvm {
namespace {

// The storage of f16 and bf16 elements: their bits. Distinct types so that a visitor
// tells them from u16 and from each other.
struct HalfStorage {
  uint16_t bits;
};
struct BFloat16Storage {
  uint16_t bits;
};
// The storage of bool elements: one byte, 0 or 1 as written, any nonzero read as true.
struct BoolStorage {
  uint8_t value;
};
// String tensors have no numeric storage; visitors that reach it are callers' bugs.
struct NoStorage {};

// Calls fn(T{}) with T the storage type of `dtype` and returns its result.
template <typename Fn>
decltype(auto) VisitStorage(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF32: return fn(float{});
    case DType::kF64: return fn(double{});
    case DType::kF16: return fn(HalfStorage{});
    case DType::kBF16: return fn(BFloat16Storage{});
    case DType::kI8: return fn(int8_t{});
    case DType::kI16: return fn(int16_t{});
    case DType::kI32: return fn(int32_t{});
    case DType::kI64: return fn(int64_t{});
    case DType::kU8: return fn(uint8_t{});
    case DType::kU16: return fn(uint16_t{});
    case DType::kU32: return fn(uint32_t{});
    case DType::kU64: return fn(uint64_t{});
    case DType::kBool: return fn(BoolStorage{});
    case DType::kString: break;
  }
  return fn(NoStorage{});
}

template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T>;
template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, HalfStorage> ||
                          std::is_same_v<T, BFloat16Storage>;

template <typename T>
T Load(const NDArrayObj& array, int64_t index) {
  assert(index >= 0 && index < array.num_elements());
  T v;
  std::memcpy(&v, static_cast<const char*>(array.data()) + index * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void Store(NDArrayObj& array, int64_t index, T value) {
  assert(index >= 0 && index < array.num_elements());
  std::memcpy(static_cast<char*>(array.data()) + index * sizeof(T), &value, sizeof(T));
}

// `value` as an element of float storage `T`, rounded to nearest even.
template <typename T>
T FromDouble(double value) {
  if constexpr (std::is_same_v<T, HalfStorage>) {
    return HalfStorage{DoubleToHalfBits(value)};
  } else if constexpr (std::is_same_v<T, BFloat16Storage>) {
    return BFloat16Storage{DoubleToBFloat16Bits(value)};
  } else if constexpr (std::is_same_v<T, float>) {
    // A finite double that rounds past float's range (from half an ulp above the largest
    // float, 2^128 - 2^103) becomes infinity explicitly: converting it is undefined in
    // C++ without IEEE 754's rules. Below that it rounds to nearest, as a float.
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (std::isfinite(value) && std::fabs(value) >= 0x1.ffffffp127) return value > 0 ? kInf : -kInf;
    return static_cast<float>(value);
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_same_v<T, HalfStorage>) {
    return HalfBitsToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BFloat16Storage>) {
    return BFloat16BitsToFloat(v.bits);
  } else if constexpr (std::is_same_v<T, BoolStorage>) {
    return v.value != 0 ? 1 : 0;
  } else {
    return static_cast<double>(v);
  }
}

// Stores `value` (of type V: int64_t or uint64_t) into integer storage T if it fits.
template <typename T, typename V>
absl::Status StoreIfFits(NDArrayObj& array, int64_t index, V value) {
  using Limits = std::numeric_limits<T>;
  bool negative = false;
  if constexpr (std::is_signed_v<V>) negative = value < 0;
  const bool below = negative && (std::is_unsigned_v<T> || static_cast<int64_t>(value) <
                                                               static_cast<int64_t>(Limits::min()));
  const bool above = !negative && static_cast<uint64_t>(value) > static_cast<uint64_t>(Limits::max());
  if (below || above) {
    return absl::InvalidArgumentError(absl::StrCat("out of range ", IntegerRangeText(array.dtype())));
  }
  Store<T>(array, index, static_cast<T>(value));
  return absl::OkStatus();
}

template <typename V>
absl::Status SetInteger(NDArrayObj& array, int64_t index, V value) {
  return VisitStorage(array.dtype(), [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    if constexpr (kIsInteger<T>) {
      return StoreIfFits<T>(array, index, value);
    } else {
      assert(false && "SetIntegerElement of a tensor that is not of integers");
      return absl::InternalError(
          absl::StrFormat("an integer stored into a %s tensor", DTypeName(array.dtype())));
    }
  });
}

}  // namespace

bool IsFloatDType(DType dtype) {
  return VisitStorage(dtype, [](auto tag) { return kIsFloat<decltype(tag)>; });
}

bool IsIntegerDType(DType dtype) {
  return VisitStorage(dtype, [](auto tag) { return kIsInteger<decltype(tag)>; });
}

std::string IntegerRangeText(DType dtype) {
  return VisitStorage(dtype, [](auto tag) -> std::string {
    using T = decltype(tag);
    if constexpr (kIsInteger<T>) {
      return absl::StrFormat("[%d, %d]", std::numeric_limits<T>::min(),
                             std::numeric_limits<T>::max());
    } else {
      assert(false && "IntegerRangeText of a dtype that is not of integers");
      return "[]";
    }
  });
}

double ElementAsDouble(const NDArrayObj& array, int64_t index) {
  return VisitStorage(array.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, NoStorage>) {
      assert(false && "ElementAsDouble of a string tensor");
      return 0;
    } else {
      return ToDouble(Load<T>(array, index));
    }
  });
}

int64_t ElementAsInt(const NDArrayObj& array, int64_t index) {
  return VisitStorage(array.dtype(), [&](auto tag) -> int64_t {
    using T = decltype(tag);
    if constexpr (kIsInteger<T>) {
      return static_cast<int64_t>(Load<T>(array, index));
    } else if constexpr (std::is_same_v<T, BoolStorage>) {
      return Load<T>(array, index).value != 0 ? 1 : 0;
    } else {
      assert(false && "ElementAsInt of a float or string tensor");
      return 0;
    }
  });
}

std::string IntElementText(const NDArrayObj& array, int64_t index) {
  if (array.dtype() == DType::kU64) return std::to_string(Load<uint64_t>(array, index));
  return std::to_string(ElementAsInt(array, index));
}

void SetFloatElement(NDArrayObj& array, int64_t index, double value) {
  VisitStorage(array.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>) {
      Store<T>(array, index, FromDouble<T>(value));
    } else {
      assert(false && "SetFloatElement of a tensor that is not of floats");
    }
  });
}

absl::Status SetIntegerElement(NDArrayObj& array, int64_t index, int64_t value) {
  return SetInteger(array, index, value);
}

absl::Status SetUnsignedElement(NDArrayObj& array, int64_t index, uint64_t value) {
  return SetInteger(array, index, value);
}

void SetBoolElement(NDArrayObj& array, int64_t index, bool value) {
  assert(array.dtype() == DType::kBool);
  Store<uint8_t>(array, index, value ? 1 : 0);
}

}  // namespace dynvm
