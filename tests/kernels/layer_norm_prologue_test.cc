// Tests of the `prologue` attribute of nn.layer_norm (kernels/nn/normalization.cc):
// layer_norm(program(inputs), gamma, beta) in one call against fused_elementwise then
// the plain layer_norm with the same attributes, on random shapes (rank 1 to 4, extents
// 0 and 1, rows up to 5000), broadcast inputs (a [n] bias against [b, s, n]), every
// axis, every center/scale combination, 1 and 4 threads; the output aliasing an input;
// the shape function; and the errors.
//
// Tolerance: none. The prologue runs fused_elementwise's own evaluator and the norm the
// same slice function on the same values (the microkernels do not depend on where a
// slice sits in memory), so results are compared bit for bit (any NaN equals any NaN).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

// A transformer's residual connection before the norm.
constexpr char kResidual[] = "t0 = add(i0, i1)";

// Programs of 1, 2, 3 and 5 inputs.
const char* const kPrograms[] = {
    "t0 = multiply(i0, 0.5)",
    kResidual,
    "t0 = add(i0, i1); t1 = add(t0, i2)",  // residual plus a bias
    "t0 = add(i0, i1); t1 = multiply(t0, i2); t2 = subtract(t1, i3); t3 = maximum(t2, i4)",
};

// layer_norm's attributes other than the prologue.
struct NormAttrs {
  int64_t axis = -1;
  double epsilon = 1e-5;
  bool center = true;
  bool scale = true;

  Attrs ToAttrs() const {
    return {{"axis", axis},
            {"epsilon", epsilon},
            {"center", int64_t{center}},
            {"scale", int64_t{scale}}};
  }
};

// layer_norm(program(inputs), gamma, beta) in one call.
absl::StatusOr<NDArray> RunFused(const std::string& program, const NormAttrs& norm,
                                 const std::vector<NDArray>& inputs, const NDArray& gamma,
                                 const NDArray& beta, ThreadPool* pool) {
  Attrs attrs = norm.ToAttrs();
  attrs["prologue"] = program;
  std::vector<NDArray> args = inputs;
  args.push_back(gamma);
  args.push_back(beta);
  absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.layer_norm", attrs, args, {}, 1, pool);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// fused_elementwise, then the plain layer_norm.
absl::StatusOr<NDArray> RunSeparately(const std::string& program, const NormAttrs& norm,
                                      const std::vector<NDArray>& inputs, const NDArray& gamma,
                                      const NDArray& beta, ThreadPool* pool) {
  absl::StatusOr<std::vector<NDArray>> x =
      RunKernel("fused_elementwise", {{"program", program}}, inputs, {}, 1, pool);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel("nn.layer_norm", norm.ToAttrs(), {(*x)[0], gamma, beta}, {}, 1, pool);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// Both ways on `pool`, with random gamma and beta of the normalised extent of the
// inputs' broadcast shape `shape`.
void CheckBothWays(const std::string& program, const NormAttrs& norm,
                   const std::vector<NDArray>& inputs, const std::vector<int64_t>& shape,
                   ThreadPool* pool, std::mt19937& rng) {
  std::vector<std::string> shapes;
  for (const NDArray& t : inputs) shapes.push_back(ShapeToString(t->shape()));
  SCOPED_TRACE(::testing::Message() << "axis " << norm.axis << " center " << norm.center
                                    << " scale " << norm.scale << " eps " << norm.epsilon
                                    << " of \"" << program << "\" on "
                                    << absl::StrJoin(shapes, ", ") << " with "
                                    << pool->num_threads() << " threads");
  const int rank = static_cast<int>(shape.size());
  const int64_t n = shape[norm.axis < 0 ? norm.axis + rank : norm.axis];
  const NDArray gamma = RandomTensor({n}, DType::kF32, rng);
  const NDArray beta = RandomTensor({n}, DType::kF32, rng);
  absl::StatusOr<NDArray> fused = RunFused(program, norm, inputs, gamma, beta, pool);
  absl::StatusOr<NDArray> separate = RunSeparately(program, norm, inputs, gamma, beta, pool);
  ASSERT_TRUE(separate.ok()) << separate.status();
  ASSERT_TRUE(fused.ok()) << fused.status();
  ExpectSameBits(*fused, *separate);
}

TEST(LayerNormPrologueTest, RandomShapesAxesAndPrograms) {
  std::mt19937 rng(31);
  ThreadPool one(1), four(4);
  for (int iter = 0; iter < 150; ++iter) {
    const int rank = static_cast<int>(RandomInt(rng, 1, 4));
    std::vector<int64_t> shape(rank);
    for (int64_t& d : shape) {
      const int64_t r = RandomInt(rng, 0, 13);
      d = r == 0    ? 0
          : r < 3   ? 1
          : r < 11  ? RandomInt(rng, 2, 23)
          : r < 13  ? RandomInt(rng, 200, 700)
                    : RandomInt(rng, 1000, 5000);
    }
    if (NumElements(shape) > 100000) continue;
    const std::string program = kPrograms[RandomInt(rng, 0, 3)];
    std::vector<NDArray> inputs;
    const int full = static_cast<int>(RandomInt(rng, 0, ProgramInputCount(program) - 1));
    for (int k = 0; k < ProgramInputCount(program); ++k) {
      inputs.push_back(RandomTensor(k == full ? shape : BroadcastFrom(shape, rng), DType::kF32,
                                    rng, -4.0, 4.0));
    }
    for (int64_t axis = -rank; axis < rank; ++axis) {
      NormAttrs norm{.axis = axis,
                     .epsilon = iter % 3 == 0 ? 1e-12 : 1e-5,
                     .center = rng() % 2 == 0,
                     .scale = rng() % 2 == 0};
      CheckBothWays(program, norm, inputs, shape, iter % 2 == 0 ? &one : &four, rng);
    }
  }
}

TEST(LayerNormPrologueTest, ResidualAndBiasOfATransformer) {
  // [batch, seq, hidden] + [batch, seq, hidden] + bias [hidden], BERT's epsilon.
  std::mt19937 rng(32);
  ThreadPool one(1), four(4);
  for (int64_t seq : {1, 7, 128}) {
    const NDArray x = RandomTensor({2, seq, 768}, DType::kF32, rng, -3.0, 3.0);
    const NDArray residual = RandomTensor({2, seq, 768}, DType::kF32, rng, -3.0, 3.0);
    const NDArray bias = RandomTensor({768}, DType::kF32, rng);
    for (ThreadPool* pool : {&one, &four}) {
      const NormAttrs norm{.epsilon = 1e-12};
      CheckBothWays(kResidual, norm, {x, residual}, {2, seq, 768}, pool, rng);
      CheckBothWays("t0 = add(i0, i1); t1 = add(t0, i2)", norm, {x, bias, residual},
                    {2, seq, 768}, pool, rng);
      // The bias first: the program's result comes from a broadcast input on the left.
      CheckBothWays(kResidual, norm, {bias, x}, {2, seq, 768}, pool, rng);
    }
  }
}

TEST(LayerNormPrologueTest, RowsLongerThanABlockAndShortRowsGrouped) {
  std::mt19937 rng(33);
  ThreadPool one(1), four(4);
  for (ThreadPool* pool : {&one, &four}) {
    // Rows of 5000 are evaluated one at a time, cut into blocks within the row.
    const NDArray x = RandomTensor({3, 5000}, DType::kF32, rng, -8.0, 8.0);
    for (const std::vector<int64_t>& other :
         std::vector<std::vector<int64_t>>{{5000}, {3, 1}, {1, 5000}, {3, 5000}, {}}) {
      const NDArray y = RandomTensor(other, DType::kF32, rng);
      for (int64_t axis : {-1, 0}) {
        CheckBothWays(kResidual, {.axis = axis}, {x, y}, {3, 5000}, pool, rng);
      }
    }
    // Rows of 8 are evaluated 256 at a time; a trailing extent of 1 keeps them contiguous.
    const NDArray z = RandomTensor({7, 3, 8, 1}, DType::kF32, rng, -4.0, 4.0);
    for (const std::vector<int64_t>& other :
         std::vector<std::vector<int64_t>>{{8, 1}, {7, 1, 8, 1}, {7, 3, 1, 1}, {1}}) {
      const NDArray y = RandomTensor(other, DType::kF32, rng);
      for (int64_t axis : {-2, -1, 0, 1}) {
        CheckBothWays(kResidual, {.axis = axis}, {z, y}, {7, 3, 8, 1}, pool, rng);
      }
    }
  }
}

TEST(LayerNormPrologueTest, EmptyAndUniformRows) {
  std::mt19937 rng(34);
  ThreadPool four(4);
  // Every row one repeated value: variance 0, the output is beta.
  CheckBothWays(kResidual, {}, {RandomTensor({5, 1}, DType::kF32, rng),
                                RandomTensor({1}, DType::kF32, rng)},
                {5, 1}, &four, rng);
  CheckBothWays(kResidual, {.axis = 0}, {RandomTensor({5, 1}, DType::kF32, rng),
                                         RandomTensor({1, 6}, DType::kF32, rng)},
                {5, 6}, &four, rng);
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{0}, {3, 0}, {0, 4}, {2, 0, 5}}) {
    for (int64_t axis = -static_cast<int64_t>(shape.size()); axis < 0; ++axis) {
      CheckBothWays(kResidual, {.axis = axis},
                    {RandomTensor(shape, DType::kF32, rng), RandomTensor({1}, DType::kF32, rng)},
                    shape, &four, rng);
    }
  }
}

TEST(LayerNormPrologueTest, OutputMayAliasAnInputOfItsShape) {
  std::mt19937 rng(35);
  for (int64_t axis : {-1, 0}) {
    const NDArray x = RandomTensor({6, 300}, DType::kF32, rng, -8.0, 8.0);
    const NDArray residual = RandomTensor({6, 300}, DType::kF32, rng);
    const int64_t n = axis == 0 ? 6 : 300;
    const NDArray gamma = RandomTensor({n}, DType::kF32, rng);
    const NDArray beta = RandomTensor({n}, DType::kF32, rng);
    const NormAttrs norm{.axis = axis};
    absl::StatusOr<NDArray> want =
        RunSeparately(kResidual, norm, {x, residual}, gamma, beta, &ThreadPool::Default());
    ASSERT_TRUE(want.ok()) << want.status();
    Attrs attrs = norm.ToAttrs();
    attrs["prologue"] = std::string(kResidual);
    ASSERT_TRUE(CallWithOutputs("nn.layer_norm", attrs, {x, residual, gamma, beta}, {residual})
                    .ok());
    ExpectSameBits(residual, *want);
  }
}

TEST(LayerNormPrologueTest, ShapeFunctionGivesTheBroadcastShape) {
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind(
      "nn.layer_norm", {{"prologue", std::string(kResidual)}}, 4, 1);
  ASSERT_TRUE(k.ok()) << k.status();
  const NDArray x = Empty({2, 1, 768}), bias = Empty({768}), p = Empty({768});
  NDArrayObj* inputs[] = {x.get(), bias.get(), p.get(), p.get()};
  Shape shape;
  ASSERT_TRUE(k->InferShapes(inputs, &shape).ok());
  EXPECT_EQ(ShapeToString(shape), "[2, 1, 768]");
  const NDArray y = Empty({2, 5, 1});
  NDArrayObj* broadcast[] = {x.get(), y.get(), p.get(), p.get()};
  ASSERT_TRUE(k->InferShapes(broadcast, &shape).ok());
  EXPECT_EQ(ShapeToString(shape), "[2, 5, 768]");
}

// ---------------------------------------------------------------------------------------
// Errors

Attrs WithPrologue(const std::string& program, int64_t axis = -1) {
  return {{"axis", axis}, {"prologue", program}};
}

TEST(LayerNormPrologueTest, BindErrors) {
  const NDArray x = Empty({2, 3}), p = Empty({3});
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue("t0 = frobnicate(i0)"), {x, p, p}),
                "kernel 'nn.layer_norm': program statement 0 \"t0 = frobnicate(i0)\": unknown "
                "op 'frobnicate'");
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(""), {x, p, p}),
                "kernel 'nn.layer_norm': attribute 'prologue' is empty");
  ExpectInvalid(RunKernel("nn.layer_norm", {{"prologue", int64_t{1}}}, {x, p, p}),
                "attribute 'prologue' must be a string");
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue("t0 = exp(2)"), {x, p, p}),
                "program reads no input");
  // batch_norm has no prologue.
  ExpectInvalid(RunKernel("nn.batch_norm", {{"prologue", std::string(kResidual)}},
                          {x, p, p, p, p}),
                "unknown attribute 'prologue'");
}

TEST(LayerNormPrologueTest, InputErrors) {
  const NDArray x = Empty({2, 3}), r = Empty({3}), p = Empty({3});
  // The input count: the program's inputs, then gamma and beta; from the shape function
  // and from the kernel.
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual), {x, p, p}),
                "nn.layer_norm: the prologue reads inputs up to i1: expected 4 inputs (its 2, "
                "then gamma and beta), got 3");
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual), {x, r, r, p, p}),
                "nn.layer_norm: the prologue reads inputs up to i1: expected 4 inputs (its 2, "
                "then gamma and beta), got 5");
  ExpectInvalid(CallWithOutputs("nn.layer_norm", WithPrologue(kResidual), {x, p, p},
                                {Empty({2, 3})}),
                "nn.layer_norm: the prologue reads inputs up to i1: expected 4 inputs");
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual), {}),
                "expected 4 inputs (its 2, then gamma and beta), got 0");
  // Dtypes: the program's inputs, then gamma and beta.
  ExpectInvalid(
      RunKernel("nn.layer_norm", WithPrologue(kResidual), {x, Empty({3}, DType::kI32), p, p}),
      "nn.layer_norm: input i1 has dtype i32, expected f32");
  ExpectInvalid(
      RunKernel("nn.layer_norm", WithPrologue(kResidual), {Empty({2, 3}, DType::kF64), r, p, p}),
      "nn.layer_norm: input i0 has dtype f64, expected f32");
  ExpectInvalid(
      RunKernel("nn.layer_norm", WithPrologue(kResidual), {x, r, Empty({3}, DType::kF64), p}),
      "unsupported dtype f64 for nn.layer_norm gamma: expected f32");
  ExpectInvalid(CallWithOutputs("nn.layer_norm", WithPrologue(kResidual),
                                {x, r, p, Empty({3}, DType::kI64)}, {Empty({2, 3})}),
                "unsupported dtype i64 for nn.layer_norm beta: expected f32");
  // Broadcasting.
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual), {x, Empty({4}), p, p}),
                "nn.layer_norm: input i1: shapes [2, 3] and [4] do not broadcast");
  ExpectInvalid(CallWithOutputs("nn.layer_norm", WithPrologue(kResidual), {x, Empty({4}), p, p},
                                {Empty({2, 3})}),
                "nn.layer_norm: input i1: shapes [2, 3] and [4] do not broadcast");
  // gamma and beta have the extent of the broadcast shape's axis, not the inputs'.
  const NDArray col = Empty({2, 1});
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual), {col, r, Empty({1}), p}),
                "nn.layer_norm: gamma has shape [1], expected [3]");
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual), {col, r, p, Empty({2})}),
                "nn.layer_norm: beta has shape [2], expected [3]");
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual, 0), {r, x, p, p}),
                "nn.layer_norm: gamma has shape [3], expected [2]");
  // The axis counts in the broadcast shape's rank.
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual, 2), {x, r, p, p}),
                "nn.layer_norm: axis 2 out of range for rank 2");
  ExpectInvalid(RunKernel("nn.layer_norm", WithPrologue(kResidual), {Empty({}), Empty({}), p, p}),
                "nn.layer_norm: axis -1 out of range for rank 0");
}

TEST(LayerNormPrologueTest, OutputErrors) {
  const NDArray x = Empty({2, 3}), r = Empty({3}), p = Empty({3});
  ExpectInvalid(CallWithOutputs("nn.layer_norm", WithPrologue(kResidual), {r, x, p, p},
                                {Empty({3})}),
                "nn.layer_norm: output 0 has shape [3], expected [2, 3]");
  ExpectInvalid(CallWithOutputs("nn.layer_norm", WithPrologue(kResidual), {x, r, p, p},
                                {Empty({2, 3}, DType::kF64)}),
                "unsupported dtype f64 for nn.layer_norm output: expected f32");
}

TEST(LayerNormPrologueTest, WithoutAPrologueExactlyThreeInputs) {
  const NDArray x = Empty({2, 3}), p = Empty({3});
  ExpectInvalid(RunKernel("nn.layer_norm", {}, {x, p}),
                "kernel 'nn.layer_norm' takes 3 inputs and 1 outputs, not 2 and 1");
  ExpectInvalid(RunKernel("nn.layer_norm", {}, {x, x, p, p}),
                "kernel 'nn.layer_norm' takes 3 inputs and 1 outputs, not 4 and 1: more inputs "
                "need the attribute 'prologue'");
  ExpectInvalid(CallWithOutputs("nn.layer_norm", {}, {x, x, p, p}, {Empty({2, 3})}),
                "kernel 'nn.layer_norm' takes 3 inputs and 1 outputs, not 4 and 1");
  ExpectInvalid(CallWithOutputs("nn.layer_norm", {}, {}, {Empty({2, 3})}),
                "kernel 'nn.layer_norm' takes 3 inputs and 1 outputs, not 0 and 1");
}

}  // namespace
}  // namespace dynvm::kernels::testing
