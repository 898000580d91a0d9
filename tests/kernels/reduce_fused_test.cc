// Tests of the `prologue` and `epilogue` attributes of the f32 reductions (sum, mean,
// max, min, prod, l2_norm; kernels/reduce/reduce.cc): epilogue(reduce(prologue(inputs))) in one
// call against fused_elementwise, the plain reduction, then fused_elementwise, on random
// shapes of rank 0 to 4 (empty ones included), random axis sets (innermost and not),
// keepdims and exclude, broadcast prologue inputs, long rows (one block, several, and
// the split of a few very long rows), 1 and 4 threads; and the errors.
//
// Tolerance: none. The prologue runs fused_elementwise's own evaluator into a buffer and
// the reduction folds each run with the functions that fold a materialised input (the
// same run lengths, in the same order; the microkernels do not depend on where a run
// sits in memory); the epilogue runs fused_elementwise's evaluator over the output. So
// results are compared bit for bit (any NaN equals any NaN).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"
#include "objects/allocator.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

using ::testing::HasSubstr;

const char* const kOps[] = {"sum", "mean", "max", "min", "prod", "l2_norm"};

// Prologues of 1, 2 and 3 inputs; epilogues of RMS norm and a scale.
const char* const kPrologues[] = {
    "t0 = multiply(i0, i0)",
    "t0 = add(i0, i1); t1 = tanh(t0)",
    "t0 = multiply(i0, i1); t1 = subtract(t0, i2)",
};
const char* const kEpilogues[] = {
    "t0 = add(i0, 1e-06); t1 = rsqrt(t0)",
    "t0 = multiply(i0, 0.5)",
};

// One case: the reduction's own attributes, and the programs (empty: none).
struct Case {
  const char* op;
  Attrs attrs;  // axis, keepdims, exclude
  std::string prologue, epilogue;
};

absl::StatusOr<NDArray> RunFused(const Case& c, const std::vector<NDArray>& inputs,
                                 ThreadPool* pool) {
  Attrs attrs = c.attrs;
  if (!c.prologue.empty()) attrs["prologue"] = c.prologue;
  if (!c.epilogue.empty()) attrs["epilogue"] = c.epilogue;
  absl::StatusOr<std::vector<NDArray>> out = RunKernel(c.op, attrs, inputs, {}, 1, pool);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// fused_elementwise, the plain reduction, fused_elementwise.
absl::StatusOr<NDArray> RunSeparately(const Case& c, std::vector<NDArray> inputs,
                                      ThreadPool* pool) {
  if (!c.prologue.empty()) {
    absl::StatusOr<std::vector<NDArray>> x =
        RunKernel("fused_elementwise", {{"program", c.prologue}}, inputs, {}, 1, pool);
    if (!x.ok()) return x.status();
    inputs = *std::move(x);
  }
  absl::StatusOr<std::vector<NDArray>> y = RunKernel(c.op, c.attrs, inputs, {}, 1, pool);
  if (!y.ok()) return y.status();
  if (!c.epilogue.empty()) {
    y = RunKernel("fused_elementwise", {{"program", c.epilogue}}, *y, {}, 1, pool);
    if (!y.ok()) return y.status();
  }
  return (*y)[0];
}

void CheckBothWays(const Case& c, const std::vector<NDArray>& inputs, ThreadPool* pool) {
  std::vector<std::string> shapes, attrs;
  for (const NDArray& t : inputs) shapes.push_back(ShapeToString(t->shape()));
  for (const auto& [name, value] : c.attrs) {
    if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) {
      attrs.push_back(name + "=[" + absl::StrJoin(*list, ",") + "]");
    } else if (const auto* one = std::get_if<int64_t>(&value)) {
      attrs.push_back(name + "=" + std::to_string(*one));
    }
  }
  SCOPED_TRACE(::testing::Message()
               << c.op << " " << absl::StrJoin(attrs, " ") << " prologue \"" << c.prologue
               << "\" epilogue \"" << c.epilogue << "\" on " << absl::StrJoin(shapes, ", ")
               << " threads " << pool->num_threads());
  absl::StatusOr<NDArray> separate = RunSeparately(c, inputs, pool);
  absl::StatusOr<NDArray> fused = RunFused(c, inputs, pool);
  if (!separate.ok()) {  // max/min of zero elements: the same error both ways
    ASSERT_FALSE(fused.ok());
    EXPECT_EQ(fused.status().message(), separate.status().message());
    return;
  }
  ASSERT_TRUE(fused.ok()) << fused.status();
  ExpectSameBits(*fused, *separate);
}

// Inputs for `program` broadcasting to `shape` (the first input has it whole). Values
// near 1 so that products stay finite.
std::vector<NDArray> InputsFor(const std::string& program, const std::vector<int64_t>& shape,
                               std::mt19937& rng) {
  std::vector<NDArray> inputs;
  for (int k = 0; k < std::max(1, ProgramInputCount(program)); ++k) {
    const std::vector<int64_t> s = k == 0 ? shape : BroadcastFrom(shape, rng);
    NDArray t = RandomTensor(s, DType::kF32, rng);
    float* p = t->data_as<float>();
    for (int64_t i = 0; i < t->num_elements(); ++i) p[i] = 0.75f + 0.5f * std::fabs(p[i]);
    if (RandomInt(rng, 0, 1) == 0) {
      for (int64_t i = 0; i < t->num_elements(); ++i) p[i] = -p[i] + 0.25f * (i % 3);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// Random axis attributes for rank `rank`: absent, a list (possibly empty, negative
// entries), or the innermost axis alone; keepdims and exclude at random.
Attrs RandomAxes(int rank, std::mt19937& rng) {
  Attrs attrs;
  const int64_t kind = RandomInt(rng, 0, 3);
  if (kind == 1 && rank > 0) {
    attrs["axis"] = int64_t{-1};
  } else if (kind >= 2) {
    std::vector<int64_t> axes;
    for (int d = 0; d < rank; ++d) {
      if (RandomInt(rng, 0, 1) == 0) axes.push_back(RandomInt(rng, 0, 1) == 0 ? d : d - rank);
    }
    std::shuffle(axes.begin(), axes.end(), rng);
    attrs["axis"] = axes;
  }
  if (RandomInt(rng, 0, 1) == 0) attrs["keepdims"] = int64_t{1};
  if (RandomInt(rng, 0, 3) == 0) attrs["exclude"] = int64_t{1};
  return attrs;
}

TEST(ReduceFusedTest, RandomShapesAxesAndPrograms) {
  std::mt19937 rng(7);
  ThreadPool one(1), four(4);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = static_cast<int>(RandomInt(rng, 0, 4));
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d) {
      shape.push_back(RandomInt(rng, 0, 12) == 0 ? 0 : RandomInt(rng, 1, 7));
    }
    Case c{kOps[iter % std::size(kOps)], RandomAxes(rank, rng), "", ""};
    const int64_t which = RandomInt(rng, 0, 2);  // prologue, epilogue, both
    if (which != 1) c.prologue = kPrologues[RandomInt(rng, 0, std::size(kPrologues) - 1)];
    if (which != 0) c.epilogue = kEpilogues[RandomInt(rng, 0, std::size(kEpilogues) - 1)];
    const std::vector<NDArray> inputs =
        InputsFor(c.prologue.empty() ? "i0" : c.prologue, shape, rng);
    CheckBothWays(c, inputs, (iter & 1) ? &four : &one);
  }
}

// Rows of one block, of several (5000 floats), of the split path (70000: two parts per
// row), and the same along an outer axis (column blocks).
TEST(ReduceFusedTest, LongRowsAndColumns) {
  std::mt19937 rng(11);
  ThreadPool one(1), four(4);
  struct Layout {
    std::vector<int64_t> shape;
    Attrs attrs;
  };
  const Layout layouts[] = {
      {{9, 300}, {{"axis", int64_t{-1}}}},
      {{3, 5000}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{1}}}},
      {{2, 70000}, {{"axis", int64_t{1}}}},
      {{4, 3, 700}, {{"axis", std::vector<int64_t>{0, 2}}}},
      {{5000, 3}, {{"axis", int64_t{0}}}},
      {{7, 600, 5}, {{"axis", int64_t{1}}}},
      {{2, 3, 2000}, {{"axis", std::vector<int64_t>{-2, -1}}}},
  };
  for (const Layout& layout : layouts) {
    for (const char* op : kOps) {
      for (int both = 0; both < 2; ++both) {
        Case c{op, layout.attrs, kPrologues[1], both ? kEpilogues[0] : ""};
        const std::vector<NDArray> inputs = InputsFor(c.prologue, layout.shape, rng);
        for (ThreadPool* pool : {&one, &four}) CheckBothWays(c, inputs, pool);
      }
    }
  }
}

// Variance of the last axis then RMS norm's scale, as the fusion pass emits it.
TEST(ReduceFusedTest, RmsNorm) {
  std::mt19937 rng(3);
  const NDArray x = RandomTensor({4, 7, 768}, DType::kF32, rng);
  const Case c{"mean",
               {{"axis", std::vector<int64_t>{-1}}, {"keepdims", int64_t{1}}},
               "t0 = multiply(i0, i0)",
               "t0 = add(i0, 1e-06); t1 = rsqrt(t0)"};
  CheckBothWays(c, {x}, &ThreadPool::Default());
  absl::StatusOr<NDArray> y = RunFused(c, {x}, &ThreadPool::Default());
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ShapeToString((*y)->shape()), "[4, 7, 1]");
}

// An epilogue on an integer reduction is refused; without the attributes integer
// reductions are unchanged.
TEST(ReduceFusedTest, Errors) {
  std::mt19937 rng(5);
  const NDArray x = RandomTensor({2, 3}, DType::kF32, rng);
  const NDArray b = RandomTensor({4}, DType::kF32, rng);
  const NDArray i = RandomTensor({2, 3}, DType::kI32, rng);
  const Attrs sq = {{"prologue", std::string("t0 = multiply(i0, i1)")}};
  auto with = [](Attrs attrs, const char* name, const char* program) {
    attrs[name] = std::string(program);
    return attrs;
  };
  // Bad programs, at Bind.
  ExpectInvalid(RunKernel("sum", with({}, "prologue", "t0 = frobnicate(i0)"), {x}).status(),
                "kernel 'sum': ");
  ExpectInvalid(RunKernel("sum", with({}, "prologue", ""), {x}).status(),
                "attribute 'prologue'");
  ExpectInvalid(RunKernel("max", with({}, "epilogue", "t0 = add(i0, i1)"), {x}).status(),
                "kernel 'max': attribute 'epilogue' must read exactly one input, i0 (the "
                "reduced value), reads 2");
  ExpectInvalid(RunKernel("max", with({}, "epilogue", "t0 = add(i1, 1.0)"), {x}).status(),
                "reads 2");
  ExpectInvalid(RunKernel("argmax", with({}, "prologue", "t0 = tanh(i0)"), {x}).status(),
                "kernel 'argmax': unknown attribute 'prologue'");
  ExpectInvalid(RunKernel("cumsum", with({}, "epilogue", "t0 = tanh(i0)"), {x}).status(),
                "kernel 'cumsum': unknown attribute 'epilogue'");
  ExpectInvalid(RunKernel("sum", {{"prologue", int64_t{1}}}, {x}).status(),
                "attribute 'prologue'");
  // Wrong input count, dtype, broadcast.
  ExpectInvalid(RunKernel("sum", sq, {x}).status(),
                "sum: the prologue reads inputs up to i1: expected 2 inputs, got 1");
  ExpectInvalid(RunKernel("sum", sq, {x, x, x}).status(), "expected 2 inputs, got 3");
  ExpectInvalid(RunKernel("mean", sq, {x, i}).status(), "mean");
  ExpectInvalid(RunKernel("mean", sq, {x, i}).status(), "i32");
  ExpectInvalid(RunKernel("min", sq, {x, b}).status(), "min: input i1: ");
  // Without a prologue: exactly one input, as Bind would say it.
  ExpectInvalid(RunKernel("sum", {}, {x, x}).status(),
                "kernel 'sum' takes 1 inputs and 1 outputs, not 2 and 1: more inputs need the "
                "attribute 'prologue'");
  ExpectInvalid(RunKernel("prod", {}, {}).status(),
                "kernel 'prod' takes 1 inputs and 1 outputs, not 0 and 1");
  ExpectInvalid(DefaultRegistry().Bind("argmax", {}, 2, 1).status(),
                "kernel 'argmax' takes 1 inputs and 1 outputs, not 2 and 1");
  // An epilogue needs f32 values.
  ExpectInvalid(RunKernel("sum", with({}, "epilogue", "t0 = tanh(i0)"), {i}).status(),
                "unsupported dtype i32 for sum input (with an epilogue): expected f32");
  EXPECT_TRUE(RunKernel("sum", {}, {i}).ok());
  // Max of zero elements through a prologue.
  ExpectInvalid(
      RunKernel("max", with({}, "prologue", "t0 = tanh(i0)"),
                {RandomTensor({3, 0}, DType::kF32, rng)})
          .status(),
      "max: cannot reduce zero elements (input shape [3, 0])");
  // Output shape and dtype, checked by the kernel.
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind(
      "sum", with({{"axis", int64_t{-1}}}, "prologue", "t0 = multiply(i0, i1)"), 2, 1);
  ASSERT_TRUE(k.ok()) << k.status();
  NDArray wrong = RandomTensor({3}, DType::kF32, rng);
  NDArrayObj* args[] = {x.get(), x.get(), wrong.get()};
  ExpectInvalid(k->Call(args, ThreadPool::Default()), "sum: output 0 has shape [3], expected [2]");
  NDArray wrong_dtype = RandomTensor({2}, DType::kI32, rng);
  NDArrayObj* args2[] = {x.get(), x.get(), wrong_dtype.get()};
  ExpectInvalid(k->Call(args2, ThreadPool::Default()), "sum: output 0 has dtype i32, expected f32");
}

}  // namespace
}  // namespace dynvm::kernels::testing
