// Tests of the indexing kernels (kernels/data_movement/index.cc) — take, gather, scatter_elements,
// one_hot — against plain references written here (multi-index arithmetic, one
// element at a time), on seeded random shapes with 0- and 1-sized extents, i32 and i64
// indices and one data dtype of every element size, all through RunKernel.
//
// Tolerances: none. Data movement is bit-exact; scatter_elements' reductions apply the
// same single operations in the same order as the reference, so they are exact too.
#include "kernels/data_movement/index.h"

#include <algorithm>
#include <cmath>
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

// An index tensor of `shape` with values in [lo, hi), as i32 or i64.
NDArray RandomIndices(const Ints& shape, int64_t lo, int64_t hi, bool i64, std::mt19937& rng) {
  Ints v(static_cast<size_t>(NumElements(shape)));
  for (int64_t& x : v) x = hi > lo ? lo + static_cast<int64_t>(rng() % (hi - lo)) : lo;
  if (i64) return TensorOf<int64_t>(shape, v);
  return TensorOf<int32_t>(shape, std::vector<int32_t>(v.begin(), v.end()));
}

// ---------------------------------------------------------------------------------------
// take

int64_t RefTakeIndex(const std::string& mode, int64_t i, int64_t n) {
  if (mode == "clip") return std::min(std::max(i, int64_t{0}), n - 1);
  if (mode == "wrap") return ((i % n) + n) % n;
  return i < 0 ? i + n : i;  // fast: in range, negative from the end
}

void CheckTake(std::mt19937& rng, const Ints& dshape, const Ints& ishape, int axis, int bd,
               const std::string& mode, DType dtype, bool i64, ThreadPool* pool = nullptr) {
  SCOPED_TRACE(absl::StrFormat("data %s indices %s axis %d batch_dims %d %s %s",
                               ShapeToString(dshape), ShapeToString(ishape), axis, bd, mode,
                               DTypeName(dtype)));
  const int64_t n = dshape[axis];
  const int64_t lo = mode == "fast" ? -n : -2 * n - 1, hi = mode == "fast" ? n : 2 * n + 2;
  NDArray data = RandomBits(dshape, dtype, rng);
  NDArray indices = RandomIndices(ishape, lo, hi, i64, rng);
  auto r = RunKernel("take", {{"axis", int64_t{axis}}, {"batch_dims", int64_t{bd}}, {"mode", mode}},
                     {data, indices}, {}, 1, pool);
  ASSERT_TRUE(r.ok()) << r.status();
  const int q = static_cast<int>(ishape.size()) - bd;  // index axes in the output
  Ints out(dshape.begin(), dshape.begin() + axis);
  out.insert(out.end(), ishape.begin() + bd, ishape.end());
  out.insert(out.end(), dshape.begin() + axis + 1, dshape.end());
  ExpectGathered((*r)[0], out, data, [&](int64_t i) {
    const Ints o = Unravel(i, out);
    Ints ii(o.begin(), o.begin() + bd);
    ii.insert(ii.end(), o.begin() + axis, o.begin() + axis + q);
    const int64_t k = static_cast<int64_t>(ElementAsDouble(*indices, Ravel(ii, ishape)));
    Ints di(o.begin(), o.begin() + axis);
    di.push_back(RefTakeIndex(mode, k, n));
    di.insert(di.end(), o.begin() + axis + q, o.end());
    return Ravel(di, dshape);
  });
}

TEST(TakeTest, RandomShapesModesAndIndexTypes) {
  std::mt19937 rng(21);
  const std::string modes[] = {"clip", "wrap", "fast"};
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    Ints dshape = RandomShape(rng, rank, 5);
    const int axis = static_cast<int>(rng() % rank);
    const int bd = static_cast<int>(rng() % (axis + 1)) % 2;  // 0, or 1 when axis >= 1
    if (dshape[axis] == 0) dshape[axis] = 3;                  // indices need something to point at
    Ints ishape(dshape.begin(), dshape.begin() + bd);
    const Ints tail = RandomShape(rng, static_cast<int>(rng() % 3), 4);
    ishape.insert(ishape.end(), tail.begin(), tail.end());
    for (DType dtype : kOnePerSize) {
      CheckTake(rng, dshape, ishape, axis, bd, modes[iter % 3], dtype, iter % 2 == 0);
    }
  }
}

TEST(TakeTest, EmbeddingLookupAndFlatten) {
  std::mt19937 rng(22);
  ThreadPool pool(4);
  // take(weight[V, D], ids[b, s]): whole rows, on the pool.
  CheckTake(rng, {1000, 96}, {4, 77}, 0, 0, "fast", DType::kF32, true, &pool);
  CheckTake(rng, {1000, 3}, {2, 500}, 0, 0, "clip", DType::kF16, false, &pool);
  CheckTake(rng, {50, 4000}, {8000}, 1, 0, "wrap", DType::kI8, true, &pool);  // single elements
  // No axis: the data is flattened.
  NDArray data = TensorOf<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  auto r = RunKernel("take", {{"mode", std::string("wrap")}},
                     {data, TensorOf<int64_t>({2, 2}, {5, -1, 7, 0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ShapeOf((*r)[0]), (Ints{2, 2}));
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{5, 5, 1, 0}));
  // The default mode clips.
  r = RunKernel("take", {{"axis", int64_t{1}}}, {data, TensorOf<int32_t>({}, {9})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{2, 5}));
  // No indices into an empty axis: fine; empty data with indices is not.
  r = RunKernel("take", {{"axis", int64_t{0}}},
                {EmptyTensor({0, 4}, DType::kF32), TensorOf<int64_t>({0}, {})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ShapeOf((*r)[0]), (Ints{0, 4}));
}

TEST(TakeTest, Errors) {
  NDArray data = EmptyTensor({5, 2}, DType::kF32);
  std::memset(data->data(), 0, data->nbytes());
  EXPECT_INVALID(RunKernel("take", {{"axis", int64_t{0}}, {"mode", std::string("fast")}},
                           {data, TensorOf<int64_t>({3}, {0, 5, 1})}),
                 "take: index 5 (at 1) out of range for axis 0 of extent 5");
  EXPECT_INVALID(RunKernel("take", {{"axis", int64_t{0}}, {"mode", std::string("fast")}},
                           {data, TensorOf<int32_t>({2}, {-6, 0})}),
                 "take: index -6 (at 0) out of range");
  EXPECT_INVALID(RunKernel("take", {{"axis", int64_t{0}}}, {data, TensorOf<float>({1}, {0})}),
                 "unsupported dtype f32 for take indices: expected i32 or i64");
  EXPECT_INVALID(RunKernel("take", {{"axis", int64_t{2}}}, {data, TensorOf<int64_t>({1}, {0})}),
                 "take: axis 2 out of range for rank 2");
  EXPECT_INVALID(
      RunKernel("take", {{"mode", std::string("raise")}}, {data, TensorOf<int64_t>({1}, {0})}),
      "attribute 'mode' is 'raise': expected 'clip', 'wrap' or 'fast'");
  EXPECT_INVALID(
      RunKernel("take", {{"batch_dims", int64_t{1}}}, {data, TensorOf<int64_t>({1}, {0})}),
      "attribute 'batch_dims' needs an 'axis'");
  EXPECT_INVALID(RunKernel("take", {{"axis", int64_t{1}}, {"batch_dims", int64_t{1}}},
                           {data, TensorOf<int64_t>({4, 1}, {0, 0, 0, 0})}),
                 "take: batch_dims 1 does not fit data [5, 2], indices [4, 1] and axis 1");
  EXPECT_INVALID(RunKernel("take", {{"axis", int64_t{0}}},
                           {EmptyTensor({0, 2}, DType::kF32), TensorOf<int64_t>({1}, {0})}),
                 "take: 1 indices into axis 0 of extent 0");
  EXPECT_INVALID(
      CallKernel("take", {{"axis", int64_t{0}}}, {data, TensorOf<int64_t>({3}, {0, 1, 2})},
                 {EmptyTensor({3, 3}, DType::kF32)}),
      "take: output 0 has shape [3, 3], expected [3, 2]");
  EXPECT_INVALID(RunKernel("take", {}, {data}),
                 "kernel 'take' takes 2 inputs and 1 outputs, not 1 and 1");
}

// ---------------------------------------------------------------------------------------
// gather, scatter_elements

// A random (indices shape, data shape) pair for gather/scatter along `axis`: same rank,
// indices no larger off the axis.
std::pair<Ints, Ints> ElementsShapes(std::mt19937& rng, int rank, int axis) {
  Ints data = RandomShape(rng, rank, 5);
  if (data[axis] == 0) data[axis] = 2;
  Ints indices = data;
  for (int d = 0; d < rank; ++d) {
    indices[d] =
        d == axis ? static_cast<int64_t>(rng() % 5) : static_cast<int64_t>(rng() % (data[d] + 1));
  }
  return {indices, data};
}

// The data element that indices element `i` addresses along `axis`.
int64_t ElementsTarget(const NDArray& indices, const Ints& ishape, const Ints& dshape, int axis,
                       int64_t i) {
  Ints index = Unravel(i, ishape);
  int64_t k = static_cast<int64_t>(ElementAsDouble(*indices, i));
  index[axis] = k < 0 ? k + dshape[axis] : k;
  return Ravel(index, dshape);
}

TEST(GatherTest, RandomShapes) {
  std::mt19937 rng(23);
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 4);
    const int axis = static_cast<int>(rng() % rank);
    // Named, not a structured binding: clang 14 cannot capture those in a lambda.
    const std::pair<Ints, Ints> shapes = ElementsShapes(rng, rank, axis);
    const Ints& ishape = shapes.first;
    const Ints& dshape = shapes.second;
    for (DType dtype : kOnePerSize) {
      NDArray data = RandomBits(dshape, dtype, rng);
      NDArray indices = RandomIndices(ishape, -dshape[axis], dshape[axis], iter % 2 == 0, rng);
      auto r = RunKernel("gather", {{"axis", int64_t{axis - (iter % 3 == 0 ? rank : 0)}}},
                         {data, indices});
      ASSERT_TRUE(r.ok()) << r.status();
      ExpectGathered((*r)[0], ishape, data,
                     [&](int64_t i) { return ElementsTarget(indices, ishape, dshape, axis, i); });
    }
  }
}

TEST(GatherTest, Errors) {
  NDArray data = EmptyTensor({3, 4}, DType::kF32);
  EXPECT_INVALID(
      RunKernel("gather", {{"axis", int64_t{1}}}, {data, TensorOf<int64_t>({1, 2}, {0, 4})}),
      "gather: index 4 (at 1) out of range for axis 1 of extent 4");
  EXPECT_INVALID(RunKernel("gather", {}, {data, TensorOf<int64_t>({2}, {0, 1})}),
                 "gather: indices [2] do not fit data [3, 4] (same rank, no larger off axis 0)");
  EXPECT_INVALID(RunKernel("gather", {}, {data, TensorOf<int64_t>({1, 5}, {0, 0, 0, 0, 0})}),
                 "do not fit data [3, 4]");
  EXPECT_INVALID(RunKernel("gather", {}, {data, TensorOf<double>({1, 1}, {0})}),
                 "unsupported dtype f64 for gather indices: expected i32 or i64");
  EXPECT_INVALID(
      RunKernel("gather", {{"axis", int64_t{-3}}}, {data, TensorOf<int64_t>({1, 1}, {0})}),
      "gather: axis -3 out of range for rank 2");
  EXPECT_INVALID(RunKernel("gather", {{"dim", int64_t{0}}}, {data, TensorOf<int64_t>({1, 1}, {0})}),
                 "unknown attribute 'dim'");
  EXPECT_INVALID(RunKernel("gather", {}, {data}),
                 "kernel 'gather' takes 2 inputs and 1 outputs, not 1 and 1");
}

// The reference scatter: a copy of the data, then each update in row-major order.
template <typename T>
std::vector<double> RefScatter(const NDArray& data, const NDArray& indices, const NDArray& updates,
                               int axis, const std::string& reduction) {
  std::vector<T> out(data->data_as<T>(), data->data_as<T>() + data->num_elements());
  for (int64_t i = 0; i < indices->num_elements(); ++i) {
    T& o = out[ElementsTarget(indices, ShapeOf(indices), ShapeOf(data), axis, i)];
    const T u = updates->data_as<T>()[i];
    if (reduction == "update") o = u;
    if (reduction == "add") o = static_cast<T>(o + u);
    if (reduction == "mul") o = static_cast<T>(o * u);
    if (reduction == "min") o = std::min(o, u);
    if (reduction == "max") o = std::max(o, u);
  }
  return std::vector<double>(out.begin(), out.end());
}

TEST(ScatterElementsTest, RandomShapesAndReductions) {
  std::mt19937 rng(24);
  const std::string reductions[] = {"update", "add", "mul", "min", "max"};
  for (int iter = 0; iter < 100; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    const int axis = static_cast<int>(rng() % rank);
    const auto [ishape, dshape] = ElementsShapes(rng, rank, axis);
    const std::string& reduction = reductions[iter % 5];
    const bool use_float = iter % 2 == 0;
    const DType dtype = use_float ? DType::kF32 : DType::kI32;
    // Small integers keep the float products exact; few distinct indices make duplicates.
    NDArray data = RandomTensor(dshape, dtype, rng, -4, 5);
    NDArray updates = RandomTensor(ishape, dtype, rng, -4, 5);
    NDArray indices = RandomIndices(ishape, -dshape[axis], dshape[axis], iter % 3 == 0, rng);
    auto r = RunKernel("scatter_elements", {{"axis", int64_t{axis}}, {"reduction", reduction}},
                       {data, indices, updates});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(ShapeOf((*r)[0]), dshape);
    EXPECT_EQ(Values((*r)[0]), use_float
                                   ? RefScatter<float>(data, indices, updates, axis, reduction)
                                   : RefScatter<int32_t>(data, indices, updates, axis, reduction))
        << reduction << " axis " << axis << " indices " << ShapeToString(ishape) << " data "
        << ShapeToString(dshape);
  }
}

TEST(ScatterElementsTest, UpdateMovesAnyDTypeAndLastDuplicateWins) {
  std::mt19937 rng(25);
  NDArray data = RandomBits({2, 3}, DType::kF16, rng);
  NDArray updates = RandomBits({2, 2}, DType::kF16, rng);
  NDArray indices = TensorOf<int64_t>({2, 2}, {1, 1, -1, 0});
  auto r = RunKernel("scatter_elements", {{"axis", int64_t{1}}}, {data, indices, updates});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto* d = data->data_as<uint16_t>();
  const auto* u = updates->data_as<uint16_t>();
  const auto* o = (*r)[0]->data_as<uint16_t>();
  EXPECT_EQ(std::vector<uint16_t>(o, o + 6),
            (std::vector<uint16_t>{d[0], u[1], d[2], u[3], d[4], u[2]}));
  // Integer add wraps.
  r = RunKernel("scatter_elements", {{"reduction", std::string("add")}},
                {TensorOf<int32_t>({1}, {2147483647}), TensorOf<int32_t>({1}, {0}),
                 TensorOf<int32_t>({1}, {1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{-2147483648.0}));
}

TEST(ScatterElementsTest, Errors) {
  NDArray data = TensorOf<float>({2, 2}, {0, 0, 0, 0});
  NDArray upd = TensorOf<float>({1, 2}, {1, 1});
  EXPECT_INVALID(RunKernel("scatter_elements", {}, {data, TensorOf<int64_t>({1, 2}, {2, 0}), upd}),
                 "scatter_elements: index 2 (at 0) out of range for axis 0 of extent 2");
  EXPECT_INVALID(
      RunKernel("scatter_elements", {},
                {data, TensorOf<int64_t>({1, 2}, {0, 0}), TensorOf<float>({2, 1}, {1, 1})}),
      "scatter_elements: updates f32 [2, 1] must have the indices' shape [1, 2] and the data's "
      "dtype f32");
  EXPECT_INVALID(
      RunKernel("scatter_elements", {},
                {data, TensorOf<int64_t>({1, 2}, {0, 0}), TensorOf<double>({1, 2}, {1, 1})}),
      "must have the indices' shape");
  EXPECT_INVALID(
      RunKernel("scatter_elements", {{"reduction", std::string("mean")}},
                {data, TensorOf<int64_t>({1, 2}, {0, 0}), upd}),
      "attribute 'reduction' is 'mean': expected 'update', 'add', 'mul', 'min' or 'max'");
  EXPECT_INVALID(RunKernel("scatter_elements", {{"reduction", std::string("add")}},
                           {TensorOf<bool>({2}, {true, false}), TensorOf<int64_t>({1}, {0}),
                            TensorOf<bool>({1}, {true})}),
                 "unsupported dtype bool for scatter_elements data with a reduction: expected f32, "
                 "f64, i32 or i64");
  EXPECT_INVALID(RunKernel("scatter_elements", {}, {data, TensorOf<int64_t>({1, 2}, {0, 0})}),
                 "kernel 'scatter_elements' takes 3 inputs");
}

// ---------------------------------------------------------------------------------------
// one_hot

TEST(OneHotTest, RandomShapesAxesAndDTypes) {
  std::mt19937 rng(26);
  for (int iter = 0; iter < 40; ++iter) {
    const Ints ishape = RandomShape(rng, static_cast<int>(rng() % 3), 4);
    const int64_t depth = static_cast<int64_t>(rng() % 5);
    const int rank = static_cast<int>(ishape.size());
    const int axis = static_cast<int>(rng() % (rank + 1));
    // Negative and too-large indices give a row of off values.
    NDArray indices = RandomIndices(ishape, -2, depth + 2, iter % 2 == 0, rng);
    for (DType dtype : {DType::kF32, DType::kI64, DType::kBool, DType::kF16}) {
      // Bool on and off must differ, or a misplaced hot element would go unnoticed.
      NDArray on = dtype == DType::kBool ? TensorOf<bool>({}, {true})
                                         : RandomTensor({}, dtype, rng, 1, 9);
      NDArray off = dtype == DType::kBool ? TensorOf<bool>({}, {false})
                                          : RandomTensor({}, dtype, rng, -9, 0);
      const int64_t attr_axis = iter % 2 ? axis : axis - rank - 1;
      auto r = RunKernel(
          "one_hot",
          {{"depth", depth}, {"axis", attr_axis}, {"dtype", std::string(DTypeName(dtype))}},
          {indices, on, off}, {dtype});
      ASSERT_TRUE(r.ok()) << r.status();
      Ints out = ishape;
      out.insert(out.begin() + axis, depth);
      ASSERT_EQ(ShapeOf((*r)[0]), out);
      for (int64_t i = 0; i < NumElements(out); ++i) {
        Ints o = Unravel(i, out);
        const int64_t d = o[axis];
        o.erase(o.begin() + axis);
        const bool hot = static_cast<int64_t>(ElementAsDouble(*indices, Ravel(o, ishape))) == d;
        ASSERT_EQ(ElementAsDouble(*(*r)[0], i), ElementAsDouble(hot ? *on : *off, 0))
            << "element " << i;
      }
    }
  }
}

TEST(OneHotTest, Errors) {
  NDArray idx = TensorOf<int64_t>({2}, {0, 1});
  NDArray on = TensorOf<float>({}, {1}), off = TensorOf<float>({}, {0});
  EXPECT_INVALID(RunKernel("one_hot", {{"depth", int64_t{3}}, {"dtype", std::string("int32")}},
                           {idx, on, off}, {DType::kI32}),
                 "one_hot: on_value has dtype f32, expected i32");
  EXPECT_INVALID(RunKernel("one_hot", {{"depth", int64_t{3}}},
                           {idx, TensorOf<float>({1}, {1}), off}, {DType::kF32}),
                 "one_hot: on_value must be a scalar (rank 0), got [1]");
  EXPECT_INVALID(RunKernel("one_hot", {{"depth", int64_t{-1}}}, {idx, on, off}, {DType::kF32}),
                 "attribute 'depth' is -1: expected >= 0");
  EXPECT_INVALID(RunKernel("one_hot", {{"depth", int64_t{3}}, {"axis", int64_t{2}}}, {idx, on, off},
                           {DType::kF32}),
                 "one_hot: axis 2 out of range for rank 2");
  EXPECT_INVALID(RunKernel("one_hot", {{"depth", int64_t{3}}, {"dtype", std::string("f31")}},
                           {idx, on, off}, {DType::kF32}),
                 "attribute 'dtype': unknown dtype 'f31'");
  EXPECT_INVALID(RunKernel("one_hot", {{"depth", int64_t{3}}}, {on, on, off}, {DType::kF32}),
                 "unsupported dtype f32 for one_hot indices: expected i32 or i64");
  EXPECT_INVALID(CallKernel("one_hot", {{"depth", int64_t{3}}}, {idx, on, off},
                            {EmptyTensor({2, 3}, DType::kF64)}),
                 "one_hot: output 0 has dtype f64, expected f32");
}

// Empty tensors whose other extents multiply past int64: nothing may overflow (this
// binary runs under UBSan) and the outputs are empty.
TEST(IndexTest, EmptyTensorsWithHugeExtents) {
  const int64_t huge = int64_t{1} << 40;
  NDArray data = EmptyTensor({huge, 0, huge}, DType::kF32);
  auto r = RunKernel("take", {{"axis", int64_t{2}}}, {data, TensorOf<int64_t>({2}, {0, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ShapeOf((*r)[0]), (Ints{huge, 0, 2}));
  r = RunKernel("gather", {{"axis", int64_t{2}}}, {data, EmptyTensor({huge, 0, 3}, DType::kI32)});
  ASSERT_TRUE(r.ok()) << r.status();
  r = RunKernel(
      "scatter_elements", {{"axis", int64_t{0}}},
      {data, EmptyTensor({2, 0, huge}, DType::kI32), EmptyTensor({2, 0, huge}, DType::kF32)});
  ASSERT_TRUE(r.ok()) << r.status();
  r = RunKernel(
      "one_hot", {{"depth", huge}},
      {EmptyTensor({0, huge}, DType::kI64), TensorOf<float>({}, {1}), TensorOf<float>({}, {0})},
      {DType::kF32});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ShapeOf((*r)[0]), (Ints{0, huge, huge}));
}

}  // namespace
}  // namespace dynvm::kernels::testing
