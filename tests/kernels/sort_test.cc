// Tests of the sorting kernels (kernels/data_movement/sort.cc) — topk, argsort, unique — against
// plain references written here (std::stable_sort of each row's indices; unique by a
// linear scan of a map), on seeded random shapes with 0- and 1-sized extents and data
// with many ties, all through RunKernel (unique's shape function reads the values).
//
// Tolerances: none; sorting moves values and computes indices exactly.
#include "kernels/data_movement/sort.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/string_tensor.h"
#include "tests/kernels/data_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels::testing {
namespace {

using Ints = std::vector<int64_t>;

// Whole numbers in [lo, hi) as `dtype`, floats included, so that values tie in every
// dtype; all equal to lo when hi == lo + 1.
NDArray RandomIntegers(const Ints& shape, DType dtype, std::mt19937& rng, int64_t lo,
                       int64_t hi) {
  NDArray ints = RandomTensor(shape, DType::kI64, rng, static_cast<double>(lo),
                              static_cast<double>(hi));
  if (dtype == DType::kI64) return ints;
  auto cast = RunKernel("cast", {{"dtype", std::string(DTypeName(dtype))}}, {ints}, {dtype});
  EXPECT_TRUE(cast.ok()) << cast.status();
  return (*cast)[0];
}

// `a` before `b`: NaN last going up, first going down.
bool RefBefore(double a, double b, bool ascending) {
  if (ascending) return (!std::isnan(a) && std::isnan(b)) || a < b;
  return (std::isnan(a) && !std::isnan(b)) || a > b;
}

// For each row along `axis` of `data`, the indices of its first `k` elements in sorted
// order, ties by index; laid out like the data with the axis cut to k.
Ints RefSortIndices(const NDArray& data, int axis, int64_t k, bool ascending) {
  const Ints shape = ShapeOf(data);
  Ints out_shape = shape;
  out_shape[axis] = k;
  Ints out(static_cast<size_t>(NumElements(out_shape)));
  for (int64_t i = 0; i < NumElements(out_shape); ++i) {
    Ints index = Unravel(i, out_shape);
    const int64_t rank_in_row = index[axis];
    std::vector<int64_t> order(static_cast<size_t>(shape[axis]));
    std::iota(order.begin(), order.end(), 0);
    auto value = [&](int64_t j) {
      index[axis] = j;
      return ElementAsDouble(*data, Ravel(index, shape));
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return RefBefore(value(a), value(b), ascending);
    });
    out[i] = order[rank_in_row];
  }
  return out;
}

// The values at `indices` along `axis`.
std::vector<double> RefTakeAlong(const NDArray& data, int axis, const Ints& indices,
                                 const Ints& out_shape) {
  std::vector<double> v;
  for (int64_t i = 0; i < NumElements(out_shape); ++i) {
    Ints index = Unravel(i, out_shape);
    index[axis] = indices[i];
    v.push_back(ElementAsDouble(*data, Ravel(index, ShapeOf(data))));
  }
  return v;
}

Ints AsInts(const NDArray& t) {
  Ints v;
  for (double d : Values(t)) v.push_back(static_cast<int64_t>(d));
  return v;
}

// Values compared as doubles, NaN equal to NaN.
void ExpectSameValues(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    }
  }
}

TEST(TopKTest, RandomShapesTiesAndDirections) {
  std::mt19937 rng(41);
  const DType dtypes[] = {DType::kF32, DType::kI32, DType::kF64, DType::kI64};
  for (int iter = 0; iter < 80; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    const Ints shape = RandomShape(rng, rank, 9);
    const int axis = static_cast<int>(rng() % rank);
    const int64_t extent = shape[axis];
    const int64_t k = iter % 5 == 0 ? 0 : static_cast<int64_t>(rng() % (extent + 1));  // 0: all
    const bool ascending = iter % 2 == 0;
    const DType dtype = dtypes[iter % 4];
    const bool i64 = iter % 3 == 0;
    SCOPED_TRACE(absl::StrFormat("%s axis %d k %d asc %d %s", ShapeToString(shape), axis, k,
                                 ascending, DTypeName(dtype)));
    NDArray data = RandomIntegers(shape, dtype, rng, -3, 3);  // few distinct values: ties
    auto r = RunKernel("topk",
                       {{"k", k},
                        {"axis", int64_t{axis}},
                        {"is_ascend", int64_t{ascending}},
                        {"dtype", std::string(i64 ? "int64" : "int32")}},
                       {data}, {dtype, i64 ? DType::kI64 : DType::kI32});
    ASSERT_TRUE(r.ok()) << r.status();
    Ints out_shape = shape;
    out_shape[axis] = k == 0 ? extent : k;
    const Ints want = RefSortIndices(data, axis, out_shape[axis], ascending);
    ASSERT_EQ(ShapeOf((*r)[1]), out_shape);
    EXPECT_EQ(AsInts((*r)[1]), want);
    ExpectSameValues(Values((*r)[0]), RefTakeAlong(data, axis, want, out_shape));
  }
}

// dyn.topk reads k from its second input when it runs: the same as the attribute.
TEST(TopKTest, KAsInput) {
  std::mt19937 rng(4);
  const NDArray data = RandomIntegers({4, 9}, DType::kF32, rng, -5, 5);
  for (int64_t k : {1, 3, 9}) {
    SCOPED_TRACE(k);
    auto want = RunKernel("topk", {{"k", k}, {"dtype", std::string("int64")}}, {data}, {DType::kF32, DType::kI64});
    auto got = RunKernel("dyn.topk", {{"dtype", std::string("int64")}}, {data, TensorOf<int64_t>({1}, {k})},
                         {DType::kF32, DType::kI64});
    ASSERT_TRUE(want.ok() && got.ok()) << want.status() << got.status();
    EXPECT_EQ(ShapeOf((*got)[1]), ShapeOf((*want)[1]));
    EXPECT_EQ(AsInts((*got)[1]), AsInts((*want)[1]));
    ExpectSameValues(Values((*got)[0]), Values((*want)[0]));
  }
  EXPECT_INVALID(RunKernel("dyn.topk", {}, {data, TensorOf<int64_t>({1}, {0})}, {DType::kF32, DType::kI32}),
                 "dyn.topk: k must be one value of at least 1, got [0]");
  EXPECT_INVALID(RunKernel("dyn.topk", {}, {data, TensorOf<int64_t>({1}, {10})}, {DType::kF32, DType::kI32}),
                 "k 10 exceeds extent 9");
  EXPECT_INVALID(RunKernel("dyn.topk", {}, {data, TensorOf<int64_t>({2}, {1, 2})}, {DType::kF32, DType::kI32}),
                 "got [1, 2]");
  EXPECT_INVALID(DefaultRegistry().Bind("dyn.topk", {{"k", int64_t{2}}}, 2, 2),
                 "dyn.topk takes k as its second input, not an attribute");
}

TEST(TopKTest, RetTypesAndNaN) {
  NDArray data = TensorOf<float>({6}, {1, NAN, 3, 3, -INFINITY, NAN});
  auto values = RunKernel("topk", {{"k", int64_t{4}}, {"ret_type", std::string("values")}}, {data});
  ASSERT_TRUE(values.ok()) << values.status();
  ExpectSameValues(Values((*values)[0]), {NAN, NAN, 3, 3});  // NaN is the largest
  auto indices = RunKernel(
      "topk", {{"k", int64_t{4}}, {"ret_type", std::string("indices")}, {"is_ascend", int64_t{1}}},
      {data}, {DType::kI32});
  ASSERT_TRUE(indices.ok()) << indices.status();
  EXPECT_EQ(AsInts((*indices)[0]), (Ints{4, 0, 2, 3}));
  ThreadPool pool(4);
  std::mt19937 rng(42);
  NDArray big = RandomTensor({64, 1000}, DType::kF32, rng);
  auto r = RunKernel("topk", {{"k", int64_t{10}}}, {big}, {DType::kF32, DType::kI32}, 2, &pool);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AsInts((*r)[1]), RefSortIndices(big, 1, 10, false));
}

TEST(ArgsortTest, RandomShapesStable) {
  std::mt19937 rng(43);
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    const Ints shape = RandomShape(rng, rank, 9);
    const int axis = static_cast<int>(rng() % rank);
    const bool ascending = iter % 3 != 0;
    const DType dtype = iter % 2 ? DType::kF32 : DType::kI64;
    NDArray data = RandomIntegers(shape, dtype, rng, -4, 4);
    Attrs attrs = {{"axis", int64_t{axis - (iter % 4 == 0 ? rank : 0)}},
                   {"dtype", std::string("i64")}};
    if (!ascending) attrs["is_ascend"] = int64_t{0};
    auto r = RunKernel("argsort", attrs, {data}, {DType::kI64});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(ShapeOf((*r)[0]), shape);
    EXPECT_EQ(AsInts((*r)[0]), RefSortIndices(data, axis, shape[axis], ascending))
        << ShapeToString(shape) << " axis " << axis;
  }
  // Default: ascending, i32; NaN last.
  auto r = RunKernel("argsort", {}, {TensorOf<double>({5}, {2, NAN, -1, 2, 0})}, {DType::kI32});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AsInts((*r)[0]), (Ints{2, 4, 0, 3, 1}));
}

TEST(SortTest, Errors) {
  NDArray x = TensorOf<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_INVALID(RunKernel("topk", {{"k", int64_t{4}}}, {x}, {DType::kF32, DType::kI32}),
                 "topk: k 4 exceeds extent 3 of axis 1");
  EXPECT_INVALID(RunKernel("topk", {}, {x}, {DType::kF32}), "topk: expected 2 outputs, got 1");
  EXPECT_INVALID(RunKernel("topk", {{"ret_type", std::string("all")}}, {x}, {DType::kF32}),
                 "attribute 'ret_type' is 'all': expected 'both', 'values' or 'indices'");
  EXPECT_INVALID(
      RunKernel("topk", {{"dtype", std::string("float32")}}, {x}, {DType::kF32, DType::kF32}),
      "attribute 'dtype' is f32: expected i32 or i64");
  EXPECT_INVALID(
      RunKernel("topk", {}, {TensorOf<bool>({2}, {true, false})}, {DType::kBool, DType::kI32}),
      "unsupported dtype bool for topk data: expected f32, f64, i32 or i64");
  EXPECT_INVALID(RunKernel("argsort", {{"axis", int64_t{2}}}, {x}, {DType::kI32}),
                 "argsort: axis 2 out of range for rank 2");
  EXPECT_INVALID(RunKernel("argsort", {{"k", int64_t{1}}}, {x}, {DType::kI32}),
                 "unknown attribute 'k'");
  EXPECT_INVALID(RunKernel("argsort", {}, {x, x}, {DType::kI32}),
                 "kernel 'argsort' takes 1 inputs and 1 outputs, not 2 and 1");
  EXPECT_INVALID(RunKernel("argsort", {}, {x}, {DType::kI64}),
                 "argsort: output 0 has dtype i64, expected i32");
  EXPECT_INVALID(CallKernel("topk", {}, {x},
                            {EmptyTensor({2, 1}, DType::kF32), EmptyTensor({2, 2}, DType::kI32)}),
                 "topk: output 1 has shape [2, 2], expected [2, 1]");
}

// ---------------------------------------------------------------------------------------
// unique

struct RefUnique {
  std::vector<double> values;
  Ints first, inverse, counts;
};

// By a map from value to (first index, count); NaNs are one value.
RefUnique Unique(const std::vector<double>& data, bool sorted) {
  std::map<double, std::pair<int64_t, int64_t>> groups;  // NaN kept aside: no order in a map
  std::pair<int64_t, int64_t> nan_group = {-1, 0};
  for (size_t i = 0; i < data.size(); ++i) {
    auto& g = std::isnan(data[i])
                  ? nan_group
                  : groups.try_emplace(data[i], static_cast<int64_t>(i), 0).first->second;
    if (g.first < 0) g.first = static_cast<int64_t>(i);
    ++g.second;
  }
  std::vector<std::pair<int64_t, int64_t>> order;  // (first, count) in output order
  for (const auto& [v, g] : groups) order.push_back(g);
  if (nan_group.second > 0) order.push_back(nan_group);
  if (!sorted) std::sort(order.begin(), order.end());
  RefUnique r;
  for (const auto& [first, count] : order) {
    r.values.push_back(data[first]);
    r.first.push_back(first);
    r.counts.push_back(count);
  }
  for (double v : data) {
    for (size_t g = 0; g < order.size(); ++g) {
      const double u = data[order[g].first];
      if (v == u || (std::isnan(v) && std::isnan(u))) {
        r.inverse.push_back(static_cast<int64_t>(g));
        break;
      }
    }
  }
  return r;
}

TEST(UniqueTest, RandomDataSortedAndNot) {
  std::mt19937 rng(44);
  for (int iter = 0; iter < 60; ++iter) {
    const int64_t n = iter % 10 == 0 ? 0 : static_cast<int64_t>(rng() % 40);
    const bool sorted = iter % 2 == 0;
    const DType dtype =
        std::vector<DType>{DType::kI32, DType::kF32, DType::kI64, DType::kF64}[iter % 4];
    const int64_t hi = iter % 7 == 0 ? -5 : 6;  // all equal (-6) sometimes
    NDArray data = RandomIntegers({n}, dtype, rng, -6, hi);
    const RefUnique want = Unique(Values(data), sorted);
    const DType idx = iter % 3 == 0 ? DType::kI32 : DType::kI64;
    auto r = RunKernel("unique", {{"sorted", int64_t{sorted}}}, {data}, {dtype, idx, idx, idx});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Values((*r)[0]), want.values);
    EXPECT_EQ(AsInts((*r)[1]), want.first);
    EXPECT_EQ(AsInts((*r)[2]), want.inverse);
    EXPECT_EQ(AsInts((*r)[3]), want.counts);
  }
}

TEST(UniqueTest, AllDistinctNaNAndFewerOutputs) {
  NDArray data = TensorOf<float>({7}, {3, NAN, -0.0f, 1, NAN, 0, 3});
  auto r = RunKernel("unique", {}, {data}, {DType::kF32, DType::kI64});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectSameValues(Values((*r)[0]), {0, 1, 3, NAN});  // -0 and 0 are one value; NaNs too
  EXPECT_EQ(AsInts((*r)[1]), (Ints{2, 3, 0, 1}));
  std::vector<int64_t> iota(100);
  std::iota(iota.rbegin(), iota.rend(), 0);
  r = RunKernel("unique", {{"sorted", int64_t{0}}}, {TensorOf<int64_t>({100}, iota)},
                {DType::kI64, DType::kI32, DType::kI32});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AsInts((*r)[0]), iota);
  EXPECT_EQ(AsInts((*r)[2]), [] {
    Ints v(100);
    std::iota(v.begin(), v.end(), 0);
    return v;
  }());
}

// Slices along an axis against a reference that cuts the slices out (outer axes first,
// as numpy's unique(axis) compares them) and groups them with std::map: random small
// integers so that slices repeat, every axis of rank-1 to rank-3 data, extents of 0
// and 1 included.
TEST(UniqueTest, SlicesAlongAnAxis) {
  std::mt19937 rng(45);
  for (int iter = 0; iter < 80; ++iter) {
    Ints shape(1 + iter % 3);
    for (int64_t& d : shape) d = iter % 11 == 0 ? static_cast<int64_t>(rng() % 2) : 1 + static_cast<int64_t>(rng() % 4);
    const int rank = static_cast<int>(shape.size());
    const int axis = static_cast<int>(rng() % rank);
    const bool sorted = iter % 2 == 0;
    SCOPED_TRACE(absl::StrFormat("shape %s, axis %d, sorted %d", ShapeToString(shape), axis, sorted));
    NDArray data = RandomIntegers(shape, DType::kF32, rng, 0, 1);
    const std::vector<double> v = Values(data);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= shape[i];
    for (int i = axis + 1; i < rank; ++i) inner *= shape[i];
    const int64_t n = shape[axis];
    std::vector<std::vector<double>> slices(n);
    for (int64_t a = 0; a < n; ++a) {
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) slices[a].push_back(v[(o * n + a) * inner + i]);
      }
    }
    std::map<std::vector<double>, int64_t> first;  // sorted order of distinct slices
    for (int64_t a = 0; a < n; ++a) first.emplace(slices[a], a);
    std::vector<std::vector<double>> distinct;
    for (const auto& [slice, a] : first) distinct.push_back(slice);
    if (!sorted) {
      std::sort(distinct.begin(), distinct.end(), [&](const auto& x, const auto& y) { return first[x] < first[y]; });
    }
    Ints want_first, want_inverse(n), want_counts(distinct.size(), 0);
    for (const auto& slice : distinct) want_first.push_back(first[slice]);
    for (int64_t a = 0; a < n; ++a) {
      const int64_t j = std::find(distinct.begin(), distinct.end(), slices[a]) - distinct.begin();
      want_inverse[a] = j;
      ++want_counts[j];
    }
    auto r = RunKernel("unique", {{"sorted", int64_t{sorted}}, {"axis", int64_t{axis - (iter % 4 == 0 ? rank : 0)}}},
                       {data}, {DType::kF32, DType::kI64, DType::kI64, DType::kI64});
    ASSERT_TRUE(r.ok()) << r.status();
    Ints want_shape = shape;
    want_shape[axis] = static_cast<int64_t>(distinct.size());
    EXPECT_EQ(ShapeOf((*r)[0]), want_shape);
    const std::vector<double> got = Values((*r)[0]);
    const int64_t u = static_cast<int64_t>(distinct.size());
    for (int64_t o = 0; o < outer && !got.empty(); ++o) {
      for (int64_t j = 0; j < u; ++j) {
        for (int64_t i = 0; i < inner; ++i) {
          EXPECT_EQ(got[(o * u + j) * inner + i], distinct[j][o * inner + i]) << o << " " << j << " " << i;
        }
      }
    }
    EXPECT_EQ(AsInts((*r)[1]), want_first);
    EXPECT_EQ(AsInts((*r)[2]), want_inverse);
    EXPECT_EQ(AsInts((*r)[3]), want_counts);
  }
}

// Without an axis, data of any rank is flattened: a scalar is one element, [2, 0] none.
TEST(UniqueTest, FlattensDataOfAnyRank) {
  auto r = RunKernel("unique", {}, {TensorOf<int32_t>({2, 3}, {5, 1, 5, 2, 1, 5})},
                     {DType::kI32, DType::kI64, DType::kI64, DType::kI64});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AsInts((*r)[0]), (Ints{1, 2, 5}));
  EXPECT_EQ(AsInts((*r)[1]), (Ints{1, 3, 0}));
  EXPECT_EQ(AsInts((*r)[2]), (Ints{2, 0, 2, 1, 0, 2}));
  EXPECT_EQ(AsInts((*r)[3]), (Ints{2, 1, 3}));
  r = RunKernel("unique", {}, {TensorOf<float>({}, {7})}, {DType::kF32, DType::kI64, DType::kI64});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{7}));
  EXPECT_EQ(ShapeOf((*r)[2]), (Ints{1}));
  r = RunKernel("unique", {}, {EmptyTensor({2, 0}, DType::kF64)}, {DType::kF64, DType::kI32});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ShapeOf((*r)[0]), (Ints{0}));
}

// Strings order by their bytes (as numpy orders str arrays of ASCII), embedded NULs and
// "" included; the values are copies the output keeps. Against the std::map reference
// of random words from a small alphabet, so that they repeat, with and without an axis.
TEST(UniqueTest, Strings) {
  std::mt19937 rng(46);
  const std::vector<std::string> alphabet = {"", "a", "b", "ab", "B", std::string("a\0b", 3), "ba"};
  for (int iter = 0; iter < 40; ++iter) {
    const int64_t n = iter % 10 == 0 ? 0 : static_cast<int64_t>(rng() % 30);
    const bool sorted = iter % 2 == 0;
    std::vector<std::string> words(n);
    for (auto& w : words) w = alphabet[rng() % alphabet.size()];
    std::map<std::string, std::pair<int64_t, int64_t>> groups;  // first, count
    for (int64_t i = 0; i < n; ++i) ++groups.try_emplace(words[i], i, 0).first->second.second;
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> order(groups.begin(), groups.end());
    if (!sorted) std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<std::string> want_values;
    Ints want_first, want_counts, want_inverse;
    for (const auto& [w, g] : order) {
      want_values.push_back(w);
      want_first.push_back(g.first);
      want_counts.push_back(g.second);
    }
    for (const std::string& w : words) {
      want_inverse.push_back(std::find(want_values.begin(), want_values.end(), w) - want_values.begin());
    }
    kernels::Attrs attrs = {{"sorted", int64_t{sorted}}};
    std::vector<int64_t> shape = {n};
    if (iter % 3 == 1) attrs["axis"] = int64_t{-1};  // the same slices of one element
    if (iter % 3 == 2 && n % 2 == 0) shape = {n / 2, 2};  // flattened
    auto data = MakeStringTensor(shape, words, MakeNaiveAllocator());
    ASSERT_TRUE(data.ok()) << data.status();
    if (shape.size() == 2) attrs.erase("axis");
    auto r = RunKernel("unique", attrs, {*data}, {DType::kString, DType::kI64, DType::kI64, DType::kI64});
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<std::string> got;
    for (int64_t i = 0; i < (*r)[0]->num_elements(); ++i) {
      got.emplace_back(StringElement(*(*r)[0], i).value_or("<unreadable>"));
    }
    EXPECT_EQ(got, want_values);
    EXPECT_EQ(AsInts((*r)[1]), want_first);
    EXPECT_EQ(AsInts((*r)[2]), want_inverse);
    EXPECT_EQ(AsInts((*r)[3]), want_counts);
  }
}

TEST(UniqueTest, Errors) {
  EXPECT_INVALID(RunKernel("unique", {{"axis", int64_t{2}}}, {TensorOf<float>({2, 2}, {1, 2, 3, 4})}),
                 "unique: axis 2 out of range for data of shape [2, 2]");
  EXPECT_INVALID(RunKernel("unique", {}, {TensorOf<float>({2}, {1, 2})},
                           {DType::kF32, DType::kI64, DType::kI64, DType::kI64, DType::kI64}),
                 "unique: expected 1 to 4 outputs (values, indices, inverse, counts), got 5");
  EXPECT_INVALID(RunKernel("unique", {}, {TensorOf<bool>({2}, {true, false})}),
                 "unsupported dtype bool for unique data: expected f32, f64, i32, i64 or string");
  EXPECT_INVALID(
      RunKernel("unique", {}, {TensorOf<float>({2}, {1, 2})}, {DType::kF32, DType::kF32}),
      "unsupported dtype f32 for unique index output: expected i32 or i64");
  EXPECT_INVALID(
      RunKernel("unique", {{"return_counts", int64_t{1}}}, {TensorOf<float>({2}, {1, 2})}),
      "unknown attribute 'return_counts'");
  EXPECT_INVALID(
      CallKernel("unique", {}, {TensorOf<float>({3}, {1, 2, 1})}, {EmptyTensor({3}, DType::kF32)}),
      "unique: output 0 has shape [3], expected [2]");
}

// Empty tensors whose other extents multiply past int64: nothing may overflow (this
// binary runs under UBSan) and the outputs are empty.
TEST(SortTest, EmptyTensorsWithHugeExtents) {
  const int64_t huge = int64_t{1} << 40;
  NDArray x = EmptyTensor({huge, 0, huge}, DType::kF32);
  auto r = RunKernel("argsort", {{"axis", int64_t{1}}}, {x}, {DType::kI32});
  ASSERT_TRUE(r.ok()) << r.status();
  r = RunKernel("topk", {{"k", int64_t{3}}, {"axis", int64_t{2}}},
                {EmptyTensor({huge, 0, 5}, DType::kF32)}, {DType::kF32, DType::kI32});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ShapeOf((*r)[0]), (Ints{huge, 0, 3}));
}

}  // namespace
}  // namespace dynvm::kernels::testing
