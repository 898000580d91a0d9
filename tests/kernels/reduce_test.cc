// Tests of the reduction kernels and cumsum (kernels/reduce/reduce.cc) against a plain reference
// written here: every input element is visited in row-major order and folded into the
// output element its kept indices name.
//
// Tolerances: integer results and max, min, argmax, argmin are exact (ties and NaN
// included). f32 sum, mean and l2_norm accumulate in double: the result is the exact
// value rounded to f32 plus the double rounding of each step, so we allow
// |got - ref| <= 2^-24 |ref| + n 2^-50 sum|x| (ref in long double, n terms); prod
// likewise relative to |ref| with 2^-23 + n 2^-50; cumsum as sum for each prefix.
#include "kernels/reduce/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/elementwise/dtypes.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "tests/kernels/data_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels {
namespace {

using ::dynvm::kernels::testing::RandomTensor;
using ::dynvm::kernels::testing::RunKernel;
using ::dynvm::kernels::testing::ShapeOf;
using ::dynvm::kernels::testing::TensorOf;
using ::testing::HasSubstr;

using LD = long double;

// The reference of one reduction: per output, the folded values of its elements.
struct RefOut {
  LD sum = 0, sum_abs = 0, sum_sq = 0, prod = 1;
  uint64_t wrap_sum = 0, wrap_prod = 1;
  LD max = 0, min = 0;
  int64_t argmax = -1, argmin = -1, count = 0;
};

// Whether the k-th reduced element `v` replaces `best` (NaN is the extreme).
bool Beats(LD v, LD best, bool is_max, bool last) {
  if (std::isnan(best)) return last && std::isnan(v);
  if (std::isnan(v)) return true;
  if (v == best) return last;
  return is_max ? v > best : v < best;
}

template <typename T>
std::vector<RefOut> Reference(const NDArray& x, const std::vector<bool>& reduced, bool last) {
  const std::vector<int64_t> shape(x->shape().begin(), x->shape().end());
  int64_t num_out = 1;
  for (size_t d = 0; d < shape.size(); ++d) num_out *= reduced[d] ? 1 : shape[d];
  std::vector<RefOut> out(num_out);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    int64_t o = 0, k = 0;  // output index; position among the reduced elements
    for (size_t d = 0; d < shape.size(); ++d) {
      if (reduced[d]) {
        k = k * shape[d] + index[d];
      } else {
        o = o * shape[d] + index[d];
      }
    }
    const T raw = x->data_as<T>()[i];
    const LD v = static_cast<LD>(raw);
    RefOut& r = out[o];
    r.sum += v;
    r.sum_abs += std::fabs(v);
    r.sum_sq += v * v;
    r.prod *= v;
    if constexpr (std::is_integral_v<T>) {  // a negative float has no uint64 value
      r.wrap_sum += static_cast<uint64_t>(raw);
      r.wrap_prod *= static_cast<uint64_t>(raw);
    }
    if (r.count == 0 || Beats(v, r.max, true, last)) r.max = v, r.argmax = k;
    if (r.count == 0 || Beats(v, r.min, false, last)) r.min = v, r.argmin = k;
    ++r.count;
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Checks output `o` of reduction `op` against the reference.
template <typename T>
void CheckOne(std::string_view op, const NDArrayObj& y, int64_t o, const RefOut& r) {
  const LD n = static_cast<LD>(r.count);
  // `rel` of the result for its rounding to f32, plus `abs` for the accumulation.
  auto close = [&](LD got, LD want, LD rel, LD abs) {
    const LD tol = rel * std::fabs(want) + abs + 1e-45L;
    return std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= tol;
  };
  if (op == "argmax" || op == "argmin") {
    ASSERT_EQ(y.data_as<int64_t>()[o], op == "argmax" ? r.argmax : r.argmin) << "output " << o;
    return;
  }
  const T got = y.data_as<T>()[o];
  if (op == "max" || op == "min") {
    const LD want = op == "max" ? r.max : r.min;
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(static_cast<LD>(got))) << "output " << o;
    } else {
      ASSERT_EQ(static_cast<LD>(got), want) << "output " << o;
    }
    return;
  }
  if constexpr (std::is_integral_v<T>) {
    ASSERT_EQ(got, static_cast<T>(op == "sum" ? r.wrap_sum : r.wrap_prod)) << op << " output " << o;
  } else {
    // A double accumulation of n terms errs by at most n 2^-52 of the sum of their
    // magnitudes (2^-50 allowed): divided by n for the mean, halved relatively by the
    // square root of l2_norm; the result's rounding to T adds half an ulp of T
    // (2^-24 relative for f32, 2^-53 for f64).
    constexpr LD kHalfUlp = std::numeric_limits<T>::epsilon() / 2;
    LD want = 0, rel = kHalfUlp, abs = n * 0x1p-50L * r.sum_abs;
    if (op == "sum") want = r.sum;
    if (op == "mean") want = r.count == 0 ? NAN : r.sum / n, abs = 0x1p-50L * r.sum_abs;
    if (op == "l2_norm") {
      want = std::sqrt(r.sum_sq);
      abs = want > 0 ? n * 0x1p-50L * r.sum_sq / want : 0;
    }
    // A product of n terms in double errs by at most n 2^-53 relatively.
    if (op == "prod") want = r.prod, rel = 2 * kHalfUlp + n * 0x1p-53L, abs = 0;
    ASSERT_TRUE(close(got, want, rel, abs))
        << op << " output " << o << ": got " << got << ", want " << static_cast<double>(want);
  }
}

struct Options {
  std::vector<int64_t> axes;
  bool all = false;  // no axis attribute
  bool keepdims = false;
  bool exclude = false;
  bool last = false;
};

// Runs `op` on `x` and compares every output with the reference.
template <typename T>
void CheckReduce(std::string_view op, const NDArray& x, const Options& opt,
                 ThreadPool* pool = nullptr) {
  SCOPED_TRACE(absl::StrFormat("%s of %s over [%s]%s%s%s", op, ShapeToString(x->shape()),
                               absl::StrJoin(opt.axes, ", "), opt.all ? " (all)" : "",
                               opt.keepdims ? " keepdims" : "", opt.exclude ? " exclude" : ""));
  const int rank = x->ndim();
  std::vector<bool> reduced(rank, opt.all);
  for (int64_t a : opt.axes) reduced[a < 0 ? a + rank : a] = true;
  if (opt.exclude) reduced.flip();
  Attrs attrs;
  if (!opt.all) attrs["axis"] = opt.axes;
  if (opt.keepdims) attrs["keepdims"] = int64_t{1};
  if (opt.exclude) attrs["exclude"] = int64_t{1};
  if (opt.last) attrs["select_last_index"] = int64_t{1};
  const bool arg = op == "argmax" || op == "argmin";
  absl::StatusOr<std::vector<NDArray>> y =
      RunKernel(op, attrs, {x}, {arg ? DType::kI64 : x->dtype()}, 1, pool);
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<int64_t> want_shape;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) want_shape.push_back(x->shape()[d]);
    if (reduced[d] && opt.keepdims) want_shape.push_back(1);
  }
  ASSERT_EQ(std::vector<int64_t>((*y)[0]->shape().begin(), (*y)[0]->shape().end()), want_shape);
  const std::vector<RefOut> ref = Reference<T>(x, reduced, opt.last);
  ASSERT_EQ(static_cast<size_t>((*y)[0]->num_elements()), ref.size());
  for (size_t o = 0; o < ref.size(); ++o) CheckOne<T>(op, *(*y)[0], o, ref[o]);
}

// A random subset of the axes of a rank-`rank` tensor, in random order and sign.
std::vector<int64_t> RandomAxes(std::mt19937& rng, int rank) {
  std::vector<int64_t> axes;
  for (int d = 0; d < rank; ++d) {
    if (rng() % 2) axes.push_back(rng() % 2 ? d : d - rank);
  }
  std::shuffle(axes.begin(), axes.end(), rng);
  return axes;
}

std::vector<int64_t> RandomShape(std::mt19937& rng) {
  std::vector<int64_t> s(rng() % 5);
  for (int64_t& d : s) {
    const int r = rng() % 12;
    d = r == 0 ? 0 : r < 3 ? 1 : 1 + rng() % 23;
  }
  return s;
}

template <typename T>
class ReduceTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(ReduceTest, Types);

TYPED_TEST(ReduceTest, RandomShapesAndAxes) {
  using T = TypeParam;
  constexpr DType kDType = elementwise::DTypeOf<T>();
  std::vector<const char*> ops = {"sum", "max", "min", "prod", "argmax", "argmin"};
  if (std::is_floating_point_v<T>) ops.insert(ops.end(), {"mean", "l2_norm"});
  std::mt19937 rng(2024);
  for (int iter = 0; iter < 150; ++iter) {
    const std::vector<int64_t> shape = RandomShape(rng);
    const int rank = static_cast<int>(shape.size());
    Options opt;
    opt.all = rng() % 5 == 0;
    if (!opt.all) opt.axes = RandomAxes(rng, rank);
    opt.keepdims = rng() % 2;
    opt.exclude = !opt.all && rng() % 4 == 0;
    opt.last = rng() % 2;
    // Few distinct values, so that ties are common; some NaN among floats.
    NDArray x = RandomTensor(shape, kDType, rng, -3.0, 3.0);
    if constexpr (std::is_floating_point_v<T>) {
      for (int64_t i = 0; i < x->num_elements(); ++i) {
        T& v = x->template data_as<T>()[i];
        if (rng() % 3 == 0) v = std::round(v);
        if (iter % 4 == 0 && rng() % 50 == 0) v = NAN;
      }
    }
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      const bool listed = std::count(opt.axes.begin(), opt.axes.end(), d) +
                              std::count(opt.axes.begin(), opt.axes.end(), d - rank) >
                          0;
      if (opt.all || listed != opt.exclude) count *= shape[d];
    }
    for (const char* op : ops) {
      const bool no_identity = std::string_view(op) != "sum" && std::string_view(op) != "prod" &&
                               std::string_view(op) != "mean" && std::string_view(op) != "l2_norm";
      if (count == 0 && no_identity) continue;  // an error, tested below
      Options o = opt;
      if (!std::string_view(op).starts_with("arg")) o.last = false;
      CheckReduce<T>(op, x, o);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TYPED_TEST(ReduceTest, IntegerSumsWrap) {
  using T = TypeParam;
  if constexpr (std::is_integral_v<T>) {
    constexpr T kMax = std::numeric_limits<T>::max();
    NDArray x = TensorOf<T>({2, 3}, {kMax, kMax, 1, kMax, 2, 3});
    CheckReduce<T>("sum", x, {.axes = {1}});
    CheckReduce<T>("prod", x, {.axes = {0}});
    CheckReduce<T>("sum", x, {.axes = {}, .all = true});
  } else {
    GTEST_SKIP() << "integer wrap-around only";
  }
}

// Shapes that take each fast path: contiguous rows, columns, rows with outer reduced
// axes, a few very long rows split into parts, and reduce-all — on 1 and 2 threads.
TEST(ReduceTest, FastPathsAndThreads) {
  std::mt19937 rng(9);
  ThreadPool one(1), two(2);
  struct Case {
    std::vector<int64_t> shape;
    Options opt;
  };
  const Case cases[] = {
      {{384, 768}, {.axes = {-1}}},     {{384, 768}, {.axes = {0}}},
      {{3, 200000}, {.axes = {1}}},     {{1000003}, {.axes = {}, .all = true}},
      {{4, 50, 300}, {.axes = {0, 2}}}, {{50, 4, 300}, {.axes = {1}}},
      {{6, 7, 8, 9}, {.axes = {1, 3}}}, {{6, 7, 8, 9}, {.axes = {0, 2}, .keepdims = true}},
      {{2, 130000}, {.axes = {0}}},     {{9, 1, 5}, {.axes = {1}}},
  };
  for (const Case& c : cases) {
    NDArray x = RandomTensor(c.shape, DType::kF32, rng);
    for (const char* op : {"sum", "mean", "max", "argmax", "argmin", "l2_norm"}) {
      CheckReduce<float>(op, x, c.opt, &one);
      CheckReduce<float>(op, x, c.opt, &two);
    }
    // The same result on any number of threads.
    const Attrs attrs = c.opt.all ? Attrs{} : Attrs{{"axis", c.opt.axes}};
    absl::StatusOr<std::vector<NDArray>> a = RunKernel("sum", attrs, {x}, {}, 1, &one);
    absl::StatusOr<std::vector<NDArray>> b = RunKernel("sum", attrs, {x}, {}, 1, &two);
    ASSERT_TRUE(a.ok() && b.ok());
    for (int64_t i = 0; i < (*a)[0]->num_elements(); ++i) {
      ASSERT_EQ((*a)[0]->data_as<float>()[i], (*b)[0]->data_as<float>()[i]);
    }
  }
}

TEST(ReduceTest, ArgTiesAndNan) {
  NDArray x = TensorOf<float>({2, 5}, {1, 3, 3, -1, 3, 2, NAN, 5, NAN, -7});
  auto arg = [&](const char* op, int64_t axis, bool last) {
    Attrs attrs = {{"axis", axis}};
    if (last) attrs["select_last_index"] = int64_t{1};
    absl::StatusOr<std::vector<NDArray>> y = RunKernel(op, attrs, {x}, {DType::kI64});
    EXPECT_TRUE(y.ok()) << y.status();
    const int64_t* p = (*y)[0]->data_as<int64_t>();
    return std::vector<int64_t>(p, p + (*y)[0]->num_elements());
  };
  EXPECT_EQ(arg("argmax", 1, false), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(arg("argmax", 1, true), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(arg("argmin", 1, false), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(arg("argmax", 0, false), (std::vector<int64_t>{1, 1, 1, 1, 0}));
}

TEST(ReduceTest, EmptyReductions) {
  NDArray x = *NDArrayObj::Empty({0, 3}, DType::kF32, MakeNaiveAllocator());
  auto over0 = [&](const char* op) { return RunKernel(op, {{"axis", int64_t{0}}}, {x}); };
  auto values = [](const absl::StatusOr<std::vector<NDArray>>& y) {
    EXPECT_TRUE(y.ok()) << y.status();
    const float* p = (*y)[0]->data_as<float>();
    return std::vector<float>(p, p + (*y)[0]->num_elements());
  };
  EXPECT_EQ(values(over0("sum")), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(values(over0("prod")), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(values(over0("l2_norm")), (std::vector<float>{0, 0, 0}));
  for (float v : values(over0("mean"))) EXPECT_TRUE(std::isnan(v));
  for (const char* op : {"max", "min", "argmax", "argmin"}) {
    const absl::Status s = over0(op).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(absl::StrFormat(
                                 "%s: cannot reduce zero elements (input shape [0, 3])", op)));
  }
  // Reducing the non-empty axis of an empty tensor is fine: nothing to compute.
  absl::StatusOr<std::vector<NDArray>> y = RunKernel("max", {{"axis", int64_t{1}}}, {x});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0]->shape(), Shape{0});
}

TEST(ReduceTest, AxisAsIntOrListAndRankZero) {
  NDArray x = TensorOf<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<std::vector<NDArray>> a = RunKernel("sum", {{"axis", int64_t{-1}}}, {x});
  absl::StatusOr<std::vector<NDArray>> b =
      RunKernel("sum", {{"axis", std::vector<int64_t>{1}}}, {x});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)[0]->data_as<float>()[1], 15.0f);
  EXPECT_EQ((*b)[0]->data_as<float>()[1], 15.0f);
  // An empty list reduces nothing.
  absl::StatusOr<std::vector<NDArray>> c =
      RunKernel("sum", {{"axis", std::vector<int64_t>{}}}, {x});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0]->shape(), x->shape());
  NDArray s = TensorOf<float>({}, {2.5f});
  absl::StatusOr<std::vector<NDArray>> d = RunKernel("max", {}, {s});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0]->shape(), Shape{});
  EXPECT_EQ((*d)[0]->data_as<float>()[0], 2.5f);
}

// ---------------------------------------------------------------------------------------
// cumsum.

template <typename T>
void CheckCumsum(const NDArray& x, std::optional<int64_t> axis, bool exclusive, bool reverse) {
  SCOPED_TRACE(absl::StrFormat("cumsum of %s axis %s%s%s", ShapeToString(x->shape()),
                               axis ? absl::StrCat(*axis) : "none", exclusive ? " exclusive" : "",
                               reverse ? " reverse" : ""));
  Attrs attrs;
  if (axis) attrs["axis"] = *axis;
  if (exclusive) attrs["exclusive"] = int64_t{1};
  if (reverse) attrs["reverse"] = int64_t{1};
  absl::StatusOr<std::vector<NDArray>> y = RunKernel("cumsum", attrs, {x});
  ASSERT_TRUE(y.ok()) << y.status();
  const int rank = x->ndim();
  int64_t outer = 1, len = x->num_elements(), inner = 1;
  if (axis) {
    const int a = static_cast<int>(*axis < 0 ? *axis + rank : *axis);
    len = x->shape()[a];
    for (int d = 0; d < a; ++d) outer *= x->shape()[d];
    for (int d = a + 1; d < rank; ++d) inner *= x->shape()[d];
    ASSERT_EQ((*y)[0]->shape(), x->shape());
  } else {
    ASSERT_EQ((*y)[0]->shape(), Shape{x->num_elements()});
  }
  const T* in = x->data_as<T>();
  const T* out = (*y)[0]->data_as<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      LD sum = 0, sum_abs = 0;
      uint64_t wrap = 0;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t i = reverse ? len - 1 - s : s;
        const int64_t at = (o * len + i) * inner + j;
        const T v = in[at];
        // A negative float has no uint64 value: only integers wrap.
        const auto add = [&] {
          sum += v, sum_abs += std::fabs(static_cast<LD>(v));
          if constexpr (std::is_integral_v<T>) wrap += static_cast<uint64_t>(v);
        };
        if (!exclusive) add();
        if constexpr (std::is_integral_v<T>) {
          ASSERT_EQ(out[at], static_cast<T>(wrap)) << at;
        } else {
          ASSERT_LE(std::fabs(out[at] - sum), static_cast<LD>(std::numeric_limits<T>::epsilon()) / 2 * std::fabs(sum) + len * 0x1p-50L * sum_abs)
              << at;
        }
        if (exclusive) add();
      }
    }
  }
}

TYPED_TEST(ReduceTest, Cumsum) {
  using T = TypeParam;
  constexpr DType kDType = elementwise::DTypeOf<T>();
  std::mt19937 rng(77);
  for (int iter = 0; iter < 60; ++iter) {
    const std::vector<int64_t> shape = RandomShape(rng);
    const int rank = static_cast<int>(shape.size());
    NDArray x = RandomTensor(shape, kDType, rng, -100.0, 100.0);
    std::optional<int64_t> axis;
    if (rank > 0 && rng() % 4 != 0) axis = static_cast<int64_t>(rng() % (2 * rank)) - rank;
    CheckCumsum<T>(x, axis, rng() % 2, rng() % 2);
    if (::testing::Test::HasFatalFailure()) return;
  }
  NDArray big = RandomTensor({7, 1000, 300}, kDType, rng, -100.0, 100.0);
  CheckCumsum<T>(big, 1, false, false);
  CheckCumsum<T>(big, -1, true, true);
  CheckCumsum<T>(big, std::nullopt, false, false);
}

// ---------------------------------------------------------------------------------------
// Errors.

void ExpectInvalid(const absl::Status& status, std::string_view substr) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(substr)));
}

TEST(ReduceErrorTest, DTypes) {
  std::mt19937 rng(1);
  NDArray i32 = RandomTensor({2, 3}, DType::kI32, rng);
  NDArray f16 = RandomTensor({2, 3}, DType::kF16, rng);
  ExpectInvalid(RunKernel("mean", {}, {i32}).status(),
                "unsupported dtype i32 for mean input: expected f32 or f64");
  ExpectInvalid(RunKernel("sum", {}, {f16}).status(),
                "unsupported dtype f16 for sum input: expected f32, f64, i32 or i64");
  ExpectInvalid(RunKernel("cumsum", {}, {f16}).status(),
                "unsupported dtype f16 for cumsum input: expected f32, f64, i32 or i64");
  ExpectInvalid(RunKernel("argmax", {}, {i32}, {DType::kI32}).status(),
                "argmax: output 0 has dtype i32, expected i64");
  ExpectInvalid(RunKernel("sum", {}, {i32}, {DType::kI64}).status(),
                "sum: output 0 has dtype i64, expected i32");
}

TEST(ReduceErrorTest, Axes) {
  std::mt19937 rng(1);
  NDArray x = RandomTensor({2, 3}, DType::kF32, rng);
  ExpectInvalid(RunKernel("sum", {{"axis", int64_t{2}}}, {x}).status(),
                "sum: axis 2 out of range for rank 2");
  ExpectInvalid(RunKernel("max", {{"axis", std::vector<int64_t>{0, -3}}}, {x}).status(),
                "max: axis -3 out of range for rank 2");
  ExpectInvalid(RunKernel("min", {{"axis", std::vector<int64_t>{1, -1}}}, {x}).status(),
                "min: axis -1 repeated");
  ExpectInvalid(RunKernel("cumsum", {{"axis", int64_t{-3}}}, {x}).status(),
                "cumsum: axis -3 out of range for rank 2");
  // The shape function reports the same: a wrong output shape can only come from a
  // caller that skips it.
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind("sum", {{"axis", int64_t{0}}}, 1, 1);
  ASSERT_TRUE(k.ok());
  NDArray y = RandomTensor({2}, DType::kF32, rng);
  NDArrayObj* args[] = {x.get(), y.get()};
  ExpectInvalid(k->Call(args, ThreadPool::Default()), "sum: output 0 has shape [2], expected [3]");
}

TEST(ReduceErrorTest, Attributes) {
  ExpectInvalid(DefaultRegistry().Bind("sum", {{"axis", 1.5}}, 1, 1).status(),
                "kernel 'sum': attribute 'axis' must be an int or an int list");
  ExpectInvalid(DefaultRegistry().Bind("sum", {{"keepdims", int64_t{2}}}, 1, 1).status(),
                "attribute 'keepdims' must be 0 or 1, got 2");
  ExpectInvalid(DefaultRegistry().Bind("sum", {{"select_last_index", int64_t{1}}}, 1, 1).status(),
                "kernel 'sum': unknown attribute 'select_last_index'");
  ExpectInvalid(DefaultRegistry().Bind("argmax", {{"keepdim", int64_t{1}}}, 1, 1).status(),
                "unknown attribute 'keepdim'");
  ExpectInvalid(
      DefaultRegistry().Bind("cumsum", {{"axis", std::vector<int64_t>{0}}}, 1, 1).status(),
      "attribute 'axis' must be an int");
  ExpectInvalid(
      DefaultRegistry().Bind("cumsum", {{"exclusive", std::string("yes")}}, 1, 1).status(),
      "attribute 'exclusive' must be an int");
}

TEST(ReduceErrorTest, Arity) {
  // sum takes more inputs with a prologue, so it binds with any count; a call without
  // one reports the count in Bind's words.
  const NDArray x = *NDArrayObj::Empty({2}, DType::kF32, MakeNaiveAllocator());
  ExpectInvalid(RunKernel("sum", {}, {x, x}).status(),
                "kernel 'sum' takes 1 inputs and 1 outputs, not 2 and 1");
  ExpectInvalid(DefaultRegistry().Bind("cumsum", {}, 1, 2).status(),
                "kernel 'cumsum' takes 1 inputs and 1 outputs, not 1 and 2");
  ExpectInvalid(DefaultRegistry().Bind("dyn.cumsum", {}, 3, 1).status(),
                "kernel 'dyn.cumsum' takes 2 inputs and 1 outputs, not 3 and 1");
}

// The dyn. reductions read their axes from a second input when they run: the same
// results as the attribute form; an empty list reduces every axis, or none with
// noop_with_empty_axes; bad axes are errors naming the kernel.
TEST(ReduceTest, DynAxesAsInput) {
  std::mt19937 rng(9);
  const NDArray x = RandomTensor({3, 4, 5}, DType::kF32, rng, -3.0, 3.0);
  const auto axes_of = [](std::vector<int64_t> v) {
    return TensorOf<int64_t>({static_cast<int64_t>(v.size())}, v);
  };
  const auto expect_same = [&](const char* op, const std::vector<int64_t>& axes, bool keepdims,
                               const Attrs& want_attrs) {
    SCOPED_TRACE(absl::StrFormat("%s over [%s] keepdims %d", op, absl::StrJoin(axes, ", "), keepdims));
    absl::StatusOr<std::vector<NDArray>> got =
        RunKernel(absl::StrCat("dyn.", op), {{"keepdims", int64_t{keepdims}}}, {x, axes_of(axes)}, {DType::kF32});
    absl::StatusOr<std::vector<NDArray>> want = RunKernel(op, want_attrs, {x});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ((*got)[0]->shape(), (*want)[0]->shape());
    for (int64_t i = 0; i < (*want)[0]->num_elements(); ++i) {
      ASSERT_EQ((*got)[0]->data_as<float>()[i], (*want)[0]->data_as<float>()[i]) << i;
    }
  };
  for (const char* op : {"sum", "mean", "max", "min", "prod", "l2_norm"}) {
    expect_same(op, {1}, false, {{"axis", std::vector<int64_t>{1}}});
    expect_same(op, {-1, 0}, true, {{"axis", std::vector<int64_t>{-1, 0}}, {"keepdims", int64_t{1}}});
    expect_same(op, {}, false, {});  // empty: every axis
  }
  absl::StatusOr<std::vector<NDArray>> noop =
      RunKernel("dyn.sum", {{"noop_with_empty_axes", int64_t{1}}}, {x, axes_of({})}, {DType::kF32});
  ASSERT_TRUE(noop.ok()) << noop.status();
  ASSERT_EQ((*noop)[0]->shape(), x->shape());
  for (int64_t i = 0; i < x->num_elements(); ++i) ASSERT_EQ((*noop)[0]->data_as<float>()[i], x->data_as<float>()[i]);

  ExpectInvalid(RunKernel("dyn.sum", {}, {x, axes_of({3})}, {DType::kF32}).status(), "axis 3");
  ExpectInvalid(RunKernel("dyn.sum", {}, {x, axes_of({1, -2})}, {DType::kF32}).status(), "repeated");
  ExpectInvalid(RunKernel("dyn.sum", {}, {x, TensorOf<float>({1}, {0.0f})}, {DType::kF32}).status(),
                "unsupported dtype f32 for dyn.sum axes: expected i32 or i64");
  ExpectInvalid(RunKernel("dyn.mean", {}, {x, TensorOf<int64_t>({1, 1}, {0})}, {DType::kF32}).status(),
                "dyn.mean: the axes must be a list (rank 1), got shape [1, 1]");
  ExpectInvalid(DefaultRegistry().Bind("dyn.sum", {{"axis", int64_t{0}}}, 2, 1).status(), "axis");
}

// ONNX's CumSum gives the axis as a tensor read at run time (dyn.cumsum): the same sums
// as the attribute, and a clear error for an axis that is not one integer.
TEST(ReduceTest, CumsumAxisAsInput) {
  std::mt19937 rng(5);
  const NDArray x = RandomTensor({3, 4, 5}, DType::kF32, rng, -10.0, 10.0);
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(axis);
    for (DType dtype : {DType::kI32, DType::kI64}) {
      NDArray a = *NDArrayObj::Empty(dtype == DType::kI32 ? Shape{} : Shape{1}, dtype, MakeNaiveAllocator());
      if (dtype == DType::kI32) {
        a->data_as<int32_t>()[0] = static_cast<int32_t>(axis);
      } else {
        a->data_as<int64_t>()[0] = axis;
      }
      absl::StatusOr<std::vector<NDArray>> got = RunKernel("dyn.cumsum", {{"reverse", int64_t{1}}}, {x, a}, {DType::kF32});
      absl::StatusOr<std::vector<NDArray>> want = RunKernel("cumsum", {{"axis", axis}, {"reverse", int64_t{1}}}, {x});
      ASSERT_TRUE(got.ok() && want.ok()) << got.status() << want.status();
      ASSERT_EQ((*got)[0]->shape(), x->shape());
      for (int64_t i = 0; i < x->num_elements(); ++i) {
        ASSERT_EQ((*got)[0]->data_as<float>()[i], (*want)[0]->data_as<float>()[i]) << i;
      }
    }
  }
  const NDArray two = TensorOf<int64_t>({2}, {0, 1});
  const NDArray real = TensorOf<float>({1}, {0.0f});
  ExpectInvalid(RunKernel("dyn.cumsum", {}, {x, two}, {DType::kF32}).status(),
                "dyn.cumsum: the axis must hold one element, got shape [2]");
  ExpectInvalid(RunKernel("dyn.cumsum", {}, {x, real}, {DType::kF32}).status(),
                "unsupported dtype f32 for dyn.cumsum axis: expected i32 or i64");
  ExpectInvalid(DefaultRegistry().Bind("dyn.cumsum", {{"axis", int64_t{0}}}, 2, 1).status(),
                "axis");
  const NDArray nine = TensorOf<int64_t>({1}, {9});
  ExpectInvalid(RunKernel("dyn.cumsum", {}, {x, nine}, {DType::kF32}).status(), "axis 9");
}

// ---------------------------------------------------------------------------------------
// det

// The determinant by Laplace expansion along the first row, in long double.
long double LaplaceDet(const std::vector<long double>& a, int64_t n) {
  if (n == 0) return 1;
  long double det = 0;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<long double> minor;
    for (int64_t r = 1; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        if (c != j) minor.push_back(a[r * n + c]);
      }
    }
    det += (j % 2 == 0 ? 1 : -1) * a[j] * LaplaceDet(minor, n - 1);
  }
  return det;
}

// Batches of random matrices of every size 0..5 against the expansion: f64 within 1e-12
// and f32 within 1e-5 of the largest term's magnitude (LU in double, then rounded).
TEST(DetTest, MatchesLaplaceExpansion) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  for (const DType dtype : {DType::kF64, DType::kF32}) {
    for (int64_t n = 0; n <= 5; ++n) {
      SCOPED_TRACE(absl::StrFormat("%s, n = %d", DTypeName(dtype), n));
      const std::vector<int64_t> shape = {2, 3, n, n};
      std::vector<double> values(6 * n * n);
      for (double& v : values) v = dtype == DType::kF32 ? static_cast<float>(uniform(rng)) : uniform(rng);
      NDArray x = dtype == DType::kF32 ? TensorOf<float>(shape, std::vector<float>(values.begin(), values.end()))
                                       : TensorOf<double>(shape, values);
      auto r = RunKernel("det", {}, {x});
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(ShapeOf((*r)[0]), (std::vector<int64_t>{2, 3}));
      const std::vector<double> got = testing::Values((*r)[0]);
      for (int64_t m = 0; m < 6; ++m) {
        const std::vector<long double> a(values.begin() + m * n * n, values.begin() + (m + 1) * n * n);
        const double want = static_cast<double>(LaplaceDet(a, n));
        const double scale = std::pow(2.0, static_cast<double>(n)) * std::max<double>(1, std::tgamma(n + 1.0));
        EXPECT_NEAR(got[m], want, (dtype == DType::kF32 ? 1e-5 : 1e-12) * scale) << "matrix " << m;
      }
    }
  }
}

TEST(DetTest, SingularMatricesGiveZeroAndShapesAreChecked) {
  auto r = RunKernel("det", {}, {TensorOf<float>({2, 2}, {1, 2, 2, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(testing::Values((*r)[0]), std::vector<double>{0.0});
  ExpectInvalid(RunKernel("det", {}, {TensorOf<float>({2, 3}, {1, 2, 3, 4, 5, 6})}).status(),
                "det: x must be [..., n, n] (square matrices), got shape [2, 3]");
  ExpectInvalid(RunKernel("det", {}, {TensorOf<int32_t>({1, 1}, {1})}).status(), "expected f32 or f64");
}

}  // namespace
}  // namespace dynvm::kernels
