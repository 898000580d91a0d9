// Tests of the Relay text printer (compiler/frontend/relay_text/printer.h): the text of
// each construct, where shared subexpressions are bound, variable naming, literals and
// meta constants.
#include "compiler/frontend/relay_text/printer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/element_codec.h"

namespace dynvm::compiler {
namespace {

const Dim n = Dim::Symbol("n");

Expr Op(std::string_view name, std::vector<Expr> args, kernels::Attrs attrs = {}) {
  return Expr::Call(Expr::Op(name), std::move(args), std::move(attrs));
}

std::string Print(const Expr& e) {
  std::vector<NDArray> constants;
  return PrintExpr(e, constants);
}

NDArray Scalar(DType dtype, double v) {
  NDArray t = *NDArrayObj::Empty({}, dtype, MakeNaiveAllocator());
  if (IsFloatDType(dtype)) {
    SetFloatElement(*t, 0, v);
  } else if (dtype == DType::kBool) {
    SetBoolElement(*t, 0, v != 0);
  } else {
    EXPECT_TRUE(SetIntegerElement(*t, 0, static_cast<int64_t>(v)).ok());
  }
  return t;
}

TEST(RelayPrinterTest, ModuleWithTypesAndFunctions) {
  Module mod;
  const Type a = Type::Var("A");
  ASSERT_TRUE(mod.AddType({"List", {"A"},
                           {Expr::Constructor("Cons", "List", 0, {a, Type::Adt("List", {a})}),
                            Expr::Constructor("Nil", "List", 1, {})}})
                  .ok());
  const Type t = Type::Tensor(DType::kF32, {n, 768});
  const Expr x = Expr::Var("x", t), w = Expr::Var("w", Type::Tensor(DType::kF32, {768, 768}));
  const Expr y = Op("nn.dense", {x, w}, {{"units", int64_t{768}}});
  ASSERT_TRUE(mod.AddFunction("main", Expr::Function({x, w}, Op("add", {y, y}), t)).ok());
  EXPECT_EQ(PrintModule(mod).text,
            "#[version = \"0.0.5\"]\n"
            "type List[A] {\n"
            "  Cons(A, List[A]),\n"
            "  Nil,\n"
            "}\n"
            "\n"
            "def @main(%x: Tensor[(n, 768), float32], %w: Tensor[(768, 768), float32]) -> "
            "Tensor[(n, 768), float32] {\n"
            "  %0 = nn.dense(%x, %w, units=768);\n"
            "  add(%0, %0)\n"
            "}\n");
}

TEST(RelayPrinterTest, LetIfTupleAndAttrs) {
  const Expr x = Expr::Var("x"), y = Expr::Var("y"), c = Expr::Var("c");
  const Expr body = Expr::Let(
      y, Op("transpose", {x}, {{"axes", std::vector<int64_t>{1, 0}}}),
      Expr::If(c, Expr::TupleGetItem(Expr::Tuple({y, x}), 1),
               Op("nn.layer_norm", {y}, {{"epsilon", 1e-05}, {"layout", std::string("NC")}})));
  EXPECT_EQ(Print(body),
            "let %y = transpose(%x, axes=[1, 0]);\n"
            "if (%c) {\n"
            "  (%y, %x).1\n"
            "} else {\n"
            "  nn.layer_norm(%y, epsilon=1e-05f, layout=\"NC\")\n"
            "}");
}

// A node shared by both branches of an if is bound before the if; one shared within a
// branch is bound inside it.
TEST(RelayPrinterTest, SharedNodesAreBoundInTheInnermostCommonBlock) {
  const Expr x = Expr::Var("x"), c = Expr::Var("c");
  const Expr outer = Op("exp", {x});
  const Expr inner = Op("log", {outer});
  const Expr e = Expr::If(c, Op("add", {inner, inner}), Op("multiply", {outer, outer}));
  EXPECT_EQ(Print(e),
            "%0 = exp(%x);\n"
            "if (%c) {\n"
            "  %1 = log(%0);\n"
            "  add(%1, %1)\n"
            "} else {\n"
            "  multiply(%0, %0)\n"
            "}");
}

// A node used by a call and by that call's consumer prints before both (a traversal
// that marked nodes when queued rather than when expanded printed it after the first).
TEST(RelayPrinterTest, SharedNodesPrintBeforeEveryUse) {
  const Expr x = Expr::Var("x");
  const Expr e = Op("exp", {x});
  EXPECT_EQ(Print(Op("add", {e, Op("multiply", {e, x})})),
            "%0 = exp(%x);\n"
            "%1 = multiply(%0, %x);\n"
            "add(%0, %1)");
}

// A shared node that uses a let-bound variable is bound after the let.
TEST(RelayPrinterTest, SharedNodesFollowTheLetsTheyUse) {
  const Expr x = Expr::Var("x"), y = Expr::Var("y");
  const Expr s = Op("exp", {y});
  const Expr e = Expr::Let(y, Op("negative", {x}), Op("add", {s, s}));
  EXPECT_EQ(Print(e),
            "let %y = negative(%x);\n"
            "%0 = exp(%y);\n"
            "add(%0, %0)");
  // The same let as an argument prints in parentheses, with its bindings inside.
  EXPECT_EQ(Print(Op("sum", {e})),
            "sum((\n"
            "  let %y = negative(%x);\n"
            "  %0 = exp(%y);\n"
            "  add(%0, %0)\n"
            "))");
}

TEST(RelayPrinterTest, VariablesGetUniqueIdentifierNames) {
  const Expr a = Expr::Var("x"), b = Expr::Var("x"), c = Expr::Var("input.1"), d = Expr::Var("0");
  EXPECT_EQ(Print(Expr::Tuple({a, b, c, d, a})), "(%x, %x_1, %input_1, %v0, %x)");
}

TEST(RelayPrinterTest, FunctionsMatchAndConstructors) {
  const Type a = Type::Var("A");
  const Expr cons = Expr::Constructor("Cons", "List", 0, {a, Type::Adt("List", {a})});
  const Expr nil = Expr::Constructor("Nil", "List", 1, {});
  const Expr l = Expr::Var("l"), h = Expr::Var("h"), t = Expr::Var("t");
  const Expr m = Expr::Match(
      l, {{Pattern::Constructor(cons, {Pattern::Bind(h), Pattern::Wildcard()}), h},
          {Pattern::Constructor(nil, {}), Expr::Call(Expr::GlobalVar("f"), {})}},
      /*complete=*/false);
  const Expr fn = Expr::Function({l}, m, std::nullopt, {}, {{"Primitive", int64_t{1}}});
  EXPECT_EQ(Print(Expr::Call(fn, {Expr::Call(cons, {t, nil})})),
            "%0 = Cons(%t, Nil);\n"
            "(fn (%l, Primitive=1) {\n"
            "  match? (%l) {\n"
            "    Cons(%h, _) => {\n"
            "      %h\n"
            "    },\n"
            "    Nil => {\n"
            "      @f()\n"
            "    },\n"
            "  }\n"
            "})(%0)");
}

TEST(RelayPrinterTest, ScalarLiteralsAndMetaConstants) {
  std::vector<NDArray> constants;
  NDArray big = *NDArrayObj::Empty({2, 3}, DType::kF32, MakeNaiveAllocator());
  const Expr e = Expr::Tuple({Expr::Constant(Scalar(DType::kF32, 1.5)),
                              Expr::Constant(Scalar(DType::kF64, 2)),
                              Expr::Constant(Scalar(DType::kI32, -3)),
                              Expr::Constant(Scalar(DType::kI64, 4)),
                              Expr::Constant(Scalar(DType::kBool, 1)), Expr::Constant(big),
                              Expr::Constant(Scalar(DType::kU8, 1)), Expr::Constant(Scalar(DType::kF16, 0.5)),
                              Expr::Constant(Scalar(DType::kI8, -7)), Expr::Constant(Scalar(DType::kU64, 9)),
                              Expr::Constant(Scalar(DType::kBF16, 1))});
  EXPECT_EQ(PrintExpr(e, constants),
            "(1.5f, 2.0f64, -3, 4i64, True, meta[relay.Constant][0], 1u8, 0.5f16, -7i8, 9u64, "
            "meta[relay.Constant][1])");
  ASSERT_EQ(constants.size(), 2u);
  EXPECT_EQ(constants[0].get(), big.get());
}

// Calls nested in calls print one per line.
TEST(RelayPrinterTest, NestedCallsPrintAsDataflow) {
  const Expr x = Expr::Var("x"), w = Expr::Var("w");
  EXPECT_EQ(Print(Op("nn.relu", {Op("nn.dense", {Op("exp", {x}), w})})),
            "%0 = exp(%x);\n"
            "%1 = nn.dense(%0, %w);\n"
            "nn.relu(%1)");
}

// Long let and call chains print, and are freed, without recursion as deep as the
// chain.
TEST(RelayPrinterTest, LongChains) {
  const Expr x = Expr::Var("x");
  Expr calls = x;
  for (int i = 0; i < 100000; ++i) calls = Op("exp", {calls});
  const std::string call_text = Print(calls);
  EXPECT_EQ(std::count(call_text.begin(), call_text.end(), '\n'), 99999);

  Expr body = x;
  for (int i = 0; i < 100000; ++i) {
    const Expr v = Expr::Var("v");
    body = Expr::Let(v, Op("exp", {x}), body);
  }
  const std::string let_text = Print(body);
  EXPECT_EQ(std::count(let_text.begin(), let_text.end(), '\n'), 100000);
}

}  // namespace
}  // namespace dynvm::compiler
