// The arithmetic operations of the binary kernels as scalar functors, shared by the
// broadcasting kernels (kernels/elementwise/binary.cc) and fused_elementwise
// (kernels/elementwise/fused_elementwise.cc), so that a fused chain computes bit for bit what the
// single-op kernels compute.
//
// Each operation names its kernel, the dtypes it takes, whether it yields bool, and its
// scalar function of the inputs' arithmetic values (elementwise::Widen of the storage
// values). Integer arithmetic never traps: add, subtract and multiply wrap,
// x / 0 == x % 0 == 0 and MIN / -1 == MIN; float maximum and minimum propagate NaN.
// Integer power is exponentiation by squaring with wrapping multiplication; a negative
// exponent gives the truncation of the real result (1 for a == 1, +/-1 for a == -1 by
// the exponent's parity, 0 otherwise, 0 ** -n included).
//
// 8- and 16-bit operands promote to int in C++, where a product such as
// 0xffff * 0xffff overflows: every integer result is computed in a type at least as
// wide as unsigned int (WideUnsigned) or in int, then narrowed back, which wraps.
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

// f16 and bf16 compute in float (Widen) and round the result back once.
inline constexpr DTypeSet kArithmetic = kF32 | kF64 | Bit(DType::kF16) | Bit(DType::kBF16) |
                                        Bit(DType::kU8) | Bit(DType::kI8) | Bit(DType::kI16) | kI32 |
                                        kI64 | Bit(DType::kU16) | Bit(DType::kU32) | Bit(DType::kU64);
inline constexpr DTypeSet kPowerDTypes = kF32 | kF64 | kI32 | kI64;

// The unsigned type in which integer `T`'s wrapping arithmetic is done: its unsigned
// counterpart, but never narrower than unsigned int, which a narrower one would promote
// to signed int (and overflow there).
template <typename T>
using WideUnsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                        std::make_unsigned_t<T>>;

// f(a, b) computed on wide unsigned counterparts of integers, so that overflow wraps.
template <typename T, typename F>
T Wrapping(T a, T b, F f) {
  if constexpr (std::is_integral_v<T>) {
    using U = WideUnsigned<T>;
    return static_cast<T>(f(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return f(a, b);
  }
}

// Whether the integer quotient or remainder a op b is undefined in C++ (or, for 8- and
// 16-bit types, would not fit T): b == 0, or signed MIN / -1.
template <typename T>
bool IntDivisionTraps(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    return b == 0 || (b == -1 && a == std::numeric_limits<T>::min());
  } else {
    return b == 0;
  }
}

// a ** b for integers: squaring with wrapping multiplication; a negative b gives the
// truncated real result (see the file comment).
template <typename T>
T IntPower(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b & 1) != 0 ? -1 : 1;
      return 0;
    }
  }
  using U = WideUnsigned<T>;
  U result = 1;
  U base = static_cast<U>(a);
  for (U e = static_cast<U>(b); e != 0; e >>= 1) {
    if ((e & 1) != 0) result *= base;
    base *= base;
  }
  return static_cast<T>(result);
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
      return static_cast<T>(a / b);  // 8- and 16-bit operands divide as int
    } else {
      return a / b;
    }
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
struct Power : OpTraits<kPowerDTypes> {
  static constexpr const char* kName = "power";
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return IntPower(a, b);
    } else {
      return std::pow(a, b);
    }
  }
};
// Truncated remainder: the sign of a.
struct Mod : OpTraits<kArithmetic> {
  static constexpr const char* kName = "mod";
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return IntDivisionTraps(a, b) ? T{0} : static_cast<T>(a % b);
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
    if constexpr (std::is_unsigned_v<T>) {
      return r;
    } else {
      // |r| < |b| with opposite signs: r + b is in range.
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    }
  }
};

}  // namespace dynvm::kernels::elementwise

#endif  // DYNVM_KERNELS_ELEMENTWISE_BINARY_OPS_H_
