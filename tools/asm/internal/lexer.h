// The tokens of the dynvm assembly text (docs/assembly.md). The text is line oriented,
// so ends of lines are tokens; `;` starts a comment that runs to the end of the line.
//
//   Lexer lexer(".func @main(x: int) -> (int) regs 2\n");
//   for (Token t = lexer.Next(); t.kind != TokenKind::kEnd; t = lexer.Next()) ...
#ifndef DYNVM_TOOLS_ASM_INTERNAL_LEXER_H_
#define DYNVM_TOOLS_ASM_INTERNAL_LEXER_H_

#include <string>
#include <string_view>

namespace dynvm::tools::internal {

enum class TokenKind {
  kEnd,        // end of the text
  kNewline,    // end of a line
  kName,       // main, f32, L1, nn.dense (text: the name)
  kDirective,  // .func (text: "func")
  kRegister,   // %3 (text: "3")
  kGlobal,     // @main or @"a b" (text: the function name)
  kInt,        // 42, -7, 0x1f (text as written)
  kFloat,      // 1.5, -1e-05, inf, -nan, nan:0x1 (text as written)
  kString,     // "a\n" (text: the bytes, escapes resolved)
  kPunct,      // ( ) [ ] { } , : = ? -> (text: the punctuation)
  kError,      // a malformed token (text: what was wrong)
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int line = 1;  // 1-based position of the token's first character
  int col = 1;
};

// "'foo'", "end of line", "end of input": how a token is named in "got ..." messages.
std::string DescribeToken(const Token& token);

// Splits text into tokens on demand. `text` must outlive the lexer.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // The next token; kEnd forever once the text is exhausted. A malformed token is
  // kError and lexing resumes after it.
  Token Next();

 private:
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void SkipSpaceAndComments();
  Token LexNumber(Token token);
  Token LexWord(Token token);
  Token LexString(Token token);
  Token LexGlobal(Token token);
  Token LexPunct(Token token);
  // Consumes name characters and returns them.
  std::string_view TakeName();
  // Turns `token` into an error with `message`.
  static Token Fail(Token token, std::string message);

  std::string_view text_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
};

}  // namespace dynvm::tools::internal

#endif  // DYNVM_TOOLS_ASM_INTERNAL_LEXER_H_
