// Tests of the A-normal form pass (compiler/passes/anf.h), as before/after text: nested
// calls, sharing, where bindings go around if, match and closures, idempotence, types
// kept, a chain 100,000 deep, and typed ANF output compiled and run.
#include "compiler/passes/anf.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "compiler/codegen/codegen.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "compiler/ir/rewrite.h"
#include "compiler/passes/lambda_lift.h"
#include "compiler/passes/type_infer.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "serializer/api.h"
#include "tests/compiler/list_prelude.h"
#include "tests/compiler/passes/pass_test_util.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

using testing::RunPass;

std::string Anf(std::string_view before) {
  return RunPass(before, [](const Expr& e) { return ToANormalForm(e); });
}

// The module `text` in A-normal form, printed (or the error).
std::string AnfModule(std::string_view text) {
  absl::StatusOr<Module> mod = ParseModule(text);
  if (!mod.ok()) return std::string(mod.status().message());
  absl::StatusOr<Module> after = ToANormalForm(*mod);
  if (!after.ok()) return std::string(after.status().message());
  return PrintModule(*after).text;
}

TEST(AnfTest, NestedCallsAreBoundInEvaluationOrder) {
  EXPECT_EQ(Anf("nn.relu(nn.dense(exp(%x), %w))"),
            "let %v0 = exp(%x);\n"
            "let %v1 = nn.dense(%v0, %w);\n"
            "nn.relu(%v1)");
  // Arguments left to right, each before the call that uses it.
  EXPECT_EQ(Anf("add(exp(log(%x)), sqrt(%y))"),
            "let %v0 = log(%x);\n"
            "let %v1 = exp(%v0);\n"
            "let %v2 = sqrt(%y);\n"
            "add(%v1, %v2)");
  // Tuples and projections are bound like calls; atoms stay operands.
  EXPECT_EQ(Anf("(exp(%x), %y, 1f).0"),
            "let %v0 = exp(%x);\n"
            "let %v1 = (%v0, %y, 1.0f);\n"
            "%v1.0");
  EXPECT_EQ(Anf("%x"), "%x");
}

TEST(AnfTest, SharedNodesAreBoundOnce) {
  EXPECT_EQ(Anf("%0 = exp(%x);\nadd(%0, %0)"), "let %v0 = exp(%x);\nadd(%v0, %v0)");
  EXPECT_EQ(Anf("%0 = exp(%x);\n%1 = log(%0);\nmultiply(add(%1, %0), %1)"),
            "let %v0 = exp(%x);\n"
            "let %v1 = log(%v0);\n"
            "let %v2 = add(%v1, %v0);\n"
            "multiply(%v2, %v1)");
}

TEST(AnfTest, ExistingLetsAreKeptAndOperandLetsFlattened) {
  EXPECT_EQ(Anf("let %y = nn.relu(exp(%x));\nadd(%y, log(%y))"),
            "let %v0 = exp(%x);\n"
            "let %y = nn.relu(%v0);\n"
            "let %v1 = log(%y);\n"
            "add(%y, %v1)");
  EXPECT_EQ(Anf("add((let %b = exp(%x);\nlog(%b)), %x)"),
            "let %b = exp(%x);\n"
            "let %v0 = log(%b);\n"
            "add(%v0, %x)");
}

// A value used in one branch is bound in that branch; one used by both branches (and
// nowhere else) once before the if, after the condition.
TEST(AnfTest, IfBranchesAreBlocks) {
  EXPECT_EQ(Anf("%0 = exp(%x);\n"
                "if (less(%x, 0f)) {\n"
                "  add(%0, nn.relu(%x))\n"
                "} else {\n"
                "  multiply(%0, 2f)\n"
                "}"),
            "let %v0 = less(%x, 0.0f);\n"
            "let %v1 = exp(%x);\n"
            "if (%v0) {\n"
            "  let %v2 = nn.relu(%x);\n"
            "  add(%v1, %v2)\n"
            "} else {\n"
            "  multiply(%v1, 2.0f)\n"
            "}");
  // A value used in a nested branch stays in it; an if that is an operand is bound.
  EXPECT_EQ(Anf("add(if (%c) {\n"
                "  if (%d) {\n"
                "    exp(log(%x))\n"
                "  } else {\n"
                "    %x\n"
                "  }\n"
                "} else {\n"
                "  %y\n"
                "}, %x)"),
            "let %v1 = if (%c) {\n"
            "  if (%d) {\n"
            "    let %v0 = log(%x);\n"
            "    exp(%v0)\n"
            "  } else {\n"
            "    %x\n"
            "  }\n"
            "} else {\n"
            "  %y\n"
            "};\n"
            "add(%v1, %x)");
}

TEST(AnfTest, MatchClausesAreBlocks) {
  const std::string out = AnfModule(::dynvm::compiler::testing::WithListPrelude(R"(
    def @main(%l: List[Tensor[(2), float32]], %x: Tensor[(2), float32]) -> Tensor[(2), float32] {
      match (@map(fn (%a: Tensor[(2), float32]) { exp(%a) }, %l)) {
        Cons(%h, _) => add(%h, nn.relu(%x)),
        Nil => %x,
      }
    })"));
  // @map's clause binds the arguments of Cons inside the clause; @main's scrutinee and
  // the closure passed to @map are bound before the match, the relu inside its clause.
  // (The module's printer makes names unique across functions: %v0_1 is @main's %v0.)
  EXPECT_NE(out.find("    Cons(%h, %t) => {\n"
                     "      let %v0 = %f(%h);\n"
                     "      let %v1 = @map(%f, %t);\n"
                     "      Cons(%v0, %v1)\n"
                     "    },\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  let %v0_1 = fn (%a: Tensor[(2), float32]) {\n"
                     "    exp(%a)\n"
                     "  };\n"
                     "  let %v1_1 = @map(%v0_1, %l_1);\n"
                     "  match (%v1_1) {\n"
                     "    Cons(%h_1, _) => {\n"
                     "      let %v2 = nn.relu(%x);\n"
                     "      add(%h_1, %v2)\n"
                     "    },\n"
                     "    Nil => {\n"
                     "      %x\n"
                     "    },\n"
                     "  }\n"),
            std::string::npos)
      << out;
}

TEST(AnfTest, FunctionBodiesAreBlocks) {
  // A closure's own values stay in its body; what it captures is bound outside.
  EXPECT_EQ(Anf("%0 = exp(%x);\n"
                "let %f = fn (%y) {\n"
                "  add(%y, log(%0))\n"
                "};\n"
                "%f(nn.relu(%0))"),
            "let %v0 = exp(%x);\n"
            "let %f = fn (%y) {\n"
            "  let %v1 = log(%v0);\n"
            "  add(%y, %v1)\n"
            "};\n"
            "let %v2 = nn.relu(%v0);\n"
            "%f(%v2)");
  // A function literal as an operand is bound; a fused group is kept whole.
  EXPECT_EQ(Anf("(fn (%y) {\n  exp(log(%y))\n})(%x)"),
            "let %v1 = fn (%y) {\n"
            "  let %v0 = log(%y);\n"
            "  exp(%v0)\n"
            "};\n"
            "%v1(%x)");
  EXPECT_EQ(Anf("(fn (%y, Primitive=1) {\n  exp(log(%y))\n})(%x)"),
            "let %v0 = fn (%y, Primitive=1) {\n"
            "  %0 = log(%y);\n"
            "  exp(%0)\n"
            "};\n"
            "%v0(%x)");
}

TEST(AnfTest, Idempotent) {
  const char* kCases[] = {
      "nn.relu(nn.dense(exp(%x), %w))",
      "%0 = exp(%x);\nif (%c) {\n  add(%0, log(%x))\n} else {\n  %0\n}",
      "let %f = fn (%y) {\n  add(%y, exp(%x))\n};\n(%f(%x), %f(log(%x)))",
  };
  for (const char* text : kCases) {
    const std::string once = Anf(text);
    EXPECT_EQ(Anf(once), once);
  }
  // Input already in A-normal form is returned as the same node.
  absl::StatusOr<ParsedExpr> parsed = ParseExpr(
      "let %a = exp(%x);\nlet %f = fn (%y) {\n  let %b = log(%y);\n  add(%b, %a)\n};\n"
      "if (%c) {\n  %f(%a)\n} else {\n  %a\n}",
      Module());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Expr> after = ToANormalForm(parsed->expr);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(after->same_as(parsed->expr));
}

// The checked type of every let-bound variable below `e`, by variable id.
absl::flat_hash_map<uint64_t, std::string> LetVarTypes(const Expr& e) {
  absl::flat_hash_map<uint64_t, std::string> types;
  const absl::Status status = RewriteBottomUp(e, [&](const Expr& node) -> absl::StatusOr<Expr> {
                                if (node.is(ExprKind::kLet)) {
                                  const auto& t = node.var().checked_type();
                                  types[node.var().var_id()] = t ? t->ToString() : "<none>";
                                }
                                return node;
                              }).status();
  EXPECT_TRUE(status.ok()) << status;
  return types;
}

// Typed input gives typed output: the fresh variables carry their values' types, type
// inference accepts the output and finds the same types.
TEST(AnfTest, TypesAreKept) {
  absl::StatusOr<Module> parsed = ParseModule(::dynvm::compiler::testing::WithListPrelude(R"(
    def @main(%x: Tensor[(n, 4), float32], %w: Tensor[(3, 4), float32], %c: bool) {
      %0 = nn.dense(%x, %w, units=3);
      let %f = fn (%y: Tensor[(n, 3), float32]) { add(%y, nn.relu(%0)) };
      let %l = @map(%f, Cons(%0, Nil));
      if (%c) { (%f(exp(%0)), %l) } else { (%0, @map(%f, %l)) }
    })"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Module> typed = InferTypes(*parsed);
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::StatusOr<Module> anf = ToANormalForm(*typed);
  ASSERT_TRUE(anf.ok()) << anf.status();
  absl::StatusOr<Module> retyped = InferTypes(*anf);
  ASSERT_TRUE(retyped.ok()) << retyped.status() << "\n" << PrintModule(*anf).text;
  for (const std::string& name : typed->function_names()) {
    const Expr before = *typed->Function(name), after = *anf->Function(name), again = *retyped->Function(name);
    ASSERT_TRUE(after.checked_type().has_value()) << name;
    EXPECT_EQ(after.checked_type()->ToString(), before.checked_type()->ToString()) << name;
    EXPECT_EQ(again.checked_type()->ToString(), before.checked_type()->ToString()) << name;
    const auto anf_types = LetVarTypes(after), inferred = LetVarTypes(again);
    EXPECT_GT(anf_types.size(), 0u) << name;
    for (const auto& [id, type] : inferred) {
      ASSERT_TRUE(anf_types.contains(id)) << name;
      EXPECT_EQ(anf_types.at(id), type) << name;
    }
  }
  EXPECT_NE(PrintModule(*anf).text.find("  let %v0_1 = nn.dense(%x, %w, units=3);\n"), std::string::npos)
      << PrintModule(*anf).text;
}

// A call chain 100,000 deep becomes a let chain as long, without recursion as deep.
TEST(AnfTest, DeepChains) {
  const Expr x = Expr::Var("x");
  Expr calls = x;
  for (int i = 0; i < 100000; ++i) calls = Expr::Call(Expr::Op("exp"), {calls});
  absl::StatusOr<Expr> lets = ToANormalForm(calls);
  ASSERT_TRUE(lets.ok()) << lets.status();
  std::vector<NDArray> constants;
  const std::string text = PrintExpr(*lets, constants);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 99999);
  EXPECT_EQ(text.substr(0, 21), "let %v0 = exp(%x);\nle");
  EXPECT_EQ(text.substr(text.size() - 13), "\nexp(%v99998)");
  // And the let chain is already in A-normal form.
  absl::StatusOr<Expr> again = ToANormalForm(*lets);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->same_as(*lets));
}

// Compiles a typed module, its literals lifted, in A-normal form and loads it as vm_run
// would.
absl::StatusOr<std::shared_ptr<const vm::Executable>> CompileAnf(std::string_view text) {
  absl::StatusOr<Module> mod = ParseModule(text);
  if (!mod.ok()) return mod.status();
  absl::StatusOr<Module> typed = InferTypes(*mod);
  if (!typed.ok()) return typed.status();
  absl::StatusOr<Module> lifted = LiftLambdas(*typed);
  if (!lifted.ok()) return lifted.status();
  absl::StatusOr<Module> anf = ToANormalForm(*lifted);
  if (!anf.ok()) return anf.status();
  absl::StatusOr<vm::ExecutableSpec> spec = GenerateBytecode(*anf);
  if (!spec.ok()) return spec.status();
  return serializer::ReloadExecutable(*spec, kernels::DefaultRegistry());
}

NDArray I64(int64_t v) {
  NDArray t = *NDArrayObj::Empty({}, DType::kI64, MakeNaiveAllocator());
  *t->data_as<int64_t>() = v;
  return t;
}

// The output goes straight to code generation (no second type inference). Tail
// positions are kept: the loop still runs a million times in one frame, past the VM's
// call depth limit.
TEST(AnfTest, CompilesAndRuns) {
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = CompileAnf(R"(
    def @loop(%i: int64, %n: int64, %acc: float32) -> float32 {
      if (less(%i, %n)) { @loop(add(%i, 1i64), %n, add(%acc, multiply(1f, 1f))) } else { %acc }
    }
    def @main(%n: int64) -> float32 {
      %0 = add(%n, 0i64);
      let %twice = fn (%v: float32) { add(%v, %v) };
      %twice(@loop(0i64, %0, 0f))
    })");
  ASSERT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(I64(1000000))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out->As<NDArrayObj>()->data_as<float>(), 2e6f);
}

}  // namespace
}  // namespace dynvm::compiler
