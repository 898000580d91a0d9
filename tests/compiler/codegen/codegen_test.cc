// End to end through the compiler: Relay text parsed, compiled by the pipeline
// (compiler/driver/compile.h), written as an executable file and loaded back, then run by the VM on
// inputs of several sizes from the one executable, against references computed here.
#include "compiler/codegen/codegen.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "serializer/api.h"
#include "tests/compiler/list_prelude.h"
#include "vm/bytecode.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

// Compiles `text` and loads the executable the way vm_run would, from its file bytes.
absl::StatusOr<std::shared_ptr<const vm::Executable>> Compile(std::string_view text,
                                                             std::vector<NDArray> constants = {}) {
  absl::StatusOr<Module> mod = ParseModule(text, constants);
  if (!mod.ok()) return mod.status();
  absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(*mod, CompileOptions{});
  if (!spec.ok()) return spec.status();
  return serializer::ReloadExecutable(*spec, kernels::DefaultRegistry());
}

NDArray Tensor(const Shape& shape, std::mt19937& rng) {
  NDArray t = *NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<float>()[i] = dist(rng);
  return t;
}

NDArray BoolScalar(bool v) {
  NDArray t = *NDArrayObj::Empty({}, DType::kBool, MakeNaiveAllocator());
  *t->data_as<uint8_t>() = v;
  return t;
}

// relu(x · wᵀ + b) for x [n, 4], w [3, 4], b [3]: one executable, every n.
TEST(CodegenTest, MlpRunsAtEveryLength) {
  std::mt19937 rng(1);
  const NDArray w = Tensor({3, 4}, rng), b = Tensor({3}, rng);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @main(%x: Tensor[(n, 4), float32]) -> Tensor[(n, 3), float32] {
      %0 = nn.dense(%x, meta[relay.Constant][0], units=3);
      nn.relu(add(%0, meta[relay.Constant][1]))
    })", {w, b});
  ASSERT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  for (int64_t n : {1, 7, 128, 0}) {
    const NDArray x = Tensor({n, 4}, rng);
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(x)});
    ASSERT_TRUE(out.ok()) << "n=" << n << ": " << out.status();
    const NDArrayObj* y = out->As<NDArrayObj>();
    ASSERT_NE(y, nullptr);
    ASSERT_EQ(y->shape(), (Shape{n, 3}));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        double sum = b->data_as<float>()[j];
        for (int64_t k = 0; k < 4; ++k) {
          sum += double{x->data_as<float>()[i * 4 + k]} * w->data_as<float>()[j * 4 + k];
        }
        // Four products in float: well within 1e-5 of the double sum for |x|, |w| <= 1.
        EXPECT_NEAR(y->data_as<float>()[i * 3 + j], std::max(sum, 0.0), 1e-5) << i << ", " << j;
      }
    }
  }
  // The signature checks what the VM is given.
  EXPECT_FALSE(machine.Invoke("main", {Value(Tensor({2, 5}, rng))}).ok());
}

// Tuple types become tuple signatures, nested as deep as the format allows; deeper
// ones are left `any`.
TEST(CodegenTest, TupleSignaturesStopAtTheFormatsDepth) {
  std::string value = "%x", type = "Tensor[(n), float32]";
  for (int i = 0; i < vm::kMaxSpecDepth + 1; ++i) {
    value = "(" + value + ",)";
    type = "(" + type + ",)";
  }
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      Compile("def @main(%x: Tensor[(n), float32]) -> " + type + " { " + value + " }", {});
  ASSERT_TRUE(exe.ok()) << exe.status();
  const vm::ValueSpec* spec = &(*exe)->function(0).results[0];
  for (int depth = 1; depth < vm::kMaxSpecDepth; ++depth) {
    ASSERT_EQ(spec->kind, vm::ValueSpec::Kind::kTuple) << depth;
    spec = &spec->fields[0];
  }
  EXPECT_EQ(spec->kind, vm::ValueSpec::Kind::kAny);
}

// Q, K and V with constant weights are one GEMM after the pipeline (combined, weights
// concatenated and packed at compile time); the results are each projection's.
TEST(CodegenTest, CombinedProjectionsComputeEachProjection) {
  std::mt19937 rng(6);
  const NDArray wq = Tensor({5, 4}, rng), wk = Tensor({3, 4}, rng), wv = Tensor({5, 4}, rng);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @main(%x: Tensor[(n, 4), float32]) {
      (nn.dense(%x, meta[relay.Constant][0]), nn.dense(%x, meta[relay.Constant][1]),
       nn.dense(%x, meta[relay.Constant][2]))
    })", {wq, wk, wv});
  ASSERT_TRUE(exe.ok()) << exe.status();
  int dense_kernels = 0;
  for (const vm::KernelEntry& k : (*exe)->spec().kernels) {
    EXPECT_NE(k.name, "nn.dense");
    dense_kernels += k.name == "nn.contrib_dense_pack";
  }
  EXPECT_EQ(dense_kernels, 1);
  vm::VirtualMachine machine(*exe);
  const NDArray x = Tensor({6, 4}, rng);
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(x)});
  ASSERT_TRUE(out.ok()) << out.status();
  const NDArray weights[] = {wq, wk, wv};
  for (int p = 0; p < 3; ++p) {
    const NDArrayObj& y = *out->As<ADTObj>()->fields()[p].As<NDArrayObj>();
    const int64_t n = weights[p]->shape()[0];
    ASSERT_EQ(y.shape(), (Shape{6, n}));
    for (int64_t i = 0; i < 6; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 4; ++k) {
          sum += double{x->data_as<float>()[i * 4 + k]} * weights[p]->data_as<float>()[j * 4 + k];
        }
        EXPECT_NEAR(y.data_as<float>()[i * n + j], sum, 1e-5) << p << ": " << i << ", " << j;
      }
    }
  }
}

TEST(CodegenTest, IfTuplesAndCallsOfGlobals) {
  std::mt19937 rng(2);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @double(%v: Tensor[(m), float32]) {
      add(%v, %v)
    }
    def @main(%c: bool, %x: Tensor[(n), float32]) {
      let %t = (@double(%x), exp(%x));
      if (%c) { %t.0 } else { negative(%t.1) }
    })");
  ASSERT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  for (bool c : {true, false}) {
    const NDArray x = Tensor({5}, rng);
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(BoolScalar(c)), Value(x)});
    ASSERT_TRUE(out.ok()) << out.status();
    const NDArrayObj* y = out->As<NDArrayObj>();
    ASSERT_NE(y, nullptr);
    for (int i = 0; i < 5; ++i) {
      const float v = x->data_as<float>()[i];
      EXPECT_FLOAT_EQ(y->data_as<float>()[i], c ? v + v : -std::exp(v)) << c << " " << i;
    }
  }
}

TEST(CodegenTest, StaticShapesAllocateWithoutShapeFunctions) {
  std::mt19937 rng(3);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @main(%x: Tensor[(2, 3), float32]) {
      transpose(%x, axes=[1, 0])
    })");
  ASSERT_TRUE(exe.ok()) << exe.status();
  for (const vm::Function& f : (*exe)->functions()) {
    for (size_t pc = 0; pc < f.code.size(); pc += vm::HeaderLength(f.code[pc])) {
      EXPECT_NE(static_cast<vm::Opcode>(vm::HeaderOpcode(f.code[pc])), vm::Opcode::kInvokeShapeFn);
    }
  }
  vm::VirtualMachine machine(*exe);
  const NDArray x = Tensor({2, 3}, rng);
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(x)});
  ASSERT_TRUE(out.ok()) << out.status();
  const NDArrayObj* y = out->As<NDArrayObj>();
  ASSERT_EQ(y->shape(), (Shape{3, 2}));
  EXPECT_EQ(y->data_as<float>()[1], x->data_as<float>()[3]);
}

// A loop written as tail recursion runs a million times in one frame: the VM's call
// depth limit (10000) would stop it otherwise.
TEST(CodegenTest, TailRecursionRunsInConstantSpace) {
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @loop(%i: int64, %n: int64, %acc: float32) -> float32 {
      if (less(%i, %n)) { @loop(add(%i, 1i64), %n, add(%acc, 1f)) } else { %acc }
    }
    def @main(%n: int64) -> float32 {
      @loop(0i64, %n, 0f)
    })");
  ASSERT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  NDArray n = *NDArrayObj::Empty({}, DType::kI64, MakeNaiveAllocator());
  *n->data_as<int64_t>() = 1000000;
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(n)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out->As<NDArrayObj>()->data_as<float>(), 1e6f);
}

// Closures capture tensors; a closure made by one call is called by another.
TEST(CodegenTest, ClosuresCaptureTensors) {
  std::mt19937 rng(4);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @adder(%b: Tensor[(n), float32]) -> fn (Tensor[(n), float32]) -> Tensor[(n), float32] {
      fn (%a: Tensor[(n), float32]) { add(%a, %b) }
    }
    def @main(%x: Tensor[(n), float32], %y: Tensor[(n), float32]) {
      let %add_y = @adder(%y);
      let %twice = fn (%v: Tensor[(n), float32]) { %add_y(%add_y(%v)) };
      %twice(%x)
    })");
  ASSERT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  const NDArray x = Tensor({6}, rng), y = Tensor({6}, rng);
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(x), Value(y)});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(out->As<NDArrayObj>()->data_as<float>()[i],
                    x->data_as<float>()[i] + y->data_as<float>()[i] + y->data_as<float>()[i]);
  }
}

// A List ADT with generic map, foldl, length and nth written in the text format, over
// tensors; a match? that finds no clause is a fatal error with a message.
const std::string kListProgram = testing::WithListPrelude(R"(
  def @foldl[A, B](%f: fn (B, A) -> B, %acc: B, %l: List[A]) -> B {
    match (%l) {
      Cons(%h, %t) => @foldl(%f, %f(%acc, %h), %t),
      Nil => %acc,
    }
  }
  def @length[A](%l: List[A]) -> int64 {
    match (%l) {
      Cons(_, %t) => add(@length(%t), 1i64),
      Nil => 0i64,
    }
  }
  def @nth[A](%l: List[A], %i: int64) -> A {
    match? (%l) {
      Cons(%h, %t) => if (equal(%i, 0i64)) { %h } else { @nth(%t, subtract(%i, 1i64)) },
    }
  }
  def @main(%x: Tensor[(n), float32], %k: int64) {
    let %l = Cons(%x, Cons(exp(%x), Cons(negative(%x), Nil)));
    let %doubled = @map(fn (%v: Tensor[(n), float32]) { add(%v, %v) }, %l);
    let %sum = @foldl(fn (%a: Tensor[(n), float32], %b: Tensor[(n), float32]) { add(%a, %b) },
                      multiply(%x, 0f), %doubled);
    (@length(%l), @nth(%doubled, %k), %sum)
  })");

NDArray Int64Scalar(int64_t v) {
  NDArray t = *NDArrayObj::Empty({}, DType::kI64, MakeNaiveAllocator());
  *t->data_as<int64_t>() = v;
  return t;
}

TEST(CodegenTest, ListsWithGenericFunctionsAndMatch) {
  std::mt19937 rng(5);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(kListProgram);
  ASSERT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  const NDArray x = Tensor({4}, rng);
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(x), Value(Int64Scalar(1))});
  ASSERT_TRUE(out.ok()) << out.status();
  const ADTObj* result = out->As<ADTObj>();
  ASSERT_NE(result, nullptr);
  ASSERT_EQ(result->size(), 3u);
  EXPECT_EQ(*result->fields()[0].As<NDArrayObj>()->data_as<int64_t>(), 3);
  const float* second = result->fields()[1].As<NDArrayObj>()->data_as<float>();
  const float* sum = result->fields()[2].As<NDArrayObj>()->data_as<float>();
  for (int i = 0; i < 4; ++i) {
    const float v = x->data_as<float>()[i];
    EXPECT_FLOAT_EQ(second[i], 2 * std::exp(v));             // doubled[1]
    EXPECT_NEAR(sum[i], 2 * v + 2 * std::exp(v) - 2 * v, 1e-6);  // the doubled list summed
  }
  // nth past the end: no clause of the match? matches Nil.
  const absl::StatusOr<Value> past = machine.Invoke("main", {Value(x), Value(Int64Scalar(7))});
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("in @nth: no clause of a match? matches the value"),
            absl::string_view::npos)
      << past.status();
  // The VM stays usable after the fatal error.
  EXPECT_TRUE(machine.Invoke("main", {Value(x), Value(Int64Scalar(0))}).ok());
}

// How many instructions of `op` the executable's functions hold.
int CountOpcode(const vm::Executable& exe, vm::Opcode op) {
  int count = 0;
  for (const vm::Function& f : exe.functions()) {
    for (size_t pc = 0; pc < f.code.size(); pc += vm::HeaderLength(f.code[pc])) {
      count += static_cast<vm::Opcode>(vm::HeaderOpcode(f.code[pc])) == op;
    }
  }
  return count;
}

// match compiles to a decision tree: each tag is read once on a path (the list's, then
// its tail's: two get_tag in all, where testing clause after clause reads five; a tail
// that is not Cons is Nil, untested), a clause shadowed by the ones before it has no
// code, and a value no clause of a match? matches is a fatal error naming the function.
// The same clauses under match (exhaustive) are a compile-time error.
TEST(CodegenTest, MatchIsADecisionTree) {
  constexpr std::string_view kProgram = R"(
    def @shape(%l: List[float32]) -> int64 {
      MATCH (%l) {
        Cons(_, Cons(_, _)) => 2i64,
        Cons(%h, Nil) => if (less(%h, 0f)) { -1i64 } else { 1i64 },
        Cons(_, _) => 3i64,
      }
    }
    def @main(%x: float32, %empty: bool) {
      let %l = if (%empty) { Nil } else { Cons(%x, Nil) };
      (@shape(%l), @shape(Cons(%x, Cons(%x, Cons(%x, Nil)))))
    })";
  const auto program = [&](std::string_view match) {
    std::string text = testing::WithListPrelude(kProgram);
    text.replace(text.find("MATCH"), 5, match);
    return text;
  };
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(program("match?"));
  ASSERT_TRUE(exe.ok()) << exe.status();
  int get_tags = 0;
  for (const vm::Function& f : (*exe)->functions()) {
    if (f.name != "shape") continue;
    for (size_t pc = 0; pc < f.code.size(); pc += vm::HeaderLength(f.code[pc])) {
      get_tags += static_cast<vm::Opcode>(vm::HeaderOpcode(f.code[pc])) == vm::Opcode::kGetTag;
    }
  }
  EXPECT_EQ(get_tags, 2);
  vm::VirtualMachine machine(*exe);
  NDArray x = *NDArrayObj::Empty({}, DType::kF32, MakeNaiveAllocator());
  *x->data_as<float>() = -2.0f;
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(x), Value(BoolScalar(false))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out->As<ADTObj>()->fields()[0].As<NDArrayObj>()->data_as<int64_t>(), -1);
  EXPECT_EQ(*out->As<ADTObj>()->fields()[1].As<NDArrayObj>()->data_as<int64_t>(), 2);
  out = machine.Invoke("main", {Value(x), Value(BoolScalar(true))});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("in @shape: no clause of a match? matches the value"),
            absl::string_view::npos)
      << out.status();

  exe = Compile(program("match"));
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(exe.status().message().find("in @shape: match is not exhaustive"), absl::string_view::npos)
      << exe.status();
}

// A let-bound closure that calls itself: in tail position a tail call of its own code
// (100000 iterations, past the VM's call depth limit of 10000), elsewhere a call; as a
// value, a closure of the same code and captured values.
TEST(CodegenTest, RecursiveClosures) {
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @apply(%f: fn (int64) -> int64, %v: int64) -> int64 { %f(%v) }
    def @main(%x: Tensor[(3), float32], %n: int64) {
      let %loop = fn (%i: int64, %acc: Tensor[(3), float32]) -> Tensor[(3), float32] {
        if (less(%i, %n)) { %loop(add(%i, 1i64), add(%acc, %x)) } else { %acc }
      };
      let %fact: fn (int64) -> int64 = fn (%k: int64) -> int64 {
        if (less(%k, 2i64)) { 1i64 } else { multiply(%k, %fact(subtract(%k, 1i64))) }
      };
      (%loop(0i64, multiply(%x, 0f)), @apply(%fact, 10i64))
    })");
  ASSERT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  NDArray x = *NDArrayObj::Empty({3}, DType::kF32, MakeNaiveAllocator());
  const float values[] = {1.0f, 0.5f, -3.0f};  // sums exact in f32 up to 2^24
  std::copy(values, values + 3, x->data_as<float>());
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(x), Value(Int64Scalar(100000))});
  ASSERT_TRUE(out.ok()) << out.status();
  const ADTObj* pair = out->As<ADTObj>();
  ASSERT_NE(pair, nullptr);
  const float* sum = pair->fields()[0].As<NDArrayObj>()->data_as<float>();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sum[i], values[i] * 100000) << i;
  EXPECT_EQ(*pair->fields()[1].As<NDArrayObj>()->data_as<int64_t>(), 3628800);
}

// An operator whose type is a tuple of one tensor gives a tuple, as its type says.
TEST(CodegenTest, OneOutputTuplesStayTuples) {
  std::mt19937 rng(12);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @main(%x: Tensor[(4), float32]) {
      %0 = split(%x, indices_or_sections=1);
      (exp(%0.0), %0)
    })");
  ASSERT_TRUE(exe.ok()) << exe.status();
  vm::VirtualMachine machine(*exe);
  const NDArray x = Tensor({4}, rng);
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(x)});
  ASSERT_TRUE(out.ok()) << out.status();
  const ADTObj* parts = out->As<ADTObj>()->fields()[1].As<ADTObj>();
  ASSERT_NE(parts, nullptr);
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ(parts->fields()[0].As<NDArrayObj>()->data_as<float>()[2], x->data_as<float>()[2]);
}

// Symbolic output shapes are computed by integer instructions from the input's extents,
// not by shape functions; the shapes are right at every length, 0 included. A reshape
// whose shape is so computed is a view.
TEST(CodegenTest, SymbolicShapesLowerToIntegerArithmetic) {
  std::mt19937 rng(9);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = Compile(R"(
    def @main(%x: Tensor[(n, 4), float32]) {
      %0 = reshape(%x, newshape=[-1, 2]);
      %1 = concatenate((%x, %x), axis=0);
      (exp(%0), add(%1, 1f))
    })");
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ(CountOpcode(**exe, vm::Opcode::kInvokeShapeFn), 0);
  EXPECT_GT(CountOpcode(**exe, vm::Opcode::kMulI), 0);
  // The reshape is a view of %x (reshape_tensor), not a kernel call that copies.
  EXPECT_EQ(CountOpcode(**exe, vm::Opcode::kReshapeTensor), 1);
  for (const vm::KernelEntry& k : (*exe)->spec().kernels) EXPECT_NE(k.name, "reshape");
  vm::VirtualMachine machine(*exe);
  for (int64_t n : {0, 1, 5}) {
    const NDArray x = Tensor({n, 4}, rng);
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(x)});
    ASSERT_TRUE(out.ok()) << out.status();
    const ADTObj* pair = out->As<ADTObj>();
    const NDArrayObj* e = pair->fields()[0].As<NDArrayObj>();
    const NDArrayObj* c = pair->fields()[1].As<NDArrayObj>();
    ASSERT_EQ(e->shape(), (Shape{n * 2, 2}));
    ASSERT_EQ(c->shape(), (Shape{n * 2, 4}));
    for (int64_t i = 0; i < n * 4; ++i) {
      EXPECT_FLOAT_EQ(e->data_as<float>()[i], std::exp(x->data_as<float>()[i]));  // 4 ulps
      EXPECT_EQ(c->data_as<float>()[i + n * 4], x->data_as<float>()[i] + 1.0f);
    }
  }
}

// Memory planning and register allocation: a chain of five operators keeps two buffers
// alive at a time, whatever the shape is (static: two slots of one arena; symbolic: two
// storages of the one size), and the results are those of the unplanned code.
TEST(CodegenTest, PlannedMemoryIsReusedAndGivesTheSameResults) {
  std::mt19937 rng(10);
  for (const std::string_view shape : {"(8, 16)", "(n, 16)"}) {
    const std::string text = absl::StrCat("def @main(%x: Tensor[", std::string(shape), R"(, float32]) {
      %0 = exp(%x);
      %1 = tanh(%0);
      %2 = sigmoid(%1);
      %3 = negative(%2);
      %4 = abs(%3);
      add(%4, %x)
    })");
    SCOPED_TRACE(text);
    const Module mod = *ParseModule(text);
    std::vector<Value> results;
    for (const int level : {0, 2}) {
      CodegenStats stats;
      CompileOptions options;
      options.opt_level = level;
      options.fuse = false;  // (fusion would make the chain one kernel)
      options.codegen_stats = &stats;
      absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(mod, options);
      ASSERT_TRUE(spec.ok()) << spec.status();
      if (level == 2) {
        // %0..%4 planned; the returned sum escapes and keeps a storage of its own.
        if (shape == "(8, 16)") {
          EXPECT_EQ(stats.memory.static_tensors, 5);
          EXPECT_EQ(stats.memory.static_bytes, 5 * 8 * 16 * 4);
          EXPECT_EQ(stats.memory.arena_bytes, 2 * 8 * 16 * 4);
        } else {
          EXPECT_EQ(stats.memory.symbolic_tensors, 5);
          EXPECT_EQ(stats.memory.symbolic_storages, 2);
        }
        EXPECT_LT(stats.registers_after, stats.registers_before);
      }
      absl::StatusOr<std::shared_ptr<const vm::Executable>> loaded =
          vm::Executable::Create(std::move(*spec), kernels::DefaultRegistry());
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      const std::shared_ptr<const vm::Executable>& exe = *loaded;
      if (level == 2) {
        EXPECT_GT(CountOpcode(*exe, vm::Opcode::kKillRegister), 0);
      }
      vm::VirtualMachine machine(exe);
      rng.seed(11);
      absl::StatusOr<Value> out = machine.Invoke("main", {Value(Tensor({8, 16}, rng))});
      ASSERT_TRUE(out.ok()) << out.status();
      results.push_back(*out);
    }
    const NDArrayObj* a = results[0].As<NDArrayObj>();
    const NDArrayObj* b = results[1].As<NDArrayObj>();
    ASSERT_EQ(a->shape(), b->shape());
    for (int64_t i = 0; i < a->num_elements(); ++i) EXPECT_EQ(a->data_as<float>()[i], b->data_as<float>()[i]);
  }
}

}  // namespace
}  // namespace dynvm::compiler
