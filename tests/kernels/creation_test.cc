// Tests of the tensor-creation kernels (kernels/data_movement/creation.cc) — arange, full, zeros,
// ones, dyn.full, dyn.zeros, dyn.ones and random_uniform_like — against plain
// references written here (numpy's draws for random_uniform_like), all through
// RunKernel, whose shape functions read input values (arange's bounds, the dyn.* shape
// tensors).
//
// Tolerances: arange's float elements are start + i * step computed in double (two
// roundings) and rounded to the dtype; the reference computes in long double and
// rounds once, so an element may differ by 2 ulp of double plus, for f32, the final
// rounding: we allow 2^-50 relative for f64 and 1 ulp (2^-23 relative) for f32.
// Integer aranges and fills are exact.
#include "kernels/data_movement/creation.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/data_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels::testing {
namespace {

using Ints = std::vector<int64_t>;

// ---------------------------------------------------------------------------------------
// arange

// numpy's arange in long double, one element at a time.
std::vector<double> RefArange(double start, double stop, double step) {
  std::vector<double> v;
  const long double n = std::ceil((static_cast<long double>(stop) - start) / step);
  for (long double i = 0; i < n; ++i) v.push_back(static_cast<double>(start + i * step));
  return v;
}

template <typename T>
void CheckArange(T start, T stop, T step, DType dtype) {
  SCOPED_TRACE(absl::StrFormat("arange(%g, %g, %g) %s", static_cast<double>(start),
                               static_cast<double>(stop), static_cast<double>(step),
                               DTypeName(dtype)));
  auto scalar = [](T v) { return TensorOf<T>({}, {v}); };
  auto r = RunKernel("arange", {{"dtype", std::string(DTypeName(dtype))}},
                     {scalar(start), scalar(stop), scalar(step)});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> expected = RefArange(start, stop, step);
  ASSERT_EQ(ShapeOf((*r)[0]), Ints{static_cast<int64_t>(expected.size())});
  const std::vector<double> got = Values((*r)[0]);
  const double rel = std::is_same_v<T, float> ? 0x1p-23 : std::is_same_v<T, double> ? 0x1p-50 : 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(std::fabs(got[i] - expected[i]), rel * std::fabs(expected[i])) << "element " << i;
  }
}

TEST(ArangeTest, IntegersAndFloats) {
  std::mt19937 rng(31);
  for (int iter = 0; iter < 60; ++iter) {
    const int32_t a = static_cast<int32_t>(rng() % 41) - 20,
                  b = static_cast<int32_t>(rng() % 41) - 20;
    int32_t step = static_cast<int32_t>(rng() % 11) - 5;
    if (step == 0) step = 3;
    CheckArange<int32_t>(a, b, step, DType::kI32);
    CheckArange<int64_t>(a, b, step, DType::kI64);
    CheckArange<float>(a * 0.25f, b * 0.5f, step * 0.375f, DType::kF32);
    CheckArange<double>(a * 0.1, b * 0.3, step * 0.7, DType::kF64);
  }
  CheckArange<int64_t>(0, 0, 1, DType::kI64);  // empty
  CheckArange<int64_t>(5, 0, 1, DType::kI64);  // wrong direction: empty
  CheckArange<float>(0.0f, 1.0f, 0.1f, DType::kF32);
  CheckArange<float>(1.0f, 0.0f, -0.25f, DType::kF32);
  CheckArange<int32_t>(0, 100000, 1, DType::kI32);  // long enough for the pool
}

NDArray I64(int64_t v) { return TensorOf<int64_t>({}, {v}); }

// ---------------------------------------------------------------------------------------
// random_uniform_like

// numpy's draws after numpy.random.seed(s), printed by numpy 1.24 (exact doubles):
// uniform(0, 1, 4) at seed 0, uniform(-2, 3, (2, 2)) at seed 7, uniform(0, 1, 2) at
// seed 2^32 - 1. f64 outputs are equal bit for bit; f32 outputs are those doubles rounded.
TEST(RandomUniformLikeTest, ReproducesNumpysLegacyGenerator) {
  struct Case {
    int64_t seed;
    double low, high;
    Ints shape;
    std::vector<double> expected;
  };
  const Case cases[] = {
      {0, 0, 1, {4}, {0.5488135039273248, 0.7151893663724195, 0.6027633760716439, 0.5448831829968969}},
      {7, -2, 3, {2, 2}, {-1.618458553130214, 1.8995939612005732, 0.1920461572044676, 1.617325889154706}},
      {4294967295, 0, 1, {2}, {0.0976320289940138, 0.9123828453026218}},
  };
  for (const Case& c : cases) {
    for (const DType dtype : {DType::kF64, DType::kF32}) {
      SCOPED_TRACE(absl::StrFormat("seed %d, %s", c.seed, DTypeName(dtype)));
      auto r = RunKernel("random_uniform_like",
                         {{"seed", c.seed}, {"low", c.low}, {"high", c.high},
                          {"dtype", std::string(DTypeName(dtype))}},
                         {EmptyTensor(c.shape, DType::kI32)}, {dtype});
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(ShapeOf((*r)[0]), c.shape);
      const std::vector<double> got = Values((*r)[0]);
      for (size_t i = 0; i < got.size(); ++i) {
        const double want = dtype == DType::kF64 ? c.expected[i] : static_cast<float>(c.expected[i]);
        EXPECT_EQ(got[i], want) << "element " << i;
      }
    }
  }
  // Every call restarts the stream; an empty input gives an empty output.
  auto a = RunKernel("random_uniform_like", {{"seed", int64_t{3}}}, {EmptyTensor({5}, DType::kF32)});
  auto b = RunKernel("random_uniform_like", {{"seed", int64_t{3}}}, {EmptyTensor({5}, DType::kF32)});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Values((*a)[0]), Values((*b)[0]));
  auto empty = RunKernel("random_uniform_like", {{"seed", int64_t{3}}}, {EmptyTensor({2, 0}, DType::kF32)});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(ShapeOf((*empty)[0]), (Ints{2, 0}));
}

TEST(RandomUniformLikeTest, BadAttributes) {
  const NDArray x = EmptyTensor({2}, DType::kF32);
  EXPECT_INVALID(RunKernel("random_uniform_like", {}, {x}), "missing int attribute 'seed'");
  EXPECT_INVALID(RunKernel("random_uniform_like", {{"seed", int64_t{-1}}}, {x}),
                 "random_uniform_like: seed -1 is outside [0, 2^32)");
  EXPECT_INVALID(RunKernel("random_uniform_like", {{"seed", int64_t{1}}, {"low", 2.0}, {"high", 1.0}}, {x}),
                 "low 2 and high 1 must be finite with low <= high");
  EXPECT_INVALID(RunKernel("random_uniform_like", {{"seed", int64_t{1}}, {"dtype", std::string("int32")}}, {x}),
                 "expected f32 or f64");
}

TEST(ArangeTest, ExtremeIntegerBoundsDoNotOverflow) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto r = RunKernel("arange", {}, {I64(kMax - 2), I64(kMax), I64(1)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::vector<int64_t>((*r)[0]->data_as<int64_t>(), (*r)[0]->data_as<int64_t>() + 2),
            (std::vector<int64_t>{kMax - 2, kMax - 1}));
  r = RunKernel("arange", {}, {I64(kMax), I64(kMin), I64(kMin)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::vector<int64_t>((*r)[0]->data_as<int64_t>(), (*r)[0]->data_as<int64_t>() + 2),
            (std::vector<int64_t>{kMax, -1}));
  EXPECT_INVALID(RunKernel("arange", {}, {I64(kMin), I64(kMax), I64(1)}),
                 "arange: too many elements");
}

TEST(ArangeTest, Errors) {
  auto f = [](float v) { return TensorOf<float>({}, {v}); };
  EXPECT_INVALID(RunKernel("arange", {}, {f(0), f(1), f(0)}), "arange: step is 0");
  EXPECT_INVALID(RunKernel("arange", {},
                           {TensorOf<int32_t>({}, {0}), TensorOf<int32_t>({}, {1}),
                            TensorOf<int32_t>({}, {0})}),
                 "arange: step is 0");
  EXPECT_INVALID(RunKernel("arange", {}, {f(0), f(INFINITY), f(1)}),
                 "arange: start 0, stop inf and step 1 must be finite");
  EXPECT_INVALID(RunKernel("arange", {}, {f(0), f(NAN), f(1)}), "must be finite");
  EXPECT_INVALID(RunKernel("arange", {}, {f(0), f(1e30f), f(1e-30f)}), "arange: too many elements");
  EXPECT_INVALID(RunKernel("arange", {}, {f(0), TensorOf<float>({1}, {1}), f(1)}),
                 "arange: stop must be a scalar (rank 0), got [1]");
  EXPECT_INVALID(RunKernel("arange", {}, {f(0), TensorOf<int32_t>({}, {1}), f(1)}),
                 "arange: stop has dtype i32, expected f32");
  EXPECT_INVALID(RunKernel("arange", {{"dtype", std::string("int64")}}, {f(0), f(1), f(1)}),
                 "arange: start has dtype f32, expected i64");
  EXPECT_INVALID(RunKernel("arange", {},
                           {TensorOf<bool>({}, {false}), TensorOf<bool>({}, {true}),
                            TensorOf<bool>({}, {true})}),
                 "unsupported dtype bool for arange start: expected f32, f64, i32 or i64");
  EXPECT_INVALID(CallKernel("arange", {}, {f(0), f(3), f(1)}, {EmptyTensor({3}, DType::kF64)}),
                 "arange: output 0 has dtype f64, expected f32");
  EXPECT_INVALID(CallKernel("arange", {}, {f(0), f(3), f(1)}, {EmptyTensor({4}, DType::kF32)}),
                 "arange: output 0 has shape [4], expected [3]");
}

// ---------------------------------------------------------------------------------------
// full, zeros, ones

// Runs `name` with a static or shape-tensor shape and expects every element to be `value`.
void CheckFill(const std::string& name, Attrs attrs, std::vector<NDArray> inputs, const Ints& shape,
               bool dynamic, bool shape_i64, DType dtype, double value) {
  SCOPED_TRACE(absl::StrFormat("%s%s %s %s", dynamic ? "dyn." : "", name, ShapeToString(shape),
                               DTypeName(dtype)));
  if (dynamic) {
    const int64_t rank = static_cast<int64_t>(shape.size());
    inputs.push_back(
        shape_i64 ? TensorOf<int64_t>({rank}, shape)
                  : TensorOf<int32_t>({rank}, std::vector<int32_t>(shape.begin(), shape.end())));
  } else {
    attrs["shape"] = shape;
  }
  auto r = RunKernel(dynamic ? "dyn." + name : name, attrs, inputs, {dtype});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(ShapeOf((*r)[0]), shape);
  EXPECT_EQ(Values((*r)[0]), std::vector<double>(static_cast<size_t>(NumElements(shape)), value));
}

TEST(FillTest, ZerosOnesFullEveryDTypeAndShape) {
  std::mt19937 rng(32);
  for (int iter = 0; iter < 20; ++iter) {
    const Ints shape = RandomShape(rng, static_cast<int>(rng() % 4), 9);
    const bool dynamic = iter % 2 == 1;
    for (DType dtype : kAllDTypes) {
      const Attrs attrs = {{"dtype", std::string(DTypeName(dtype))}};
      CheckFill("zeros", attrs, {}, shape, dynamic, iter % 4 == 1, dtype, 0.0);
      CheckFill("ones", attrs, {}, shape, dynamic, iter % 4 == 3, dtype, 1.0);
      NDArray value = RandomTensor({}, dtype, rng, -8, 8);  // exact in every dtype
      CheckFill("full", attrs, {value}, shape, dynamic, true, dtype, ElementAsDouble(*value, 0));
    }
  }
  // Defaults: zeros and ones are f32; full takes the fill value's dtype.
  CheckFill("zeros", {}, {}, {2, 2}, false, false, DType::kF32, 0.0);
  CheckFill("full", {}, {TensorOf<int64_t>({}, {-7})}, {3}, false, false, DType::kI64, -7.0);
  CheckFill("full", {}, {TensorOf<int64_t>({}, {-7})}, {3}, true, false, DType::kI64, -7.0);
  // A fill value of another dtype converts: floats truncate toward zero into integers.
  CheckFill("full", {{"dtype", std::string("i32")}}, {TensorOf<float>({}, {-2.75f})}, {2}, false,
            false, DType::kI32, -2.0);
  CheckFill("full", {{"dtype", std::string("bool")}}, {TensorOf<float>({}, {0.5f})}, {2}, true,
            true, DType::kBool, 1.0);
  CheckFill("full", {{"dtype", std::string("f16")}}, {TensorOf<double>({}, {1.0 / 3})}, {1}, false,
            false, DType::kF16,
            0.333251953125);  // the nearest half
  ThreadPool pool(4);
  auto big = RunKernel("ones", {{"shape", Ints{300, 1000}}, {"dtype", std::string("i64")}}, {},
                       {DType::kI64}, 1, &pool);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(Values((*big)[0]), std::vector<double>(300000, 1.0));
}

TEST(FillTest, Errors) {
  EXPECT_INVALID(RunKernel("zeros", {{"shape", Ints{2, -1}}}, {}, {DType::kF32}),
                 "attribute 'shape': negative dimension in shape [2, -1]");
  EXPECT_INVALID(RunKernel("zeros", {}, {}, {DType::kF32}), "missing int list attribute 'shape'");
  EXPECT_INVALID(
      RunKernel("ones", {{"shape", Ints{2}}, {"dtype", std::string("float33")}}, {}, {DType::kF32}),
      "attribute 'dtype': unknown dtype 'float33'");
  EXPECT_INVALID(
      RunKernel("dyn.zeros", {{"shape", Ints{2}}}, {TensorOf<int64_t>({1}, {2})}, {DType::kF32}),
      "unknown attribute 'shape'");
  EXPECT_INVALID(RunKernel("dyn.zeros", {}, {TensorOf<int64_t>({1}, {-2})}, {DType::kF32}),
                 "dyn.zeros: negative dimension in shape [-2]");
  EXPECT_INVALID(RunKernel("dyn.ones", {}, {TensorOf<int64_t>({}, {2})}, {DType::kF32}),
                 "dyn.ones: shape must be 1-D, got shape []");
  EXPECT_INVALID(RunKernel("dyn.full", {}, {TensorOf<float>({}, {1}), TensorOf<float>({1}, {2})},
                           {DType::kF32}),
                 "unsupported dtype f32 for dyn.full shape: expected i32 or i64");
  EXPECT_INVALID(
      RunKernel("full", {{"shape", Ints{2}}}, {TensorOf<float>({1}, {1})}, {DType::kF32}),
      "full: fill value must be a scalar (rank 0), got [1]");
  EXPECT_INVALID(CallKernel("zeros", {{"shape", Ints{2}}, {"dtype", std::string("i32")}}, {},
                            {EmptyTensor({2}, DType::kF32)}),
                 "zeros: output 0 has dtype f32, expected i32");
  EXPECT_INVALID(CallKernel("full", {{"shape", Ints{2}}}, {TensorOf<float>({}, {1})},
                            {EmptyTensor({3}, DType::kF32)}),
                 "full: output 0 has shape [3], expected [2]");
  EXPECT_INVALID(CallKernel("zeros", {{"shape", Ints{2}}}, {TensorOf<float>({}, {1})},
                            {EmptyTensor({2}, DType::kF32)}),
                 "kernel 'zeros' takes 0 inputs and 1 outputs, not 1 and 1");
}

}  // namespace
}  // namespace dynvm::kernels::testing
