// The assembler's errors: one line, "<file>:<line>:<col>: <what was wrong>", naming
// what was expected and what was found.
#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/asm/assembler.h"

namespace dynvm::tools {
namespace {

struct ErrorCase {
  const char* name;
  const char* text;
  const char* message;  // the whole status message
};
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

// A function around one body line, which is line 2.
#define BODY(line) ".func @f(a: int, b: int)\n" line "\n  ret %0\n.end\n"

constexpr ErrorCase kCases[] = {
    {"UnknownInstruction", BODY("  frobnicate %0"), "t.s:2:3: unknown instruction 'frobnicate'"},
    {"TooFewOperands", BODY("  move %0"),
     "t.s:2:10: expected ',' and operand 2 of 'move', got end of line (usage: move %dst, %src)"},
    {"TooManyOperands", BODY("  move %0, %1, %1"),
     "t.s:2:14: expected end of line after the 2 operands of 'move', got ',' "
     "(usage: move %dst, %src)"},
    {"WrongOperandKind", BODY("  move %0, 5"),
     "t.s:2:12: expected a register such as %0, got '5' (usage: move %dst, %src)"},
    {"OperandOutOfRange", BODY("  get_field %0, %1, 4294967296"),
     "t.s:2:21: 4294967296 out of range: expected 0 to 4294967295 "
     "(usage: get_field %dst, %src, uint)"},
    {"UnclosedRegisterList", BODY("  invoke %0, @f, (%0, %1"),
     "t.s:2:25: expected ',' or ')', got end of line (usage: invoke %dst, @func, (%src, ...))"},
    {"UndefinedLabel", BODY("  goto nowhere"), "t.s:2:8: undefined label 'nowhere'"},
    {"UndefinedFunction", BODY("  invoke %0, @g, (%0)"), "t.s:2:14: undefined function '@g'"},
    {"UndefinedQuotedFunction", BODY("  invoke %0, @\"a b\", (%0)"),
     "t.s:2:14: undefined function '@\"a b\"'"},
    {"UndefinedKernel", BODY("  invoke_packed add, 1, (%0)"), "t.s:2:17: undefined kernel 'add'"},
    {"UndefinedConstant", BODY("  load_const %0, c9"), "t.s:2:18: undefined constant 'c9'"},
    {"BadDTypeOperand", BODY("  alloc_tensor %0, %1, 0, f33, [2]"),
     "t.s:2:27: unknown dtype 'f33': expected one of f32, f64, f16, bf16, i8, i16, i32, i64, "
     "u8, u16, u32, u64, bool, string (usage: alloc_tensor %dst, %src, int, dtype, [int, ...])"},
    {"BadDTypeInSignature", ".func @f(x: tensor float33[2])\n.end\n",
     "t.s:1:20: unknown dtype 'float33': expected one of f32, f64, f16, bf16, i8, i16, i32, "
     "i64, u8, u16, u32, u64, bool, string"},
    {"StringConstant", ".const c0 = tensor string[1] hex \"0000000000000000\"\n",
     "t.s:1:20: a constant cannot be a string tensor"},
    {"BadType", ".func @f(x tensor)\n.end\n",
     "t.s:1:10: expected a type (any, tensor, int, float, bool or tuple), got 'x'"},
    {"TuplesTooDeep", ".func @f(x: tuple(tuple(tuple(tuple(tuple(tuple(tuple(tuple())))))))))\n.end\n",
     "t.s:1:60: tuples nested deeper than 8"},
    {"BadDim", ".func @f(x: tensor f32[1.5])\n.end\n",
     "t.s:1:24: expected a dimension (integer, symbol or ?), got '1.5'"},
    {"DuplicateFunction", ".func @f()\n  ret %0\n.end\n.func @f()\n  ret %0\n.end\n",
     "t.s:4:7: duplicate function '@f': first defined at 1:7"},
    {"DuplicateLabel", BODY("l:\nl:"), "t.s:3:1: duplicate label 'l': first defined at 2:1"},
    {"DuplicateKernel", ".kernel k = \"add\" (2 -> 1)\n.kernel k = \"mul\" (2 -> 1)\n",
     "t.s:2:9: duplicate kernel 'k': first defined at 1:9"},
    {"DuplicateConstant", ".const c = int 1\n.const c = int 2\n",
     "t.s:2:8: duplicate constant 'c': first defined at 1:8"},
    {"DuplicateAttribute", ".kernel k = \"add\" (2 -> 1) {a = 1, a = 2}\n",
     "t.s:1:36: duplicate attribute 'a'"},
    {"FloatInIntList", ".kernel k = \"add\" (2 -> 1) {a = i64[1, 1.5]}\n",
     "t.s:1:40: expected an integer in an i64 list, got '1.5'"},
    {"BadAttributeValue", ".kernel k = \"add\" (2 -> 1) {a = b}\n",
     "t.s:1:33: expected an attribute value (integer, float, string or list), got 'b'"},
    {"KernelWithoutArity", ".kernel k = \"add\"\n", "t.s:1:18: expected '(', got end of line"},
    {"UnknownDirective", ".fun @f()\n",
     "t.s:1:1: expected a directive (.producer, .kernel, .const or .func), got '.fun'"},
    {"InstructionOutsideFunction", "  ret %0\n",
     "t.s:1:3: expected a directive (.producer, .kernel, .const or .func), got 'ret'"},
    {"MissingEnd", ".func @f()\n  ret %0\n", "t.s:1:1: function '@f' has no .end"},
    {"DirectiveInBody", ".func @f()\n.const c = int 1\n.end\n",
     "t.s:2:1: expected an instruction, a label or .end, got '.const'"},
    {"TrailingTokens", ".producer \"a\" \"b\"\n",
     "t.s:1:15: expected end of line after .producer, got \"b\""},
    {"UnterminatedString", ".producer \"abc\n", "t.s:1:11: unterminated string"},
    {"UnknownEscape", ".producer \"a\\qb\"\n", "t.s:1:11: unknown escape '\\q' in string"},
    {"BadHexEscape", ".producer \"a\\x4\"\n",
     "t.s:1:11: expected two hex digits after '\\x' in string"},
    {"UnexpectedCharacter", ".const c = int 1 $\n", "t.s:1:18: unexpected character '$'"},
    {"MalformedNumber", BODY("  load_consti %0, 12ab"),
     "t.s:2:19: malformed number '12ab'"
     " (usage: load_consti %dst, int)"},
    {"MalformedNan", BODY("  load_constf %0, nan:0x0"),
     "t.s:2:19: malformed NaN 'nan:0x0': expected nan:0x followed by 1 to 13 hex digits, not "
     "all zero (usage: load_constf %dst, float)"},
    {"FloatOutOfRange", ".const x = float 1e999\n", "t.s:1:18: float '1e999' out of range"},
    {"IntOutOfRange", ".const x = int 9223372036854775808\n",
     "t.s:1:16: integer '9223372036854775808' out of range"},
    {"UnknownConstantKind", ".const x = blob 1\n",
     "t.s:1:12: expected a constant (tensor, npy, string, int, float or bool), got 'blob'"},
    {"BadBool", ".const b = bool maybe\n", "t.s:1:17: expected true or false, got 'maybe'"},
    {"HexTooShort", ".const t = tensor f32[2] hex \"0000803f\"\n",
     "t.s:1:30: 8 hex digits for f32[2], which takes 8 bytes (16 digits)"},
    {"NotHex", ".const t = tensor u8[2] hex \"00zz\"\n",
     "t.s:1:29: 'z' at 2 of the tensor data is not a hex digit"},
    {"TensorWithoutData", ".const t = tensor u8[2]\n",
     "t.s:1:24: expected hex or npy, got end of line"},
    {"RegisterWithoutNumber", BODY("  move %x, %0"),
     "t.s:2:8: expected a register number after '%' (usage: move %dst, %src)"},
    {"NegativeWord", ".func @f()\n  .word -1\n.end\n",
     "t.s:2:9: -1 out of range: expected 0 to 4294967295"},
};

class AsmErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(AsmErrorTest, NamesThePositionAndWhatWasExpected) {
  AssembleOptions options;
  options.filename = "t.s";
  const absl::StatusOr<vm::ExecutableSpec> spec = Assemble(GetParam().text, options);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(spec.status().message()), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Cases, AsmErrorTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(AsmNpyErrorTest, MissingFileKeepsItsCodeAndGetsThePosition) {
  AssembleOptions options;
  options.filename = "t.s";
  options.base_dir = DYNVM_ASM_TESTDATA;
  const absl::StatusOr<vm::ExecutableSpec> spec =
      Assemble(".const w = npy \"missing.npy\"\n", options);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound) << spec.status();
  EXPECT_EQ(spec.status().message().substr(0, 10), "t.s:1:16: ") << spec.status();
  EXPECT_NE(spec.status().message().find("missing.npy"), absl::string_view::npos);
}

TEST(AsmNpyErrorTest, DeclaredTypeMustMatchTheFile) {
  AssembleOptions options;
  options.filename = "t.s";
  options.base_dir = DYNVM_ASM_TESTDATA;
  const absl::StatusOr<vm::ExecutableSpec> spec =
      Assemble(".const w = tensor f32[3, 2] npy \"w.npy\"\n", options);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            absl::StrCat("t.s:1:33: '", DYNVM_ASM_TESTDATA,
                         "/w.npy' holds f32[2, 3], the constant declares f32[3, 2]"));
}

}  // namespace
}  // namespace dynvm::tools
