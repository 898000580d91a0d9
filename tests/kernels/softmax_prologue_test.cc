// Tests of the `prologue` attribute of nn.softmax and nn.log_softmax
// (kernels/nn/softmax.cc) and of FusedProgram, the fused_elementwise API it runs on
// (kernels/elementwise/fused_elementwise.h): softmax(program(inputs)) against fused_elementwise then
// the plain softmax, on random shapes, broadcast inputs (BERT's [b, 1, 1, n] mask
// against [b, h, n, n] scores), empty tensors, rows longer than a block, every axis, 1
// and 4 threads; FusedProgram::EvaluateRange against slices of fused_elementwise's
// output; and the errors.
//
// Tolerance: none. The prologue runs fused_elementwise's own evaluator and the softmax
// the same row functions on the same values (the microkernels do not depend on where
// a row sits in memory), so results are compared bit for bit (any NaN equals any NaN).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/kernel.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

// BERT's attention: scores scaled by 1/sqrt(64), plus the mask.
constexpr char kScaleMask[] = "t0 = multiply(i0, 0.125); t1 = add(t0, i1)";

// Programs of 1, 2, 3 and 5 inputs (one, two, four and sixteen operands in the
// evaluator's broadcast loop).
const char* const kPrograms[] = {
    "t0 = multiply(i0, 0.125)",
    kScaleMask,
    "t0 = add(i0, i1); t1 = tanh(t0); t2 = multiply(t1, i2)",
    "t0 = add(i0, i1); t1 = multiply(t0, i2); t2 = subtract(t1, i3); t3 = maximum(t2, i4)",
};

// softmax(program(inputs)) in one call.
absl::StatusOr<NDArray> RunFusedSoftmax(const char* op, const std::string& program,
                                        int64_t axis, const std::vector<NDArray>& inputs,
                                        ThreadPool* pool) {
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel(op, {{"axis", axis}, {"prologue", program}}, inputs, {}, 1, pool);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// fused_elementwise, then the plain softmax.
absl::StatusOr<NDArray> RunSeparately(const char* op, const std::string& program,
                                      int64_t axis, const std::vector<NDArray>& inputs,
                                      ThreadPool* pool) {
  absl::StatusOr<std::vector<NDArray>> x =
      RunKernel("fused_elementwise", {{"program", program}}, inputs, {}, 1, pool);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<NDArray>> out = RunKernel(op, {{"axis", axis}}, *x, {}, 1, pool);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// Both ways, both operators, on `pool`.
void CheckBothWays(const std::string& program, int64_t axis, const std::vector<NDArray>& inputs,
                   ThreadPool* pool) {
  std::vector<std::string> shapes;
  for (const NDArray& t : inputs) shapes.push_back(ShapeToString(t->shape()));
  for (const char* op : {"nn.softmax", "nn.log_softmax"}) {
    SCOPED_TRACE(::testing::Message() << op << " axis " << axis << " of \"" << program
                                      << "\" on " << absl::StrJoin(shapes, ", "));
    absl::StatusOr<NDArray> fused = RunFusedSoftmax(op, program, axis, inputs, pool);
    absl::StatusOr<NDArray> separate = RunSeparately(op, program, axis, inputs, pool);
    ASSERT_TRUE(separate.ok()) << separate.status();
    ASSERT_TRUE(fused.ok()) << fused.status();
    ExpectSameBits(*fused, *separate);
  }
}

TEST(SoftmaxPrologueTest, RandomShapesAxesAndPrograms) {
  std::mt19937 rng(21);
  ThreadPool one(1), four(4);
  for (int iter = 0; iter < 120; ++iter) {
    const int rank = static_cast<int>(RandomInt(rng, 1, 4));
    std::vector<int64_t> shape(rank);
    for (int64_t& d : shape) {
      const int64_t r = RandomInt(rng, 0, 12);
      d = r == 0 ? 0 : r < 3 ? 1 : r < 11 ? RandomInt(rng, 2, 23) : RandomInt(rng, 200, 700);
    }
    if (NumElements(shape) > 100000) continue;
    const std::string program = kPrograms[RandomInt(rng, 0, 3)];
    std::vector<NDArray> inputs;
    const int full = static_cast<int>(RandomInt(rng, 0, ProgramInputCount(program) - 1));
    for (int k = 0; k < ProgramInputCount(program); ++k) {
      inputs.push_back(RandomTensor(k == full ? shape : BroadcastFrom(shape, rng), DType::kF32,
                                    rng, -6.0, 6.0));
    }
    for (int64_t axis = -rank; axis < rank; ++axis) {
      CheckBothWays(program, axis, inputs, iter % 2 == 0 ? &one : &four);
    }
  }
}

TEST(SoftmaxPrologueTest, AttentionScoresWithAPaddingMask) {
  // [batch, heads, seq, seq] scores, [batch, 1, 1, seq] mask of 0 and -10000.
  std::mt19937 rng(22);
  ThreadPool one(1), four(4);
  for (int64_t seq : {8, 33, 128, 384}) {
    const NDArray scores = RandomTensor({2, 3, seq, seq}, DType::kF32, rng, -20.0, 20.0);
    NDArray mask = RandomTensor({2, 1, 1, seq}, DType::kF32, rng);
    float* m = mask->data_as<float>();
    for (int64_t i = 0; i < mask->num_elements(); ++i) m[i] = m[i] < 0.3f ? 0.0f : -10000.0f;
    for (ThreadPool* pool : {&one, &four}) {
      for (int64_t axis : {-1, 2}) CheckBothWays(kScaleMask, axis, {scores, mask}, pool);
    }
  }
}

TEST(SoftmaxPrologueTest, RowsLongerThanABlock) {
  // Rows of 3000 are cut into blocks of at most 512 within the row.
  std::mt19937 rng(23);
  ThreadPool one(1), four(4);
  for (ThreadPool* pool : {&one, &four}) {
    const NDArray x = RandomTensor({3, 3000}, DType::kF32, rng, -8.0, 8.0);
    for (const std::vector<int64_t>& mask_shape :
         std::vector<std::vector<int64_t>>{{3000}, {3, 1}, {1, 3000}, {3, 3000}, {}}) {
      const NDArray mask = RandomTensor(mask_shape, DType::kF32, rng);
      for (int64_t axis : {-1, 0}) CheckBothWays(kScaleMask, axis, {x, mask}, pool);
      // The program's result on the left: the mask is i0.
      CheckBothWays("t0 = subtract(i0, i1); t1 = exp(t0)", -1, {mask, x}, pool);
    }
    CheckBothWays("t0 = multiply(i0, 0.125)", -1,
                  {RandomTensor({2, 5000}, DType::kF32, rng, -8.0, 8.0)}, pool);
  }
}

TEST(SoftmaxPrologueTest, ShortRowsGroupedAndGathered) {
  // Rows shorter than half a block are grouped: inputs read in place, uniform, tiled
  // ([3, 8] against [7, 3, 8]) or gathered ([7, 1, 8]).
  std::mt19937 rng(24);
  ThreadPool one(1), four(4);
  const NDArray x = RandomTensor({7, 3, 8}, DType::kF32, rng, -4.0, 4.0);
  for (ThreadPool* pool : {&one, &four}) {
    for (const std::vector<int64_t>& other :
         std::vector<std::vector<int64_t>>{{3, 8}, {7, 1, 8}, {7, 3, 1}, {1}, {7, 3, 8}}) {
      const NDArray y = RandomTensor(other, DType::kF32, rng);
      for (int64_t axis : {-1, 0, 1}) CheckBothWays(kScaleMask, axis, {x, y}, pool);
    }
  }
}

TEST(SoftmaxPrologueTest, EmptyAndUniformResults) {
  std::mt19937 rng(25);
  ThreadPool four(4);
  // A result that is one value per row (a literal-only chain over broadcast inputs).
  CheckBothWays(kScaleMask, -1,
                {RandomTensor({5, 1}, DType::kF32, rng), RandomTensor({1}, DType::kF32, rng)},
                &four);
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{0}, {3, 0}, {0, 4}, {2, 0, 5}}) {
    for (int64_t axis = -static_cast<int64_t>(shape.size()); axis < 0; ++axis) {
      CheckBothWays(kScaleMask, axis,
                    {RandomTensor(shape, DType::kF32, rng), RandomTensor({1}, DType::kF32, rng)},
                    &four);
    }
  }
}

TEST(SoftmaxPrologueTest, NaNAndInfinityFlowThrough) {
  // log of a negative number is NaN; a mask of -inf gives probability 0.
  const float inf = std::numeric_limits<float>::infinity();
  const NDArray x = TensorOf<float>({2, 3}, {1.0f, -1.0f, 2.0f, 0.5f, 1.5f, 3.0f});
  const NDArray mask = TensorOf<float>({3}, {0.0f, -inf, 0.0f});
  CheckBothWays("t0 = log(i0); t1 = add(t0, i1)", -1, {x, mask}, &ThreadPool::Default());
  CheckBothWays(kScaleMask, -1, {x, mask}, &ThreadPool::Default());
}

TEST(SoftmaxPrologueTest, OutputMayAliasAnInputOfItsShape) {
  std::mt19937 rng(26);
  for (const char* op : {"nn.softmax", "nn.log_softmax"}) {
    for (int64_t axis : {-1, 0}) {
      const NDArray scores = RandomTensor({6, 300}, DType::kF32, rng, -8.0, 8.0);
      const NDArray mask = RandomTensor({300}, DType::kF32, rng);
      absl::StatusOr<NDArray> want =
          RunSeparately(op, kScaleMask, axis, {scores, mask}, &ThreadPool::Default());
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_TRUE(CallWithOutputs(op, {{"axis", axis}, {"prologue", std::string(kScaleMask)}},
                                  {scores, mask}, {scores})
                      .ok());
      ExpectSameBits(scores, *want);
    }
  }
}

TEST(SoftmaxPrologueTest, ShapeFunctionGivesTheBroadcastShape) {
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind(
      "nn.softmax", {{"prologue", std::string(kScaleMask)}}, 2, 1);
  ASSERT_TRUE(k.ok()) << k.status();
  const NDArray scores = Empty({2, 1, 5, 5}), mask = Empty({2, 12, 1, 5});
  NDArrayObj* inputs[] = {scores.get(), mask.get()};
  Shape shape;
  ASSERT_TRUE(k->InferShapes(inputs, &shape).ok());
  EXPECT_EQ(ShapeToString(shape), "[2, 12, 5, 5]");
}

// ---------------------------------------------------------------------------------------
// FusedProgram

// Expects program.EvaluateRange over random ranges (and through one Prepare) to equal
// the slices of fused_elementwise's output.
void CheckRanges(const std::string& text, const std::vector<NDArray>& inputs,
                 std::mt19937& rng) {
  absl::StatusOr<FusedProgram> program = FusedProgram::Parse(text);
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<NDArrayObj*> args;
  for (const NDArray& t : inputs) args.push_back(t.get());
  absl::StatusOr<Shape> shape = program->InferShape("test", args);
  ASSERT_TRUE(shape.ok()) << shape.status();
  absl::StatusOr<std::vector<NDArray>> whole =
      RunKernel("fused_elementwise", {{"program", text}}, inputs);
  ASSERT_TRUE(whole.ok()) << whole.status();
  const float* want = (*whole)[0]->data_as<float>();
  const int64_t total = (*whole)[0]->num_elements();
  const int64_t row = shape->empty() ? 1 : shape->back();
  std::vector<float> got;
  program->Prepare(args, *shape, [&](const FusedRangeEvaluator& eval) {
    for (int i = 0; i < 40 && total > 0; ++i) {
      int64_t begin = RandomInt(rng, 0, total - 1);
      int64_t count = RandomInt(rng, 0, std::min<int64_t>(total - begin, 5000));
      if (i % 2 == 0) {  // whole rows
        begin = begin / row * row;
        count = std::min(total - begin, (count + row - 1) / row * row);
      }
      SCOPED_TRACE(::testing::Message() << "\"" << text << "\" over " << ShapeToString(*shape)
                                        << ": range [" << begin << ", +" << count << ")");
      got.assign(count + 1, -12345.0f);
      if (i % 3 == 0) {
        program->EvaluateRange(args, *shape, begin, count, got.data());
      } else {
        eval.EvaluateRange(begin, count, got.data());
      }
      for (int64_t j = 0; j < count; ++j) {
        ASSERT_TRUE(SameBits(got[j], want[begin + j]))
            << "element " << begin + j << ": got " << got[j] << ", want " << want[begin + j];
      }
      EXPECT_EQ(got[count], -12345.0f) << "wrote past the range";
    }
  });
}

TEST(FusedProgramTest, EvaluateRangeEqualsTheKernel) {
  std::mt19937 rng(27);
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = static_cast<int>(RandomInt(rng, 1, 4));
    std::vector<int64_t> shape(rank);
    for (int64_t& d : shape) {
      const int64_t r = RandomInt(rng, 0, 10);
      d = r < 2 ? 1 : r < 9 ? RandomInt(rng, 2, 40) : RandomInt(rng, 200, 3000);
    }
    if (NumElements(shape) > 200000) continue;
    const std::string program = kPrograms[RandomInt(rng, 0, 3)];
    std::vector<NDArray> inputs;
    for (int k = 0; k < ProgramInputCount(program); ++k) {
      inputs.push_back(
          RandomTensor(k == 0 ? shape : BroadcastFrom(shape, rng), DType::kF32, rng));
    }
    CheckRanges(program, inputs, rng);
  }
}

TEST(FusedProgramTest, Accessors) {
  absl::StatusOr<FusedProgram> p = FusedProgram::Parse(kScaleMask);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->num_inputs(), 2);
  EXPECT_EQ(p->num_statements(), 2);
  ExpectInvalid(FusedProgram::Parse(" ", "prologue"), "attribute 'prologue' is empty");
  ExpectInvalid(FusedProgram::Parse("t0 = add(i0, t1)"),
                "program statement 0 \"t0 = add(i0, t1)\": reads t1 before it is assigned");
}

// ---------------------------------------------------------------------------------------
// Errors

Attrs WithPrologue(const std::string& program) { return {{"prologue", program}}; }

TEST(SoftmaxPrologueTest, Errors) {
  const NDArray x = Empty({2, 3}), mask = Empty({3});
  ExpectInvalid(RunKernel("nn.softmax", WithPrologue("t0 = frobnicate(i0)"), {x}),
                "kernel 'nn.softmax': program statement 0 \"t0 = frobnicate(i0)\": unknown op "
                "'frobnicate'");
  ExpectInvalid(RunKernel("nn.log_softmax", WithPrologue(""), {x}),
                "kernel 'nn.log_softmax': attribute 'prologue' is empty");
  ExpectInvalid(RunKernel("nn.softmax", {{"prologue", int64_t{1}}}, {x}),
                "attribute 'prologue' must be a string");
  ExpectInvalid(RunKernel("nn.softmax", WithPrologue("t0 = exp(2)"), {x}),
                "program reads no input");
  // Input count, dtypes and broadcasting, from the shape function and from the kernel.
  ExpectInvalid(RunKernel("nn.softmax", WithPrologue(kScaleMask), {x}),
                "nn.softmax: the prologue reads inputs up to i1: expected 2 inputs, got 1");
  ExpectInvalid(RunKernel("nn.softmax", WithPrologue(kScaleMask), {x, mask, mask}),
                "nn.softmax: the prologue reads inputs up to i1: expected 2 inputs, got 3");
  ExpectInvalid(CallWithOutputs("nn.softmax", WithPrologue(kScaleMask), {x}, {Empty({2, 3})}),
                "nn.softmax: the prologue reads inputs up to i1: expected 2 inputs, got 1");
  ExpectInvalid(RunKernel("nn.softmax", WithPrologue(kScaleMask), {x, Empty({3}, DType::kI32)}),
                "nn.softmax: input i1 has dtype i32, expected f32");
  ExpectInvalid(
      RunKernel("nn.log_softmax", WithPrologue(kScaleMask), {Empty({2, 3}, DType::kF64), mask}),
      "nn.log_softmax: input i0 has dtype f64, expected f32");
  ExpectInvalid(RunKernel("nn.softmax", WithPrologue(kScaleMask), {x, Empty({4})}),
                "nn.softmax: input i1: shapes [2, 3] and [4] do not broadcast");
  ExpectInvalid(
      CallWithOutputs("nn.softmax", WithPrologue(kScaleMask), {x, Empty({4})}, {Empty({2, 3})}),
      "nn.softmax: input i1: shapes [2, 3] and [4] do not broadcast");
  // The axis counts in the output's rank, the broadcast of the inputs'.
  ExpectInvalid(RunKernel("nn.softmax", {{"axis", int64_t{2}}, {"prologue", std::string(kScaleMask)}},
                          {x, mask}),
                "nn.softmax: axis 2 out of range for rank 2");
  ExpectInvalid(RunKernel("nn.softmax", WithPrologue(kScaleMask), {Empty({}), Empty({})}),
                "nn.softmax: axis -1 out of range for rank 0");
  // The output: the broadcast shape, f32.
  ExpectInvalid(CallWithOutputs("nn.softmax", WithPrologue(kScaleMask), {Empty({3}), x},
                                {Empty({3})}),
                "nn.softmax: output 0 has shape [3], expected [2, 3]");
  ExpectInvalid(CallWithOutputs("nn.log_softmax", WithPrologue(kScaleMask), {x, mask},
                                {Empty({2, 3}, DType::kF64)}),
                "unsupported dtype f64 for nn.log_softmax output: expected f32");
}

TEST(SoftmaxPrologueTest, WithoutAPrologueExactlyOneInput) {
  const NDArray x = Empty({2, 3});
  ExpectInvalid(RunKernel("nn.softmax", {}, {x, x}),
                "nn.softmax takes 1 input (data), got 2: more inputs need the attribute "
                "'prologue'");
  ExpectInvalid(CallWithOutputs("nn.log_softmax", {}, {x, x}, {Empty({2, 3})}),
                "nn.log_softmax takes 1 input (data), got 2");
  ExpectInvalid(CallWithOutputs("nn.softmax", {}, {}, {Empty({2, 3})}),
                "nn.softmax takes 1 input (data), got 0");
}

}  // namespace
}  // namespace dynvm::kernels::testing
