// Tests of base/literals.h: strings quoted so that any bytes survive, floats that read
// back bit for bit, integers with their range checked.
#include "base/literals.h"

#include <bit>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace dynvm {
namespace {

TEST(LiteralsTest, QuoteString) {
  EXPECT_EQ(QuoteString("plain"), "\"plain\"");
  EXPECT_EQ(QuoteString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(QuoteString("\n\t\r"), "\"\\n\\t\\r\"");
  EXPECT_EQ(QuoteString(std::string_view("\0\xff", 2)), "\"\\x00\\xff\"");
}

TEST(LiteralsTest, QuotedStringsReadBack) {
  for (std::string_view bytes : {std::string_view("plain"), std::string_view("a\"b\\c\n\t\r"),
                                 std::string_view("\0\x7f\xff", 3)}) {
    // (StrCat: GCC 12 warns falsely of overlap in "x" + std::string + "y".)
    const std::string text = absl::StrCat("x", QuoteString(bytes), "y");
    size_t pos = 1;
    absl::StatusOr<std::string> read = ReadQuotedString(text, &pos);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, bytes);
    EXPECT_EQ(text[pos], 'y');
  }
  const auto error = [](std::string_view text) {
    size_t pos = 0;
    return std::string(ReadQuotedString(text, &pos).status().message());
  };
  EXPECT_EQ(error("\"abc"), "unterminated string");
  EXPECT_EQ(error("\"ab\nc\""), "unterminated string");
  EXPECT_EQ(error("\"a\\qb\""), "unknown escape '\\q' in string");
  EXPECT_EQ(error("\"a\\x4\""), "expected two hex digits after '\\x' in string");
  EXPECT_EQ(error("\"a\\"), "unknown escape '\\\\x00' in string");
}

TEST(LiteralsTest, FloatsReadBackExactly) {
  for (double v : {0.0, -0.0, 1.0, 0.1, 1e-05, -2.5e300, std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                   std::bit_cast<double>(uint64_t{0x7ff0000000000001})}) {
    const std::string text = FormatDouble(v);
    absl::StatusOr<double> back = ParseDouble(text);
    ASSERT_TRUE(back.ok()) << text << ": " << back.status();
    EXPECT_EQ(std::bit_cast<uint64_t>(*back), std::bit_cast<uint64_t>(v)) << text;
  }
  EXPECT_EQ(FormatDouble(1.0), "1.0");
  EXPECT_EQ(FormatDouble(1e-05), "1e-05");
  EXPECT_EQ(ParseDouble("1.5x").status().message(), "malformed float '1.5x'");
  EXPECT_EQ(ParseDouble("1e999").status().message(), "float '1e999' out of range");
}

TEST(LiteralsTest, Integers) {
  EXPECT_EQ(*ParseInt("42"), 42);
  EXPECT_EQ(*ParseInt("-0x10"), -16);
  EXPECT_EQ(*ParseInt("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ParseInt("9223372036854775808").status().message(),
            "integer '9223372036854775808' out of range");
  EXPECT_EQ(ParseInt("12a").status().message(), "malformed integer '12a'");
  EXPECT_EQ(ParseInt("").status().message(), "malformed integer ''");
  EXPECT_EQ(HexDigitValue('f'), 15);
  EXPECT_EQ(HexDigitValue('g'), -1);
}

}  // namespace
}  // namespace dynvm
