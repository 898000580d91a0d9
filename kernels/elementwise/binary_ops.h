// The arithmetic operations of the binary kernels as scalar functors, shared by the
// broadcasting kernels (kernels/binary.cc) and fused_elementwise
// (kernels/fused_elementwise.cc), so that a fused chain computes bit for bit what the
// single-op kernels compute.
//
// Each operation names its kernel, the dtypes it takes, whether it yields bool, and its
// scalar function of the inputs' arithmetic values (elementwise::Widen of the storage
// values). Integer arithmetic never traps: add, subtract and multiply wrap,
// x / 0 == x % 0 == 0 and MIN / -1 == MIN; float maximum and minimum propagate NaN.
//
//   float c = Add::Apply(a, b);
#ifndef DYNVM_KERNELS_ELEMENTWISE_BINARY_OPS_H_
#define DYNVM_KERNELS_ELEMENTWISE_BINARY_OPS_H_

#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "kernels/elementwise/dtypes.h"

namespace dynvm::kernels::elementwise {

inline constexpr DTypeSet kArithmetic = kF32 | kF64 | kI32 | kI64;
inline constexpr DTypeSet kFloats = kF32 | kF64;

// f(a, b) computed on the unsigned counterparts of integers, so that overflow wraps.
template <typename T, typename F>
T Wrapping(T a, T b, F f) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(f(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return f(a, b);
  }
}

// Whether the integer quotient or remainder a op b is undefined in C++: b == 0, or
// MIN / -1 (whose quotient overflows).
template <typename T>
bool IntDivisionTraps(T a, T b) {
  return b == 0 || (b == -1 && a == std::numeric_limits<T>::min());
}

template <DTypeSet kSet, bool kBoolOut = false>
struct OpTraits {
  static constexpr DTypeSet kDTypes = kSet;
  static constexpr bool kBoolOutput = kBoolOut;
};

struct Add : OpTraits<kArithmetic> {
  static constexpr const char* kName = "add";
  template <typename T>
  static T Apply(T a, T b) {
    return Wrapping(a, b, std::plus<>());
  }
};
struct Subtract : OpTraits<kArithmetic> {
  static constexpr const char* kName = "subtract";
  template <typename T>
  static T Apply(T a, T b) {
    return Wrapping(a, b, std::minus<>());
  }
};
struct Multiply : OpTraits<kArithmetic> {
  static constexpr const char* kName = "multiply";
  template <typename T>
  static T Apply(T a, T b) {
    return Wrapping(a, b, std::multiplies<>());
  }
};
struct Divide : OpTraits<kArithmetic> {
  static constexpr const char* kName = "divide";
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (IntDivisionTraps(a, b)) return b == 0 ? 0 : a;
    }
    return a / b;
  }
};
struct Maximum : OpTraits<kArithmetic> {
  static constexpr const char* kName = "maximum";
  template <typename T>
  static T Apply(T a, T b) {
    return (a > b || a != a) ? a : b;
  }
};
struct Minimum : OpTraits<kArithmetic> {
  static constexpr const char* kName = "minimum";
  template <typename T>
  static T Apply(T a, T b) {
    return (a < b || a != a) ? a : b;
  }
};
struct Power : OpTraits<kFloats> {
  static constexpr const char* kName = "power";
  template <typename T>
  static T Apply(T a, T b) {
    return std::pow(a, b);
  }
};
// Truncated remainder: the sign of a.
struct Mod : OpTraits<kArithmetic> {
  static constexpr const char* kName = "mod";
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return IntDivisionTraps(a, b) ? 0 : a % b;
    } else {
      return std::fmod(a, b);
    }
  }
};
// Floored remainder: the sign of b (zero when b divides a).
struct FloorMod : OpTraits<kArithmetic> {
  static constexpr const char* kName = "floor_mod";
  template <typename T>
  static T Apply(T a, T b) {
    const T r = Mod::Apply(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
};

}  // namespace dynvm::kernels::elementwise

#endif  // DYNVM_KERNELS_ELEMENTWISE_BINARY_OPS_H_
