// Tests of the slicing and joining kernels (kernels/data_movement/slice.cc) — concatenate, split,
// strided_slice, dyn.strided_slice, nn.pad — against plain references written here, on
// seeded random shapes with 0- and 1-sized extents, for one dtype of every element size,
// all through RunKernel (shape function first, as the VM runs them). Both slices are
// checked against CPython's slicing, which ONNX Slice's reference implementation uses.
//
// Tolerances: none; data movement must reproduce elements bit for bit.
#include "kernels/data_movement/slice.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/data_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels::testing {
namespace {

using Ints = std::vector<int64_t>;

// ---------------------------------------------------------------------------------------
// concatenate, split

// Element i of the concatenation of `parts` along `axis`, as (part, element).
std::pair<size_t, int64_t> ConcatSource(const std::vector<Ints>& parts, int axis, const Ints& out,
                                        int64_t i) {
  Ints index = Unravel(i, out);
  for (size_t p = 0;; ++p) {
    if (index[axis] < parts[p][axis]) return {p, Ravel(index, parts[p])};
    index[axis] -= parts[p][axis];
  }
}

// Expects `got` to have shape `out` and to hold `inputs` laid end to end along `axis`.
void ExpectConcatenated(const NDArray& got, const std::vector<NDArray>& inputs, int axis,
                        const Ints& out) {
  ASSERT_EQ(ShapeOf(got), out);
  std::vector<Ints> shapes;
  for (const NDArray& in : inputs) shapes.push_back(ShapeOf(in));
  const size_t elem = DTypeSize(got->dtype());
  for (int64_t i = 0; i < got->num_elements(); ++i) {
    const auto [p, j] = ConcatSource(shapes, axis, out, i);
    ASSERT_EQ(std::memcmp(static_cast<char*>(got->data()) + i * elem,
                          static_cast<char*>(inputs[p]->data()) + j * elem, elem),
              0)
        << "element " << i;
  }
}

TEST(ConcatenateTest, RandomShapes) {
  std::mt19937 rng(11);
  ThreadPool pool(3);
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 4);
    const Ints base = RandomShape(rng, rank, 5);
    const int axis = static_cast<int>(rng() % rank);
    const int n = 1 + static_cast<int>(rng() % 4);
    std::vector<Ints> shapes;
    Ints out = base;
    out[axis] = 0;
    for (int p = 0; p < n; ++p) {
      shapes.push_back(base);
      shapes.back()[axis] = static_cast<int64_t>(rng() % 4);
      out[axis] += shapes.back()[axis];
    }
    for (DType dtype : kOnePerSize) {
      std::vector<NDArray> inputs;
      for (const Ints& s : shapes) inputs.push_back(RandomBits(s, dtype, rng));
      const int64_t attr_axis = rng() % 2 ? axis : axis - rank;  // negative axes too
      auto r = RunKernel("concatenate", {{"axis", attr_axis}}, inputs, {}, 1, &pool);
      ASSERT_TRUE(r.ok()) << r.status();
      ExpectConcatenated((*r)[0], inputs, axis, out);
    }
  }
}

TEST(ConcatenateTest, LongRowsUseThePoolPerPiece) {
  std::mt19937 rng(12);
  ThreadPool pool(4);
  NDArray a = RandomBits({2, 300000}, DType::kF32, rng);
  NDArray b = RandomBits({2, 100000}, DType::kF32, rng);
  auto r = RunKernel("concatenate", {{"axis", int64_t{1}}}, {a, b}, {}, 1, &pool);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectConcatenated((*r)[0], {a, b}, 1, {2, 400000});
}

TEST(ConcatenateTest, Errors) {
  NDArray a = EmptyTensor({2, 3}, DType::kF32);
  EXPECT_INVALID(
      RunKernel("concatenate", {{"axis", int64_t{0}}}, {a, EmptyTensor({2, 4}, DType::kF32)}),
      "concatenate: input 1 has shape [2, 4], which does not match [2, 3] outside axis 0");
  EXPECT_INVALID(RunKernel("concatenate", {}, {a, EmptyTensor({2, 3, 1}, DType::kF32)}),
                 "input 1 has shape [2, 3, 1]");
  EXPECT_INVALID(RunKernel("concatenate", {}, {a, EmptyTensor({2, 3}, DType::kI32)}),
                 "concatenate: input 1 has dtype i32, expected f32");
  EXPECT_INVALID(RunKernel("concatenate", {{"axis", int64_t{2}}}, {a}),
                 "concatenate: axis 2 out of range for rank 2");
  EXPECT_INVALID(RunKernel("concatenate", {}, {EmptyTensor({}, DType::kF32)}),
                 "concatenate: inputs must have rank >= 1");
  EXPECT_INVALID(RunKernel("concatenate", {}, {}, {DType::kF32}),
                 "concatenate: needs at least one input");
  EXPECT_INVALID(RunKernel("concatenate", {{"dim", int64_t{0}}}, {a}), "unknown attribute 'dim'");
  EXPECT_INVALID(CallKernel("concatenate", {}, {a, a}, {EmptyTensor({4, 3}, DType::kI32)}),
                 "concatenate: output 0 has dtype i32, expected f32");
  EXPECT_INVALID(CallKernel("concatenate", {}, {a, a}, {EmptyTensor({2, 6}, DType::kF32)}),
                 "concatenate: output 0 has shape [2, 6], expected [4, 3]");
  EXPECT_INVALID(CallKernel("concatenate", {}, {a}, {a, a}),
                 "kernel 'concatenate' takes any number of inputs and 1 outputs, not 1 and 2");
}

// Checks split's outputs against slices of `x` along `axis` at `bounds`.
void ExpectSplit(const std::vector<NDArray>& outs, const NDArray& x, int axis, const Ints& bounds) {
  ASSERT_EQ(outs.size() + 1, bounds.size());
  for (size_t p = 0; p < outs.size(); ++p) {
    Ints shape = ShapeOf(x);
    shape[axis] = bounds[p + 1] - bounds[p];
    ExpectGathered(outs[p], shape, x, [&](int64_t i) {
      Ints index = Unravel(i, shape);
      index[axis] += bounds[p];
      return Ravel(index, ShapeOf(x));
    });
  }
}

TEST(SplitTest, SectionsAndIndices) {
  std::mt19937 rng(13);
  for (int iter = 0; iter < 40; ++iter) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    Ints shape = RandomShape(rng, rank, 4);
    const int axis = static_cast<int>(rng() % rank);
    const int64_t sections = 1 + static_cast<int64_t>(rng() % 3);
    shape[axis] *= sections;  // divisible
    for (DType dtype : kOnePerSize) {
      NDArray x = RandomBits(shape, dtype, rng);
      auto even = RunKernel("split", {{"indices_or_sections", sections}, {"axis", int64_t{axis}}},
                            {x}, {}, static_cast<int>(sections));
      ASSERT_TRUE(even.ok()) << even.status();
      Ints bounds;
      for (int64_t s = 0; s <= sections; ++s) bounds.push_back(s * shape[axis] / sections);
      ExpectSplit(*even, x, axis, bounds);
      // Ascending split points, repeats (empty parts) and the ends included.
      Ints points;
      for (int k = static_cast<int>(rng() % 4); k > 0; --k)
        points.push_back(rng() % (shape[axis] + 1));
      std::sort(points.begin(), points.end());
      auto at =
          RunKernel("split", {{"indices_or_sections", points}, {"axis", int64_t{axis - rank}}}, {x},
                    {}, static_cast<int>(points.size() + 1));
      ASSERT_TRUE(at.ok()) << at.status();
      bounds = {0};
      bounds.insert(bounds.end(), points.begin(), points.end());
      bounds.push_back(shape[axis]);
      ExpectSplit(*at, x, axis, bounds);
    }
  }
}

TEST(SplitTest, Errors) {
  NDArray x = EmptyTensor({4, 6}, DType::kF32);
  EXPECT_INVALID(
      RunKernel("split", {{"indices_or_sections", int64_t{4}}, {"axis", int64_t{1}}}, {x}, {}, 4),
      "split: axis 1 of extent 6 does not divide into 4 sections");
  EXPECT_INVALID(RunKernel("split", {{"indices_or_sections", int64_t{2}}}, {x}, {}, 3),
                 "split: expected 2 outputs, got 3");
  EXPECT_INVALID(RunKernel("split", {{"indices_or_sections", Ints{2, 5}}}, {x}, {}, 3),
                 "split: index 5 past axis 0 of extent 4");
  EXPECT_INVALID(RunKernel("split", {{"indices_or_sections", Ints{3, 2}}}, {x}, {}, 3),
                 "attribute 'indices_or_sections' [3, 2] must be ascending and non-negative");
  EXPECT_INVALID(RunKernel("split", {{"indices_or_sections", int64_t{0}}}, {x}, {}, 1),
                 "sections must be positive");
  EXPECT_INVALID(RunKernel("split", {}, {x}, {}, 1),
                 "missing int list attribute 'indices_or_sections'");
  EXPECT_INVALID(
      RunKernel("split", {{"indices_or_sections", int64_t{1}}}, {EmptyTensor({}, DType::kF32)}),
      "split: input must have rank >= 1");
  EXPECT_INVALID(CallKernel("split", {{"indices_or_sections", int64_t{2}}}, {x},
                            {EmptyTensor({2, 6}, DType::kF32), EmptyTensor({2, 5}, DType::kF32)}),
                 "split: output 1 has shape [2, 5], expected [2, 6]");
}

// ---------------------------------------------------------------------------------------
// strided_slice

// The indices a Python slice start:stop:step selects from a sequence of `len`
// (CPython's PySlice_AdjustIndices, then the walk).
Ints PythonSlice(int64_t len, std::optional<int64_t> start, std::optional<int64_t> stop,
                 int64_t step) {
  auto adjust = [&](std::optional<int64_t> v, int64_t when_absent) {
    if (!v) return when_absent;
    int64_t x = *v;
    if (x < 0) {
      x += len;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= len) {
      x = step < 0 ? len - 1 : len;
    }
    return x;
  };
  const int64_t b = adjust(start, step < 0 ? len - 1 : 0);
  const int64_t e = adjust(stop, step < 0 ? -1 : len);
  Ints picked;
  for (int64_t i = b; step > 0 ? i < e : i > e; i += step) picked.push_back(i);
  return picked;
}

// Runs `kernel` (strided_slice, or dyn.strided_slice with index inputs after x) and
// expects the elements of x that `picked` lists per axis.
void CheckPicked(std::string_view kernel, const Attrs& attrs, const std::vector<NDArray>& inputs,
                 const std::vector<Ints>& picked) {
  const NDArray& x = inputs[0];
  auto r = RunKernel(kernel, attrs, inputs);
  ASSERT_TRUE(r.ok()) << r.status();
  Ints shape;
  for (const Ints& p : picked) shape.push_back(static_cast<int64_t>(p.size()));
  ExpectGathered((*r)[0], shape, x, [&](int64_t i) {
    Ints index = Unravel(i, shape);
    for (size_t k = 0; k < index.size(); ++k) index[k] = picked[k][index[k]];
    return Ravel(index, ShapeOf(x));
  });
}

void CheckSlice(const NDArray& x, const Attrs& attrs, const std::vector<Ints>& picked) {
  CheckPicked("strided_slice", attrs, {x}, picked);
}

TEST(StridedSliceTest, RandomBoundsAndSteps) {
  std::mt19937 rng(14);
  for (int iter = 0; iter < 150; ++iter) {
    const int rank = static_cast<int>(rng() % 4);
    const Ints shape = RandomShape(rng, rank, 7);
    const size_t given = rng() % (rank + 1);  // axes past `given` are left whole
    Ints begin, end, strides;
    std::vector<Ints> picked;
    for (int k = 0; k < rank; ++k) {
      auto bound = [&]() -> int64_t {
        const int pick = static_cast<int>(rng() % 6);
        if (pick == 0) return int64_t{1} << 40;  // far past the end (Relay's "to the end")
        if (pick == 1) return -(int64_t{1} << 40);
        return static_cast<int64_t>(rng() % 21) - 10;
      };
      int64_t step = static_cast<int64_t>(rng() % 7) - 3;
      if (step == 0) step = 1;
      if (static_cast<size_t>(k) < given) {
        begin.push_back(bound());
        end.push_back(bound());
        strides.push_back(step);
        picked.push_back(PythonSlice(shape[k], begin.back(), end.back(), step));
      } else {
        picked.push_back(PythonSlice(shape[k], std::nullopt, std::nullopt, 1));
      }
    }
    SCOPED_TRACE(absl::StrFormat("%s [%s]:[%s]:[%s]", ShapeToString(shape),
                                 absl::StrJoin(begin, ","), absl::StrJoin(end, ","),
                                 absl::StrJoin(strides, ",")));
    for (DType dtype : kOnePerSize) {
      CheckSlice(RandomBits(shape, dtype, rng),
                 {{"begin", begin}, {"end", end}, {"strides", strides}}, picked);
    }
  }
}

TEST(StridedSliceTest, AxesStridesDefaultAndSizeMode) {
  std::mt19937 rng(15);
  NDArray x = RandomBits({4, 5, 6}, DType::kF32, rng);
  const Ints all4 = PythonSlice(4, std::nullopt, std::nullopt, 1);
  const Ints all5 = PythonSlice(5, std::nullopt, std::nullopt, 1);
  // axes: only axis 2 (given as -1) is sliced, reversed.
  CheckSlice(x, {{"begin", Ints{4}}, {"end", Ints{0}}, {"strides", Ints{-2}}, {"axes", Ints{-1}}},
             {all4, all5, PythonSlice(6, 4, 0, -2)});
  // Strides shorter than begin: the rest step by 1.
  CheckSlice(x, {{"begin", Ints{1, 1}}, {"end", Ints{4, 4}}, {"strides", Ints{2}}},
             {PythonSlice(4, 1, 4, 2), PythonSlice(5, 1, 4, 1),
              PythonSlice(6, std::nullopt, std::nullopt, 1)});
  // slice_mode "size": end holds sizes, -1 meaning to the end; strides ignored.
  CheckSlice(x,
             {{"begin", Ints{1, -2}},
              {"end", Ints{2, -1}},
              {"strides", Ints{3, 3}},
              {"slice_mode", std::string("size")}},
             {PythonSlice(4, 1, 3, 1), PythonSlice(5, -2, std::nullopt, 1),
              PythonSlice(6, std::nullopt, std::nullopt, 1)});
  CheckSlice(
      x, {{"begin", Ints{2}}, {"end", Ints{100}}, {"slice_mode", std::string("size")}},
      {PythonSlice(4, 2, std::nullopt, 1), all5, PythonSlice(6, std::nullopt, std::nullopt, 1)});
}

TEST(StridedSliceTest, Errors) {
  NDArray x = EmptyTensor({4, 5}, DType::kF32);
  EXPECT_INVALID(
      RunKernel("strided_slice", {{"begin", Ints{0}}, {"end", Ints{1}}, {"strides", Ints{0}}}, {x}),
      "attribute 'strides' has a step of 0");
  EXPECT_INVALID(RunKernel("strided_slice",
                           {{"begin", Ints{0}},
                            {"end", Ints{1}},
                            {"strides", Ints{std::numeric_limits<int64_t>::min()}}},
                           {x}),
                 "attribute 'strides' has a step of -9223372036854775808");
  // A huge step takes one element (and its stride in elements is never formed).
  std::mt19937 rng(18);
  CheckSlice(
      RandomBits({4, 5}, DType::kI16, rng),
      {{"begin", Ints{1}}, {"end", Ints{4}}, {"strides", Ints{int64_t{1} << 62}}},
      {PythonSlice(4, 1, 4, int64_t{1} << 62), PythonSlice(5, std::nullopt, std::nullopt, 1)});
  EXPECT_INVALID(
      RunKernel("strided_slice", {{"begin", Ints{0, 0, 0}}, {"end", Ints{1, 1, 1}}}, {x}),
      "strided_slice: 3 begin values for rank 2");
  EXPECT_INVALID(RunKernel("strided_slice", {{"begin", Ints{0}}, {"end", Ints{1, 2}}}, {x}),
                 "attributes 'begin', 'end' and 'strides' have 1, 2 and 0 values");
  EXPECT_INVALID(
      RunKernel("strided_slice",
                {{"begin", Ints{0, 0}}, {"end", Ints{1, 1}}, {"axes", Ints{1, -1}}}, {x}),
      "strided_slice: axis 1 sliced twice");
  EXPECT_INVALID(
      RunKernel("strided_slice", {{"begin", Ints{0}}, {"end", Ints{1}}, {"axes", Ints{2}}}, {x}),
      "strided_slice: axis 2 out of range for rank 2");
  EXPECT_INVALID(
      RunKernel("strided_slice", {{"begin", Ints{0}}, {"end", Ints{1}}, {"axes", Ints{0, 1}}}, {x}),
      "attribute 'axes' has 2 values but 'begin' has 1");
  EXPECT_INVALID(
      RunKernel("strided_slice",
                {{"begin", Ints{0}}, {"end", Ints{1}}, {"slice_mode", std::string("stop")}}, {x}),
      "attribute 'slice_mode' is 'stop': expected 'end' or 'size'");
  EXPECT_INVALID(RunKernel("strided_slice", {{"begin", Ints{1}}, {"end", Ints{3}}}, {x, x}),
                 "kernel 'strided_slice' takes 1 inputs and 1 outputs, not 2 and 1");
  EXPECT_INVALID(CallKernel("strided_slice", {{"begin", Ints{1}}, {"end", Ints{3}}}, {x},
                            {EmptyTensor({3, 5}, DType::kF32)}),
                 "strided_slice: output 0 has shape [3, 5], expected [2, 5]");
}

// ---------------------------------------------------------------------------------------
// dyn.strided_slice

// A 1-D index tensor of `dtype` (i32 or i64) holding `values`.
NDArray IndexTensor(const Ints& values, DType dtype) {
  const int64_t n = static_cast<int64_t>(values.size());
  if (dtype == DType::kI64) return TensorOf<int64_t>({n}, values);
  return TensorOf<int32_t>({n}, std::vector<int32_t>(values.begin(), values.end()));
}

// ONNX Slice by its reference implementation: entry i slices axis axes[i] (negative:
// from the end) from starts[i] to ends[i] by steps[i], as Python slices a sequence.
std::vector<Ints> OnnxSlicePicks(const Ints& shape, const Ints& starts, const Ints& ends,
                                 const Ints& axes, const Ints& steps) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<Ints> picked;
  for (int64_t d : shape) picked.push_back(PythonSlice(d, std::nullopt, std::nullopt, 1));
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    picked[axis] = PythonSlice(shape[axis], starts[i], ends[i], steps[i]);
  }
  return picked;
}

// Runs dyn.strided_slice on `x` and index `inputs` and expects the elements `picked`.
void CheckDynSlice(const NDArray& x, const std::vector<NDArray>& index_inputs,
                   const std::vector<Ints>& picked) {
  std::vector<NDArray> inputs = {x};
  inputs.insert(inputs.end(), index_inputs.begin(), index_inputs.end());
  CheckPicked("dyn.strided_slice", {}, inputs, picked);
}

TEST(DynStridedSliceTest, RandomAgainstOnnxReference) {
  std::mt19937 rng(19);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = static_cast<int>(rng() % 5);
    const Ints shape = RandomShape(rng, rank, 7);
    const DType index = rng() % 2 ? DType::kI64 : DType::kI32;
    // Bounds as exported models write them: INT64_MAX / INT64_MIN (INT32_* in i32
    // tensors) for "to the end", far past the axis, negative, or in range.
    auto bound = [&]() -> int64_t {
      const int pick = static_cast<int>(rng() % 8);
      const bool wide = index == DType::kI64;
      if (pick == 0) return wide ? kMax : std::numeric_limits<int32_t>::max();
      if (pick == 1) return wide ? kMin : std::numeric_limits<int32_t>::min();
      if (pick == 2) return (rng() % 2 ? 1 : -1) * (int64_t{1} << 30);
      return static_cast<int64_t>(rng() % 21) - 10;
    };
    // Which inputs are given: starts and ends; then axes; then steps.
    const int given = 2 + static_cast<int>(rng() % 3);
    Ints order(rank);
    for (int a = 0; a < rank; ++a) order[a] = a;
    std::shuffle(order.begin(), order.end(), rng);
    const size_t n = rng() % (rank + 1);
    Ints starts, ends, axes, steps;
    for (size_t i = 0; i < n; ++i) {
      const int64_t axis = given >= 3 ? order[i] : static_cast<int64_t>(i);
      axes.push_back(given >= 3 && rng() % 2 ? axis - rank : axis);
      starts.push_back(bound());
      ends.push_back(bound());
      int64_t step = given == 4 ? static_cast<int64_t>(rng() % 9) - 4 : 1;
      if (step == 0) step = -1;
      steps.push_back(step);
    }
    std::vector<NDArray> index_inputs = {IndexTensor(starts, index), IndexTensor(ends, index)};
    if (given >= 3) index_inputs.push_back(IndexTensor(axes, index));
    if (given == 4) index_inputs.push_back(IndexTensor(steps, index));
    SCOPED_TRACE(absl::StrFormat("%s %s starts [%s] ends [%s] axes [%s] steps [%s]",
                                 ShapeToString(shape), DTypeName(index), absl::StrJoin(starts, ","),
                                 absl::StrJoin(ends, ","), absl::StrJoin(axes, ","),
                                 absl::StrJoin(steps, ",")));
    const std::vector<Ints> picked = OnnxSlicePicks(shape, starts, ends, axes, steps);
    for (DType dtype : kOnePerSize) {
      CheckDynSlice(RandomBits(shape, dtype, rng), index_inputs, picked);
    }
  }
}

TEST(DynStridedSliceTest, ExportedPatterns) {
  std::mt19937 rng(20);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const NDArray x = RandomBits({4, 5, 6}, DType::kF32, rng);
  const Ints s = {4, 5, 6};
  const auto i64 = [](const Ints& v) { return IndexTensor(v, DType::kI64); };
  // x[:, 1:]: INT64_MAX ends, axes given.
  CheckDynSlice(x, {i64({1}), i64({kMax}), i64({1})}, OnnxSlicePicks(s, {1}, {kMax}, {1}, {1}));
  // x[..., ::-1]: start -1, end INT64_MIN, step -1 (torch.flip as exported).
  CheckDynSlice(x, {i64({-1}), i64({kMin}), i64({-1}), i64({-1})},
                OnnxSlicePicks(s, {-1}, {kMin}, {-1}, {-1}));
  // x[-3:-1, ::2] without axes, i32 indices with INT32_MAX for "to the end".
  CheckDynSlice(x,
                {IndexTensor({-3, 0}, DType::kI32), IndexTensor({-1, 2147483647}, DType::kI32),
                 IndexTensor({0, 1}, DType::kI32), IndexTensor({1, 2}, DType::kI32)},
                OnnxSlicePicks(s, {-3, 0}, {-1, 2147483647}, {0, 1}, {1, 2}));
  // Mixed index dtypes, starts past the end: an empty axis.
  CheckDynSlice(x, {IndexTensor({9}, DType::kI32), i64({kMax})},
                OnnxSlicePicks(s, {9}, {kMax}, {0}, {1}));
  // A step of INT64_MIN takes one element; INT64_MAX one too.
  CheckDynSlice(x, {i64({3, 0}), i64({kMin, kMax}), i64({2, 0}), i64({kMin, kMax})},
                OnnxSlicePicks(s, {3, 0}, {kMin, kMax}, {2, 0}, {kMin, kMax}));
  // No index values: the whole tensor; a scalar too.
  CheckDynSlice(x, {i64({}), i64({})}, OnnxSlicePicks(s, {}, {}, {}, {}));
  CheckDynSlice(TensorOf<float>({}, {2.0f}), {i64({}), i64({}), i64({}), i64({})}, {});
}

TEST(DynStridedSliceTest, Errors) {
  const NDArray x = EmptyTensor({4, 5}, DType::kF32);
  const auto i64 = [](const Ints& v) { return IndexTensor(v, DType::kI64); };
  const NDArray one = i64({1});
  const auto slice = [&](std::vector<NDArray> inputs) {
    inputs.insert(inputs.begin(), x);
    return RunKernel("dyn.strided_slice", {}, inputs);
  };
  EXPECT_INVALID(slice({TensorOf<float>({1}, {1.0f}), one}),
                 "unsupported dtype f32 for dyn.strided_slice starts: expected i32 or i64");
  EXPECT_INVALID(slice({one, one, one, TensorOf<bool>({1}, {true})}),
                 "unsupported dtype bool for dyn.strided_slice steps: expected i32 or i64");
  EXPECT_INVALID(slice({one, TensorOf<int64_t>({1, 1}, {3})}),
                 "dyn.strided_slice: ends must be 1-D, got shape [1, 1]");
  EXPECT_INVALID(slice({one, TensorOf<int32_t>({}, {3})}),
                 "dyn.strided_slice: ends must be 1-D, got shape []");
  EXPECT_INVALID(slice({one, i64({3, 3})}),
                 "dyn.strided_slice: ends has 2 values but starts has 1: expected as many");
  EXPECT_INVALID(slice({one, one, i64({0, 1})}),
                 "dyn.strided_slice: axes has 2 values but starts has 1: expected as many");
  EXPECT_INVALID(slice({one, one, one, i64({})}),
                 "dyn.strided_slice: steps has 0 values but starts has 1: expected as many");
  EXPECT_INVALID(slice({i64({0, 0}), i64({1, 1}), i64({0, 1}), i64({1, 0})}),
                 "dyn.strided_slice: steps has a 0 at position 1: expected nonzero steps");
  EXPECT_INVALID(slice({one, one, i64({2})}), "dyn.strided_slice: axis 2 out of range for rank 2");
  EXPECT_INVALID(slice({one, one, i64({-3})}),
                 "dyn.strided_slice: axis -3 out of range for rank 2");
  EXPECT_INVALID(slice({i64({0, 0}), i64({1, 1}), i64({1, -1})}),
                 "dyn.strided_slice: axis 1 sliced twice");
  EXPECT_INVALID(
      slice({i64({0, 0, 0}), i64({1, 1, 1})}),
      "dyn.strided_slice: 3 starts without axes for data of rank 2: expected at most one per axis");
  EXPECT_INVALID(slice({one}), "dyn.strided_slice: expected 3 to 5 inputs (data, starts, ends "
                               "[, axes [, steps]]), got 2");
  EXPECT_INVALID(slice({one, one, one, one, one}),
                 "dyn.strided_slice: expected 3 to 5 inputs (data, starts, ends [, axes [, "
                 "steps]]), got 6");
  EXPECT_INVALID(RunKernel("dyn.strided_slice", {{"axes", Ints{0}}}, {x, one, one}),
                 "kernel 'dyn.strided_slice' takes no attributes, got 'axes'");
  EXPECT_INVALID(CallKernel("dyn.strided_slice", {}, {x, one, i64({3})},
                            {EmptyTensor({3, 5}, DType::kF32)}),
                 "dyn.strided_slice: output 0 has shape [3, 5], expected [2, 5]");
  EXPECT_INVALID(CallKernel("dyn.strided_slice", {}, {x, one, i64({3})},
                            {EmptyTensor({2, 5}, DType::kI32)}),
                 "dyn.strided_slice: output 0 has dtype i32, expected f32");
}

// ---------------------------------------------------------------------------------------
// nn.pad

// numpy.pad's source coordinate for output coordinate `o` of an axis, or nullopt for
// the constant.
std::optional<int64_t> NumpyPadSource(const std::string& mode, int64_t o, int64_t before,
                                      int64_t dim) {
  int64_t c = o - before;
  if (c >= 0 && c < dim) return c;
  if (mode == "constant") return std::nullopt;
  if (mode == "edge") return c < 0 ? 0 : dim - 1;
  // reflect: mirror about the first and last elements, edges not repeated.
  while (c < 0 || c >= dim) c = c < 0 ? -c : 2 * (dim - 1) - c;
  return c;
}

void CheckPad(std::mt19937& rng, const Ints& shape, const Ints& widths, const std::string& mode,
              DType dtype, bool value_as_input, ThreadPool* pool = nullptr) {
  SCOPED_TRACE(absl::StrFormat("%s pad [%s] %s %s", ShapeToString(shape),
                               absl::StrJoin(widths, ","), mode, DTypeName(dtype)));
  NDArray x = RandomBits(shape, dtype, rng);
  NDArray value = RandomTensor({}, dtype, rng, 1, 5);
  Attrs attrs = {{"pad_width", widths}, {"pad_mode", mode}};
  std::vector<NDArray> inputs = {x};
  if (value_as_input) {
    inputs.push_back(value);
  } else {
    attrs["pad_value"] = ElementAsDouble(*value, 0);
  }
  std::vector<absl::StatusOr<std::vector<NDArray>>> runs = {RunKernel("nn.pad", attrs, inputs, {}, 1, pool)};
  if (value_as_input) {  // and dyn.nn.pad, the widths an input read at run time
    const NDArray width_input = TensorOf<int64_t>({static_cast<int64_t>(widths.size())}, widths);
    runs.push_back(RunKernel("dyn.nn.pad", {{"pad_mode", mode}}, {x, width_input, value}, {dtype}, 1, pool));
  }
  Ints out;
  for (size_t k = 0; k < shape.size(); ++k)
    out.push_back(widths[2 * k] + shape[k] + widths[2 * k + 1]);
  for (const auto& r : runs) {
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectGathered((*r)[0], out, x,
                   [&](int64_t i) -> int64_t {
                     Ints index = Unravel(i, out);
                     for (size_t k = 0; k < index.size(); ++k) {
                       std::optional<int64_t> c =
                           NumpyPadSource(mode, index[k], widths[2 * k], shape[k]);
                       if (!c) return -1;
                       index[k] = *c;
                     }
                     return Ravel(index, shape);
                   },
                   value->data());
  }
}

TEST(PadTest, RandomShapesAndModes) {
  std::mt19937 rng(16);
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = static_cast<int>(rng() % 4);
    const std::string mode = std::vector<std::string>{"constant", "edge", "reflect"}[iter % 3];
    Ints shape = RandomShape(rng, rank, 5);
    Ints widths;
    for (int64_t& d : shape) {
      if (mode != "constant" && d == 0) d = 1;  // edge and reflect need a source element
      const int64_t limit = mode == "reflect" ? d - 1 : 3;  // reflect: pads below the extent
      widths.push_back(static_cast<int64_t>(rng() % (limit + 1)));
      widths.push_back(static_cast<int64_t>(rng() % (limit + 1)));
    }
    for (DType dtype : kOnePerSize) CheckPad(rng, shape, widths, mode, dtype, iter % 2 == 0);
  }
}

TEST(PadTest, LargeWithPoolAndAttributeValueConverted) {
  std::mt19937 rng(17);
  ThreadPool pool(4);
  CheckPad(rng, {3, 64, 64}, {0, 0, 1, 1, 2, 2}, "constant", DType::kF32, false, &pool);
  CheckPad(rng, {2, 100, 50}, {1, 0, 3, 2, 7, 7}, "reflect", DType::kI64, true, &pool);
  CheckPad(rng, {2, 100, 50}, {1, 0, 3, 2, 7, 7}, "edge", DType::kF16, false, &pool);
  // A pad value input of another dtype converts; the attribute 2.5 becomes 2 for i32.
  auto r = RunKernel("nn.pad", {{"pad_width", Ints{1, 1}}},
                     {TensorOf<int32_t>({1}, {7}), TensorOf<float>({}, {-3.75f})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{-3, 7, -3}));
  r = RunKernel("nn.pad", {{"pad_width", Ints{2, 0}}, {"pad_value", 2.5}},
                {TensorOf<int32_t>({1}, {7})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{2, 2, 7}));
  r = RunKernel("nn.pad", {{"pad_width", Ints{}}}, {TensorOf<float>({}, {4.0f})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{4}));
}

TEST(PadTest, Errors) {
  NDArray x = EmptyTensor({2, 3}, DType::kF32);
  EXPECT_INVALID(
      RunKernel("nn.pad", {{"pad_width", Ints{0, 0, 3, 0}}, {"pad_mode", std::string("reflect")}},
                {x}),
      "nn.pad: reflect padding (3, 0) of axis 1 needs pads below its extent 3");
  EXPECT_INVALID(
      RunKernel("nn.pad", {{"pad_width", Ints{1, 0, 0, 0}}, {"pad_mode", std::string("edge")}},
                {EmptyTensor({0, 3}, DType::kF32)}),
      "nn.pad: edge padding of axis 0, which is empty");
  EXPECT_INVALID(RunKernel("nn.pad", {{"pad_width", Ints{1, 1}}}, {x}),
                 "nn.pad: 'pad_width' has 2 values for rank 2: expected 4");
  EXPECT_INVALID(RunKernel("nn.pad", {{"pad_width", Ints{1, -1, 0, 0}}}, {x}),
                 "nn.pad: pad_width [1, -1, 0, 0] must be non-negative (before, after) pairs");
  EXPECT_INVALID(RunKernel("dyn.nn.pad", {}, {x, TensorOf<int64_t>({4}, {1, -1, 0, 0})}, {DType::kF32}),
                 "dyn.nn.pad: pad_width [1, -1, 0, 0] must be non-negative (before, after) pairs");
  EXPECT_INVALID(RunKernel("dyn.nn.pad", {}, {x, TensorOf<int64_t>({2}, {1, 1})}, {DType::kF32}),
                 "nn.pad: 'pad_width' has 2 values for rank 2: expected 4");
  EXPECT_INVALID(RunKernel("dyn.nn.pad", {}, {x}, {DType::kF32}),
                 "dyn.nn.pad: expected 2 or 3 inputs (data, pad_width, optional pad value), got 1");
  EXPECT_INVALID(RunKernel("nn.pad", {{"pad_width", Ints{1}}}, {x}),
                 "must be non-negative (before, after) pairs");
  EXPECT_INVALID(
      RunKernel("nn.pad", {{"pad_width", Ints{0, 0, 0, 0}}, {"pad_mode", std::string("wrap")}},
                {x}),
      "attribute 'pad_mode' is 'wrap': expected 'constant', 'edge' or 'reflect'");
  EXPECT_INVALID(RunKernel("nn.pad", {{"pad_width", Ints{0, 0, 0, 0}}, {"pad_value", 1.0}},
                           {x, TensorOf<float>({}, {1})}),
                 "nn.pad: pad value given both as attribute and input");
  EXPECT_INVALID(
      RunKernel("nn.pad", {{"pad_width", Ints{0, 0, 0, 0}}}, {x, TensorOf<float>({1}, {1})}),
      "nn.pad: pad value must be a scalar (rank 0), got [1]");
  EXPECT_INVALID(RunKernel("nn.pad", {{"pad_width", Ints{0, 0, 0, 0}}}, {x, x, x}),
                 "nn.pad: expected 1 or 2 inputs (data, optional pad value), got 3");
  EXPECT_INVALID(CallKernel("nn.pad", {{"pad_width", Ints{1, 1, 0, 0}}}, {x},
                            {EmptyTensor({4, 3}, DType::kF64)}),
                 "nn.pad: output 0 has dtype f64, expected f32");
}

// Empty tensors whose other extents multiply past int64: nothing may overflow (this
// binary runs under UBSan) and the outputs are empty.
TEST(SliceTest, EmptyTensorsWithHugeExtents) {
  const int64_t huge = int64_t{1} << 40;
  NDArray x = EmptyTensor({huge, 0, huge}, DType::kI64);
  auto r = RunKernel("concatenate", {{"axis", int64_t{2}}}, {x, x});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ShapeOf((*r)[0]), (Ints{huge, 0, 2 * huge}));
  r = RunKernel("split", {{"indices_or_sections", int64_t{2}}, {"axis", int64_t{0}}}, {x}, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  r = RunKernel("strided_slice", {{"begin", Ints{1, 0, 5}}, {"end", Ints{huge, 1, huge}}}, {x});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ShapeOf((*r)[0]), (Ints{huge - 1, 0, huge - 5}));
  r = RunKernel("nn.pad", {{"pad_width", Ints{0, 0, 0, 0, 1, 1}}}, {x});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0]->num_elements(), 0);
  // Constant padding of an empty axis: the output is all padding.
  r = RunKernel("nn.pad", {{"pad_width", Ints{1, 1}}, {"pad_value", 5.0}},
                {EmptyTensor({0}, DType::kI64)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values((*r)[0]), (std::vector<double>{5, 5}));
  EXPECT_INVALID(RunKernel("concatenate", {},
                           {EmptyTensor({int64_t{1} << 62, 0}, DType::kU8),
                            EmptyTensor({int64_t{1} << 62, 0}, DType::kU8)}),
                 "concatenate: the extents along axis 0 overflow");
}

// Checks dyn.split's outputs against slices of `x` along `axis` (normalised) of
// extents `sizes`.
void ExpectParts(const std::vector<NDArray>& outs, const NDArray& x, int axis, const Ints& sizes) {
  ASSERT_EQ(outs.size(), sizes.size());
  int64_t begin = 0;
  for (size_t p = 0; p < outs.size(); ++p) {
    Ints shape = ShapeOf(x);
    shape[axis] = sizes[p];
    ExpectGathered(outs[p], shape, x, [&](int64_t i) {
      Ints index = Unravel(i, shape);
      index[axis] += begin;
      return Ravel(index, ShapeOf(x));
    });
    begin += sizes[p];
  }
}

TEST(DynSplitTest, RandomSizesIncludingEmptyParts) {
  std::mt19937 rng(22);
  for (int iter = 0; iter < 40; ++iter) {
    const Ints in = RandomShape(rng, 1 + static_cast<int>(rng() % 4));
    const int rank = static_cast<int>(in.size());
    const int axis = static_cast<int>(rng() % rank);
    // Each slice of the axis goes to a random part: with up to 4 parts of extents up to
    // 6, empty parts are common.
    const int parts = 1 + static_cast<int>(rng() % 4);
    Ints sizes(parts, 0);
    for (int64_t e = 0; e < in[axis]; ++e) ++sizes[rng() % parts];
    SCOPED_TRACE(absl::StrFormat("%s axis %d sizes [%s]", ShapeToString(in), axis,
                                 absl::StrJoin(sizes, ",")));
    for (DType dtype : kOnePerSize) {
      NDArray x = RandomBits(in, dtype, rng);
      // The axis as given and counted from the end; the sizes as i64 and i32.
      auto out = RunKernel("dyn.split", {{"axis", int64_t{axis}}},
                           {x, IndexVector(sizes, DType::kI64)}, {}, parts);
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectParts(*out, x, axis, sizes);
      auto back = RunKernel("dyn.split", {{"axis", int64_t{axis - rank}}},
                            {x, IndexVector(sizes, DType::kI32)}, {}, parts);
      ASSERT_TRUE(back.ok()) << back.status();
      ExpectParts(*back, x, axis, sizes);
    }
  }
}

TEST(DynSplitTest, DefaultAxisZeroSizesAndPool) {
  std::mt19937 rng(23);
  // ONNX's test_split_zero_size_splits: an empty axis cut into empty parts.
  auto empty = RunKernel(
      "dyn.split", {}, {EmptyTensor({0}, DType::kF32), IndexVector({0, 0, 0}, DType::kI64)}, {}, 3);
  ASSERT_TRUE(empty.ok()) << empty.status();
  for (const NDArray& part : *empty) EXPECT_EQ(ShapeOf(part), Ints{0});
  // Axis 0 by default; parts large enough to be copied over the pool.
  ThreadPool pool(4);
  NDArray x = RandomBits({300, 257}, DType::kF32, rng);
  const Ints sizes = {0, 101, 0, 199};
  auto out = RunKernel("dyn.split", {}, {x, IndexVector(sizes, DType::kI64)}, {}, 4, &pool);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectParts(*out, x, 0, sizes);
  auto cols = RunKernel("dyn.split", {{"axis", int64_t{-1}}},
                        {x, IndexVector({7, 250}, DType::kI32)}, {}, 2, &pool);
  ASSERT_TRUE(cols.ok()) << cols.status();
  ExpectParts(*cols, x, 1, {7, 250});
}

TEST(DynSplitTest, Errors) {
  NDArray x = EmptyTensor({4, 6}, DType::kF32);
  const Attrs axis1 = {{"axis", int64_t{1}}};
  EXPECT_INVALID(RunKernel("dyn.split", axis1, {x, IndexVector({2, 4}, DType::kI64)}, {}, 3),
                 "dyn.split: sizes [2, 4] has 2 values: expected one per output, 3");
  EXPECT_INVALID(RunKernel("dyn.split", axis1, {x, IndexVector({7, -1}, DType::kI64)}, {}, 2),
                 "dyn.split: sizes [7, -1] has the negative size -1: expected sizes >= 0");
  EXPECT_INVALID(RunKernel("dyn.split", axis1, {x, IndexVector({2, 3}, DType::kI32)}, {}, 2),
                 "dyn.split: sizes [2, 3] sum to 5: expected the extent 6 of axis 1 of [4, 6]");
  const int64_t big = int64_t{1} << 62;
  EXPECT_INVALID(
      RunKernel("dyn.split", axis1, {x, IndexVector({big, big, big}, DType::kI64)}, {}, 3),
      "sum to more than int64 holds: expected the extent 6");
  EXPECT_INVALID(
      RunKernel("dyn.split", {{"axis", int64_t{2}}}, {x, IndexVector({4}, DType::kI64)}, {}, 1),
      "dyn.split: axis 2 out of range for rank 2");
  EXPECT_INVALID(RunKernel("dyn.split", {},
                           {EmptyTensor({}, DType::kF32), IndexVector({1}, DType::kI64)}, {}, 1),
                 "dyn.split: input must have rank >= 1");
  EXPECT_INVALID(RunKernel("dyn.split", {}, {x, TensorOf<float>({2}, {2, 2})}, {}, 2),
                 "unsupported dtype f32 for dyn.split sizes: expected i32 or i64");
  EXPECT_INVALID(RunKernel("dyn.split", {}, {x, TensorOf<int64_t>({1, 1}, {4})}, {}, 1),
                 "dyn.split: sizes must be 1-D, got shape [1, 1]");
  EXPECT_INVALID(RunKernel("dyn.split", {{"indices_or_sections", int64_t{2}}},
                           {x, IndexVector({2, 2}, DType::kI64)}, {}, 2),
                 "unknown attribute 'indices_or_sections'");
  // Outputs must have the parts' shapes and the input's dtype.
  const NDArray sizes = IndexVector({1, 3}, DType::kI64);
  EXPECT_INVALID(CallKernel("dyn.split", {}, {x, sizes},
                            {EmptyTensor({1, 6}, DType::kF32), EmptyTensor({2, 6}, DType::kF32)}),
                 "dyn.split: output 1 has shape [2, 6], expected [3, 6]");
  EXPECT_INVALID(CallKernel("dyn.split", {}, {x, sizes},
                            {EmptyTensor({1, 6}, DType::kI32), EmptyTensor({3, 6}, DType::kF32)}),
                 "dyn.split: output 0 has dtype i32, expected f32");
}

}  // namespace
}  // namespace dynvm::kernels::testing
