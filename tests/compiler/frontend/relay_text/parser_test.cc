// Tests of the Relay text parser (compiler/frontend/relay_text/parser.h): programs in
// Relay's own syntax, what the printer prints reading back to the same text (and the
// same sharing), and errors that point at the token with what was expected.
#include "compiler/frontend/relay_text/parser.h"

#include <string>
#include <vector>

#include "compiler/frontend/relay_text/printer.h"
#include "tests/compiler/list_prelude.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"

namespace dynvm::compiler {
namespace {

// A list, a generic map over it, and a main that uses both.
const std::string kProgram = "#[version = \"0.0.5\"]\n" + testing::WithListPrelude(R"(
def @main(%x: Tensor[(n, 768), float32], %w: Tensor[(768, 768), float32],
          %c: bool) -> Tensor[(n, 768), float32] {
  %0 = nn.dense(%x, %w, units=768);  /* shared */
  let %y: Tensor[(n*2, 768), float32] = concatenate((%0, %0), axis=0);
  if (%c) {
    nn.layer_norm(%0, epsilon=1e-05f, center=True, axes=[1])
  } else {
    let %s = fn (%a) { multiply(%a, 2f) };
    %s(%0)
  }
}
)");

TEST(RelayParserTest, ParsesRelaySyntax) {
  absl::StatusOr<Module> mod = ParseModule(kProgram);
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(mod->function_names(), (std::vector<std::string>{"map", "main"}));
  ASSERT_NE(mod->FindType("List"), nullptr);
  const Expr main = *mod->Function("main");
  ASSERT_EQ(main.params().size(), 3u);
  EXPECT_EQ(main.params()[0].annotation()->ToString(), "Tensor[(n, 768), float32]");
  EXPECT_EQ(main.params()[2].annotation(), Type::Scalar(DType::kBool));
  // let %y = concatenate((%0, %0)) with %0 one node.
  const Expr let = main.body();
  ASSERT_EQ(let.kind(), ExprKind::kLet);
  EXPECT_EQ(let.var().annotation()->ToString(), "Tensor[(n*2, 768), float32]");
  const Expr tuple = let.operand().args()[0];
  EXPECT_TRUE(tuple.fields()[0].same_as(tuple.fields()[1]));
  EXPECT_EQ(std::get<int64_t>(let.operand().attrs().at("axis")), 0);
  const Expr branch = let.body();
  ASSERT_EQ(branch.kind(), ExprKind::kIf);
  const kernels::Attrs& ln = branch.then_branch().attrs();
  EXPECT_EQ(std::get<double>(ln.at("epsilon")), static_cast<double>(1e-05f));
  EXPECT_EQ(std::get<int64_t>(ln.at("center")), 1);
  EXPECT_EQ(std::get<std::vector<int64_t>>(ln.at("axes")), std::vector<int64_t>{1});
  EXPECT_TRUE(branch.then_branch().args()[0].same_as(tuple.fields()[0]));

  const Expr map = *mod->Function("map");
  EXPECT_EQ(map.type_params(), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(map.params()[0].annotation()->ToString(), "fn (A) -> B");
  const Expr match = map.body();
  ASSERT_EQ(match.kind(), ExprKind::kMatch);
  EXPECT_TRUE(match.complete());
  const Clause& cons = match.clauses()[0];
  EXPECT_EQ(cons.pattern.expr().name(), "Cons");
  // The body's %h is the pattern's variable.
  EXPECT_TRUE(cons.body.args()[0].args()[0].same_as(cons.pattern.fields()[0].expr()));
  EXPECT_EQ(cons.body.args()[1].callee().kind(), ExprKind::kGlobalVar);
}

// Printing what was parsed and parsing it again gives the same text: the printer and
// the parser agree on every construct.
TEST(RelayParserTest, PrintedModulesReadBack) {
  absl::StatusOr<Module> mod = ParseModule(kProgram);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const RelayText first = PrintModule(*mod);
  absl::StatusOr<Module> again = ParseModule(first.text, first.constants);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << first.text;
  EXPECT_EQ(PrintModule(*again).text, first.text);
}

TEST(RelayParserTest, ExpressionsReadBack) {
  const Module empty;
  for (std::string_view text : {
           "add(%x, 1.0f)",
           "(%a, %b).1",
           "%t.0.1",
           "(%a,)",
           "()",
           "let %y = negative(%x);\n%0 = exp(%y);\nadd(%0, %0)",
           "sum((\n  let %y = negative(%x);\n  exp(%y)\n))",
           "if (%c) {\n  %0 = log(%x);\n  add(%0, %0)\n} else {\n  %x\n}",
           "(fn (%a: Tensor[(?, 4), float32], Primitive=1) -> Tensor[(?, 4), float32] {\n"
           "  nn.relu(%a)\n})(%x)",
           "(1.5f, 2.0f64, -3, 4i64, True, False)",
           "reshape(%x, name=\"a\\\"b\", newshape=[-1, 64])",  // attributes print sorted
           "clip(%x, a_max=6.0f, a_min=-1.0f, scales=[0.5f, 2.0f])",
       }) {
    absl::StatusOr<ParsedExpr> parsed = ParseExpr(text, empty);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    std::vector<NDArray> constants;
    EXPECT_EQ(PrintExpr(parsed->expr, constants), text);
  }
}

TEST(RelayParserTest, FreeVariablesInExpressions) {
  absl::StatusOr<ParsedExpr> parsed = ParseExpr("add(%x, multiply(%y, %x))", Module());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->free_vars.size(), 2u);
  EXPECT_EQ(parsed->free_vars[0].name(), "x");
  EXPECT_TRUE(parsed->expr.args()[0].same_as(parsed->free_vars[0]));
  EXPECT_TRUE(parsed->expr.args()[1].args()[1].same_as(parsed->free_vars[0]));
}

TEST(RelayParserTest, SymbolicDims) {
  absl::StatusOr<ParsedExpr> parsed =
      ParseExpr("let %v: Tensor[(n*12 + 1, (n + 7) / 8, min(n, 512), -n + 2*n, ?, 3), int64] "
                "= %x;\n%v",
                Module());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Dim n = Dim::Symbol("n");
  const std::vector<Dim> want = {n * 12 + 1, FloorDiv(n + 7, 8), Min(n, 512), n, Dim::Any(), 3};
  EXPECT_EQ(parsed->expr.var().annotation()->shape(), want);
}

TEST(RelayParserTest, MetaConstants) {
  NDArray t = *NDArrayObj::Empty({2}, DType::kF32, MakeNaiveAllocator());
  absl::StatusOr<ParsedExpr> parsed = ParseExpr("add(%x, meta[relay.Constant][0])", Module(), {t});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->expr.args()[1].value().get(), t.get());
  EXPECT_EQ(ParseExpr("meta[relay.Constant][1]", Module(), {t}).status().message(),
            "<input>:1:22: meta[relay.Constant][1] is out of range: 1 constants given\n"
            "  meta[relay.Constant][1]\n"
            "                       ^");
}

// Printed without infix: the calls TVM's grammar makes of `e`.
std::string Desugared(std::string_view text) {
  absl::StatusOr<ParsedExpr> parsed = ParseExpr(text, Module());
  if (!parsed.ok()) return std::string(parsed.status().message());
  std::vector<NDArray> constants;
  return PrintExpr(parsed->expr, constants);
}

// TVM's infix operators, loosest first: == !=, < > <= >=, + -, * /; each level
// left-associative; unary minus binds tighter than all, a minus before a number is
// the literal's.
TEST(RelayParserTest, InfixOperatorsByPrecedence) {
  EXPECT_EQ(Desugared("%a + %b * %c"), "%0 = multiply(%b, %c);\nadd(%a, %0)");
  EXPECT_EQ(Desugared("%a - %b - %c"), "%0 = subtract(%a, %b);\nsubtract(%0, %c)");
  EXPECT_EQ(Desugared("(%a + %b) / %c"), "%0 = add(%a, %b);\ndivide(%0, %c)");
  EXPECT_EQ(Desugared("%n == 0"), "equal(%n, 0)");
  EXPECT_EQ(Desugared("%a + 1 < %b * 2 != %c >= %d"),
            "%0 = add(%a, 1);\n%1 = multiply(%b, 2);\n%2 = less(%0, %1);\n%3 = greater_equal(%c, %d);\n"
            "not_equal(%2, %3)");
  EXPECT_EQ(Desugared("%a > %b"), "greater(%a, %b)");
  EXPECT_EQ(Desugared("%a <= -1"), "less_equal(%a, -1)");
  EXPECT_EQ(Desugared("-%x * %y"), "%0 = negative(%x);\nmultiply(%0, %y)");
  EXPECT_EQ(Desugared("- -%x"), "%0 = negative(%x);\nnegative(%0)");
  EXPECT_EQ(Desugared("%f(%x).0 - 2f"), "%0 = %f(%x);\nsubtract(%0.0, 2.0f)");
  EXPECT_EQ(Desugared("%a + "), "<input>:1:6: expected an expression, got end of input\n  %a + \n       ^");
}

// Every literal suffix TVM prints; a value that does not fit its type is an error.
TEST(RelayParserTest, LiteralSuffixes) {
  EXPECT_EQ(Desugared("(1f, 0.5f16, 2f64, 3i64, -4i8, 5i16, 6i32, 7u8, 8u16, 9u32, 10u64, True)"),
            "(1.0f, 0.5f16, 2.0f64, 3i64, -4i8, 5i16, 6, 7u8, 8u16, 9u32, 10u64, True)");
  EXPECT_EQ(Desugared("300u8"), "<input>:1:1: integer 300 does not fit uint8\n  300u8\n  ^");
  EXPECT_EQ(Desugared("70000f16"), "<input>:1:1: float '70000' out of range for float16\n  70000f16\n  ^");
  EXPECT_EQ(Desugared("1.5i64"),
            "<input>:1:1: '1.5i64' has a fraction or exponent: an integer suffix does not fit it\n  1.5i64\n  ^");
  EXPECT_EQ(Desugared("3q7"),
            "<input>:1:1: unknown literal suffix 'q7': expected f, f16, f32, f64, i8, i16, i32, i64, u8, u16, "
            "u32 or u64\n  3q7\n  ^");
}

// `None` (TVM's unset attribute) leaves the attribute out; nested lists flatten.
TEST(RelayParserTest, NoneAndNestedListAttributes) {
  EXPECT_EQ(Desugared("nn.dense(%x, %w, units=None, out_dtype=\"\")"), "nn.dense(%x, %w, out_dtype=\"\")");
  EXPECT_EQ(Desugared("nn.pad(%x, pad_width=[[0, 0], [1, 2]])"), "nn.pad(%x, pad_width=[0, 0, 1, 2])");
  EXPECT_EQ(Desugared("f(%x, a=[[0.5f], [1]])"), "f(%x, a=[0.5f, 1.0f])");
  EXPECT_EQ(Desugared("f(%x, a=None, a=1)"), "<input>:1:15: attribute 'a' is given twice\n  f(%x, a=None, a=1)\n                ^");
  EXPECT_EQ(Desugared("f(a=None, %x)"), "<input>:1:11: arguments must come before attributes\n  f(a=None, %x)\n            ^");
}

// `match (%p, %q)` matches the tuple of the two, as TVM reads it.
TEST(RelayParserTest, MatchOnATuple) {
  absl::StatusOr<Module> mod = ParseModule(testing::WithListPrelude(R"(
def @main(%p: List[int32], %q: List[int32]) -> bool {
  match (%p, %q) {
    (Nil, Nil) => True,
    _ => False,
  }
})"));
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Expr match = mod->Function("main")->body();
  ASSERT_EQ(match.kind(), ExprKind::kMatch);
  EXPECT_EQ(match.data().kind(), ExprKind::kTuple);
  EXPECT_EQ(match.clauses()[0].pattern.kind(), PatternKind::kTuple);
}

// `free_var %x: T;` declares an expression's free variable (what TVM prints first); a
// module's functions have none.
TEST(RelayParserTest, FreeVarDeclarations) {
  absl::StatusOr<ParsedExpr> parsed = ParseExpr("free_var %x: Tensor[(2), float32];\nadd(%x, %x)", Module());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->free_vars.size(), 1u);
  EXPECT_EQ(parsed->free_vars[0].annotation()->ToString(), "Tensor[(2), float32]");
  EXPECT_TRUE(parsed->expr.args()[0].same_as(parsed->free_vars[0]));
  EXPECT_EQ(ParseExpr("free_var %x: int32;\nfree_var %x: int32;\n%x", Module()).status().message(),
            "<input>:2:1: free variable %x is declared twice\n  free_var %x: int32;\n  ^");
  EXPECT_EQ(std::string(ParseModule("def @main() {\n  free_var %x: int32;\n  %x\n}").status().message()),
            "<input>:2:3: free_var in a module: a function's inputs are its parameters\n"
            "    free_var %x: int32;\n    ^");
}

// References: ref, ref_read and ref_write are operator calls; `ref(T)` is their type.
TEST(RelayParserTest, References) {
  EXPECT_EQ(Desugared("let %r: ref(int32) = ref(1);\nlet %u = ref_write(%r, 2);\nref_read(%r)"),
            "let %r: ref(int32) = ref(1);\nlet %u = ref_write(%r, 2);\nref_read(%r)");
  absl::StatusOr<Module> mod = ParseModule("def @f(%r: ref((int32, ref(float32)))) -> int32 { ref_read(%r).0 }");
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(mod->Function("f")->params()[0].annotation()->ToString(), "ref((int32, ref(float32)))");
}

// Calls, globals, operators and function literals remember where they are, and
// ShowSourceLine points at it when an error names it.
TEST(RelayParserTest, ExpressionsRecordTheirPosition) {
  absl::StatusOr<Module> mod = ParseModule("def @main(%x: int32) {\n  %x + @f(%x)\n}\ndef @f(%y: int32) { %y }", {},
                                           "m.relay");
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Expr add = mod->Function("main")->body();
  EXPECT_EQ(add.source(), "m.relay:2:6");
  EXPECT_EQ(add.args()[1].source(), "m.relay:2:8");
  EXPECT_EQ(add.args()[1].callee().source(), "m.relay:2:8");
  const std::string text = "def @main() {\n  frob(1)\n}";
  EXPECT_EQ(ShowSourceLine(absl::InvalidArgumentError("m.relay:2:3: in @main: unknown operator frob"), text,
                           "m.relay")
                .message(),
            "m.relay:2:3: in @main: unknown operator frob\n    frob(1)\n    ^");
  // Another file's position, no position, or one past the text: unchanged.
  for (const char* message : {"x.relay:2:3: boom", "in @main: boom", "m.relay:9:1: boom", "m.relay:2:40: boom"}) {
    EXPECT_EQ(ShowSourceLine(absl::InvalidArgumentError(message), text, "m.relay").message(), message);
  }
}

TEST(RelayParserTest, Float32LiteralsOutOfRange) {
  // 1e39 has no float32: an error, not an infinity the printer could not write back.
  EXPECT_EQ(ParseExpr("add(%x, 1e39f)", Module()).status().message(),
            "<input>:1:9: float '1e39' out of range for float32\n"
            "  add(%x, 1e39f)\n"
            "          ^");
  absl::StatusOr<ParsedExpr> largest = ParseExpr("add(%x, 3.4028234e38f)", Module());
  EXPECT_TRUE(largest.ok()) << largest.status();
}

void ExpectModuleError(std::string_view text, std::string_view message) {
  const absl::StatusOr<Module> mod = ParseModule(text, {}, "m.relay");
  ASSERT_FALSE(mod.ok()) << text;
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(mod.status().message()), std::string(message));
}

TEST(RelayParserTest, ErrorsPointAtTheToken) {
  ExpectModuleError("def @main(%x) {\n  nn.relu(%x;\n}",
                    "m.relay:2:13: expected ')', got ';'\n"
                    "    nn.relu(%x;\n"
                    "              ^");
  ExpectModuleError("def @main() {\n  %y\n}",
                    "m.relay:2:3: unbound variable %y\n"
                    "    %y\n"
                    "    ^");
  ExpectModuleError("def @main() { @g() }",
                    "m.relay:1:15: undefined function @g\n"
                    "  def @main() { @g() }\n"
                    "                ^");
  ExpectModuleError("def @f() { 1 }\ndef @f() { 2 }",
                    "m.relay:2:5: function @f is defined twice\n"
                    "  def @f() { 2 }\n"
                    "      ^");
  ExpectModuleError("def @f(%x: Tensor[(1), float8]) { %x }",
                    "m.relay:1:24: unknown dtype 'float8': expected one of float32, float64, "
                    "float16, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32, "
                    "uint64, bool, string\n"
                    "  def @f(%x: Tensor[(1), float8]) { %x }\n"
                    "                         ^");
  ExpectModuleError("def @f(%x: Foo) { %x }",
                    "m.relay:1:12: unknown type 'Foo'\n"
                    "  def @f(%x: Foo) { %x }\n"
                    "             ^");
  ExpectModuleError("#[version = \"0.0.4\"]",
                    "m.relay:1:13: unsupported version \"0.0.4\": expected \"0.0.5\"\n"
                    "  #[version = \"0.0.4\"]\n"
                    "              ^");
  ExpectModuleError("def @f(%x, %y) { f(%x, axis=1, %y) }",
                    "m.relay:1:32: arguments must come before attributes\n"
                    "  def @f(%x, %y) { f(%x, axis=1, %y) }\n"
                    "                                 ^");
  ExpectModuleError("def @f() { 3000000000 }",
                    "m.relay:1:12: integer 3000000000 does not fit int32: write 3000000000i64\n"
                    "  def @f() { 3000000000 }\n"
                    "             ^");
  ExpectModuleError("type T { A(int32) }\ndef @f(%t: T) { match (%t) { A => 1 } }",
                    "m.relay:2:30: constructor A has 1 fields, the pattern gives 0\n"
                    "  def @f(%t: T) { match (%t) { A => 1 } }\n"
                    "                               ^");
  ExpectModuleError("def @f() { \"abc }", "m.relay:1:12: unterminated string\n"
                    "  def @f() { \"abc }\n"
                    "             ^");
  ExpectModuleError("fn", "m.relay:1:1: expected 'def' or 'type', got 'fn'\n  fn\n  ^");
}

TEST(RelayParserTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '(') + "%x" + std::string(100000, ')');
  const absl::StatusOr<ParsedExpr> parsed = ParseExpr(deep, Module());
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("nesting deeper than 256 levels"), std::string::npos);
  const std::string deep_type = "let %v: " + std::string(10000, '(') + "int32" +
                                std::string(10000, ')') + " = %x;\n%v";
  EXPECT_FALSE(ParseExpr(deep_type, Module()).ok());
}

}  // namespace
}  // namespace dynvm::compiler
