// The tokens of Relay's text format (docs/text-format.md): `%x` and `%0`, `@main`,
// names (`nn.dense`, `Tensor`, `let`), numbers with their suffixes (`1`, `4i64`,
// `1.5f`, `1e-05f`, `2f64`), strings, and punctuation. `//` and `/* */` comments are
// skipped.
//
//   Lexer lexer("let %x = nn.relu(%y);");
//   for (Token t = lexer.Next(); t.kind != TokenKind::kEnd; t = lexer.Next()) ...
#ifndef DYNVM_COMPILER_FRONTEND_RELAY_TEXT_LEXER_H_
#define DYNVM_COMPILER_FRONTEND_RELAY_TEXT_LEXER_H_

#include <string>
#include <string_view>

namespace dynvm::compiler::relay_text {

enum class TokenKind {
  kEnd,     // end of the text
  kLocal,   // %x, %0 (text: "x", "0"); [A-Za-z0-9_] only, so `%t.0` is %t . 0
  kGlobal,  // @main (text: "main")
  kName,    // nn.dense, Tensor, let, _ (text: the name; may contain '.')
  kInt,     // 42, 4i64, 7i32 (text as written)
  kFloat,   // 1.5, 1.5f, 1e-05f, 2f64, 3f (text as written)
  kString,  // "NCHW" (text: the bytes, escapes resolved)
  kPunct,   // ( ) [ ] { } , ; : = => -> . ? * / + - % # < > <= >= == != (text: the punctuation)
  kError,   // a malformed token (text: what was wrong)
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int line = 1;  // 1-based position of the token's first character
  int col = 1;
  size_t offset = 0;  // byte offset of the token's first character
};

// "'foo'", "end of input": how a token is named in "got ..." messages.
std::string DescribeToken(const Token& token);

// Splits text into tokens on demand. `text` must outlive the lexer.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // The next token; kEnd forever once the text is exhausted. A malformed token is
  // kError, and lexing resumes after it.
  Token Next();

 private:
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void Advance(size_t n = 1);
  // Skips spaces and comments; false (with `error` set) on an unterminated comment.
  bool SkipSpaceAndComments(Token& error);
  Token LexNumber(Token token);
  Token LexString(Token token);
  // Consumes a name: [A-Za-z0-9_], and '.' inside it when `dots` (operator names).
  std::string_view TakeName(bool dots);

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  // After a '.', a number is a tuple index: `%t.0.1` is %t . 0 . 1, not %t . 0.1.
  bool after_dot_ = false;
};

}  // namespace dynvm::compiler::relay_text

#endif  // DYNVM_COMPILER_FRONTEND_RELAY_TEXT_LEXER_H_
