// Element types as C++ types for the elementwise and reduction kernels: the storage
// type of each dtype, dispatch from a runtime DType to a template instantiation, and
// sets of accepted dtypes with the wrappers' check against them.
//
//   absl::Status s = CheckDTypeIn("sum", "input", x, kF32 | kI32 | kI64);
//   VisitDType(x.dtype(), [&](auto tag) {
//     using T = decltype(tag);  // float, double, Half, ..., Bool
//     ...
//   });
#ifndef DYNVM_KERNELS_ELEMENTWISE_DTYPES_H_
#define DYNVM_KERNELS_ELEMENTWISE_DTYPES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::elementwise {

// Storage types of the dtypes that C++ has no arithmetic type for: their bits.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
struct Bool {
  uint8_t value;  // 0 or 1 as written by kernels; any nonzero byte reads as true
};

// The dtype whose storage type is `T`.
template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DType::kF32;
  if constexpr (std::is_same_v<T, double>) return DType::kF64;
  if constexpr (std::is_same_v<T, Half>) return DType::kF16;
  if constexpr (std::is_same_v<T, BFloat16>) return DType::kBF16;
  if constexpr (std::is_same_v<T, int8_t>) return DType::kI8;
  if constexpr (std::is_same_v<T, int16_t>) return DType::kI16;
  if constexpr (std::is_same_v<T, int32_t>) return DType::kI32;
  if constexpr (std::is_same_v<T, int64_t>) return DType::kI64;
  if constexpr (std::is_same_v<T, uint8_t>) return DType::kU8;
  if constexpr (std::is_same_v<T, uint16_t>) return DType::kU16;
  if constexpr (std::is_same_v<T, uint32_t>) return DType::kU32;
  if constexpr (std::is_same_v<T, uint64_t>) return DType::kU64;
  if constexpr (std::is_same_v<T, Bool>) return DType::kBool;
}

// Calls fn(T{}) with T the storage type of `dtype` and returns its result.
template <typename Fn>
decltype(auto) VisitDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF32:
      return fn(float{});
    case DType::kF64:
      return fn(double{});
    case DType::kF16:
      return fn(Half{});
    case DType::kBF16:
      return fn(BFloat16{});
    case DType::kI8:
      return fn(int8_t{});
    case DType::kI16:
      return fn(int16_t{});
    case DType::kI32:
      return fn(int32_t{});
    case DType::kI64:
      return fn(int64_t{});
    case DType::kU8:
      return fn(uint8_t{});
    case DType::kU16:
      return fn(uint16_t{});
    case DType::kU32:
      return fn(uint32_t{});
    case DType::kU64:
      return fn(uint64_t{});
    case DType::kBool:
    case DType::kString:  // never reaches a kernel that visits (kernels/kernel.h)
      break;
  }
  return fn(Bool{});
}

// A set of dtypes, one bit per DType value.
using DTypeSet = uint32_t;
constexpr DTypeSet Bit(DType d) { return DTypeSet{1} << static_cast<int>(d); }
inline constexpr DTypeSet kF32 = Bit(DType::kF32);
inline constexpr DTypeSet kF64 = Bit(DType::kF64);
inline constexpr DTypeSet kI32 = Bit(DType::kI32);
inline constexpr DTypeSet kI64 = Bit(DType::kI64);
inline constexpr DTypeSet kBool = Bit(DType::kBool);
// Every numeric dtype and bool: all but kString, which only string-aware kernels take.
inline constexpr DTypeSet kAllDTypes =
    ((DTypeSet{1} << kNumDTypes) - 1) & ~Bit(DType::kString);

template <typename T>
constexpr bool Contains(DTypeSet set) {
  return (set & Bit(DTypeOf<T>())) != 0;
}

// "f32, i32 or i64", for messages.
std::string DTypeSetToString(DTypeSet set);

// InvalidArgument "unsupported dtype X for `op` `what`: expected ..." unless `t`'s
// dtype is in `set`.
absl::Status CheckDTypeIn(std::string_view op, std::string_view what, const NDArrayObj& t,
                          DTypeSet set);

}  // namespace dynvm::kernels::elementwise

#endif  // DYNVM_KERNELS_ELEMENTWISE_DTYPES_H_
