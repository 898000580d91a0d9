// The lexer of the assembly text (tools/asm/internal/lexer.h).
#include "tools/asm/internal/lexer.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "tools/asm/internal/syntax.h"

namespace dynvm::tools::internal {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return HexDigitValue(c) >= 0; }
bool IsNameStart(char c) { return IsNameChar(c) && !IsDigit(c) && c != '.'; }

// How a character is shown in a message: printable ones as themselves.
std::string ShowChar(char c) {
  return c >= 0x20 && c < 0x7f ? std::string(1, c)
                               : absl::StrFormat("\\x%02x", static_cast<unsigned char>(c));
}

}  // namespace

std::string DescribeToken(const Token& token) {
  // Long strings (hex tensor data) are cut: the message needs the start only.
  constexpr size_t kMaxShown = 24;
  switch (token.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kNewline: return "end of line";
    case TokenKind::kError: return token.text;
    case TokenKind::kString:
      return token.text.size() <= kMaxShown ? QuoteString(token.text)
                                            : QuoteString(token.text.substr(0, kMaxShown)) + "...";
    case TokenKind::kDirective: return absl::StrFormat("'.%s'", token.text);
    case TokenKind::kRegister: return absl::StrFormat("'%%%s'", token.text);
    case TokenKind::kGlobal: return absl::StrFormat("'@%s'", FormatName(token.text));
    default: return absl::StrFormat("'%s'", token.text);
  }
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  Token token;
  token.line = line_;
  token.col = static_cast<int>(pos_ - line_start_) + 1;
  if (pos_ >= text_.size()) return token;
  const char c = Peek();
  if (c == '\n') {
    ++pos_;
    ++line_;
    line_start_ = pos_;
    token.kind = TokenKind::kNewline;
    return token;
  }
  if (IsDigit(c) || (c == '-' && IsDigit(Peek(1)))) return LexNumber(std::move(token));
  if (IsNameStart(c) || (c == '-' && IsNameStart(Peek(1)))) return LexWord(std::move(token));
  if (c == '"') return LexString(std::move(token));
  if (c == '@') return LexGlobal(std::move(token));
  if (c == '.' || c == '%') {
    ++pos_;
    const std::string_view rest = TakeName();
    const bool ok = c == '.' ? IsNameStart(rest.empty() ? '\0' : rest[0])
                             : !rest.empty() && std::all_of(rest.begin(), rest.end(), IsDigit);
    if (!ok) {
      return Fail(std::move(token), c == '.' ? "expected a directive name after '.'"
                                             : "expected a register number after '%'");
    }
    token.kind = c == '.' ? TokenKind::kDirective : TokenKind::kRegister;
    token.text = rest;
    return token;
  }
  return LexPunct(std::move(token));
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == ';') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

std::string_view Lexer::TakeName() {
  const size_t start = pos_;
  while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
  return text_.substr(start, pos_ - start);
}

Token Lexer::LexNumber(Token token) {
  const size_t start = pos_;
  if (Peek() == '-') ++pos_;
  bool is_float = false;
  if (Peek() == '0' && (Peek(1) == 'x' || Peek(1) == 'X')) {
    pos_ += 2;
    while (IsHexDigit(Peek())) ++pos_;
  } else {
    while (IsDigit(Peek())) ++pos_;
    if (Peek() == '.') {
      is_float = true;
      ++pos_;
      while (IsDigit(Peek())) ++pos_;
    }
    const size_t sign = (Peek(1) == '+' || Peek(1) == '-') ? 1 : 0;
    if ((Peek() == 'e' || Peek() == 'E') && IsDigit(Peek(1 + sign))) {
      is_float = true;
      pos_ += 1 + sign;
      while (IsDigit(Peek())) ++pos_;
    }
  }
  if (IsNameChar(Peek())) {
    TakeName();
    return Fail(std::move(token),
                absl::StrFormat("malformed number '%s'", text_.substr(start, pos_ - start)));
  }
  token.kind = is_float ? TokenKind::kFloat : TokenKind::kInt;
  token.text = text_.substr(start, pos_ - start);
  return token;
}

Token Lexer::LexWord(Token token) {
  const bool negative = Peek() == '-';
  if (negative) ++pos_;
  const std::string_view name = TakeName();
  if (name != "inf" && name != "nan") {
    if (negative) {
      return Fail(std::move(token), absl::StrFormat("expected a number after '-', got '%s'", name));
    }
    token.kind = TokenKind::kName;
    token.text = name;
    return token;
  }
  token.kind = TokenKind::kFloat;
  token.text = absl::StrFormat("%s%s", negative ? "-" : "", name);
  if (name == "nan" && Peek() == ':' && Peek(1) == '0' && Peek(2) == 'x') {
    const size_t start = pos_;
    pos_ += 3;
    TakeName();
    token.text += text_.substr(start, pos_ - start);  // validated by ParseDouble
  }
  return token;
}

Token Lexer::LexString(Token token) {
  absl::StatusOr<std::string> text = ReadQuotedString(text_, &pos_);
  if (!text.ok()) return Fail(std::move(token), std::string(text.status().message()));
  token.kind = TokenKind::kString;
  token.text = *std::move(text);
  return token;
}

Token Lexer::LexGlobal(Token token) {
  ++pos_;  // '@'
  if (Peek() == '"') {
    token = LexString(std::move(token));
    if (token.kind == TokenKind::kString) token.kind = TokenKind::kGlobal;
    return token;
  }
  const std::string_view name = TakeName();
  if (name.empty()) return Fail(std::move(token), "expected a function name after '@'");
  token.kind = TokenKind::kGlobal;
  token.text = name;
  return token;
}

Token Lexer::LexPunct(Token token) {
  const char c = Peek();
  if (c == '-' && Peek(1) == '>') {
    pos_ += 2;
    token.kind = TokenKind::kPunct;
    token.text = "->";
    return token;
  }
  ++pos_;
  if (std::string_view("()[]{},:=?").find(c) == std::string_view::npos) {
    return Fail(std::move(token), absl::StrFormat("unexpected character '%s'", ShowChar(c)));
  }
  token.kind = TokenKind::kPunct;
  token.text = std::string(1, c);
  return token;
}

Token Lexer::Fail(Token token, std::string message) {
  token.kind = TokenKind::kError;
  token.text = std::move(message);
  return token;
}

}  // namespace dynvm::tools::internal
