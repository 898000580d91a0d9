// A recursive-descent parser over Lexer's tokens, with two tokens of lookahead (enough
// to tell `units=768` from an argument and `%0 = e;` from an expression). Let chains
// are read in a loop, so their length costs no stack; everything that nests counts
// against kMaxNesting.
#include "compiler/frontend/relay_text/parser.h"

#include <algorithm>
#include <string_view>
#include <cctype>
#include <deque>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/literals.h"
#include "base/status_macros.h"
#include "compiler/frontend/relay_text/lexer.h"
#include "compiler/frontend/relay_text/metadata.h"
#include "objects/allocator.h"
#include "objects/element_codec.h"

namespace dynvm::compiler {
namespace {

using relay_text::Lexer;
using relay_text::Token;
using relay_text::TokenKind;

class Parser {
 public:
  Parser(std::string_view text, std::string_view source, absl::Span<const NDArray> constants,
         Module& module, bool free_vars)
      : text_(text), source_(source), lexer_(text), constants_(constants), module_(module),
        free_vars_allowed_(free_vars) {}

  absl::Status ParseModule();
  absl::StatusOr<ParsedExpr> ParseStandalone();

 private:
  // Tokens.
  const Token& Peek(size_t ahead = 0);
  Token Take();
  bool IsPunct(std::string_view p, size_t ahead = 0) {
    return Peek(ahead).kind == TokenKind::kPunct && Peek(ahead).text == p;
  }
  bool IsName(std::string_view name, size_t ahead = 0) {
    return Peek(ahead).kind == TokenKind::kName && Peek(ahead).text == name;
  }
  bool TryPunct(std::string_view p) {
    if (!IsPunct(p)) return false;
    Take();
    return true;
  }
  absl::Status Expect(std::string_view p);
  absl::StatusOr<std::string> ExpectName(std::string_view what);
  absl::Status Error(const Token& at, absl::string_view message) const;
  // "model.relay:3:18": where `at` is, as expressions record it (Expr::source).
  std::string Position(const Token& at) const { return absl::StrFormat("%s:%d:%d", source_, at.line, at.col); }
  absl::Status Expected(std::string_view what) {
    return Error(Peek(), absl::StrCat("expected ", std::string(what), ", got ",
                                      relay_text::DescribeToken(Peek())));
  }
  // Counts one level of nesting; an error past kMaxNesting.
  absl::Status Enter();
  void Leave() { --depth_; }

  // Module level.
  absl::Status ParseVersion();
  absl::Status ParseTypeDef();
  absl::Status ParseDef();
  absl::StatusOr<std::vector<std::string>> ParseTypeParams();

  // Types and dims.
  absl::StatusOr<Type> ParseType();
  absl::StatusOr<Dim> ParseDim();
  absl::StatusOr<Dim> ParseDimTerm();
  absl::StatusOr<Dim> ParseDimFactor();

  // Expressions.
  absl::StatusOr<Expr> ParseBlock();
  absl::StatusOr<Expr> ParseBraced();
  absl::StatusOr<Expr> ParseExpr() { return ParseBinary(0); }
  // Infix operators of precedence `level` and above (kBinaryLevels).
  absl::StatusOr<Expr> ParseBinary(int level);
  absl::StatusOr<Expr> ParseUnary();
  absl::StatusOr<Expr> ParsePostfix();
  absl::StatusOr<Expr> ParsePrimary();
  absl::StatusOr<Expr> ParseParenthesized();
  absl::Status ParseArgs(std::vector<Expr>& args, kernels::Attrs& attrs, bool params);
  absl::StatusOr<kernels::AttrValue> ParseAttrValue();
  absl::StatusOr<Expr> ParseFunction(std::string_view global_name);
  absl::StatusOr<Expr> ParseIf();
  absl::StatusOr<Expr> ParseMatch();
  absl::StatusOr<Pattern> ParsePattern();
  absl::StatusOr<Expr> ParseVarDecl();
  absl::StatusOr<Expr> ParseLiteral(bool negative);
  absl::StatusOr<Expr> LookUpLocal(const Token& token);

  std::string_view text_, source_;
  Lexer lexer_;
  std::deque<Token> lookahead_;
  absl::Span<const NDArray> constants_;
  Module& module_;
  int depth_ = 0;

  std::vector<absl::flat_hash_map<std::string, Expr>> scopes_;
  std::vector<std::vector<std::string>> type_params_;
  absl::flat_hash_set<std::string> adts_;  // defined or being defined
  bool free_vars_allowed_;
  std::vector<Expr> free_vars_;
  absl::flat_hash_map<std::string, Expr> free_var_by_name_;
  std::vector<Token> global_uses_;
};

// RAII for one level of nesting.
#define DYNVM_NEST()                    \
  DYNVM_RETURN_IF_ERROR(Enter());       \
  struct NestGuard {                    \
    Parser* p;                          \
    ~NestGuard() { p->Leave(); }        \
  } nest_guard_{this}

const Token& Parser::Peek(size_t ahead) {
  while (lookahead_.size() <= ahead) lookahead_.push_back(lexer_.Next());
  return lookahead_[ahead];
}

Token Parser::Take() {
  Peek();
  Token t = std::move(lookahead_.front());
  lookahead_.pop_front();
  return t;
}

// "\n  <the line>\n  <spaces>^" for the character at `offset` of `text`, column `col`.
std::string LineWithCaret(std::string_view text, size_t offset, int col) {
  size_t begin = offset;
  while (begin > 0 && text[begin - 1] != '\n') --begin;
  size_t end = text.find('\n', offset);
  if (end == std::string_view::npos) end = text.size();
  return "\n  " + std::string(text.substr(begin, end - begin)) + "\n  " + std::string(col - 1, ' ') + "^";
}

absl::Status Parser::Error(const Token& at, absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrFormat("%s:%d:%d: %s%s", source_, at.line, at.col, message,
                                                    LineWithCaret(text_, at.offset, at.col)));
}

absl::Status Parser::Expect(std::string_view p) {
  if (Peek().kind == TokenKind::kError) return Error(Peek(), Peek().text);
  if (!TryPunct(p)) return Expected(absl::StrCat("'", std::string(p), "'"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> Parser::ExpectName(std::string_view what) {
  if (Peek().kind != TokenKind::kName) return Expected(what);
  return Take().text;
}

absl::Status Parser::Enter() {
  if (++depth_ > kMaxNesting) {
    --depth_;
    return Error(Peek(), absl::StrCat("nesting deeper than ", kMaxNesting, " levels"));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Module level

absl::Status Parser::ParseModule() {
  if (IsPunct("#")) DYNVM_RETURN_IF_ERROR(ParseVersion());
  while (Peek().kind != TokenKind::kEnd) {
    if (Peek().kind == TokenKind::kError) return Error(Peek(), Peek().text);
    if (IsName("type")) {
      DYNVM_RETURN_IF_ERROR(ParseTypeDef());
    } else if (IsName("def")) {
      DYNVM_RETURN_IF_ERROR(ParseDef());
    } else if (IsPunct("#")) {
      return Error(Peek(), "a '#' here: only the version header and a final #[metadata] section are read");
    } else {
      return Expected("'def' or 'type'");
    }
  }
  for (const Token& use : global_uses_) {
    if (!module_.HasFunction(use.text)) {
      return Error(use, absl::StrCat("undefined function @", use.text));
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseVersion() {
  Take();  // '#'
  DYNVM_RETURN_IF_ERROR(Expect("["));
  if (!IsName("version")) return Expected("'version'");
  Take();
  DYNVM_RETURN_IF_ERROR(Expect("="));
  if (Peek().kind != TokenKind::kString) return Expected("a version string");
  if (Peek().text != "0.0.5") {
    return Error(Peek(), absl::StrCat("unsupported version \"", Peek().text, "\": expected \"0.0.5\""));
  }
  Take();
  return Expect("]");
}

absl::StatusOr<std::vector<std::string>> Parser::ParseTypeParams() {
  std::vector<std::string> params;
  if (!TryPunct("[")) return params;
  do {
    DYNVM_ASSIGN_OR_RETURN(std::string name, ExpectName("a type parameter"));
    params.push_back(std::move(name));
  } while (TryPunct(","));
  DYNVM_RETURN_IF_ERROR(Expect("]"));
  return params;
}

absl::Status Parser::ParseTypeDef() {
  Take();  // 'type'
  const Token name_token = Peek();
  DYNVM_ASSIGN_OR_RETURN(const std::string name, ExpectName("a type name"));
  if (adts_.contains(name)) return Error(name_token, absl::StrCat("type ", name, " is defined twice"));
  DYNVM_ASSIGN_OR_RETURN(std::vector<std::string> params, ParseTypeParams());
  adts_.insert(name);  // constructors may refer to the type itself
  type_params_.push_back(params);
  TypeData data{name, params, {}};
  DYNVM_RETURN_IF_ERROR(Expect("{"));
  while (!IsPunct("}")) {
    const Token ctor_token = Peek();
    DYNVM_ASSIGN_OR_RETURN(const std::string ctor, ExpectName("a constructor name or '}'"));
    std::vector<Type> fields;
    if (TryPunct("(")) {
      do {
        DYNVM_ASSIGN_OR_RETURN(Type t, ParseType());
        fields.push_back(std::move(t));
      } while (TryPunct(","));
      DYNVM_RETURN_IF_ERROR(Expect(")"));
    }
    if (module_.FindConstructor(ctor) != nullptr) {
      return Error(ctor_token, absl::StrCat("constructor ", ctor, " is defined twice"));
    }
    data.constructors.push_back(Expr::Constructor(ctor, name, static_cast<int>(data.constructors.size()), std::move(fields)));
    if (!TryPunct(",")) break;
  }
  DYNVM_RETURN_IF_ERROR(Expect("}"));
  type_params_.pop_back();
  const absl::Status added = module_.AddType(std::move(data));
  if (!added.ok()) return Error(name_token, added.message());
  return absl::OkStatus();
}

absl::Status Parser::ParseDef() {
  Take();  // 'def'
  const Token name = Peek();
  if (name.kind != TokenKind::kGlobal) return Expected("a function name like @main");
  Take();
  if (module_.HasFunction(name.text)) {
    return Error(name, absl::StrCat("function @", name.text, " is defined twice"));
  }
  DYNVM_ASSIGN_OR_RETURN(Expr fn, ParseFunction(name.text));
  return module_.AddFunction(name.text, std::move(fn));
}

// ---------------------------------------------------------------------------------------
// Types

absl::StatusOr<Type> Parser::ParseType() {
  DYNVM_NEST();
  const Token at = Peek();
  if (TryPunct("(")) {
    std::vector<Type> fields;
    bool trailing_comma = false;
    while (!IsPunct(")")) {
      DYNVM_ASSIGN_OR_RETURN(Type t, ParseType());
      fields.push_back(std::move(t));
      trailing_comma = TryPunct(",");
      if (!trailing_comma) break;
    }
    DYNVM_RETURN_IF_ERROR(Expect(")"));
    if (fields.size() == 1 && !trailing_comma) return fields[0];
    return Type::Tuple(std::move(fields));
  }
  if (at.kind != TokenKind::kName) return Expected("a type");
  const std::string name = Take().text;
  if (name == "ref" && TryPunct("(")) {  // ref(T): a reference cell holding a T
    DYNVM_ASSIGN_OR_RETURN(Type value, ParseType());
    DYNVM_RETURN_IF_ERROR(Expect(")"));
    return Type::Ref(std::move(value));
  }
  if (name == "Tensor") {
    DYNVM_RETURN_IF_ERROR(Expect("["));
    DYNVM_RETURN_IF_ERROR(Expect("("));
    std::vector<Dim> shape;
    while (!IsPunct(")")) {
      DYNVM_ASSIGN_OR_RETURN(Dim d, ParseDim());
      shape.push_back(std::move(d));
      if (!TryPunct(",")) break;
    }
    DYNVM_RETURN_IF_ERROR(Expect(")"));
    DYNVM_RETURN_IF_ERROR(Expect(","));
    const Token dtype_token = Peek();
    DYNVM_ASSIGN_OR_RETURN(const std::string dtype_name, ExpectName("a dtype"));
    const absl::StatusOr<DType> dtype = ParseRelayDType(dtype_name);
    if (!dtype.ok()) return Error(dtype_token, dtype.status().message());
    DYNVM_RETURN_IF_ERROR(Expect("]"));
    return Type::Tensor(*dtype, std::move(shape));
  }
  if (name == "fn") {
    DYNVM_ASSIGN_OR_RETURN(std::vector<std::string> type_params, ParseTypeParams());
    type_params_.push_back(type_params);
    DYNVM_RETURN_IF_ERROR(Expect("("));
    std::vector<Type> params;
    while (!IsPunct(")")) {
      DYNVM_ASSIGN_OR_RETURN(Type t, ParseType());
      params.push_back(std::move(t));
      if (!TryPunct(",")) break;
    }
    DYNVM_RETURN_IF_ERROR(Expect(")"));
    DYNVM_RETURN_IF_ERROR(Expect("->"));
    DYNVM_ASSIGN_OR_RETURN(Type ret, ParseType());
    type_params_.pop_back();
    return Type::Func(std::move(params), std::move(ret), std::move(type_params));
  }
  if (absl::StatusOr<DType> dtype = ParseRelayDType(name); dtype.ok()) return Type::Scalar(*dtype);
  for (auto it = type_params_.rbegin(); it != type_params_.rend(); ++it) {
    if (std::find(it->begin(), it->end(), name) != it->end()) return Type::Var(name);
  }
  if (!adts_.contains(name)) return Error(at, absl::StrCat("unknown type '", name, "'"));
  std::vector<Type> args;
  if (TryPunct("[")) {
    do {
      DYNVM_ASSIGN_OR_RETURN(Type t, ParseType());
      args.push_back(std::move(t));
    } while (TryPunct(","));
    DYNVM_RETURN_IF_ERROR(Expect("]"));
  }
  return Type::Adt(name, std::move(args));
}

// dim := term (('+' | '-') term)*
absl::StatusOr<Dim> Parser::ParseDim() {
  DYNVM_ASSIGN_OR_RETURN(Dim d, ParseDimTerm());
  while (IsPunct("+") || IsPunct("-")) {
    const bool add = Take().text == "+";
    DYNVM_ASSIGN_OR_RETURN(const Dim rhs, ParseDimTerm());
    d = add ? d + rhs : d - rhs;
  }
  return d;
}

// term := factor (('*' | '/' | '%') factor)*
absl::StatusOr<Dim> Parser::ParseDimTerm() {
  DYNVM_ASSIGN_OR_RETURN(Dim d, ParseDimFactor());
  while (IsPunct("*") || IsPunct("/") || IsPunct("%")) {
    const std::string op = Take().text;
    DYNVM_ASSIGN_OR_RETURN(const Dim rhs, ParseDimFactor());
    d = op == "*" ? d * rhs : op == "/" ? FloorDiv(d, rhs) : FloorMod(d, rhs);
  }
  return d;
}

// factor := INT | NAME | '?' | '-' factor | '(' dim ')' | (min|max) '(' dim ',' dim ')'
absl::StatusOr<Dim> Parser::ParseDimFactor() {
  DYNVM_NEST();
  const Token at = Peek();
  if (TryPunct("?")) return Dim::Any();
  if (TryPunct("-")) {
    DYNVM_ASSIGN_OR_RETURN(const Dim d, ParseDimFactor());
    return -d;
  }
  if (TryPunct("(")) {
    DYNVM_ASSIGN_OR_RETURN(const Dim d, ParseDim());
    DYNVM_RETURN_IF_ERROR(Expect(")"));
    return d;
  }
  if (at.kind == TokenKind::kInt) {
    Take();
    const absl::StatusOr<int64_t> v = ParseInt(at.text);
    if (!v.ok()) return Error(at, v.status().message());
    return Dim(*v);
  }
  if (at.kind == TokenKind::kName) {
    Take();
    if ((at.text == "min" || at.text == "max") && TryPunct("(")) {
      DYNVM_ASSIGN_OR_RETURN(const Dim a, ParseDim());
      DYNVM_RETURN_IF_ERROR(Expect(","));
      DYNVM_ASSIGN_OR_RETURN(const Dim b, ParseDim());
      DYNVM_RETURN_IF_ERROR(Expect(")"));
      return at.text == "min" ? Min(a, b) : Max(a, b);
    }
    if (at.text.find('.') != std::string::npos) {
      return Error(at, absl::StrCat("'", at.text, "' is not a dimension: symbols are identifiers"));
    }
    return Dim::Symbol(at.text);
  }
  return Expected("a dimension (an integer, a symbol or '?')");
}

// ---------------------------------------------------------------------------------------
// Expressions

// block := ('let' var '=' expr ';' | %N '=' expr ';')* expr
absl::StatusOr<Expr> Parser::ParseBlock() {
  DYNVM_NEST();
  scopes_.emplace_back();
  struct PendingLet {
    Expr var, value;
    std::string at;  // where its `let` is
  };
  std::vector<PendingLet> lets;
  Expr result;
  while (true) {
    if (IsName("let")) {
      const Token at = Take();
      DYNVM_ASSIGN_OR_RETURN(Expr var, ParseVarDecl());
      // The variable is in scope in its own value, so that a let-bound fn may recurse.
      scopes_.back()[absl::StrCat("%", var.name())] = var;
      DYNVM_RETURN_IF_ERROR(Expect("="));
      DYNVM_ASSIGN_OR_RETURN(Expr value, ParseExpr());
      DYNVM_RETURN_IF_ERROR(Expect(";"));
      lets.push_back({std::move(var), std::move(value), Position(at)});
    } else if (IsName("free_var")) {
      // TVM prints an expression's free variables first: `free_var %x: T;`.
      const Token at = Take();
      if (!free_vars_allowed_) {
        return Error(at, "free_var in a module: a function's inputs are its parameters");
      }
      DYNVM_ASSIGN_OR_RETURN(Expr var, ParseVarDecl());
      DYNVM_RETURN_IF_ERROR(Expect(";"));
      const std::string key = absl::StrCat("%", var.name());
      if (free_var_by_name_.contains(key)) {
        return Error(at, absl::StrCat("free variable %", var.name(), " is declared twice"));
      }
      free_var_by_name_[key] = var;
      free_vars_.push_back(var);
    } else if (Peek().kind == TokenKind::kLocal && IsPunct("=", 1)) {
      const Token name = Take();
      Take();  // '='
      DYNVM_ASSIGN_OR_RETURN(Expr value, ParseExpr());
      DYNVM_RETURN_IF_ERROR(Expect(";"));
      scopes_.back()[absl::StrCat("%", name.text)] = std::move(value);
    } else {
      DYNVM_ASSIGN_OR_RETURN(result, ParseExpr());
      break;
    }
  }
  scopes_.pop_back();
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
    result = Expr::Let(std::move(it->var), std::move(it->value), std::move(result)).WithSource(std::move(it->at));
  }
  return result;
}

absl::StatusOr<Expr> Parser::ParseBraced() {
  DYNVM_RETURN_IF_ERROR(Expect("{"));
  DYNVM_ASSIGN_OR_RETURN(Expr body, ParseBlock());
  DYNVM_RETURN_IF_ERROR(Expect("}"));
  return body;
}

// Relay's infix operators, loosest first, each level left-associative (TVM's grammar):
//   == !=      < > <= >=      + -      * /
// and unary minus tighter than all of them. Each is the call of its operator.
struct BinaryOp {
  std::string_view token, op;
};
constexpr BinaryOp kEquality[] = {{"==", "equal"}, {"!=", "not_equal"}};
constexpr BinaryOp kComparison[] = {{"<", "less"}, {">", "greater"}, {"<=", "less_equal"}, {">=", "greater_equal"}};
constexpr BinaryOp kAdditive[] = {{"+", "add"}, {"-", "subtract"}};
constexpr BinaryOp kMultiplicative[] = {{"*", "multiply"}, {"/", "divide"}};
constexpr absl::Span<const BinaryOp> kBinaryLevels[] = {kEquality, kComparison, kAdditive, kMultiplicative};
constexpr int kNumBinaryLevels = 4;

// binary(level) := binary(level + 1) (op(level) binary(level + 1))*
absl::StatusOr<Expr> Parser::ParseBinary(int level) {
  if (level == kNumBinaryLevels) return ParseUnary();
  DYNVM_NEST();
  DYNVM_ASSIGN_OR_RETURN(Expr e, ParseBinary(level + 1));
  while (true) {
    const BinaryOp* found = nullptr;
    for (const BinaryOp& b : kBinaryLevels[level]) {
      if (IsPunct(b.token)) found = &b;
    }
    if (found == nullptr) return e;
    const Token at = Take();
    DYNVM_ASSIGN_OR_RETURN(Expr rhs, ParseBinary(level + 1));
    e = Expr::Call(Expr::Op(found->op), {std::move(e), std::move(rhs)}, {}, Position(at));
  }
}

// unary := '-' unary | postfix (a minus before a number is part of the literal)
absl::StatusOr<Expr> Parser::ParseUnary() {
  const bool literal = Peek(1).kind == TokenKind::kInt || Peek(1).kind == TokenKind::kFloat;
  if (!IsPunct("-") || literal) return ParsePostfix();
  DYNVM_NEST();
  const Token at = Take();
  DYNVM_ASSIGN_OR_RETURN(Expr operand, ParseUnary());
  return Expr::Call(Expr::Op("negative"), {std::move(operand)}, {}, Position(at));
}

// postfix := primary ('(' args ')' | '.' INT)*
absl::StatusOr<Expr> Parser::ParsePostfix() {
  DYNVM_NEST();
  const Token start = Peek();
  DYNVM_ASSIGN_OR_RETURN(Expr e, ParsePrimary());
  while (true) {
    if (TryPunct("(")) {
      std::vector<Expr> args;
      kernels::Attrs attrs;
      DYNVM_RETURN_IF_ERROR(ParseArgs(args, attrs, /*params=*/false));
      e = Expr::Call(std::move(e), std::move(args), std::move(attrs), Position(start));
    } else if (IsPunct(".")) {
      const Token dot = Take();
      const Token index = Peek();
      if (index.kind != TokenKind::kInt) return Expected("a tuple index");
      Take();
      const absl::StatusOr<int64_t> i = ParseInt(index.text);
      if (!i.ok() || *i > std::numeric_limits<int>::max()) {
        return Error(index, absl::StrCat("tuple index ", index.text, " out of range"));
      }
      e = Expr::TupleGetItem(std::move(e), static_cast<int>(*i)).WithSource(Position(dot));
    } else {
      return e;
    }
  }
}

absl::StatusOr<Expr> Parser::ParsePrimary() {
  const Token at = Peek();
  switch (at.kind) {
    case TokenKind::kLocal: Take(); return LookUpLocal(at);
    case TokenKind::kGlobal:
      Take();
      global_uses_.push_back(at);
      return Expr::GlobalVar(at.text).WithSource(Position(at));
    case TokenKind::kInt:
    case TokenKind::kFloat: return ParseLiteral(/*negative=*/false);
    case TokenKind::kError: return Error(at, at.text);
    case TokenKind::kEnd: return Expected("an expression");
    default: break;
  }
  if (at.kind == TokenKind::kPunct) {
    if (at.text == "(") return ParseParenthesized();
    if (at.text == "-" && (Peek(1).kind == TokenKind::kInt || Peek(1).kind == TokenKind::kFloat)) {
      Take();
      return ParseLiteral(/*negative=*/true);
    }
    return Expected("an expression");
  }
  if (at.kind != TokenKind::kName) return Expected("an expression");
  if (at.text == "fn") {
    Take();
    DYNVM_ASSIGN_OR_RETURN(Expr fn, ParseFunction(""));
    return fn.WithSource(Position(at));
  }
  if (at.text == "if") return ParseIf();
  if (at.text == "match") return ParseMatch();
  if (at.text == "let") return ParseBlock();
  Take();
  if (at.text == "True" || at.text == "False") {
    NDArray t = *NDArrayObj::Empty({}, DType::kBool, MakeNaiveAllocator());
    *t->data_as<uint8_t>() = at.text == "True";
    return Expr::Constant(std::move(t));
  }
  if (at.text == "meta") {
    DYNVM_RETURN_IF_ERROR(Expect("["));
    if (!IsName("relay.Constant")) return Expected("'relay.Constant'");
    Take();
    DYNVM_RETURN_IF_ERROR(Expect("]"));
    DYNVM_RETURN_IF_ERROR(Expect("["));
    const Token index = Peek();
    if (index.kind != TokenKind::kInt) return Expected("a constant index");
    Take();
    DYNVM_RETURN_IF_ERROR(Expect("]"));
    const absl::StatusOr<int64_t> i = ParseInt(index.text);
    if (!i.ok() || *i < 0 || static_cast<uint64_t>(*i) >= constants_.size()) {
      return Error(index, absl::StrFormat("meta[relay.Constant][%s] is out of range: %d constants given",
                                          index.text, constants_.size()));
    }
    return Expr::Constant(constants_[*i]);
  }
  if (const Expr* ctor = module_.FindConstructor(at.text)) return *ctor;
  return Expr::Op(at.text).WithSource(Position(at));
}

// '(' ')' | '(' block ')' | '(' expr ',' ')' | '(' expr (',' expr)+ ')'
absl::StatusOr<Expr> Parser::ParseParenthesized() {
  DYNVM_NEST();
  const Token open = Take();
  if (TryPunct(")")) return Expr::Tuple({});
  DYNVM_ASSIGN_OR_RETURN(Expr first, ParseBlock());
  if (TryPunct(")")) return first;
  if (!IsPunct(",")) return Expected("',' or ')'");
  std::vector<Expr> fields = {std::move(first)};
  while (TryPunct(",") && !IsPunct(")")) {
    DYNVM_ASSIGN_OR_RETURN(Expr field, ParseExpr());
    fields.push_back(std::move(field));
  }
  DYNVM_RETURN_IF_ERROR(Expect(")"));
  return Expr::Tuple(std::move(fields)).WithSource(Position(open));
}

// The part after '(': (item (',' item)*)? ')', where an item is `name=value` (an
// attribute, after every other item) or an argument (`params`: a declared parameter).
absl::Status Parser::ParseArgs(std::vector<Expr>& args, kernels::Attrs& attrs, bool params) {
  if (TryPunct(")")) return absl::OkStatus();
  absl::flat_hash_set<std::string> unset;  // attributes given as None
  do {
    if (Peek().kind == TokenKind::kName && IsPunct("=", 1)) {
      const Token name = Take();
      Take();  // '='
      if (attrs.contains(name.text) || unset.contains(name.text)) {
        return Error(name, absl::StrCat("attribute '", name.text, "' is given twice"));
      }
      if (IsName("None")) {  // TVM prints every unset attribute so: the default applies
        Take();
        unset.insert(name.text);
        continue;
      }
      DYNVM_ASSIGN_OR_RETURN(attrs[name.text], ParseAttrValue());
      continue;
    }
    if (!attrs.empty() || !unset.empty()) return Error(Peek(), "arguments must come before attributes");
    if (params) {
      DYNVM_ASSIGN_OR_RETURN(Expr var, ParseVarDecl());
      scopes_.back()[absl::StrCat("%", var.name())] = var;
      args.push_back(std::move(var));
    } else {
      DYNVM_ASSIGN_OR_RETURN(Expr arg, ParseExpr());
      args.push_back(std::move(arg));
    }
  } while (TryPunct(","));
  return Expect(")");
}

absl::StatusOr<kernels::AttrValue> Parser::ParseAttrValue() {
  DYNVM_NEST();
  const Token at = Peek();
  if (at.kind == TokenKind::kString) return Take().text;
  if (IsName("True") || IsName("False")) return int64_t{Take().text == "True"};
  if (TryPunct("[")) {  // numbers, or lists of them flattened (pad_width=[[0, 0], [1, 1]])
    std::vector<int64_t> ints;
    std::vector<double> floats;
    bool any_float = false;
    while (!IsPunct("]")) {
      DYNVM_ASSIGN_OR_RETURN(kernels::AttrValue item, ParseAttrValue());
      if (const auto* i = std::get_if<int64_t>(&item)) {
        ints.push_back(*i);
        floats.push_back(static_cast<double>(*i));
      } else if (const auto* d = std::get_if<double>(&item)) {
        any_float = true;
        floats.push_back(*d);
      } else if (const auto* is = std::get_if<std::vector<int64_t>>(&item)) {
        ints.insert(ints.end(), is->begin(), is->end());
        floats.insert(floats.end(), is->begin(), is->end());
      } else if (const auto* ds = std::get_if<std::vector<double>>(&item)) {
        any_float = true;
        floats.insert(floats.end(), ds->begin(), ds->end());
      } else {
        return Error(at, "a list attribute holds numbers or lists of numbers only");
      }
      if (!TryPunct(",")) break;
    }
    DYNVM_RETURN_IF_ERROR(Expect("]"));
    if (any_float) return floats;
    return ints;
  }
  const bool negative = TryPunct("-");
  const Token number = Peek();
  if (number.kind != TokenKind::kInt && number.kind != TokenKind::kFloat) {
    return Expected("an attribute value (a number, a string, True, False or a list)");
  }
  DYNVM_ASSIGN_OR_RETURN(const Expr literal, ParseLiteral(negative));
  const NDArray& v = literal.value();
  switch (v->dtype()) {
    case DType::kF32: return static_cast<double>(*v->data_as<float>());
    case DType::kF64: return *v->data_as<double>();
    case DType::kI32: return int64_t{*v->data_as<int32_t>()};
    default: return *v->data_as<int64_t>();
  }
}

// A literal: int (int32), <int>i8/i16/i32/i64, <int>u8/u16/u32/u64 (range-checked),
// float or <float>f / f32 (float32), f16, f64; any number with f16/f32/f64 is a float.
absl::StatusOr<Expr> Parser::ParseLiteral(bool negative) {
  const Token at = Take();
  size_t digits = 0;
  const std::string& s = at.text;
  while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) || s[digits] == '.' ||
                               ((s[digits] == 'e' || s[digits] == 'E') && digits + 1 < s.size() &&
                                (std::isdigit(static_cast<unsigned char>(s[digits + 1])) ||
                                 s[digits + 1] == '-' || s[digits + 1] == '+')) ||
                               ((s[digits] == '-' || s[digits] == '+') && digits > 0 &&
                                (s[digits - 1] == 'e' || s[digits - 1] == 'E')))) {
    ++digits;
  }
  const std::string number = absl::StrCat(negative ? "-" : "", s.substr(0, digits));
  const std::string suffix = s.substr(digits);
  static const absl::flat_hash_map<std::string, DType> kSuffixes = {
      {"f", DType::kF32},   {"f16", DType::kF16}, {"f32", DType::kF32}, {"f64", DType::kF64},
      {"i8", DType::kI8},   {"i16", DType::kI16}, {"i32", DType::kI32}, {"i64", DType::kI64},
      {"u8", DType::kU8},   {"u16", DType::kU16}, {"u32", DType::kU32}, {"u64", DType::kU64}};
  DType dtype = at.kind == TokenKind::kFloat ? DType::kF32 : DType::kI32;
  if (!suffix.empty()) {
    const auto it = kSuffixes.find(suffix);
    if (it == kSuffixes.end()) {
      return Error(at, absl::StrCat("unknown literal suffix '", suffix,
                                    "': expected f, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32 or u64"));
    }
    dtype = it->second;
  }
  if (at.kind == TokenKind::kFloat && !IsFloatDType(dtype)) {
    return Error(at, absl::StrCat("'", s, "' has a fraction or exponent: an integer suffix does not fit it"));
  }
  NDArray t = *NDArrayObj::Empty({}, dtype, MakeNaiveAllocator());
  if (IsFloatDType(dtype)) {
    const absl::StatusOr<double> v = ParseDouble(number);
    if (!v.ok()) return Error(at, v.status().message());
    const double limit = dtype == DType::kF16 ? 65504.0 : dtype == DType::kF32 ? std::numeric_limits<float>::max()
                                                                               : std::numeric_limits<double>::max();
    if (std::fabs(*v) > limit) {
      return Error(at, absl::StrFormat("float '%s' out of range for %s", number, RelayDTypeName(dtype)));
    }
    SetFloatElement(*t, 0, *v);
  } else {
    // Integers: int32 unless suffixed; the value must fit the type.
    const absl::StatusOr<int64_t> v = ParseInt(number);
    if (!v.ok()) return Error(at, v.status().message());
    if (!SetIntegerElement(*t, 0, *v).ok()) {
      if (suffix.empty()) {
        return Error(at, absl::StrCat("integer ", number, " does not fit int32: write ", number, "i64"));
      }
      return Error(at, absl::StrCat("integer ", number, " does not fit ", std::string(RelayDTypeName(dtype))));
    }
  }
  return Expr::Constant(std::move(t));
}

absl::StatusOr<Expr> Parser::LookUpLocal(const Token& token) {
  const std::string key = absl::StrCat("%", token.text);
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    const auto found = it->find(key);
    if (found != it->end()) return found->second;
  }
  if (!free_vars_allowed_) return Error(token, absl::StrCat("unbound variable %", token.text));
  auto [entry, inserted] = free_var_by_name_.try_emplace(key);
  if (inserted) {
    entry->second = Expr::Var(token.text);
    free_vars_.push_back(entry->second);
  }
  return entry->second;
}

// %name (':' type)?
absl::StatusOr<Expr> Parser::ParseVarDecl() {
  const Token name = Peek();
  if (name.kind != TokenKind::kLocal) return Expected("a variable like %x");
  Take();
  std::optional<Type> annotation;
  if (TryPunct(":")) {
    DYNVM_ASSIGN_OR_RETURN(annotation, ParseType());
  }
  return Expr::Var(name.text, std::move(annotation));
}

// After 'fn' or 'def @name': ('[' type params ']')? '(' params ')' ('->' type)? '{' block '}'
absl::StatusOr<Expr> Parser::ParseFunction(std::string_view global_name) {
  DYNVM_NEST();
  DYNVM_ASSIGN_OR_RETURN(std::vector<std::string> type_params, ParseTypeParams());
  type_params_.push_back(type_params);
  scopes_.emplace_back();
  DYNVM_RETURN_IF_ERROR(Expect("("));
  std::vector<Expr> params;
  kernels::Attrs attrs;
  DYNVM_RETURN_IF_ERROR(ParseArgs(params, attrs, /*params=*/true));
  std::optional<Type> ret;
  if (TryPunct("->")) {
    DYNVM_ASSIGN_OR_RETURN(ret, ParseType());
  }
  DYNVM_ASSIGN_OR_RETURN(Expr body, ParseBraced());
  scopes_.pop_back();
  type_params_.pop_back();
  return Expr::Function(std::move(params), std::move(body), std::move(ret), std::move(type_params),
                        std::move(attrs));
}

absl::StatusOr<Expr> Parser::ParseIf() {
  DYNVM_NEST();
  const Token at = Take();  // 'if'
  DYNVM_RETURN_IF_ERROR(Expect("("));
  DYNVM_ASSIGN_OR_RETURN(Expr cond, ParseExpr());
  DYNVM_RETURN_IF_ERROR(Expect(")"));
  DYNVM_ASSIGN_OR_RETURN(Expr then_branch, ParseBraced());
  if (!IsName("else")) return Expected("'else'");
  Take();
  DYNVM_ASSIGN_OR_RETURN(Expr else_branch, ParseBraced());
  return Expr::If(std::move(cond), std::move(then_branch), std::move(else_branch)).WithSource(Position(at));
}

// 'match' '?'? '(' expr ')' '{' (pattern '=>' ('{' block '}' | expr) ','?)* '}'
absl::StatusOr<Expr> Parser::ParseMatch() {
  DYNVM_NEST();
  const Token at = Take();  // 'match'
  const bool complete = !TryPunct("?");
  // TVM's `match (%x)` parenthesizes the value; `match (%p, %q)` matches a tuple.
  if (!IsPunct("(")) return Expected("'('");
  DYNVM_ASSIGN_OR_RETURN(Expr data, ParseParenthesized());
  DYNVM_RETURN_IF_ERROR(Expect("{"));
  std::vector<Clause> clauses;
  while (!IsPunct("}")) {
    scopes_.emplace_back();
    DYNVM_ASSIGN_OR_RETURN(Pattern pattern, ParsePattern());
    DYNVM_RETURN_IF_ERROR(Expect("=>"));
    absl::StatusOr<Expr> body = IsPunct("{") ? ParseBraced() : ParseExpr();
    if (!body.ok()) return body.status();
    scopes_.pop_back();
    clauses.push_back({std::move(pattern), *std::move(body)});
    if (!TryPunct(",")) break;
  }
  DYNVM_RETURN_IF_ERROR(Expect("}"));
  return Expr::Match(std::move(data), std::move(clauses), complete).WithSource(Position(at));
}

// '_' | %var (':' type)? | Ctor ('(' patterns ')')? | '(' patterns ')'
absl::StatusOr<Pattern> Parser::ParsePattern() {
  DYNVM_NEST();
  const Token at = Peek();
  const auto fields = [&]() -> absl::StatusOr<std::vector<Pattern>> {
    std::vector<Pattern> out;
    while (!IsPunct(")")) {
      DYNVM_ASSIGN_OR_RETURN(Pattern p, ParsePattern());
      out.push_back(std::move(p));
      if (!TryPunct(",")) break;
    }
    DYNVM_RETURN_IF_ERROR(Expect(")"));
    return out;
  };
  if (IsName("_")) {
    Take();
    return Pattern::Wildcard();
  }
  if (at.kind == TokenKind::kLocal) {
    DYNVM_ASSIGN_OR_RETURN(Expr var, ParseVarDecl());
    scopes_.back()[absl::StrCat("%", var.name())] = var;
    return Pattern::Bind(std::move(var));
  }
  if (TryPunct("(")) {
    DYNVM_ASSIGN_OR_RETURN(std::vector<Pattern> items, fields());
    return Pattern::Tuple(std::move(items));
  }
  if (at.kind != TokenKind::kName) return Expected("a pattern");
  Take();
  const Expr* ctor = module_.FindConstructor(at.text);
  if (ctor == nullptr) return Error(at, absl::StrCat("unknown constructor ", at.text));
  std::vector<Pattern> items;
  if (TryPunct("(")) {
    DYNVM_ASSIGN_OR_RETURN(items, fields());
  }
  if (items.size() != ctor->field_types().size()) {
    return Error(at, absl::StrFormat("constructor %s has %d fields, the pattern gives %d", at.text,
                                     ctor->field_types().size(), items.size()));
  }
  return Pattern::Constructor(*ctor, std::move(items));
}

absl::StatusOr<ParsedExpr> Parser::ParseStandalone() {
  for (const std::string& name : module_.type_names()) adts_.insert(name);
  DYNVM_ASSIGN_OR_RETURN(Expr e, ParseBlock());
  if (Peek().kind != TokenKind::kEnd) return Expected("end of input");
  return ParsedExpr{std::move(e), std::move(free_vars_)};
}

// The program and the tensors of its `#[metadata]` section (metadata.h), if it ends
// with one; otherwise the text and `constants`. Not both.
struct ProgramText {
  std::string_view program;
  absl::Span<const NDArray> constants;
  std::vector<NDArray> metadata;  // what `constants` views when the text has a section
};

absl::StatusOr<ProgramText> SplitMetadata(std::string_view text, absl::Span<const NDArray> constants,
                                          std::string_view source_name) {
  Lexer lexer(text);
  for (Token t = lexer.Next(); t.kind != TokenKind::kEnd; t = lexer.Next()) {
    if (t.kind != TokenKind::kPunct || t.text != "#") continue;
    const Token open = lexer.Next(), name = lexer.Next(), close = lexer.Next();
    if (open.text != "[" || name.kind != TokenKind::kName || name.text != "metadata" || close.text != "]") continue;
    if (!constants.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a #[metadata] section and %d constants beside the text: give the weights one way", source_name,
          constants.size()));
    }
    ProgramText out{text.substr(0, t.offset), {}, {}};
    DYNVM_ASSIGN_OR_RETURN(out.metadata, ParseRelayMetadata(text.substr(close.offset + 1), source_name));
    out.constants = out.metadata;
    return out;
  }
  return ProgramText{text, constants, {}};
}

}  // namespace

absl::StatusOr<Module> ParseModule(std::string_view text, absl::Span<const NDArray> constants,
                                   std::string_view source_name) {
  DYNVM_ASSIGN_OR_RETURN(const ProgramText program, SplitMetadata(text, constants, source_name));
  Module module;
  Parser parser(program.program, source_name, program.constants, module, /*free_vars=*/false);
  DYNVM_RETURN_IF_ERROR(parser.ParseModule());
  return module;
}

absl::Status ShowSourceLine(const absl::Status& status, std::string_view text, std::string_view source_name) {
  const std::string message(status.message());
  const std::string prefix = std::string(source_name) + ":";
  if (message.compare(0, prefix.size(), prefix) != 0) return status;
  // "<line>:<col>:" after the prefix.
  int line = 0, col = 0, consumed = 0;
  if (std::sscanf(message.c_str() + prefix.size(), "%9d:%9d:%n", &line, &col, &consumed) != 2 || consumed == 0 ||
      line < 1 || col < 1) {
    return status;
  }
  size_t offset = 0;
  for (int l = 1; l < line; ++l) {
    offset = text.find('\n', offset);
    if (offset == std::string_view::npos) return status;
    ++offset;
  }
  const size_t line_end = std::min(text.find('\n', offset), text.size());
  if (offset + col - 1 > line_end) return status;
  // The caret goes under the message's first line.
  const size_t first_end = std::min(message.find('\n'), message.size());
  return absl::Status(status.code(), message.substr(0, first_end) + LineWithCaret(text, offset + col - 1, col) +
                                         message.substr(first_end));
}

absl::StatusOr<ParsedExpr> ParseExpr(std::string_view text, const Module& module,
                                     absl::Span<const NDArray> constants,
                                     std::string_view source_name) {
  DYNVM_ASSIGN_OR_RETURN(const ProgramText program, SplitMetadata(text, constants, source_name));
  Module copy = module;
  Parser parser(program.program, source_name, program.constants, copy, /*free_vars=*/true);
  return parser.ParseStandalone();
}

}  // namespace dynvm::compiler
