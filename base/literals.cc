// Parsing and printing of the text formats' literals (base/literals.h): quoted
// strings, floats that read back bit for bit (NaN payloads included), and integers.
#include "base/literals.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace dynvm {
namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;
constexpr uint64_t kExponentMask = uint64_t{0x7ff} << 52;
constexpr uint64_t kFractionMask = (uint64_t{1} << 52) - 1;
// The fraction of the NaN that `nan` stands for: quiet, no payload.
constexpr uint64_t kQuietNanFraction = uint64_t{1} << 51;

// Strips a leading '-' from `text`, returning whether there was one.
bool ConsumeMinus(std::string_view* text) {
  if (text->empty() || text->front() != '-') return false;
  text->remove_prefix(1);
  return true;
}

absl::StatusOr<double> ParseNan(std::string_view text, std::string_view after_nan, bool negative) {
  uint64_t fraction = kQuietNanFraction;
  if (!after_nan.empty()) {
    std::string_view hex = after_nan.substr(std::min<size_t>(3, after_nan.size()));
    const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), fraction, 16);
    if (after_nan.substr(0, 3) != ":0x" || hex.empty() || ec != std::errc() ||
        end != hex.data() + hex.size() || fraction == 0 || fraction > kFractionMask) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "malformed NaN '%s': expected nan:0x followed by 1 to 13 hex digits, not all zero",
          text));
    }
  }
  return std::bit_cast<double>((negative ? kSignBit : 0) | kExponentMask | fraction);
}

}  // namespace

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string QuoteString(std::string_view s) {
  std::string out = "\"";
  out.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += c;
        } else {
          absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(c));
        }
    }
  }
  out += '"';
  return out;
}

absl::StatusOr<std::string> ReadQuotedString(std::string_view text, size_t* pos) {
  size_t i = *pos + 1;  // past the opening quote
  std::string out;
  while (true) {
    const size_t run = i;
    while (i < text.size() && text[i] != '"' && text[i] != '\\' && text[i] != '\n') ++i;
    out.append(text.substr(run, i - run));
    if (i >= text.size() || text[i] == '\n') return absl::InvalidArgumentError("unterminated string");
    if (text[i++] == '"') break;
    const char escape = i < text.size() ? text[i] : '\0';
    ++i;
    switch (escape) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'x': {
        const int hi = i < text.size() ? HexDigitValue(text[i]) : -1;
        const int lo = i + 1 < text.size() ? HexDigitValue(text[i + 1]) : -1;
        if (hi < 0 || lo < 0) {
          return absl::InvalidArgumentError("expected two hex digits after '\\x' in string");
        }
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        break;
      }
      default: {
        const std::string shown = escape >= 0x20 && escape < 0x7f
                                      ? std::string(1, escape)
                                      : absl::StrFormat("\\x%02x", static_cast<unsigned char>(escape));
        return absl::InvalidArgumentError(absl::StrFormat("unknown escape '\\%s' in string", shown));
      }
    }
  }
  *pos = i;
  return out;
}

std::string FormatDouble(double v) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  if ((bits & kExponentMask) == kExponentMask && (bits & kFractionMask) != 0) {
    std::string out = (bits & kSignBit) != 0 ? "-nan" : "nan";
    const uint64_t fraction = bits & kFractionMask;
    if (fraction != kQuietNanFraction) absl::StrAppendFormat(&out, ":0x%x", fraction);
    return out;
  }
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  std::string out(buf, result.ptr);
  // Integral values print as "1"; the ".0" keeps them floats where the kind of a literal
  // decides the kind of a value (attributes). "inf" already reads as a float.
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
}

absl::StatusOr<double> ParseDouble(std::string_view text) {
  std::string_view body = text;
  const bool negative = ConsumeMinus(&body);
  if (body.substr(0, 3) == "nan") return ParseNan(text, body.substr(3), negative);
  if (body == "inf") {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(absl::StrFormat("float '%s' out of range", text));
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    return absl::InvalidArgumentError(absl::StrFormat("malformed float '%s'", text));
  }
  return v;
}

absl::StatusOr<int64_t> ParseInt(std::string_view text) {
  std::string_view body = text;
  const bool negative = ConsumeMinus(&body);
  int base = 10;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    base = 16;
    body.remove_prefix(2);
  }
  uint64_t magnitude = 0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), magnitude, base);
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(absl::StrFormat("integer '%s' out of range", text));
  }
  if (body.empty() || ec != std::errc() || end != body.data() + body.size()) {
    return absl::InvalidArgumentError(absl::StrFormat("malformed integer '%s'", text));
  }
  const uint64_t limit = negative ? kSignBit : kSignBit - 1;
  if (magnitude > limit) {
    return absl::InvalidArgumentError(absl::StrFormat("integer '%s' out of range", text));
  }
  return static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
}

}  // namespace dynvm
