// Tests of nn.softmax and nn.log_softmax (kernels/nn/softmax.cc) against a plain
// reference in double precision, on random shapes and axes (extents 0 and 1, rows not a
// multiple of the vector width, inner axes), with large inputs, in place, and their
// errors.
//
// Tolerances: the kernel's exp is within a few ulp and the row sum accumulates in float
// (8 to 32 partial sums), so a probability is within 2e-5 relative of the exact value
// (plus 1e-30 absolute for results that underflow); a log-probability is off by the sum's
// relative error plus the rounding of x - max, within 2e-5 + 1e-6 |ref| absolute.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

// Softmax (or log-softmax) of `x` of `shape` along `axis` (already normalised).
std::vector<double> Reference(const std::vector<double>& x, const std::vector<int64_t>& shape,
                              int axis, bool log) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  const int64_t n = shape[axis];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * n + j) * inner + i; };
      double max = -INFINITY;
      for (int64_t j = 0; j < n; ++j) max = std::max(max, x[at(j)]);
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(x[at(j)] - max);
      for (int64_t j = 0; j < n; ++j) {
        y[at(j)] = log ? x[at(j)] - max - std::log(sum) : std::exp(x[at(j)] - max) / sum;
      }
    }
  }
  return y;
}

void CheckSoftmax(const NDArray& x, int64_t axis, ThreadPool* pool = nullptr) {
  const std::vector<int64_t> shape(x->shape().begin(), x->shape().end());
  const int rank = static_cast<int>(shape.size());
  const int norm_axis = static_cast<int>(axis < 0 ? axis + rank : axis);
  for (bool log : {false, true}) {
    SCOPED_TRACE(::testing::Message() << (log ? "log_softmax " : "softmax ")
                                      << ShapeToString(x->shape()) << " axis " << axis);
    absl::StatusOr<std::vector<NDArray>> out =
        RunKernel(log ? "nn.log_softmax" : "nn.softmax", {{"axis", axis}}, {x}, {}, 1, pool);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> want = Reference(Values(x), shape, norm_axis, log);
    if (log) {
      ExpectClose((*out)[0], want, 2e-5, 1e-6);
    } else {
      ExpectClose((*out)[0], want, 1e-30, 2e-5);
    }
  }
}

TEST(SoftmaxTest, RandomShapesAndAxes) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 150; ++iter) {
    const int rank = static_cast<int>(RandomInt(rng, 1, 4));
    std::vector<int64_t> shape(rank);
    for (int64_t& d : shape) {
      const int64_t r = RandomInt(rng, 0, 9);
      d = r == 0 ? 0 : r < 3 ? 1 : RandomInt(rng, 2, 23);
    }
    const int64_t axis = RandomInt(rng, -rank, rank - 1);
    CheckSoftmax(RandomTensor(shape, DType::kF32, rng, -4.0, 4.0), axis);
  }
}

TEST(SoftmaxTest, RowLengthsAroundTheVectorWidth) {
  std::mt19937 rng(12);
  for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 128, 383, 384, 1000}) {
    CheckSoftmax(RandomTensor({3, n}, DType::kF32, rng, -8.0, 8.0), -1);
    CheckSoftmax(RandomTensor({2, n, 5}, DType::kF32, rng, -8.0, 8.0), 1);
  }
}

TEST(SoftmaxTest, InnerAxesWiderThanOneTile) {
  // The strided path transposes 16 slices at a time: cover partial tiles.
  std::mt19937 rng(13);
  CheckSoftmax(RandomTensor({2, 7, 37}, DType::kF32, rng), 1);
  CheckSoftmax(RandomTensor({3, 5, 2, 17}, DType::kF32, rng), 0);
  CheckSoftmax(RandomTensor({64, 33}, DType::kF32, rng), 0);
}

TEST(SoftmaxTest, OneThreadAgreesWithThePool) {
  std::mt19937 rng(14);
  ThreadPool one(1), four(4);
  for (int64_t axis : {-1, 1}) {
    const NDArray x = RandomTensor({12, 64, 64}, DType::kF32, rng);
    CheckSoftmax(x, axis, &one);
    CheckSoftmax(x, axis, &four);
    // Slices are independent, so the split over threads changes no bit.
    auto alone = RunKernel("nn.softmax", {{"axis", axis}}, {x}, {}, 1, &one);
    auto pooled = RunKernel("nn.softmax", {{"axis", axis}}, {x}, {}, 1, &four);
    ASSERT_TRUE(alone.ok() && pooled.ok());
    EXPECT_EQ(std::memcmp((*alone)[0]->data(), (*pooled)[0]->data(), (*alone)[0]->nbytes()), 0)
        << "axis " << axis;
  }
}

TEST(SoftmaxTest, LargeInputsDoNotOverflow) {
  // exp(1000) overflows a float; subtracting the maximum first keeps every term <= 1.
  NDArray x = TensorOf<float>({2, 3}, {1000, 999, 998, -1000, -1001, -1e30f});
  absl::StatusOr<std::vector<NDArray>> p = RunKernel("nn.softmax", {}, {x});
  ASSERT_TRUE(p.ok()) << p.status();
  const double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  ExpectClose((*p)[0],
              {1 / z, std::exp(-1.0) / z, std::exp(-2.0) / z, 1 / (1 + std::exp(-1.0)),
               std::exp(-1.0) / (1 + std::exp(-1.0)), 0.0},
              1e-30, 2e-5);
  absl::StatusOr<std::vector<NDArray>> lp = RunKernel("nn.log_softmax", {}, {x});
  ASSERT_TRUE(lp.ok()) << lp.status();
  const std::vector<double> got = Values((*lp)[0]);
  EXPECT_NEAR(got[0], -std::log(z), 2e-5);
  EXPECT_NEAR(got[2], -2 - std::log(z), 2e-5);
  // log_softmax is finite where softmax underflows to 0: -1e30 - (-1000) - log(...).
  EXPECT_NEAR(got[5], -1e30, 1e24);
}

TEST(SoftmaxTest, NegativeInfinityGetsZeroProbability) {
  const float inf = std::numeric_limits<float>::infinity();
  NDArray x = TensorOf<float>({1, 4}, {0.0f, -inf, 0.0f, -inf});
  absl::StatusOr<std::vector<NDArray>> p = RunKernel("nn.softmax", {}, {x});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Values((*p)[0]), (std::vector<double>{0.5, 0.0, 0.5, 0.0}));
}

TEST(SoftmaxTest, InPlace) {
  std::mt19937 rng(15);
  for (const char* op : {"nn.softmax", "nn.log_softmax"}) {
    for (int64_t axis : {-1, 0}) {
      NDArray x = RandomTensor({5, 19}, DType::kF32, rng);
      const std::vector<double> want =
          Reference(Values(x), {5, 19}, static_cast<int>(axis < 0 ? 1 : 0),
                    std::string(op) == "nn.log_softmax");
      ASSERT_TRUE(CallWithOutputs(op, {{"axis", axis}}, {x}, {x}).ok());
      ExpectClose(x, want, 2e-5, 2e-5);
    }
  }
}

TEST(SoftmaxTest, EmptyTensorsWithHugeExtents) {
  // 0 x 2^40 x 2^40 has no elements, but the product of its last two extents overflows.
  const int64_t huge = int64_t{1} << 40;
  for (int64_t axis : {0, 1, 2}) {
    absl::StatusOr<std::vector<NDArray>> out =
        RunKernel("nn.softmax", {{"axis", axis}}, {Empty({0, huge, huge})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0]->num_elements(), 0);
  }
}

TEST(SoftmaxTest, Errors) {
  NDArray x = Empty({2, 3});
  ExpectInvalid(RunKernel("nn.softmax", {}, {Empty({2, 3}, DType::kI32)}),
                "unsupported dtype i32 for nn.softmax data: expected f32");
  ExpectInvalid(RunKernel("nn.log_softmax", {}, {Empty({2}, DType::kF64)}),
                "unsupported dtype f64 for nn.log_softmax data: expected f32");
  ExpectInvalid(RunKernel("nn.softmax", {{"axis", int64_t{2}}}, {x}),
                "nn.softmax: axis 2 out of range for rank 2");
  ExpectInvalid(RunKernel("nn.softmax", {{"axis", int64_t{-3}}}, {x}),
                "nn.softmax: axis -3 out of range for rank 2");
  ExpectInvalid(RunKernel("nn.softmax", {}, {Empty({})}),
                "nn.softmax: axis -1 out of range for rank 0");
  ExpectInvalid(RunKernel("nn.softmax", {{"axes", int64_t{0}}}, {x}),
                "kernel 'nn.softmax': unknown attribute 'axes'");
  ExpectInvalid(RunKernel("nn.softmax", {{"axis", 1.5}}, {x}), "attribute 'axis' must be an int");
  ExpectInvalid(RunKernel("nn.softmax", {}, {x, x}),
                "nn.softmax takes 1 input (data), got 2: more inputs need the attribute "
                "'prologue'");
  ExpectInvalid(CallWithOutputs("nn.softmax", {}, {x}, {Empty({3, 2})}),
                "nn.softmax: output 0 has shape [3, 2], expected [2, 3]");
  ExpectInvalid(CallWithOutputs("nn.log_softmax", {}, {x}, {Empty({2, 3}, DType::kF64)}),
                "unsupported dtype f64 for nn.log_softmax output: expected f32");
}

}  // namespace
}  // namespace dynvm::kernels::testing
