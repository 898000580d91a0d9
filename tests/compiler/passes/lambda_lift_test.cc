// Tests of lambda lifting and closure conversion (compiler/passes/lambda_lift.h): what
// the module looks like after it (as text), that no literal is left, that a node used
// inside and outside a literal is computed once, generic literals, idempotence, the
// printed result parsing back to the same program, and in the bytecode: literals
// without captures called directly, a recursive closure calling its code directly in
// tail position, fusion inside lifted functions.
#include "compiler/passes/lambda_lift.h"

#include <random>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "compiler/ir/rewrite.h"
#include "compiler/passes/type_infer.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "tests/compiler/compile_and_load.h"
#include "vm/bytecode.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

// `text` parsed, typed and lifted; a test failure (and an empty module) on an error.
Module Lift(std::string_view text) {
  absl::StatusOr<Module> mod = ParseModule(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return Module();
  absl::StatusOr<Module> typed = InferTypes(*mod);
  EXPECT_TRUE(typed.ok()) << typed.status();
  if (!typed.ok()) return Module();
  absl::StatusOr<Module> lifted = LiftLambdas(*typed);
  EXPECT_TRUE(lifted.ok()) << lifted.status();
  return lifted.ok() ? *lifted : Module();
}

// The function literals in `e`, not counting `e` itself.
int CountLiterals(const Expr& e) {
  int count = 0;
  (void)RewriteBottomUp(e, [&](const Expr& node) -> absl::StatusOr<Expr> {
    count += node.is(ExprKind::kFunction);
    return node;
  });
  return count - e.is(ExprKind::kFunction);
}

// The printed text of @`name`'s definition alone.
std::string Def(const Module& module, std::string_view name) {
  Module one;
  absl::StatusOr<Expr> fn = module.Function(name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok() || !one.AddFunction(name, *fn).ok()) return "";
  const std::string text = PrintModule(one).text;
  return text.substr(text.find("def "));
}

// How many instructions of `op` function @`name` of `spec` holds.
int CountOpcodeIn(const vm::ExecutableSpec& spec, std::string_view name, vm::Opcode op) {
  for (const vm::Function& f : spec.functions) {
    if (f.name != name) continue;
    int count = 0;
    for (size_t pc = 0; pc < f.code.size(); pc += vm::HeaderLength(f.code[pc])) {
      count += static_cast<vm::Opcode>(vm::HeaderOpcode(f.code[pc])) == op;
    }
    return count;
  }
  ADD_FAILURE() << "no function @" << name;
  return -1;
}

NDArray F32(std::initializer_list<float> values) {
  NDArray t = *NDArrayObj::Empty({static_cast<int64_t>(values.size())}, DType::kF32, MakeNaiveAllocator());
  std::copy(values.begin(), values.end(), t->data_as<float>());
  return t;
}

NDArray I64(int64_t v) {
  NDArray t = *NDArrayObj::Empty({}, DType::kI64, MakeNaiveAllocator());
  *t->data_as<int64_t>() = v;
  return t;
}

const char kCurried[] = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(n), float32], %y: Tensor[(n), float32]) {
  let %adder = fn (%a: Tensor[(n), float32]) {
    fn (%b: Tensor[(n), float32]) { add(%a, %b) }
  };
  let %add_y = %adder(%y);
  %add_y(%x)
}
)";

// A literal capturing nothing becomes the global itself; one capturing values becomes a
// closure's code over them, and its place a call that makes the closure.
TEST(LambdaLiftTest, LiteralsBecomeGlobals) {
  const Module lifted = Lift(kCurried);
  ASSERT_EQ(lifted.function_names().size(), 3u);
  for (const std::string& name : lifted.function_names()) {
    const Expr fn = *lifted.Function(name);
    EXPECT_EQ(CountLiterals(IsClosureCode(fn) ? fn.body() : fn), 0) << name;
  }
  EXPECT_EQ(Def(lifted, "main"), R"(def @main(%x: Tensor[(n), float32], %y: Tensor[(n), float32]) {
  let %add_y = @main.fn0(%y);
  %add_y(%x)
}
)");
  // %adder captures nothing: a plain global, its let gone, its call direct.
  EXPECT_FALSE(IsClosureCode(*lifted.Function("main.fn0")));
  EXPECT_EQ(Def(lifted, "main.fn0"),
            R"(def @main.fn0(%a: Tensor[(n), float32]) -> fn (Tensor[(n), float32]) -> Tensor[(n), float32] {
  @main.fn1(%a)
}
)");
  // The inner literal captures %a: a closure's code.
  EXPECT_TRUE(IsClosureCode(*lifted.Function("main.fn1")));
  EXPECT_EQ(Def(lifted, "main.fn1"),
            R"(def @main.fn1(%a: Tensor[(n), float32], Closure=1) -> fn (Tensor[(n), float32]) -> Tensor[(n), float32] {
  fn (%b: Tensor[(n), float32]) -> Tensor[(n), float32] {
    add(%a, %b)
  }
}
)");
}

// A node used inside a literal and outside it is computed once, outside, and passed.
TEST(LambdaLiftTest, SharedNodesAreCapturedNotRecomputed) {
  const Module lifted = Lift(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(n), float32]) {
  %0 = exp(%x);
  let %f = fn (%y: Tensor[(n), float32]) { add(%y, %0) };
  %f(%0)
})");
  EXPECT_TRUE(absl::StrContains(Def(lifted, "main"), "exp(%x)"));
  EXPECT_FALSE(absl::StrContains(Def(lifted, "main.fn0"), "exp")) << Def(lifted, "main.fn0");
  EXPECT_TRUE(IsClosureCode(*lifted.Function("main.fn0")));
}

// A generic def's literal is generic over its type parameters, and runs at each type.
TEST(LambdaLiftTest, GenericLiteralsStayGeneric) {
  const char kText[] = R"(#[version = "0.0.5"]
def @twice[A](%f: fn (A) -> A, %x: A) -> A {
  let %g = fn (%y: A) { %f(%f(%y)) };
  %g(%x)
}
def @main(%x: Tensor[(2), float32], %k: int64) {
  (@twice(fn (%v: Tensor[(2), float32]) { multiply(%v, 3f) }, %x),
   @twice(fn (%i: int64) { add(%i, 5i64) }, %k))
}
)";
  const Module lifted = Lift(kText);
  const Expr code = *lifted.Function("twice.fn0");
  ASSERT_TRUE(IsClosureCode(code));
  EXPECT_EQ(code.type_params(), std::vector<std::string>{"A"});
  absl::StatusOr<Module> mod = ParseModule(kText);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::shared_ptr<const vm::Executable> exe = testing::CompileAndLoad(*mod);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(F32({1.0f, -2.0f})), Value(I64(4))});
  ASSERT_TRUE(out.ok()) << out.status();
  const ADTObj* pair = out->As<ADTObj>();
  ASSERT_NE(pair, nullptr);
  const float* v = pair->fields()[0].As<NDArrayObj>()->data_as<float>();
  EXPECT_EQ(v[0], 9.0f);
  EXPECT_EQ(v[1], -18.0f);
  EXPECT_EQ(*pair->fields()[1].As<NDArrayObj>()->data_as<int64_t>(), 14);
}

// Lifting a lifted module changes nothing: a closure's code keeps its literal.
TEST(LambdaLiftTest, IsIdempotent) {
  const Module once = Lift(kCurried);
  absl::StatusOr<Module> twice = LiftLambdas(once);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_EQ(PrintModule(*twice).text, PrintModule(once).text);
}

// The printed result is a program: parsed back, it compiles and computes the same.
TEST(LambdaLiftTest, PrintedResultParsesAndRuns) {
  const std::string printed = PrintModule(Lift(kCurried)).text;
  absl::StatusOr<Module> reparsed = ParseModule(printed), original = ParseModule(kCurried);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << printed;
  ASSERT_TRUE(original.ok()) << original.status();
  for (const Module* mod : {&*reparsed, &*original}) {
    const std::shared_ptr<const vm::Executable> exe = testing::CompileAndLoad(*mod);
    ASSERT_NE(exe, nullptr);
    vm::VirtualMachine machine(exe);
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(F32({1.0f, 2.0f})), Value(F32({0.5f, -4.0f}))});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->As<NDArrayObj>()->data_as<float>()[0], 1.5f);
    EXPECT_EQ(out->As<NDArrayObj>()->data_as<float>()[1], -2.0f);
  }
}

// In the bytecode: a recursive closure calls its code directly (a tail call in tail
// position, no invoke_closure, no closure allocated for the calls), and the operators
// inside a lifted function are fused like any function's.
TEST(LambdaLiftTest, LiftedFunctionsAreOrdinaryFunctions) {
  absl::StatusOr<Module> mod = ParseModule(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(n), float32], %k: int64) {
  let %loop = fn (%i: int64, %acc: Tensor[(n), float32]) -> Tensor[(n), float32] {
    if (%i == 0i64) { %acc } else { %loop(%i - 1i64, tanh(%acc * 0.5f + %x)) }
  };
  %loop(%k, %x)
})");
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(*mod, CompileOptions{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(CountOpcodeIn(*spec, "main", vm::Opcode::kAllocClosure), 0);
  EXPECT_EQ(CountOpcodeIn(*spec, "main", vm::Opcode::kTailInvoke), 1);
  EXPECT_EQ(CountOpcodeIn(*spec, "main.fn0", vm::Opcode::kTailInvoke), 1);
  EXPECT_EQ(CountOpcodeIn(*spec, "main.fn0", vm::Opcode::kInvokeClosure), 0);
  EXPECT_EQ(CountOpcodeIn(*spec, "main.fn0", vm::Opcode::kAllocClosure), 0);
  bool fused = false;
  for (const vm::KernelEntry& k : spec->kernels) {
    EXPECT_NE(k.name, "tanh");
    fused |= k.name == "fused_elementwise";
  }
  EXPECT_TRUE(fused);
}

}  // namespace
}  // namespace dynvm::compiler
