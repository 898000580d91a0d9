// Literals as dynvm's text formats write them (the assembly text, the Relay text of
// the compiler): quoted strings that carry any bytes, floats that read back bit for bit,
// and integers with range checks.
//
//   QuoteString("a\"b")     == "\"a\\\"b\""
//   FormatDouble(1.0)       == "1.0"          // always marked as a float
//   FormatDouble(0.1)       == "0.1"          // shortest text that reads back exactly
//   ParseDouble("nan:0x1")                    // a NaN with payload 1
//   ParseInt("-0x10")                         // -16
#ifndef DYNVM_BASE_LITERALS_H_
#define DYNVM_BASE_LITERALS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace dynvm {

// The value of the hex digit `c` (either case), or -1 if it is not one.
int HexDigitValue(char c);
// `s` in double quotes, with `"`, `\` and every byte outside printable ASCII escaped
// (\n, \t, \r, else \xHH), so that any bytes survive.
std::string QuoteString(std::string_view s);
// The shortest text that reads back to exactly `v`, always recognisable as a float: it
// contains a '.' or an exponent, or is `inf`, `-inf`, `nan`, `-nan`, or, for a NaN
// other than the default quiet one, `nan:0x<fraction bits>` (WebAssembly's notation).
std::string FormatDouble(double v);
// Reads the string QuoteString writes (or any quoted string with the escapes \n \t \r
// \" \\ \xHH) starting at the opening quote text[*pos], and moves *pos past the
// closing quote. InvalidArgument "unterminated string" (at the end of the text or of
// the line), "unknown escape '\q' in string" or "expected two hex digits after '\x' in
// string"; *pos is then unspecified.
absl::StatusOr<std::string> ReadQuotedString(std::string_view text, size_t* pos);
// Parses a float literal as FormatDouble writes it, or any decimal or integer literal.
// InvalidArgument naming `text` if it is malformed.
absl::StatusOr<double> ParseDouble(std::string_view text);
// Parses a decimal or `0x` hexadecimal integer with an optional '-'. InvalidArgument
// naming `text` if it is malformed or outside int64.
absl::StatusOr<int64_t> ParseInt(std::string_view text);

}  // namespace dynvm

#endif  // DYNVM_BASE_LITERALS_H_
