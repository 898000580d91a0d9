// The assembler is a recursive-descent parser over the tokens of internal/lexer.h. It
// reads the whole text first, recording every name an operand uses, then resolves the
// names (so functions, kernels, constants and labels may be used before they are
// defined) and encodes the code. Instructions are parsed generically from their operand
// format in vm/opcodes.def; only load_constf's float immediate is special.
#include "tools/asm/assembler.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "objects/ndarray.h"
#include "objects/string_object.h"
#include "serializer/npy.h"
#include "tools/asm/internal/lexer.h"
#include "tools/asm/internal/syntax.h"
#include "vm/bytecode.h"

namespace dynvm::tools {
namespace {

using internal::Token;
using internal::TokenKind;

// A position in the text, for messages.
struct Loc {
  int line = 0;
  int col = 0;
};
Loc LocOf(const Token& token) { return {token.line, token.col}; }

// Where a name was defined: its index in its table (a word offset for labels) and
// its position.
struct Definition {
  uint32_t index = 0;
  Loc loc;
};
using NameTable = absl::flat_hash_map<std::string, Definition>;

// A name an operand uses, resolved once the whole text is read.
struct NameRef {
  char letter;  // the operand's format letter: J, K, F or P
  std::string name;
  Loc loc;
  size_t item;     // the item of the function that uses it
  size_t operand;  // the index of the operand in that instruction
};

// One line of a function body: an instruction, or a raw `.word`.
struct CodeItem {
  vm::Instruction inst;
  std::optional<uint32_t> word;
  uint32_t offset = 0;  // in words from the start of the function
  Loc loc;
};

// A function as read, before names are resolved and its code is encoded.
struct FunctionDraft {
  vm::Function func;
  bool has_regs = false;  // `regs N` was given; else the frame is counted
  uint32_t size = 0;      // words of code so far
  std::vector<CodeItem> items;
  NameTable labels;
  std::vector<NameRef> refs;
};

// The frame a function needs when it does not say: its parameters and every register
// its code names.
uint32_t CountRegisters(const FunctionDraft& draft) {
  int64_t count = draft.func.num_params();
  for (const CodeItem& item : draft.items) {
    if (item.word) continue;
    size_t next = 0;
    for (char letter : vm::GetOpcodeInfo(item.inst.op).format) {
      if (letter == '+') {
        for (int64_t reg : item.inst.list) count = std::max(count, reg + 1);
      } else if (letter != '#') {
        const int64_t v = item.inst.operands[next++];
        if (letter == 'W' || letter == 'R') count = std::max(count, v + 1);
      }
    }
  }
  return static_cast<uint32_t>(std::min<int64_t>(count, UINT32_MAX));
}

// Reads one text into a spec; used once, by Assemble.
class Parser {
 public:
  Parser(std::string_view text, const AssembleOptions& options)
      : lexer_(text),
        options_(options),
        allocator_(options.allocator ? options.allocator : MakeNaiveAllocator()) {
    tok_ = lexer_.Next();
    next_ = lexer_.Next();
  }

  absl::StatusOr<vm::ExecutableSpec> Run();

 private:
  // Tokens and errors.
  void Advance() {
    tok_ = std::move(next_);
    next_ = lexer_.Next();
  }
  bool AtPunct(std::string_view punct) const {
    return tok_.kind == TokenKind::kPunct && tok_.text == punct;
  }
  bool AtName(std::string_view name) const {
    return tok_.kind == TokenKind::kName && tok_.text == name;
  }
  bool AtEndOfLine() const {
    return tok_.kind == TokenKind::kNewline || tok_.kind == TokenKind::kEnd;
  }
  absl::Status ErrorAt(Loc loc, absl::string_view message) const;
  absl::Status Expected(std::string_view what) const;
  absl::Status ExpectPunct(std::string_view punct);
  absl::Status ExpectEndOfLine(std::string_view after);
  absl::StatusOr<std::string> ExpectName(std::string_view what);
  absl::StatusOr<std::string> ExpectString(std::string_view what);
  absl::StatusOr<int64_t> ParseIntToken(const Token& token, int64_t min, int64_t max) const;
  absl::StatusOr<int64_t> ExpectInt(std::string_view what, int64_t min, int64_t max);
  absl::StatusOr<double> ExpectFloat(std::string_view what);
  absl::StatusOr<int64_t> ExpectRegister();
  absl::StatusOr<DType> ExpectDType();
  // Parses `open item, item, ... close`, calling `item` at the start of each item.
  absl::Status ParseList(std::string_view open, std::string_view close,
                         absl::FunctionRef<absl::Status()> item);
  absl::Status Define(NameTable& table, std::string_view what, const std::string& name,
                      uint32_t index, Loc loc) const;

  // Top level.
  absl::Status ParseDirective();
  absl::Status ParseKernel();
  absl::StatusOr<kernels::Attrs> ParseAttrs();
  absl::StatusOr<kernels::AttrValue> ParseAttrValue();
  absl::Status ParseConst();
  absl::StatusOr<Value> ParseConstValue();
  absl::StatusOr<Value> ParseTensor();
  absl::StatusOr<NDArray> ParseHexData(DType dtype, const std::vector<int64_t>& shape);
  absl::StatusOr<NDArray> ParseNpy(std::optional<std::pair<DType, std::vector<int64_t>>> declared);

  // Functions.
  absl::Status ParseFunction(Loc loc);
  // `depth`: 1 for a function's own signature, one more inside each tuple.
  absl::StatusOr<std::vector<vm::ValueSpec>> ParseSignature(int depth = 1);
  absl::StatusOr<vm::ValueSpec> ParseValueSpec(int depth);
  absl::StatusOr<vm::DimSpec> ParseDim();
  absl::Status ParseBodyLine(FunctionDraft& draft);
  absl::Status ParseInstruction(FunctionDraft& draft);
  absl::Status ParseOperands(FunctionDraft& draft, CodeItem& item);
  absl::Status ParseOperand(char letter, FunctionDraft& draft, CodeItem& item);
  absl::StatusOr<int64_t> ParseNumericOperand(char letter, vm::Opcode op);

  // After the text.
  absl::Status ResolveNames(FunctionDraft& draft) const;
  absl::Status Encode(const FunctionDraft& draft, std::vector<uint32_t>* code) const;

  internal::Lexer lexer_;
  const AssembleOptions& options_;
  std::shared_ptr<Allocator> allocator_;
  Token tok_;   // the current token
  Token next_;  // one token of lookahead, for `name:` (labels, parameter names)
  vm::ExecutableSpec spec_;
  std::vector<FunctionDraft> functions_;
  NameTable kernel_names_;
  NameTable constant_names_;
  NameTable function_names_;
};

absl::StatusOr<vm::ExecutableSpec> Parser::Run() {
  while (tok_.kind != TokenKind::kEnd) {
    if (tok_.kind == TokenKind::kNewline) {
      Advance();
      continue;
    }
    DYNVM_RETURN_IF_ERROR(ParseDirective());
  }
  for (FunctionDraft& draft : functions_) {
    DYNVM_RETURN_IF_ERROR(ResolveNames(draft));
    if (!draft.has_regs) draft.func.num_registers = CountRegisters(draft);
    DYNVM_RETURN_IF_ERROR(Encode(draft, &draft.func.code));
    spec_.functions.push_back(std::move(draft.func));
  }
  return std::move(spec_);
}

// ---------------------------------------------------------------------------------
// Tokens and errors.

absl::Status Parser::ErrorAt(Loc loc, absl::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s:%d:%d: %s", options_.filename, loc.line, loc.col, message));
}

absl::Status Parser::Expected(std::string_view what) const {
  if (tok_.kind == TokenKind::kError) return ErrorAt(LocOf(tok_), tok_.text);
  return ErrorAt(LocOf(tok_),
                 absl::StrFormat("expected %s, got %s", what, internal::DescribeToken(tok_)));
}

absl::Status Parser::ExpectPunct(std::string_view punct) {
  if (!AtPunct(punct)) return Expected(absl::StrFormat("'%s'", punct));
  Advance();
  return absl::OkStatus();
}

absl::Status Parser::ExpectEndOfLine(std::string_view after) {
  if (!AtEndOfLine()) return Expected(absl::StrFormat("end of line after %s", after));
  if (tok_.kind == TokenKind::kNewline) Advance();
  return absl::OkStatus();
}

absl::StatusOr<std::string> Parser::ExpectName(std::string_view what) {
  if (tok_.kind != TokenKind::kName) return Expected(what);
  std::string name = std::move(tok_.text);
  Advance();
  return name;
}

absl::StatusOr<std::string> Parser::ExpectString(std::string_view what) {
  if (tok_.kind != TokenKind::kString) return Expected(what);
  std::string s = std::move(tok_.text);
  Advance();
  return s;
}

absl::StatusOr<int64_t> Parser::ParseIntToken(const Token& token, int64_t min, int64_t max) const {
  absl::StatusOr<int64_t> v = ParseInt(token.text);
  if (!v.ok()) return ErrorAt(LocOf(token), v.status().message());
  if (*v < min || *v > max) {
    return ErrorAt(LocOf(token),
                   absl::StrFormat("%s out of range: expected %d to %d", token.text, min, max));
  }
  return *v;
}

absl::StatusOr<int64_t> Parser::ExpectInt(std::string_view what, int64_t min, int64_t max) {
  if (tok_.kind != TokenKind::kInt) return Expected(what);
  DYNVM_ASSIGN_OR_RETURN(int64_t v, ParseIntToken(tok_, min, max));
  Advance();
  return v;
}

absl::StatusOr<double> Parser::ExpectFloat(std::string_view what) {
  if (tok_.kind != TokenKind::kFloat && tok_.kind != TokenKind::kInt) return Expected(what);
  absl::StatusOr<double> v = ParseDouble(tok_.text);
  if (!v.ok()) return ErrorAt(LocOf(tok_), v.status().message());
  Advance();
  return *v;
}

absl::StatusOr<int64_t> Parser::ExpectRegister() {
  const bool r_name = tok_.kind == TokenKind::kName && tok_.text.size() > 1 &&
                      tok_.text[0] == 'r' &&
                      std::all_of(tok_.text.begin() + 1, tok_.text.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  if (tok_.kind != TokenKind::kRegister && !r_name) return Expected("a register such as %0");
  Token digits = tok_;
  if (r_name) digits.text.erase(0, 1);
  DYNVM_ASSIGN_OR_RETURN(int64_t reg, ParseIntToken(digits, 0, UINT32_MAX));
  Advance();
  return reg;
}

// A dtype is its name, or its number (how the disassembler prints an invalid one).
absl::StatusOr<DType> Parser::ExpectDType() {
  if (tok_.kind == TokenKind::kInt) {
    DYNVM_ASSIGN_OR_RETURN(int64_t raw, ExpectInt("a dtype", 0, UINT8_MAX));
    return static_cast<DType>(raw);
  }
  if (tok_.kind != TokenKind::kName) return Expected("a dtype such as f32");
  absl::StatusOr<DType> dtype = ParseDType(tok_.text);
  if (!dtype.ok()) return ErrorAt(LocOf(tok_), dtype.status().message());
  Advance();
  return *dtype;
}

absl::Status Parser::ParseList(std::string_view open, std::string_view close,
                               absl::FunctionRef<absl::Status()> item) {
  DYNVM_RETURN_IF_ERROR(ExpectPunct(open));
  if (AtPunct(close)) {
    Advance();
    return absl::OkStatus();
  }
  while (true) {
    DYNVM_RETURN_IF_ERROR(item());
    if (AtPunct(close)) {
      Advance();
      return absl::OkStatus();
    }
    if (!AtPunct(",")) return Expected(absl::StrFormat("',' or '%s'", close));
    Advance();
  }
}

absl::Status Parser::Define(NameTable& table, std::string_view what, const std::string& name,
                            uint32_t index, Loc loc) const {
  auto [it, inserted] = table.try_emplace(name, Definition{index, loc});
  if (inserted) return absl::OkStatus();
  return ErrorAt(loc, absl::StrFormat("duplicate %s '%s': first defined at %d:%d", what, name,
                                      it->second.loc.line, it->second.loc.col));
}

// ---------------------------------------------------------------------------------
// Top level: .producer, .kernel, .const, .func.

absl::Status Parser::ParseDirective() {
  const Loc loc = LocOf(tok_);
  const bool known =
      tok_.kind == TokenKind::kDirective && (tok_.text == "producer" || tok_.text == "kernel" ||
                                             tok_.text == "const" || tok_.text == "func");
  if (!known) return Expected("a directive (.producer, .kernel, .const or .func)");
  const std::string directive = tok_.text;
  Advance();
  if (directive == "kernel") return ParseKernel();
  if (directive == "const") return ParseConst();
  if (directive == "func") return ParseFunction(loc);
  DYNVM_ASSIGN_OR_RETURN(spec_.producer, ExpectString("the producer in quotes"));
  return ExpectEndOfLine(".producer");
}

// .kernel NAME = "registry name" (INPUTS -> OUTPUTS) [{KEY = VALUE, ...}]
absl::Status Parser::ParseKernel() {
  const Loc loc = LocOf(tok_);
  DYNVM_ASSIGN_OR_RETURN(std::string name, ExpectName("a name for the kernel-table entry"));
  DYNVM_RETURN_IF_ERROR(
      Define(kernel_names_, "kernel", name, static_cast<uint32_t>(spec_.kernels.size()), loc));
  vm::KernelEntry entry;
  DYNVM_RETURN_IF_ERROR(ExpectPunct("="));
  DYNVM_ASSIGN_OR_RETURN(entry.name, ExpectString("the kernel's registry name in quotes"));
  DYNVM_RETURN_IF_ERROR(ExpectPunct("("));
  DYNVM_ASSIGN_OR_RETURN(entry.num_inputs, ExpectInt("the number of inputs", 0, UINT32_MAX));
  DYNVM_RETURN_IF_ERROR(ExpectPunct("->"));
  DYNVM_ASSIGN_OR_RETURN(entry.num_outputs, ExpectInt("the number of outputs", 0, UINT32_MAX));
  DYNVM_RETURN_IF_ERROR(ExpectPunct(")"));
  if (AtPunct("{")) {
    DYNVM_ASSIGN_OR_RETURN(entry.attrs, ParseAttrs());
  }
  spec_.kernels.push_back(std::move(entry));
  return ExpectEndOfLine("the kernel entry");
}

absl::StatusOr<kernels::Attrs> Parser::ParseAttrs() {
  kernels::Attrs attrs;
  DYNVM_RETURN_IF_ERROR(ParseList("{", "}", [&]() -> absl::Status {
    const Token key = tok_;
    if (key.kind != TokenKind::kName && key.kind != TokenKind::kString) {
      return Expected("an attribute name");
    }
    Advance();
    DYNVM_RETURN_IF_ERROR(ExpectPunct("="));
    DYNVM_ASSIGN_OR_RETURN(kernels::AttrValue value, ParseAttrValue());
    if (!attrs.emplace(key.text, std::move(value)).second) {
      return ErrorAt(LocOf(key), absl::StrFormat("duplicate attribute '%s'", key.text));
    }
    return absl::OkStatus();
  }));
  return attrs;
}

// An int, a float, a string, or a list whose elements decide whether it holds ints or
// floats; `i64[...]` and `f64[...]` say so outright (`f64[]` is an empty float list).
absl::StatusOr<kernels::AttrValue> Parser::ParseAttrValue() {
  if (tok_.kind == TokenKind::kInt) return ExpectInt("an integer", INT64_MIN, INT64_MAX);
  if (tok_.kind == TokenKind::kFloat) return ExpectFloat("a float");
  if (tok_.kind == TokenKind::kString) return ExpectString("a string");
  std::optional<bool> floats;
  if (AtName("i64") || AtName("f64")) {
    floats = tok_.text == "f64";
    Advance();
  } else if (!AtPunct("[")) {
    return Expected("an attribute value (integer, float, string or list)");
  }
  std::vector<Token> elements;
  DYNVM_RETURN_IF_ERROR(ParseList("[", "]", [&]() -> absl::Status {
    if (tok_.kind != TokenKind::kInt && tok_.kind != TokenKind::kFloat) {
      return Expected("a number");
    }
    elements.push_back(tok_);
    Advance();
    return absl::OkStatus();
  }));
  const bool any_float = std::any_of(elements.begin(), elements.end(),
                                     [](const Token& t) { return t.kind == TokenKind::kFloat; });
  if (floats.value_or(any_float)) {
    std::vector<double> values;
    for (const Token& t : elements) {
      absl::StatusOr<double> v = ParseDouble(t.text);
      if (!v.ok()) return ErrorAt(LocOf(t), v.status().message());
      values.push_back(*v);
    }
    return values;
  }
  std::vector<int64_t> values;
  for (const Token& t : elements) {
    if (t.kind != TokenKind::kInt) {
      return ErrorAt(LocOf(t),
                     absl::StrFormat("expected an integer in an i64 list, got '%s'", t.text));
    }
    DYNVM_ASSIGN_OR_RETURN(int64_t v, ParseIntToken(t, INT64_MIN, INT64_MAX));
    values.push_back(v);
  }
  return values;
}

// .const NAME = VALUE
absl::Status Parser::ParseConst() {
  const Loc loc = LocOf(tok_);
  DYNVM_ASSIGN_OR_RETURN(std::string name, ExpectName("a constant name"));
  DYNVM_RETURN_IF_ERROR(Define(constant_names_, "constant", name,
                               static_cast<uint32_t>(spec_.constants.size()), loc));
  DYNVM_RETURN_IF_ERROR(ExpectPunct("="));
  DYNVM_ASSIGN_OR_RETURN(Value value, ParseConstValue());
  spec_.constants.push_back(std::move(value));
  return ExpectEndOfLine("the constant");
}

// int N | float X | bool true|false | string "..." | tensor ... | npy "path"
absl::StatusOr<Value> Parser::ParseConstValue() {
  static constexpr std::string_view kKinds = "a constant (tensor, npy, string, int, float or bool)";
  if (tok_.kind != TokenKind::kName) return Expected(kKinds);
  const std::string kind = tok_.text;
  if (kind == "int" || kind == "float" || kind == "bool" || kind == "string" || kind == "tensor") {
    Advance();
  }
  if (kind == "int") {
    DYNVM_ASSIGN_OR_RETURN(int64_t v, ExpectInt("an integer", INT64_MIN, INT64_MAX));
    return Value::Int(v);
  }
  if (kind == "float") {
    DYNVM_ASSIGN_OR_RETURN(double v, ExpectFloat("a float"));
    return Value::Float(v);
  }
  if (kind == "bool") {
    if (!AtName("true") && !AtName("false")) return Expected("true or false");
    const bool v = tok_.text == "true";
    Advance();
    return Value::Bool(v);
  }
  if (kind == "string") {
    DYNVM_ASSIGN_OR_RETURN(std::string s, ExpectString("a string in quotes"));
    return Value(MakeObject<StringObj>(s));
  }
  if (kind == "tensor") return ParseTensor();
  if (kind == "npy") {
    DYNVM_ASSIGN_OR_RETURN(NDArray t, ParseNpy(std::nullopt));
    return Value(std::move(t));
  }
  return Expected(kKinds);
}

// tensor DTYPE[DIMS] hex "..." | tensor DTYPE[DIMS] npy "path"
absl::StatusOr<Value> Parser::ParseTensor() {
  const Loc loc = LocOf(tok_);
  DYNVM_ASSIGN_OR_RETURN(DType dtype, ExpectDType());
  if (!IsValidDType(static_cast<uint32_t>(dtype))) {
    return ErrorAt(loc, absl::StrFormat("invalid dtype %d", static_cast<int>(dtype)));
  }
  if (dtype == DType::kString) {  // its elements would be pointers written as bytes
    return ErrorAt(loc, "a constant cannot be a string tensor");
  }
  std::vector<int64_t> shape;
  DYNVM_RETURN_IF_ERROR(ParseList("[", "]", [&]() -> absl::Status {
    DYNVM_ASSIGN_OR_RETURN(int64_t dim, ExpectInt("a dimension", 0, INT64_MAX));
    shape.push_back(dim);
    return absl::OkStatus();
  }));
  NDArray tensor;
  if (AtName("npy")) {
    DYNVM_ASSIGN_OR_RETURN(tensor, ParseNpy(std::make_pair(dtype, shape)));
  } else if (AtName("hex")) {
    Advance();
    DYNVM_ASSIGN_OR_RETURN(tensor, ParseHexData(dtype, shape));
  } else {
    return Expected("hex or npy");
  }
  return Value(std::move(tensor));
}

absl::StatusOr<NDArray> Parser::ParseHexData(DType dtype, const std::vector<int64_t>& shape) {
  const Loc loc = LocOf(tok_);
  DYNVM_ASSIGN_OR_RETURN(std::string hex, ExpectString("the tensor's bytes in hex, in quotes"));
  absl::StatusOr<NDArray> tensor = NDArrayObj::Empty(shape, dtype, allocator_);
  if (!tensor.ok()) return ErrorAt(loc, tensor.status().message());
  const size_t nbytes = (*tensor)->nbytes();
  if (hex.size() != 2 * nbytes) {
    return ErrorAt(
        loc, absl::StrFormat("%d hex digits for %s%s, which takes %d bytes (%d digits)", hex.size(),
                             DTypeName(dtype), ShapeToString(shape), nbytes, 2 * nbytes));
  }
  auto* bytes = static_cast<uint8_t*>((*tensor)->data());
  for (size_t i = 0; i < hex.size(); ++i) {
    const int digit = HexDigitValue(hex[i]);
    if (digit < 0) {
      return ErrorAt(
          loc, absl::StrFormat("'%c' at %d of the tensor data is not a hex digit", hex[i], i));
    }
    bytes[i / 2] = static_cast<uint8_t>(i % 2 == 0 ? digit << 4 : bytes[i / 2] | digit);
  }
  return tensor;
}

// npy "path", with the path relative to options_.base_dir. A declared dtype and shape
// must match the file's.
absl::StatusOr<NDArray> Parser::ParseNpy(
    std::optional<std::pair<DType, std::vector<int64_t>>> declared) {
  Advance();  // npy
  const Loc loc = LocOf(tok_);
  DYNVM_ASSIGN_OR_RETURN(std::string path, ExpectString("the .npy file's path in quotes"));
  const std::string full = (std::filesystem::path(options_.base_dir) / path).string();
  absl::StatusOr<NDArray> tensor = serializer::ReadNpyFile(full, allocator_);
  if (!tensor.ok()) {
    return absl::Status(tensor.status().code(),
                        absl::StrFormat("%s:%d:%d: %s", options_.filename, loc.line, loc.col,
                                        tensor.status().message()));
  }
  if (declared && ((*tensor)->dtype() != declared->first ||
                   !std::equal((*tensor)->shape().begin(), (*tensor)->shape().end(),
                               declared->second.begin(), declared->second.end()))) {
    return ErrorAt(loc,
                   absl::StrFormat("'%s' holds %s%s, the constant declares %s%s", full,
                                   DTypeName((*tensor)->dtype()), ShapeToString((*tensor)->shape()),
                                   DTypeName(declared->first), ShapeToString(declared->second)));
  }
  return tensor;
}

// ---------------------------------------------------------------------------------
// Functions.

// .func @NAME(PARAMS) [-> (RESULTS)] [regs N]
//   BODY
// .end
absl::Status Parser::ParseFunction(Loc loc) {
  FunctionDraft draft;
  if (tok_.kind != TokenKind::kGlobal) return Expected("a function name such as @main");
  draft.func.name = tok_.text;
  DYNVM_RETURN_IF_ERROR(Define(function_names_, "function", absl::StrCat("@", internal::FormatName(tok_.text)),
                               static_cast<uint32_t>(functions_.size()), LocOf(tok_)));
  Advance();
  DYNVM_ASSIGN_OR_RETURN(draft.func.params, ParseSignature());
  if (AtPunct("->")) {
    Advance();
    DYNVM_ASSIGN_OR_RETURN(draft.func.results, ParseSignature());
  }
  if (AtName("regs")) {
    Advance();
    DYNVM_ASSIGN_OR_RETURN(draft.func.num_registers,
                           ExpectInt("the number of registers", 0, UINT32_MAX));
    draft.has_regs = true;
  }
  DYNVM_RETURN_IF_ERROR(ExpectEndOfLine("the function header"));
  while (tok_.kind != TokenKind::kDirective || tok_.text != "end") {
    if (tok_.kind == TokenKind::kEnd) {
      return ErrorAt(loc, absl::StrFormat("function '@%s' has no .end",
                                          internal::FormatName(draft.func.name)));
    }
    DYNVM_RETURN_IF_ERROR(ParseBodyLine(draft));
  }
  Advance();
  functions_.push_back(std::move(draft));
  return ExpectEndOfLine(".end");
}

absl::StatusOr<std::vector<vm::ValueSpec>> Parser::ParseSignature(int depth) {
  std::vector<vm::ValueSpec> specs;
  DYNVM_RETURN_IF_ERROR(ParseList("(", ")", [&]() -> absl::Status {
    DYNVM_ASSIGN_OR_RETURN(vm::ValueSpec spec, ParseValueSpec(depth));
    specs.push_back(std::move(spec));
    return absl::OkStatus();
  }));
  return specs;
}

// [NAME:] KIND [DTYPE[DIM, ...]] [(FIELD, ...)], where KIND is any, int, float, bool,
// tensor (which needs the dtype and dims) or tuple (which needs the fields)
absl::StatusOr<vm::ValueSpec> Parser::ParseValueSpec(int depth) {
  vm::ValueSpec spec;
  const bool named = next_.kind == TokenKind::kPunct && next_.text == ":";
  if (tok_.kind == TokenKind::kString || (tok_.kind == TokenKind::kName && named)) {
    spec.name = std::move(tok_.text);
    Advance();
    DYNVM_RETURN_IF_ERROR(ExpectPunct(":"));
  }
  static constexpr std::pair<std::string_view, vm::ValueSpec::Kind> kKinds[] = {
      {"any", vm::ValueSpec::Kind::kAny},   {"tensor", vm::ValueSpec::Kind::kTensor},
      {"int", vm::ValueSpec::Kind::kInt},   {"float", vm::ValueSpec::Kind::kFloat},
      {"bool", vm::ValueSpec::Kind::kBool}, {"tuple", vm::ValueSpec::Kind::kTuple},
  };
  const auto* kind = std::find_if(std::begin(kKinds), std::end(kKinds),
                                  [&](const auto& k) { return AtName(k.first); });
  if (kind == std::end(kKinds)) return Expected("a type (any, tensor, int, float, bool or tuple)");
  spec.kind = kind->second;
  Advance();
  // Other kinds may carry a dtype and dims too (the file keeps them), e.g. `int i64[]`.
  const bool shaped = spec.kind == vm::ValueSpec::Kind::kTensor ||
                      tok_.kind == TokenKind::kName || tok_.kind == TokenKind::kInt;
  if (shaped) {
    DYNVM_ASSIGN_OR_RETURN(spec.dtype, ExpectDType());
    DYNVM_RETURN_IF_ERROR(ParseList("[", "]", [&]() -> absl::Status {
      DYNVM_ASSIGN_OR_RETURN(vm::DimSpec dim, ParseDim());
      spec.dims.push_back(std::move(dim));
      return absl::OkStatus();
    }));
  }
  if (spec.kind == vm::ValueSpec::Kind::kTuple) {
    if (depth == vm::kMaxSpecDepth) {
      return ErrorAt(LocOf(tok_), absl::StrFormat("tuples nested deeper than %d", vm::kMaxSpecDepth));
    }
    DYNVM_ASSIGN_OR_RETURN(spec.fields, ParseSignature(depth + 1));
  }
  return spec;
}

// An extent, a symbol (bare or quoted), or `?`.
absl::StatusOr<vm::DimSpec> Parser::ParseDim() {
  if (tok_.kind == TokenKind::kInt) {
    DYNVM_ASSIGN_OR_RETURN(int64_t extent, ExpectInt("a dimension", INT64_MIN, INT64_MAX));
    return vm::DimSpec::Constant(extent);
  }
  if (AtPunct("?")) {
    Advance();
    return vm::DimSpec::Any();
  }
  if (tok_.kind != TokenKind::kName && tok_.kind != TokenKind::kString) {
    return Expected("a dimension (integer, symbol or ?)");
  }
  vm::DimSpec dim = vm::DimSpec::Symbol(std::move(tok_.text));
  Advance();
  return dim;
}

// A blank line, `LABEL:` (optionally followed by an instruction), an instruction, or
// `.word N`.
absl::Status Parser::ParseBodyLine(FunctionDraft& draft) {
  if (tok_.kind == TokenKind::kNewline) {
    Advance();
    return absl::OkStatus();
  }
  if (tok_.kind == TokenKind::kName && next_.kind == TokenKind::kPunct && next_.text == ":") {
    DYNVM_RETURN_IF_ERROR(Define(draft.labels, "label", tok_.text, draft.size, LocOf(tok_)));
    Advance();
    Advance();
    if (AtEndOfLine()) return ExpectEndOfLine("the label");
  }
  if (tok_.kind == TokenKind::kDirective && tok_.text == "word") {
    CodeItem item;
    item.offset = draft.size;
    item.loc = LocOf(tok_);
    Advance();
    DYNVM_ASSIGN_OR_RETURN(item.word, ExpectInt("a 32-bit word", 0, UINT32_MAX));
    draft.items.push_back(std::move(item));
    draft.size += 1;
    return ExpectEndOfLine(".word");
  }
  if (tok_.kind != TokenKind::kName) return Expected("an instruction, a label or .end");
  return ParseInstruction(draft);
}

absl::Status Parser::ParseInstruction(FunctionDraft& draft) {
  CodeItem item;
  item.offset = draft.size;
  item.loc = LocOf(tok_);
  absl::StatusOr<vm::Opcode> op = vm::OpcodeFromMnemonic(tok_.text);
  if (!op.ok()) return ErrorAt(item.loc, absl::StrFormat("unknown instruction '%s'", tok_.text));
  item.inst.op = *op;
  Advance();
  absl::Status status = ParseOperands(draft, item);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), " (usage: ", internal::Usage(*op), ")"));
  }
  // Encoding with the names not yet resolved (zeros) gives the length, which places
  // the labels that follow.
  std::vector<uint32_t> words;
  absl::Status encoded = vm::EncodeInstruction(item.inst, &words);
  if (!encoded.ok()) return ErrorAt(item.loc, encoded.message());
  draft.size += static_cast<uint32_t>(words.size());
  draft.items.push_back(std::move(item));
  return ExpectEndOfLine("the instruction");
}

absl::Status Parser::ParseOperands(FunctionDraft& draft, CodeItem& item) {
  const vm::OpcodeInfo& info = vm::GetOpcodeInfo(item.inst.op);
  for (size_t i = 0; i < info.format.size(); ++i) {
    if (i > 0 && !AtPunct(",")) {
      return Expected(absl::StrFormat("',' and operand %d of '%s'", i + 1, info.mnemonic));
    }
    if (i > 0) Advance();
    const char letter = info.format[i];
    if (letter == '+') {
      DYNVM_RETURN_IF_ERROR(ParseList("(", ")", [&]() -> absl::Status {
        DYNVM_ASSIGN_OR_RETURN(int64_t reg, ExpectRegister());
        item.inst.list.push_back(reg);
        return absl::OkStatus();
      }));
    } else if (letter == '#') {
      DYNVM_RETURN_IF_ERROR(ParseList("[", "]", [&]() -> absl::Status {
        DYNVM_ASSIGN_OR_RETURN(int64_t v, ExpectInt("an integer", INT64_MIN, INT64_MAX));
        item.inst.list.push_back(v);
        return absl::OkStatus();
      }));
    } else {
      DYNVM_RETURN_IF_ERROR(ParseOperand(letter, draft, item));
    }
  }
  if (!AtEndOfLine()) {
    return Expected(absl::StrFormat("end of line after the %d operand%s of '%s'",
                                    info.format.size(), info.format.size() == 1 ? "" : "s",
                                    info.mnemonic));
  }
  return absl::OkStatus();
}

// One fixed operand. Names (labels, constants, functions, kernels) are recorded and
// left as 0 until ResolveNames; indices and offsets may also be written as numbers.
absl::Status Parser::ParseOperand(char letter, FunctionDraft& draft, CodeItem& item) {
  std::vector<int64_t>& operands = item.inst.operands;
  const bool by_name =
      (letter == 'F') ? tok_.kind == TokenKind::kGlobal : tok_.kind == TokenKind::kName;
  if ((letter == 'J' || letter == 'K' || letter == 'F' || letter == 'P') && by_name) {
    std::string name = letter == 'F' ? absl::StrCat("@", internal::FormatName(tok_.text)) : tok_.text;
    draft.refs.push_back(
        {letter, std::move(name), LocOf(tok_), draft.items.size(), operands.size()});
    operands.push_back(0);
    Advance();
    return absl::OkStatus();
  }
  DYNVM_ASSIGN_OR_RETURN(int64_t value, ParseNumericOperand(letter, item.inst.op));
  operands.push_back(value);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Parser::ParseNumericOperand(char letter, vm::Opcode op) {
  switch (letter) {
    case 'W':
    case 'R': return ExpectRegister();
    case 'J': return ExpectInt("a label or a jump offset", INT32_MIN, INT32_MAX);
    case 'K': return ExpectInt("a constant name or index", 0, UINT32_MAX);
    case 'F': return ExpectInt("a function such as @main, or its index", 0, UINT32_MAX);
    case 'P': return ExpectInt("a kernel name or index", 0, UINT32_MAX);
    case 'D': {
      DYNVM_ASSIGN_OR_RETURN(DType dtype, ExpectDType());
      return static_cast<int64_t>(dtype);
    }
    case 'L':
      if (internal::HasFloatImmediate(op)) {
        DYNVM_ASSIGN_OR_RETURN(double v, ExpectFloat("a float"));
        return std::bit_cast<int64_t>(v);
      }
      return ExpectInt("an integer", INT64_MIN, INT64_MAX);
    default: return ExpectInt("an unsigned integer", 0, UINT32_MAX);  // I
  }
}

// ---------------------------------------------------------------------------------
// After the text: names to indices, labels to offsets, items to words.

absl::Status Parser::ResolveNames(FunctionDraft& draft) const {
  for (const NameRef& ref : draft.refs) {
    const NameTable* table = &draft.labels;
    std::string_view what = "label";
    switch (ref.letter) {
      case 'K':
        table = &constant_names_;
        what = "constant";
        break;
      case 'F':
        table = &function_names_;
        what = "function";
        break;
      case 'P':
        table = &kernel_names_;
        what = "kernel";
        break;
    }
    auto it = table->find(ref.name);
    if (it == table->end()) {
      return ErrorAt(ref.loc, absl::StrFormat("undefined %s '%s'", what, ref.name));
    }
    CodeItem& item = draft.items[ref.item];
    int64_t value = it->second.index;
    if (ref.letter == 'J') value -= item.offset;  // jumps are relative
    item.inst.operands[ref.operand] = value;
  }
  return absl::OkStatus();
}

absl::Status Parser::Encode(const FunctionDraft& draft, std::vector<uint32_t>* code) const {
  code->reserve(draft.size);
  for (const CodeItem& item : draft.items) {
    if (item.word) {
      code->push_back(*item.word);
      continue;
    }
    absl::Status status = vm::EncodeInstruction(item.inst, code);
    if (!status.ok()) return ErrorAt(item.loc, status.message());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<vm::ExecutableSpec> Assemble(std::string_view text, const AssembleOptions& options) {
  return Parser(text, options).Run();
}

}  // namespace dynvm::tools
