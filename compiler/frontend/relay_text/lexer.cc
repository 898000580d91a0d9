// The lexer of Relay's text format (compiler/frontend/relay_text/lexer.h):
// text to tokens with their line and column, and its errors.
#include "compiler/frontend/relay_text/lexer.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "base/literals.h"

namespace dynvm::compiler::relay_text {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string DescribeToken(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kLocal: return absl::StrCat("'%", token.text, "'");
    case TokenKind::kGlobal: return absl::StrCat("'@", token.text, "'");
    case TokenKind::kString: return QuoteString(token.text);
    case TokenKind::kError: return token.text;
    default: return absl::StrCat("'", token.text, "'");
  }
}

void Lexer::Advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_) {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
  }
}

bool Lexer::SkipSpaceAndComments(Token& error) {
  while (pos_ < text_.size()) {
    const char c = Peek();
    if (std::isspace(static_cast<unsigned char>(c))) {
      Advance();
    } else if (c == '/' && Peek(1) == '/') {
      while (pos_ < text_.size() && Peek() != '\n') Advance();
    } else if (c == '/' && Peek(1) == '*') {
      error.line = line_;
      error.col = col_;
      error.offset = pos_;
      Advance(2);
      while (pos_ < text_.size() && !(Peek() == '*' && Peek(1) == '/')) Advance();
      if (pos_ >= text_.size()) {
        error.kind = TokenKind::kError;
        error.text = "unterminated comment";
        return false;
      }
      Advance(2);
    } else {
      return true;
    }
  }
  return true;
}

std::string_view Lexer::TakeName(bool dots) {
  const size_t start = pos_;
  while (pos_ < text_.size() && (IsNameChar(Peek()) && (dots || Peek() != '.'))) Advance();
  // A name does not end in '.': `%t.0` is %t then .0.
  while (pos_ > start + 1 && text_[pos_ - 1] == '.') {
    --pos_;
    --col_;
  }
  return text_.substr(start, pos_ - start);
}

Token Lexer::Next() {
  Token token;
  if (!SkipSpaceAndComments(token)) return token;
  token.line = line_;
  token.col = col_;
  token.offset = pos_;
  const bool after_dot = after_dot_;
  after_dot_ = false;
  if (pos_ >= text_.size()) return token;
  const char c = Peek();
  if (c == '%' || c == '@') {
    Advance();
    if (!IsNameChar(Peek()) || Peek() == '.') {
      token.kind = TokenKind::kError;
      token.text = absl::StrCat("'", std::string(1, c), "' must be followed by a name");
      return token;
    }
    token.kind = c == '%' ? TokenKind::kLocal : TokenKind::kGlobal;
    token.text = std::string(TakeName(/*dots=*/false));
    // A global's name may have dotted parts, each a name (TVM's CNAME: @main.fn0).
    while (c == '@' && Peek() == '.' && IsNameStart(Peek(1))) {
      Advance();
      absl::StrAppend(&token.text, ".", std::string(TakeName(/*dots=*/false)));
    }
    return token;
  }
  if (IsNameStart(c)) {
    token.kind = TokenKind::kName;
    token.text = std::string(TakeName(/*dots=*/true));
    return token;
  }
  if (IsDigit(c)) {
    if (after_dot) {  // a tuple index
      token.kind = TokenKind::kInt;
      while (IsDigit(Peek())) token.text += Peek(), Advance();
      return token;
    }
    return LexNumber(token);
  }
  if (c == '"') return LexString(token);
  static constexpr std::string_view kTwoChar[] = {"=>", "->", "==", "!=", "<=", ">="};
  for (std::string_view p : kTwoChar) {
    if (text_.substr(pos_, 2) == p) {
      token.kind = TokenKind::kPunct;
      token.text = std::string(p);
      Advance(2);
      return token;
    }
  }
  if (std::string_view("()[]{},;:=.?*/+-%#<>").find(c) != std::string_view::npos) {
    token.kind = TokenKind::kPunct;
    token.text = std::string(1, c);
    after_dot_ = c == '.';
    Advance();
    return token;
  }
  token.kind = TokenKind::kError;
  token.text = std::isprint(static_cast<unsigned char>(c))
                   ? absl::StrCat("unexpected character '", std::string(1, c), "'")
                   : absl::StrCat("unexpected byte ", QuoteString(std::string_view(&c, 1)));
  Advance();
  return token;
}

// digits [. digits] [e [+-] digits] [suffix]: a float if it has a fraction, an exponent
// or an f suffix, else an int.
Token Lexer::LexNumber(Token token) {
  const size_t start = pos_;
  bool is_float = false;
  while (IsDigit(Peek())) Advance();
  if (Peek() == '.' && IsDigit(Peek(1))) {
    is_float = true;
    Advance();
    while (IsDigit(Peek())) Advance();
  }
  if ((Peek() == 'e' || Peek() == 'E') &&
      (IsDigit(Peek(1)) || ((Peek(1) == '-' || Peek(1) == '+') && IsDigit(Peek(2))))) {
    is_float = true;
    Advance(2);
    while (IsDigit(Peek())) Advance();
  }
  if (Peek() == 'f') is_float = true;
  while (std::isalnum(static_cast<unsigned char>(Peek()))) Advance();  // the suffix
  token.kind = is_float ? TokenKind::kFloat : TokenKind::kInt;
  token.text = std::string(text_.substr(start, pos_ - start));
  return token;
}

Token Lexer::LexString(Token token) {
  size_t end = pos_;
  absl::StatusOr<std::string> text = ReadQuotedString(text_, &end);
  if (!text.ok()) {
    token.kind = TokenKind::kError;
    token.text = std::string(text.status().message());
    Advance(text_.size());  // nothing after a broken string is worth reading
    return token;
  }
  Advance(end - pos_);
  token.kind = TokenKind::kString;
  token.text = *std::move(text);
  return token;
}

}  // namespace dynvm::compiler::relay_text
