// Tests of the data-dependent-shape kernels (kernels/data_movement/dynamic.cc) — argwhere and nonzero
// — against a plain reference (a scan of every element's multi-index), through RunKernel,
// whose shape functions count the nonzero elements: masks with no, some and all
// elements set, every dtype (-0.0 is zero, NaN is not), ranks 0 to 4, and inputs long
// enough to be counted and written in several chunks on a pool. And shape_of against
// ONNX Shape's rule for `start` and `end`, on random shapes of every dtype and rank 0 to
// 5, and on empty tensors with extents far past any allocation (only the shape is read).
//
// Tolerances: none; coordinates are exact.
#include "kernels/data_movement/dynamic.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/data_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels::testing {
namespace {

using Ints = std::vector<int64_t>;

// The coordinates of the nonzero elements of `t`, in row-major order.
std::vector<Ints> RefNonzero(const NDArray& t) {
  std::vector<Ints> coords;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    const double v = ElementAsDouble(*t, i);
    if (v != 0.0 || std::isnan(v)) coords.push_back(Unravel(i, ShapeOf(t)));
  }
  return coords;
}

// Runs argwhere and nonzero on `t` and checks both layouts against the reference.
void CheckCoordinates(const NDArray& t, DType index_dtype, ThreadPool* pool = nullptr) {
  SCOPED_TRACE(absl::StrFormat("%s %s -> %s", DTypeName(t->dtype()), ShapeToString(t->shape()),
                               DTypeName(index_dtype)));
  const std::vector<Ints> want = RefNonzero(t);
  const int64_t count = static_cast<int64_t>(want.size()), rank = t->ndim();
  auto argwhere = RunKernel("argwhere", {}, {t}, {index_dtype}, 1, pool);
  auto nonzero = RunKernel("nonzero", {}, {t}, {index_dtype}, 1, pool);
  ASSERT_TRUE(argwhere.ok()) << argwhere.status();
  ASSERT_TRUE(nonzero.ok()) << nonzero.status();
  ASSERT_EQ(ShapeOf((*argwhere)[0]), (Ints{count, rank}));
  ASSERT_EQ(ShapeOf((*nonzero)[0]), (Ints{rank, count}));
  const std::vector<double> a = Values((*argwhere)[0]), n = Values((*nonzero)[0]);
  for (int64_t k = 0; k < count; ++k) {
    for (int64_t d = 0; d < rank; ++d) {
      ASSERT_EQ(a[k * rank + d], want[k][d]) << "argwhere " << k << ", " << d;
      ASSERT_EQ(n[d * count + k], want[k][d]) << "nonzero " << d << ", " << k;
    }
  }
}

TEST(NonzeroTest, RandomMasksEveryDType) {
  std::mt19937 rng(51);
  for (int iter = 0; iter < 40; ++iter) {
    const Ints shape = RandomShape(rng, static_cast<int>(rng() % 5), 5);
    const double density = iter % 4 == 0 ? 0.0 : iter % 4 == 1 ? 1.0 : 0.5;  // none, all, some
    for (DType dtype : kAllDTypes) {
      NDArray t = EmptyTensor(shape, dtype);
      std::memset(t->data(), 0, t->nbytes());
      std::bernoulli_distribution set(density);
      for (int64_t i = 0; i < t->num_elements(); ++i) {
        if (set(rng)) {
          // true, or a small positive integer (exact in every dtype: RandomTensor on [x, x]).
          const double x = static_cast<double>(1 + rng() % 5);
          NDArray one = dtype == DType::kBool ? TensorOf<bool>({1}, {true})
                                              : RandomTensor({1}, dtype, rng, x, x);
          std::memcpy(static_cast<char*>(t->data()) + i * DTypeSize(dtype), one->data(),
                      DTypeSize(dtype));
        }
      }
      CheckCoordinates(t, iter % 2 ? DType::kI64 : DType::kI32);
    }
  }
}

TEST(NonzeroTest, NegativeZeroIsZeroAndNaNIsNot) {
  CheckCoordinates(TensorOf<float>({2, 3}, {-0.0f, 0.0f, NAN, 1e-45f, -2.0f, 0.0f}), DType::kI64);
  CheckCoordinates(TensorOf<double>({4}, {-0.0, NAN, 0.0, -INFINITY}), DType::kI64);
  NDArray half = EmptyTensor({3}, DType::kF16);
  const uint16_t bits[] = {0x8000, 0x0001, 0x0000};  // -0, the smallest subnormal, 0
  std::memcpy(half->data(), bits, sizeof(bits));
  CheckCoordinates(half, DType::kI64);
}

TEST(NonzeroTest, ScalarsAndManyChunksOnAPool) {
  CheckCoordinates(TensorOf<bool>({}, {true}), DType::kI64);
  CheckCoordinates(TensorOf<int32_t>({}, {0}), DType::kI64);
  std::mt19937 rng(52);
  ThreadPool pool(4);
  // 300k elements: several chunks of 64Ki, a chunk boundary inside a row.
  CheckCoordinates(RandomTensor({3, 1000, 100}, DType::kBool, rng), DType::kI64, &pool);
  CheckCoordinates(RandomTensor({300001}, DType::kI32, rng, -0.2, 1.0), DType::kI32, &pool);
}

TEST(NonzeroTest, Errors) {
  NDArray t = TensorOf<bool>({2, 2}, {true, false, true, true});
  EXPECT_INVALID(RunKernel("argwhere", {}, {t}, {DType::kF32}),
                 "unsupported dtype f32 for argwhere output: expected i32 or i64");
  EXPECT_INVALID(CallKernel("argwhere", {}, {t}, {EmptyTensor({2, 2}, DType::kI64)}),
                 "argwhere: output 0 has shape [2, 2], expected [3, 2]");
  EXPECT_INVALID(CallKernel("nonzero", {}, {t}, {EmptyTensor({3, 2}, DType::kI64)}),
                 "nonzero: output 0 has shape [3, 2], expected [2, 3]");
  EXPECT_INVALID(RunKernel("nonzero", {{"axis", int64_t{0}}}, {t}, {DType::kI64}),
                 "kernel 'nonzero' takes no attributes, got 'axis'");
  EXPECT_INVALID(RunKernel("nonzero", {}, {t, t}, {DType::kI64}),
                 "kernel 'nonzero' takes 1 inputs and 1 outputs, not 2 and 1");
}

// ---------------------------------------------------------------------------------------
// shape_of

// The extents of axes [start, end) of `shape` by ONNX Shape-15's rule: a negative bound
// counts from the end, then both clamp to [0, rank]; absent, the whole shape.
Ints RefShapeOf(const Ints& shape, std::optional<int64_t> start, std::optional<int64_t> end) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto bound = [rank](std::optional<int64_t> v, int64_t absent) {
    if (!v) return absent;
    const int64_t b = *v < 0 ? *v + rank : *v;
    return b < 0 ? 0 : b > rank ? rank : b;
  };
  Ints out;
  for (int64_t d = bound(start, 0); d < bound(end, rank); ++d) out.push_back(shape[d]);
  return out;
}

// Runs shape_of on `t` with `attrs`, an output of `dtype`, and expects `want`.
void CheckShapeOf(const NDArray& t, const Attrs& attrs, DType dtype, const Ints& want) {
  auto r = RunKernel("shape_of", attrs, {t}, {dtype});
  ASSERT_TRUE(r.ok()) << r.status();
  const NDArray& out = (*r)[0];
  ASSERT_EQ(out->dtype(), dtype);
  ASSERT_EQ(ShapeOf(out), Ints{static_cast<int64_t>(want.size())});
  Ints got;
  for (int64_t i = 0; i < out->num_elements(); ++i) {
    got.push_back(dtype == DType::kI64 ? out->data_as<int64_t>()[i] : out->data_as<int32_t>()[i]);
  }
  EXPECT_EQ(got, want);
}

TEST(ShapeOfTest, RandomShapesEveryDTypeAndRange) {
  std::mt19937 rng(53);
  for (int iter = 0; iter < 80; ++iter) {
    const Ints shape = RandomShape(rng, static_cast<int>(rng() % 6), 7);
    const DType out = iter % 2 ? DType::kI64 : DType::kI32;
    Attrs attrs;
    if (out == DType::kI32) attrs["dtype"] = std::string(iter % 4 ? "int32" : "i32");
    if (out == DType::kI64 && iter % 3 == 0) attrs["dtype"] = std::string("int64");
    std::optional<int64_t> start, end;
    if (rng() % 3 == 0) start = static_cast<int64_t>(rng() % 15) - 7;
    if (rng() % 3 == 0) end = static_cast<int64_t>(rng() % 15) - 7;
    if (start) attrs["start"] = *start;
    if (end) attrs["end"] = *end;
    SCOPED_TRACE(absl::StrFormat("%s start %d end %d -> %s", ShapeToString(shape),
                                 start.value_or(0), end.value_or(99), DTypeName(out)));
    for (DType dtype : kAllDTypes) {
      CheckShapeOf(RandomBits(shape, dtype, rng), attrs, out, RefShapeOf(shape, start, end));
    }
  }
}

TEST(ShapeOfTest, ReadsOnlyTheShape) {
  // No elements, so no data to read, and extents no allocation could hold.
  const int64_t huge = int64_t{1} << 40, i32_max = std::numeric_limits<int32_t>::max();
  CheckShapeOf(EmptyTensor({0, huge}, DType::kF32), {}, DType::kI64, {0, huge});
  CheckShapeOf(EmptyTensor({i32_max, 0, 1}, DType::kU8), {{"dtype", std::string("int32")}},
               DType::kI32, {i32_max, 0, 1});
  // An i32 output need only hold the extents asked for.
  CheckShapeOf(EmptyTensor({huge, 0, 3}, DType::kBool),
               {{"dtype", std::string("int32")}, {"start", int64_t{-2}}}, DType::kI32, {0, 3});
  // A scalar's shape is empty; so is any range with end <= start.
  CheckShapeOf(TensorOf<float>({}, {1.0f}), {}, DType::kI64, {});
  CheckShapeOf(EmptyTensor({2, 3, 4}, DType::kF32),
               {{"start", int64_t{2}}, {"end", int64_t{-2}}}, DType::kI64, {});
  CheckShapeOf(EmptyTensor({2, 3, 4}, DType::kF32),
               {{"start", int64_t{-100}}, {"end", int64_t{100}}}, DType::kI64, {2, 3, 4});
}

TEST(ShapeOfTest, Errors) {
  const NDArray t = EmptyTensor({0, int64_t{1} << 31}, DType::kF32);
  const Attrs i32 = {{"dtype", std::string("int32")}};
  EXPECT_INVALID(RunKernel("shape_of", i32, {t}, {DType::kI32}),
                 "shape_of: extent 2147483648 of axis 1 does not fit dtype i32");
  EXPECT_INVALID(RunKernel("shape_of", {{"dtype", std::string("float32")}}, {t}, {DType::kF32}),
                 "attribute 'dtype' is f32: expected i64 or i32");
  EXPECT_INVALID(RunKernel("shape_of", {{"dtype", std::string("int31")}}, {t}, {DType::kI64}),
                 "attribute 'dtype': unknown dtype 'int31'");
  EXPECT_INVALID(RunKernel("shape_of", {{"axis", int64_t{0}}}, {t}, {DType::kI64}),
                 "unknown attribute 'axis'");
  EXPECT_INVALID(RunKernel("shape_of", {{"start", 1.5}}, {t}, {DType::kI64}), "'start'");
  EXPECT_INVALID(RunKernel("shape_of", {}, {t}, {DType::kI32}),
                 "shape_of: output 0 has dtype i32, expected i64");
  EXPECT_INVALID(CallKernel("shape_of", i32, {EmptyTensor({2, 3}, DType::kF32)},
                            {EmptyTensor({3}, DType::kI32)}),
                 "shape_of: output 0 has shape [3], expected [2]");
  EXPECT_INVALID(RunKernel("shape_of", {}, {t, t}, {DType::kI64}),
                 "kernel 'shape_of' takes 1 inputs and 1 outputs, not 2 and 1");
}

}  // namespace
}  // namespace dynvm::kernels::testing
