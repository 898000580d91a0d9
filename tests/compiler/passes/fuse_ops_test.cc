// Tests of operator fusion (compiler/passes/fuse_ops.h): its effect on typed modules as
// before/after text, what must not fuse, and that fused programs compute what the
// unfused ones do when compiled and run.
#include "compiler/passes/fuse_ops.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "compiler/passes/type_infer.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

NDArray Random(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  NDArray t = *NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator());
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<float>()[i] = dist(rng);
  return t;
}

// Constants: a weight [32, 16] and a bias [32].
std::vector<NDArray> Constants() { return {Random({32, 16}, 1), Random({32}, 2)}; }

// @main's body after fusion (typed again, as the pipeline does), or the error.
std::string Fuse(std::string_view text) {
  absl::StatusOr<Module> mod = ParseModule(text, Constants());
  if (!mod.ok()) return std::string(mod.status().message());
  absl::StatusOr<Module> typed = InferTypes(*mod);
  if (!typed.ok()) return std::string(typed.status().message());
  absl::StatusOr<Module> fused = FuseOps(*typed);
  if (!fused.ok()) return std::string(fused.status().message());
  absl::StatusOr<Module> retyped = InferTypes(*fused);
  if (!retyped.ok()) return std::string(retyped.status().message());
  std::vector<NDArray> constants;
  return PrintExpr(retyped->Function("main")->body(), constants);
}

constexpr char kX[] = "%x: Tensor[(n, 16), float32]";
constexpr char kW[] = "meta[relay.Constant][0]";
constexpr char kB[] = "meta[relay.Constant][1]";

TEST(FuseOpsTest, DenseTakesItsBiasAndActivation) {
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ") { gelu(add(nn.dense(%x, ", kW, "), ", kB, ")) }")),
            absl::StrCat("nn.dense(%x, ", kW, ", ", kB, ", activation=\"gelu\")"));
  // Bias on the left, the tanh form of gelu, relu.
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ") { gelu(add(", kB, ", nn.dense(%x, ", kW,
                              ")), approximate=\"tanh\") }")),
            absl::StrCat("nn.dense(%x, ", kW, ", ", kB, ", activation=\"gelu_tanh\")"));
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ") { nn.relu(nn.dense(%x, ", kW, ")) }")),
            absl::StrCat("nn.dense(%x, ", kW, ", activation=\"relu\")"));
}

TEST(FuseOpsTest, ResidualMakesAGemm) {
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ", %r: Tensor[(n, 32), float32]) {\n"
                              "  add(%r, nn.relu(add(nn.dense(%x, ", kW, "), ", kB, ")))\n}")),
            absl::StrCat("gemm(%x, ", kW, ", ", kB, ", %r, activation=\"relu\", residual=1, trans_b=1)"));
}

TEST(FuseOpsTest, ElementwiseChainsBecomeOneCall) {
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ", %y: Tensor[(n, 16), float32], %b: Tensor[(16), float32]) {\n"
                              "  tanh(add(multiply(%x, 0.5f), add(%y, %b)))\n}")),
            "fused_elementwise(%x, %y, %b, program=\"t0 = multiply(i0, 0.5); t1 = add(i1, i2); "
            "t2 = add(t0, t1); t3 = tanh(t2)\")");
  // Attributes become literals, integers too, as the kernels read them.
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ") { nn.leaky_relu(negative(%x), alpha=1) }")),
            "fused_elementwise(%x, program=\"t0 = negative(i0); t1 = nn.leaky_relu(t0, 1)\")");
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ") { nn.leaky_relu(clip(%x, a_min=-0.5f, a_max=2f), alpha=0.1f) }")),
            "fused_elementwise(%x, program=\"t0 = clip(i0, -0.5, 2); t1 = nn.leaky_relu(t0, 0.100000001)\")");
}

TEST(FuseOpsTest, SoftmaxReadsItsInputThroughAPrologue) {
  EXPECT_EQ(Fuse("def @main(%s: Tensor[(12, n, n), float32], %m: Tensor[(1, 1, n), float32]) {\n"
                 "  nn.softmax(add(multiply(%s, 0.125f), %m), axis=-1)\n}"),
            "nn.softmax(%s, %m, axis=-1, prologue=\"t0 = multiply(i0, 0.125); t1 = add(t0, i1)\")");
  // layer_norm after a residual sum: the program's inputs come before gamma and beta.
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ", %y: Tensor[(n, 16), float32], %g: Tensor[(16), float32]) {\n"
                              "  nn.layer_norm(add(%x, %y), %g, %g)\n}")),
            "nn.layer_norm(%x, %y, %g, %g, prologue=\"t0 = add(i0, i1)\")");
  // A reduction takes its data's group as a prologue and its result's as an epilogue.
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ") {\n"
                              "  rsqrt(add(mean(multiply(%x, %x), axis=[-1]), 1e-06f))\n}")),
            "mean(%x, axis=[-1], epilogue=\"t0 = add(i0, 9.99999997e-07); t1 = rsqrt(t0)\", "
            "prologue=\"t0 = multiply(i0, i0)\")");
  // Not when the scores are used again.
  EXPECT_EQ(Fuse("def @main(%s: Tensor[(4, 8), float32]) {\n"
                 "  %0 = multiply(%s, 0.125f);\n  (nn.log_softmax(%0), %0)\n}"),
            "%0 = multiply(%s, 0.125f);\n%1 = nn.log_softmax(%0);\n(%1, %0)");
}

TEST(FuseOpsTest, WhatMustNotFuse) {
  // %0 has two users: fused into neither, or it would be computed twice.
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ") {\n"
                              "  %0 = exp(%x);\n"
                              "  (tanh(%0), sigmoid(%0))\n}")),
            "%0 = exp(%x);\n%1 = tanh(%0);\n%2 = sigmoid(%0);\n(%1, %2)");
  // exp of the [16] bias would be recomputed for every row it is broadcast to.
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ", %b: Tensor[(16), float32]) { add(%x, exp(%b)) }")),
            "%0 = exp(%b);\nadd(%x, %0)");
  // An add that broadcasts the dense's output is not its epilogue: the bias would have
  // the weight's width (1 here), the residual the output's shape.
  EXPECT_EQ(Fuse("def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(1, 4), float32], "
                 "%b: Tensor[(5), float32]) { add(nn.dense(%x, %w), %b) }"),
            "%0 = nn.dense(%x, %w);\nadd(%0, %b)");
  EXPECT_EQ(Fuse("def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(3, 4), float32], "
                 "%r: Tensor[(n, 3), float32]) { add(nn.dense(%x, %w), %r) }"),
            "%0 = nn.dense(%x, %w);\nadd(%0, %r)");
  // Not f32.
  EXPECT_EQ(Fuse("def @main(%i: Tensor[(4), int64]) { abs(negative(%i)) }"),
            "%0 = negative(%i);\nabs(%0)");
  // A dense whose output is also used elsewhere keeps it.
  EXPECT_EQ(Fuse(absl::StrCat("def @main(", kX, ") {\n"
                              "  %0 = nn.dense(%x, ", kW, ");\n"
                              "  (nn.relu(%0), %0)\n}")),
            absl::StrCat("%0 = nn.dense(%x, ", kW, ");\n%1 = nn.relu(%0);\n(%1, %0)"));
}

// A transformer feed-forward block, a layer norm of its sum with a residual, an
// elementwise tail and a softmax over it (along the first axis: the prologue evaluated
// whole, then the softmax in place), and an RMS (a mean with a prologue and an epilogue),
// compiled with and without fusion and run at several lengths: the outputs agree.
TEST(FuseOpsTest, FusedProgramsComputeWhatUnfusedOnesDo) {
  const std::string text = absl::StrCat(
      "def @main(", kX, ", %r: Tensor[(n, 32), float32]) {\n"
      "  %0 = add(nn.dense(%x, ", kW, "), ", kB, ");\n"
      "  %1 = add(gelu(%0), %r);\n"
      "  %2 = multiply(subtract(%1, 0.25f), sigmoid(%1));\n"
      "  (nn.layer_norm(add(%1, %r), ", kB, ", ", kB, "), nn.softmax(tanh(add(%2, %r)), axis=0),\n"
      "   rsqrt(add(mean(multiply(%1, %1), axis=[-1], keepdims=True), 1e-06f)))\n}");
  const Module mod = *ParseModule(text, Constants());
  std::vector<std::unique_ptr<vm::VirtualMachine>> machines;
  for (const bool fuse : {false, true}) {
    CompileOptions options;
    options.fuse = fuse;
    absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(mod, options);
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
        vm::Executable::Create(std::move(*spec), kernels::DefaultRegistry());
    ASSERT_TRUE(exe.ok()) << exe.status();
    machines.push_back(std::make_unique<vm::VirtualMachine>(*exe));
  }
  for (const int64_t n : {1, 7, 64}) {
    const NDArray x = Random({n, 16}, 3), r = Random({n, 32}, 4);
    std::vector<Value> outs;
    for (auto& machine : machines) {
      absl::StatusOr<Value> out = machine->Invoke("main", {Value(x), Value(r)});
      ASSERT_TRUE(out.ok()) << out.status();
      outs.push_back(*out);
    }
    for (int field = 0; field < 3; ++field) {
      const NDArrayObj* a = outs[0].As<ADTObj>()->fields()[field].As<NDArrayObj>();
      const NDArrayObj* b = outs[1].As<ADTObj>()->fields()[field].As<NDArrayObj>();
      ASSERT_EQ(a->shape(), b->shape());
      // The GEMM epilogue applies bias and gelu in registers and may round differently
      // from the separate kernels: 1e-5 absolute on values of order 1 is a few ulps.
      for (int64_t i = 0; i < a->num_elements(); ++i) {
        EXPECT_NEAR(a->data_as<float>()[i], b->data_as<float>()[i], 1e-5) << "n=" << n << " field " << field;
      }
    }
  }
}

}  // namespace
}  // namespace dynvm::compiler
