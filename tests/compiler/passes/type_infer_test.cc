// Tests of type inference (compiler/passes/type_infer.h) on programs in the text format:
// symbolic shapes through operators, lets, tuples, ifs (joined), closures, generic
// functions over ADTs, recursion, sharing kept, and the errors.
#include "compiler/passes/type_infer.h"

#include <string>

#include "compiler/frontend/relay_text/parser.h"
#include "gtest/gtest.h"
#include "tests/compiler/list_prelude.h"

namespace dynvm::compiler {
namespace {

absl::StatusOr<Module> Infer(std::string_view text) {
  absl::StatusOr<Module> mod = ParseModule(text);
  if (!mod.ok()) return mod.status();
  return InferTypes(*mod);
}

std::string TypeOf(const Expr& e) { return e.checked_type() ? e.checked_type()->ToString() : "<none>"; }

TEST(TypeInferTest, SymbolicShapesThroughOperatorsAndLets) {
  absl::StatusOr<Module> mod = Infer(R"(
    def @main(%x: Tensor[(b, n, 768), float32], %w: Tensor[(3072, 768), float32]) {
      let %h = nn.dense(%x, %w);
      %0 = reshape(%h, newshape=[0, 0, 48, 64]);
      let %t = (transpose(%0, axes=[0, 2, 1, 3]), %x);
      %t.0
    })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Expr main = *mod->Function("main");
  EXPECT_EQ(TypeOf(main), "fn (Tensor[(b, n, 768), float32], Tensor[(3072, 768), float32]) -> "
                          "Tensor[(b, 48, n, 64), float32]");
  const Expr let_h = main.body();
  EXPECT_EQ(TypeOf(let_h.var()), "Tensor[(b, n, 3072), float32]");
  EXPECT_EQ(TypeOf(let_h.body().var()),
            "(Tensor[(b, 48, n, 64), float32], Tensor[(b, n, 768), float32])");
  // Every node has a type, and variables are typed where they are used too.
  const Expr result = let_h.body().body();
  EXPECT_EQ(TypeOf(result), "Tensor[(b, 48, n, 64), float32]");
  EXPECT_EQ(TypeOf(result.tuple()), TypeOf(let_h.body().var()));
}

// A callee's symbols are bound to the caller's extents at each call.
TEST(TypeInferTest, SignatureSymbolsAreInstantiatedPerCall) {
  absl::StatusOr<Module> mod = Infer(R"(
    def @twice(%v: Tensor[(n), float32]) -> Tensor[(n*2), float32] {
      concatenate((%v, %v))
    }
    def @relabel(%v: Tensor[(n), float32]) -> Tensor[(k), float32] {
      %v
    }
    def @main(%x: Tensor[(m + 1), float32], %y: Tensor[(n), float32]) {
      (@twice(%x), @twice(%y), @twice(@twice(%y)), @relabel(%x))
    })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(TypeOf(mod->Function("main")->body()),
            "(Tensor[(m*2 + 2), float32], Tensor[(n*2), float32], Tensor[(n*4), float32], "
            "Tensor[(?), float32])");  // k: only @relabel's result says it
}

TEST(TypeInferTest, SharingIsKept) {
  absl::StatusOr<Module> mod = Infer(R"(
    def @main(%x: Tensor[(n, 4), float32]) {
      %0 = exp(%x);
      add(%0, %0)
    })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Expr add = mod->Function("main")->body();
  EXPECT_TRUE(add.args()[0].same_as(add.args()[1]));
  EXPECT_EQ(TypeOf(add.args()[0]), "Tensor[(n, 4), float32]");
}

TEST(TypeInferTest, IfJoinsItsBranches) {
  absl::StatusOr<Module> mod = Infer(R"(
    def @main(%c: bool, %x: Tensor[(n, 4), float32]) {
      if (%c) { %x } else { concatenate((%x, %x), axis=0) }
    })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(TypeOf(mod->Function("main")->body()), "Tensor[(?, 4), float32]");
}

TEST(TypeInferTest, ClosuresGenericsAdtsAndRecursion) {
  absl::StatusOr<Module> mod = Infer(testing::WithListPrelude(R"(
    def @length[A](%l: List[A]) -> int64 {
      match (%l) {
        Cons(_, %t) => add(@length(%t), 1i64),
        Nil => 0i64,
      }
    }
    def @main(%x: Tensor[(n), float32]) {
      let %double = fn (%a: Tensor[(n), float32]) { multiply(%a, 2f) };
      let %l = @map(%double, Cons(%x, Cons(%x, Nil)));
      (%l, @length(%l))
    })"));
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Expr main = *mod->Function("main");
  EXPECT_EQ(TypeOf(main.body().var()), "fn (Tensor[(n), float32]) -> Tensor[(n), float32]");
  EXPECT_EQ(TypeOf(main.body().body().var()), "List[Tensor[(n), float32]]");
  EXPECT_EQ(TypeOf(main), "fn (Tensor[(n), float32]) -> (List[Tensor[(n), float32]], int64)");
  EXPECT_EQ(TypeOf(*mod->Function("length")), "fn [A] (List[A]) -> int64");
}

TEST(TypeInferTest, UnannotatedClosureParametersAreInferredFromUse) {
  absl::StatusOr<Module> mod = Infer(R"(
    def @main(%x: Tensor[(n), float32]) {
      let %pair = fn (%a, %b) { (%b, %a) };
      %pair(%x, 1i64)
    })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(TypeOf(mod->Function("main")->body()), "(int64, Tensor[(n), float32])");
  // Parameters an operator needs typed: a let-bound literal is typed at its first call,
  // from the arguments; a literal called in place likewise; recursion included.
  mod = Infer(R"(
    def @main(%x: Tensor[(n), float32]) {
      let %twice = fn (%a) { multiply(%a, 2f) };
      let %count = fn (%k, %v) { if (%k == 0i64) { %v } else { %count(%k - 1i64, nn.relu(%v)) } };
      %0 = fn (%a, %b) { add(%a, %b) };
      (%twice(%twice(%x)), %0(%x, %x), %count(3i64, %x))
    })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(TypeOf(mod->Function("main")->body()),
            "(Tensor[(n), float32], Tensor[(n), float32], Tensor[(n), float32])");
}

// A function literal passed to a function takes its untyped parameters' types from the
// callee once the other arguments fixed them; operators and constructors passed as
// values are expanded into such literals first (eta_expand.h).
TEST(TypeInferTest, FunctionArgumentsTakeTheTypesTheCalleeExpects) {
  absl::StatusOr<Module> mod = Infer(testing::WithListPrelude(R"(
    def @apply[A, B](%f: fn (A) -> B, %x: A) -> B { %f(%x) }
    def @main(%x: Tensor[(n), float32], %l: List[Tensor[(n), float32]]) {
      let %cons = Cons;
      (@map(fn (%v) { nn.relu(%v) }, %l), @map(sigmoid, %l), @apply(negative, %x), %cons(%x, Nil))
    })"));
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(TypeOf(mod->Function("main")->body()),
            "(List[Tensor[(n), float32]], List[Tensor[(n), float32]], Tensor[(n), float32], "
            "List[Tensor[(n), float32]])");
  // An operator of a varying number of arguments cannot be expanded.
  const absl::StatusOr<Module> dense = Infer(testing::WithListPrelude(R"(
    def @main(%l: List[Tensor[(2, 2), float32]]) { @map(nn.dense, %l) })"));
  EXPECT_EQ(std::string(dense.status().message()),
            "<input>:14:57: in @main: operator nn.dense takes 2 to 3 arguments: to pass it as a function, "
            "wrap it in one (fn (%x, %w) { nn.dense(%x, %w) })");
}

void ExpectError(std::string_view text, std::string_view message) {
  const absl::StatusOr<Module> mod = Infer(text);
  ASSERT_FALSE(mod.ok()) << text;
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(mod.status().message()), std::string(message));
}

// Errors name the innermost expression around them that the parser placed
// ("<input>:line:col: "): a call, global, literal, let, if, match, tuple or projection;
// a parameter's name the function only.
TEST(TypeInferTest, Errors) {
  ExpectError("def @main(%x: Tensor[(3), float32], %y: Tensor[(3), int32]) { add(%x, %y) }",
              "<input>:1:63: in @main: add: operands have dtypes float32 and int32, expected one dtype");
  ExpectError("def @main(%x: Tensor[(3), float32]) { nn.dense(%x) }",
              "<input>:1:39: in @main: nn.dense takes 2 to 3 arguments, got 1");
  ExpectError("def @main(%x: Tensor[(3), float32]) { frobnicate(%x) }",
              "<input>:1:39: in @main: unknown operator frobnicate");
  ExpectError("def @main(%x: Tensor[(3), float32]) { if (%x) { %x } else { %x } }",
              "<input>:1:39: in @main: the condition of if: expected bool, got Tensor[(3), float32]");
  ExpectError("def @main(%x: Tensor[(3), float32]) { %x.0 }",
              "<input>:1:41: in @main: projection .0 of Tensor[(3), float32], which is not a tuple");
  ExpectError("def @main(%x) { %x }", "in @main: parameter %x needs a type");
  ExpectError("def @f(%x: Tensor[(3), float32]) { %x }\n"
              "def @main(%y: Tensor[(4), float32]) { @f(%y) }",
              "<input>:2:39: in @main: argument 0 of a call: expected Tensor[(3), float32], got "
              "Tensor[(4), float32]");
  // A literal whose untyped parameter reaches an operator and that no call types.
  ExpectError("def @main(%x: Tensor[(3), float32]) {\n"
              "  let %g = fn (%a) { exp(%a) };\n"
              "  %g\n"
              "}",
              "<input>:2:22: in @main: exp: the type of argument 0 is not known here; annotate it");
  // Recursion through an operator needs the result type declared.
  ExpectError("def @count(%n: int64) { if (less(%n, 1i64)) { 0i64 } else { add(@count(subtract(%n, 1i64)), 1i64) } }",
              "<input>:1:61: in @count: add: the type of argument 0 is not known here; annotate it");
  ExpectError("def @main(%x: Tensor[(3), float32]) { let %y: Tensor[(3), int64] = %x; %y }",
              "<input>:1:39: in @main: the value of %y: expected Tensor[(3), int64], got Tensor[(3), float32]");
}

}  // namespace
}  // namespace dynvm::compiler
