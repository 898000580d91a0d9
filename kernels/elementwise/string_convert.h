// Conversions between element values and text, for `cast` to and from string tensors
// (ONNX's Cast with STRING), one element at a time.
//
//   - to text: integers in decimal; floats (f16 and bf16 widened to f32 first) in the
//     shortest form that reads back to the same value (std::to_chars: "0.1", "1e-05",
//     "inf", "-inf", "nan"), as numpy's str() of a float32 prints them; bool as "True"
//     or "False", numpy's spelling;
//   - from text: the whole text must be the number. Floats take an optional sign and
//     any case of "inf", "infinity" and "nan" ("NaN", "+INF"), are read as the nearest
//     f32 (for f32) or f64 (then converted as `cast` converts f64, convert.h); a value
//     too small for the type becomes 0 (or a subnormal), one too large for it is an
//     error, not infinity (the texts of infinity aside). Integers take decimal digits with an
//     optional sign and must fit the type. Bool takes "True"/"False"/"1"/"0" in any case.
//
//   std::string s = ElementToText(0.1f);                          // "0.1"
//   absl::StatusOr<int32_t> v = ElementFromText<int32_t>("-7");   // -7
#ifndef DYNVM_KERNELS_ELEMENTWISE_STRING_CONVERT_H_
#define DYNVM_KERNELS_ELEMENTWISE_STRING_CONVERT_H_

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "kernels/elementwise/convert.h"

namespace dynvm::kernels::elementwise {

template <typename T>
std::string ElementToText(T v) {
  if constexpr (std::is_same_v<T, Bool>) {
    return v.value != 0 ? "True" : "False";
  } else {
    const auto w = Widen(v);
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), w);
    return std::string(buffer, ec == std::errc() ? end : buffer);  // 64 chars always fit
  }
}

namespace internal {

// `text` escaped for a message ('\n' for a newline, '\xff' for a stray byte).
inline std::string Quoted(std::string_view text) {
  return absl::CHexEscape(absl::string_view(text.data(), text.size()));
}

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(absl::string_view(a.data(), a.size()),
                                absl::string_view(b.data(), b.size()));
}

inline absl::Status NotA(std::string_view what, std::string_view text) {
  return absl::InvalidArgumentError(absl::StrFormat("'%s' is not %s", Quoted(text), what));
}

inline absl::Status OutOfRange(std::string_view text, DType dtype) {
  return absl::InvalidArgumentError(
      absl::StrFormat("'%s' is out of the range of %s", Quoted(text), DTypeName(dtype)));
}

}  // namespace internal

template <typename T>
absl::StatusOr<T> ElementFromText(std::string_view text) {
  const char* end = text.data() + text.size();
  if constexpr (std::is_same_v<T, Bool>) {
    if (internal::EqualsIgnoreCase(text, "true") || text == "1") return Bool{1};
    if (internal::EqualsIgnoreCase(text, "false") || text == "0") return Bool{0};
    return internal::NotA("a bool (True, False, 1 or 0)", text);
  } else if constexpr (std::is_integral_v<T>) {
    std::string_view digits = text;
    if (digits.starts_with('+') && !digits.substr(1).starts_with('-')) digits.remove_prefix(1);
    T v{};
    auto [ptr, ec] = std::from_chars(digits.data(), end, v);
    if (std::is_unsigned_v<T> && ec == std::errc::invalid_argument && digits.starts_with('-')) {
      uint64_t magnitude = 0;  // "-5" is a number, below an unsigned type's range; "-0" is 0
      const auto [mag_end, mag_ec] = std::from_chars(digits.data() + 1, end, magnitude);
      if (mag_end == end && mag_ec != std::errc::invalid_argument) {
        if (mag_ec == std::errc() && magnitude == 0) return T{0};
        ec = std::errc::result_out_of_range;
      }
    }
    if (ec == std::errc::result_out_of_range) {
      return internal::OutOfRange(text, DTypeOf<T>());
    }
    if (ec != std::errc() || ptr != end || digits.empty()) {
      return internal::NotA(absl::StrFormat("an integer (%s)", DTypeName(DTypeOf<T>())), text);
    }
    return v;
  } else {
    std::string_view number = text;
    if (number.starts_with('+') && !number.substr(1).starts_with('-')) number.remove_prefix(1);
    // f32 and f64 are read as themselves (rounded once); f16 and bf16 through f64,
    // which Convert narrows without double rounding.
    using Parsed = std::conditional_t<std::is_same_v<T, float>, float, double>;
    Parsed v = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), end, v);
    if ((ec != std::errc() && ec != std::errc::result_out_of_range) || ptr != end ||
        number.empty() || number.find('(') != std::string_view::npos) {  // no "nan(123)"
      return internal::NotA("a number", text);
    }
    if (ec == std::errc::result_out_of_range) {
      // Too small rounds to zero (or a subnormal), as numpy reads it; too large is an
      // error. strtod says which: it gives infinity past double's range and a value
      // below 1 in magnitude only for an underflow.
      const std::string copy(number);
      const double d = std::strtod(copy.c_str(), nullptr);
      if (!(std::fabs(d) < 1)) return internal::OutOfRange(text, DTypeOf<T>());
      v = static_cast<Parsed>(d);
    }
    const T out = Convert<T>(v);
    if (std::isinf(Widen(out)) && !std::isinf(v)) return internal::OutOfRange(text, DTypeOf<T>());
    return out;
  }
}

}  // namespace dynvm::kernels::elementwise

#endif  // DYNVM_KERNELS_ELEMENTWISE_STRING_CONVERT_H_
