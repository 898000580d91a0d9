// Tests of the layout transforms (kernels/data_movement/transform.cc) — reshape, dyn.reshape,
// squeeze, dyn.squeeze, expand_dims, dyn.expand_dims, transpose, broadcast_to,
// dyn.broadcast_to, tile, dyn.split — against plain references written here (an output
// element's source computed from its multi-index), on seeded random shapes with 0- and
// 1-sized extents, for one dtype of every element size. Every call goes through
// RunKernel, so the shape functions are exercised too.
//
// Tolerances: none; data movement must reproduce elements bit for bit.
#include "kernels/data_movement/transform.h"

#include <algorithm>
#include <numeric>
#include <random>
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

// A kernel whose output holds the input's elements in order.
void ExpectSameElements(const NDArray& out, const Ints& shape, const NDArray& in) {
  ExpectGathered(out, shape, in, [](int64_t i) { return i; });
}

// ---------------------------------------------------------------------------------------
// reshape

struct ReshapeCase {
  Ints in, newshape, out;
};

TEST(ReshapeTest, SpecialValues) {
  const ReshapeCase cases[] = {
      {{2, 3, 4}, {6, 4}, {6, 4}},
      {{2, 3, 4}, {-1}, {24}},
      {{2, 3, 4}, {0, -1}, {2, 12}},
      {{2, 3, 4}, {-1, 0}, {8, 3}},  // 0 copies the extent at its position
      {{2, 3, 4}, {0, 0, 0}, {2, 3, 4}},
      {{2, 3, 4}, {4, -1, 2}, {4, 3, 2}},
      {{2, 3, 4}, {-2}, {2, 3, 4}},  // copy the rest
      {{2, 3, 4}, {0, -2}, {2, 3, 4}},
      {{2, 3, 4}, {-3, 4}, {6, 4}},  // merge two
      {{2, 3, 4}, {0, -3}, {2, 12}},
      {{2, 12}, {0, -4, 3, -1}, {2, 3, 4}},  // split one
      {{2, 12}, {-4, 1, 2, -2}, {1, 2, 12}},
      {{0, 12, 64}, {0, -1}, {0, 768}},  // -1 ignores the copied 0 extent
      {{}, {1, 1}, {1, 1}},
      {{1, 1}, {}, {}},
      {{5}, {-1, 1}, {5, 1}},
      {{0, 3}, {3, -1}, {3, 0}},
  };
  std::mt19937 rng(1);
  for (const ReshapeCase& c : cases) {
    SCOPED_TRACE(
        absl::StrFormat("%s -> [%s]", ShapeToString(c.in), absl::StrJoin(c.newshape, ",")));
    for (DType dtype : kOnePerSize) {
      NDArray x = RandomBits(c.in, dtype, rng);
      auto out = RunKernel("reshape", {{"newshape", c.newshape}}, {x});
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectSameElements((*out)[0], c.out, x);
      // The same through dyn.reshape, the shape as i64 and as i32.
      auto dyn64 =
          RunKernel("dyn.reshape", {},
                    {x, TensorOf<int64_t>({static_cast<int64_t>(c.newshape.size())}, c.newshape)});
      ASSERT_TRUE(dyn64.ok()) << dyn64.status();
      ExpectSameElements((*dyn64)[0], c.out, x);
      std::vector<int32_t> shape32(c.newshape.begin(), c.newshape.end());
      auto dyn32 =
          RunKernel("dyn.reshape", {},
                    {x, TensorOf<int32_t>({static_cast<int64_t>(shape32.size())}, shape32)});
      ASSERT_TRUE(dyn32.ok()) << dyn32.status();
      ExpectSameElements((*dyn32)[0], c.out, x);
    }
  }
}

TEST(ReshapeTest, AllowZeroMakesZeroLiteral) {
  NDArray x = EmptyTensor({0, 4}, DType::kF32);
  auto out = RunKernel("reshape", {{"newshape", Ints{4, 0}}, {"allowzero", int64_t{1}}}, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ShapeOf((*out)[0]), (Ints{4, 0}));
}

TEST(ReshapeTest, RandomShapesAllDTypes) {
  std::mt19937 rng(2);
  for (int iter = 0; iter < 40; ++iter) {
    const Ints in = RandomShape(rng, static_cast<int>(rng() % 5));
    // A random regrouping of the same elements: the reversed extents, one of them -1
    // (0s literal: allowzero).
    Ints newshape(in.rbegin(), in.rend());
    if (!newshape.empty() && NumElements(in) != 0) newshape[rng() % newshape.size()] = -1;
    Ints expected(in.rbegin(), in.rend());
    for (DType dtype : kAllDTypes) {
      NDArray x = RandomBits(in, dtype, rng);
      auto out = RunKernel("reshape", {{"newshape", newshape}, {"allowzero", int64_t{1}}}, {x});
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectSameElements((*out)[0], expected, x);
    }
  }
}

TEST(ReshapeTest, Errors) {
  NDArray x = EmptyTensor({2, 3}, DType::kF32);
  EXPECT_INVALID(RunKernel("reshape", {{"newshape", Ints{4, 2}}}, {x}),
                 "reshape: cannot reshape [2, 3] into [4, 2]: 6 elements vs 8");
  EXPECT_INVALID(RunKernel("reshape", {{"newshape", Ints{-1, -1}}}, {x}), "more than one -1");
  EXPECT_INVALID(RunKernel("reshape", {{"newshape", Ints{-1, 4}}}, {x}), "-1 has no exact extent");
  EXPECT_INVALID(RunKernel("reshape", {{"newshape", Ints{0, 0, 0}}}, {x}),
                 "0 past the input's rank");
  EXPECT_INVALID(RunKernel("reshape", {{"newshape", Ints{-5}}}, {x}),
                 "unsupported special value -5");
  EXPECT_INVALID(RunKernel("reshape", {{"newshape", Ints{-4, 4, -1}}}, {x}),
                 "-4 values do not multiply");
  EXPECT_INVALID(RunKernel("reshape", {}, {x}), "missing int list attribute 'newshape'");
  EXPECT_INVALID(RunKernel("reshape", {{"newshape", Ints{6}}, {"shape", Ints{6}}}, {x}),
                 "unknown attribute 'shape'");
  EXPECT_INVALID(RunKernel("reshape", {{"newshape", Ints{6}}}, {x, x}),
                 "kernel 'reshape' takes 1 inputs and 1 outputs, not 2 and 1");
  // The output must have the inferred shape and the input's dtype.
  EXPECT_INVALID(
      CallKernel("reshape", {{"newshape", Ints{6}}}, {x}, {EmptyTensor({3, 2}, DType::kF32)}),
      "reshape: output 0 has shape [3, 2], expected [6]");
  EXPECT_INVALID(
      CallKernel("reshape", {{"newshape", Ints{6}}}, {x}, {EmptyTensor({6}, DType::kI32)}),
      "reshape: output 0 has dtype i32, expected f32");
  // dyn.reshape's shape tensor.
  EXPECT_INVALID(RunKernel("dyn.reshape", {}, {x, TensorOf<float>({2}, {3, 2})}),
                 "unsupported dtype f32 for dyn.reshape shape: expected i32 or i64");
  EXPECT_INVALID(RunKernel("dyn.reshape", {}, {x, TensorOf<int64_t>({1, 2}, {3, 2})}),
                 "dyn.reshape: shape must be 1-D, got shape [1, 2]");
  EXPECT_INVALID(RunKernel("dyn.reshape", {}, {x, TensorOf<int64_t>({1}, {7})}),
                 "dyn.reshape: cannot reshape [2, 3] into [7]");
}

// ---------------------------------------------------------------------------------------
// squeeze, expand_dims

TEST(SqueezeTest, AllOrGivenAxes) {
  std::mt19937 rng(3);
  NDArray x = RandomBits({1, 3, 1, 1, 2}, DType::kI16, rng);
  struct Case {
    Attrs attrs;
    Ints out;
  } cases[] = {
      {{}, {3, 2}},
      {{{"axis", Ints{0}}}, {3, 1, 1, 2}},
      {{{"axis", Ints{-2, 2}}}, {1, 3, 2}},
      {{{"axis", Ints{}}}, {1, 3, 1, 1, 2}},
  };
  for (const Case& c : cases) {
    auto out = RunKernel("squeeze", c.attrs, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectSameElements((*out)[0], c.out, x);
  }
  auto scalar = RunKernel("squeeze", {}, {RandomBits({1, 1}, DType::kF64, rng)});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(ShapeOf((*scalar)[0]), Ints{});
  auto empty = RunKernel("squeeze", {}, {RandomBits({0, 1}, DType::kF64, rng)});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(ShapeOf((*empty)[0]), Ints{0});
  EXPECT_INVALID(RunKernel("squeeze", {{"axis", Ints{1}}}, {x}),
                 "squeeze: axis 1 of [1, 3, 1, 1, 2] has extent 3, not 1");
  EXPECT_INVALID(RunKernel("squeeze", {{"axis", Ints{5}}}, {x}),
                 "squeeze: axis 5 out of range for rank 5");
  EXPECT_INVALID(RunKernel("squeeze", {{"axis", int64_t{0}}}, {x}),
                 "attribute 'axis' must be an int list");
}

TEST(ExpandDimsTest, Positions) {
  std::mt19937 rng(4);
  NDArray x = RandomBits({2, 3}, DType::kF32, rng);
  struct Case {
    int64_t axis, num;
    Ints out;
  } cases[] = {
      {0, 1, {1, 2, 3}},  {1, 1, {2, 1, 3}},       {2, 1, {2, 3, 1}}, {-1, 1, {2, 3, 1}},
      {-3, 1, {1, 2, 3}}, {1, 3, {2, 1, 1, 1, 3}}, {1, 0, {2, 3}},
  };
  for (const Case& c : cases) {
    auto out = RunKernel("expand_dims", {{"axis", c.axis}, {"num_newaxis", c.num}}, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectSameElements((*out)[0], c.out, x);
  }
  auto scalar = RunKernel("expand_dims", {{"axis", int64_t{0}}}, {RandomBits({}, DType::kU8, rng)});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(ShapeOf((*scalar)[0]), Ints{1});
  EXPECT_INVALID(RunKernel("expand_dims", {{"axis", int64_t{3}}}, {x}),
                 "expand_dims: axis 3 out of range for rank 3");
  EXPECT_INVALID(
      RunKernel("expand_dims", {{"axis", int64_t{0}}, {"num_newaxis", int64_t{-1}}}, {x}),
      "attribute 'num_newaxis' is -1");
  EXPECT_INVALID(
      RunKernel("expand_dims", {{"axis", int64_t{0}}, {"num_newaxis", int64_t{15}}}, {x}),
      "exceeds the maximum rank 16");
  EXPECT_INVALID(RunKernel("expand_dims", {}, {x}), "missing int attribute 'axis'");
}

// ---------------------------------------------------------------------------------------
// dyn.squeeze, dyn.expand_dims

TEST(DynSqueezeTest, GivenAxesAnyOrder) {
  std::mt19937 rng(20);
  struct Case {
    Ints in, axes, out;
  } cases[] = {
      {{1, 3, 1, 1, 2}, {0}, {3, 1, 1, 2}},
      {{1, 3, 1, 1, 2}, {-2, 2}, {1, 3, 2}},   // negative counts from the input's end
      {{1, 3, 1, 1, 2}, {3, 0, -3}, {3, 2}},   // unsorted
      {{1, 3, 1, 1, 2}, {}, {1, 3, 1, 1, 2}},  // nothing, unlike squeeze without axis
      {{1}, {0}, {}},
      {{0, 1}, {-1}, {0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrFormat("%s axes [%s]", ShapeToString(c.in), absl::StrJoin(c.axes, ",")));
    for (DType dtype : kOnePerSize) {
      NDArray x = RandomBits(c.in, dtype, rng);
      for (DType index : {DType::kI64, DType::kI32}) {
        auto out = RunKernel("dyn.squeeze", {}, {x, IndexVector(c.axes, index)});
        ASSERT_TRUE(out.ok()) << out.status();
        ExpectSameElements((*out)[0], c.out, x);
      }
    }
  }
}

TEST(DynSqueezeTest, Errors) {
  NDArray x = EmptyTensor({1, 3, 1, 1, 2}, DType::kF32);
  EXPECT_INVALID(RunKernel("dyn.squeeze", {}, {x, IndexVector({0, 1}, DType::kI64)}),
                 "dyn.squeeze: axis 1 of [1, 3, 1, 1, 2] has extent 3, not 1");
  EXPECT_INVALID(RunKernel("dyn.squeeze", {}, {x, IndexVector({-4}, DType::kI32)}),
                 "dyn.squeeze: axis -4 of [1, 3, 1, 1, 2] has extent 3, not 1");
  EXPECT_INVALID(RunKernel("dyn.squeeze", {}, {x, IndexVector({5}, DType::kI64)}),
                 "dyn.squeeze: axis 5 out of range for rank 5");
  EXPECT_INVALID(RunKernel("dyn.squeeze", {}, {x, IndexVector({-6}, DType::kI64)}),
                 "dyn.squeeze: axis -6 out of range for rank 5");
  EXPECT_INVALID(RunKernel("dyn.squeeze", {}, {x, IndexVector({2, -3}, DType::kI64)}),
                 "dyn.squeeze: axes [2, -3] name axis 2 twice: expected distinct axes of rank 5");
  EXPECT_INVALID(RunKernel("dyn.squeeze", {}, {x, TensorOf<float>({1}, {0})}),
                 "unsupported dtype f32 for dyn.squeeze axes: expected i32 or i64");
  EXPECT_INVALID(RunKernel("dyn.squeeze", {}, {x, TensorOf<int64_t>({1, 1}, {0})}),
                 "dyn.squeeze: axes must be 1-D, got shape [1, 1]");
  EXPECT_INVALID(RunKernel("dyn.squeeze", {{"axis", Ints{0}}}, {x, IndexVector({0}, DType::kI64)}),
                 "kernel 'dyn.squeeze' takes no attributes, got 'axis'");
  EXPECT_INVALID(CallKernel("dyn.squeeze", {}, {x, IndexVector({0}, DType::kI64)},
                            {EmptyTensor({3, 2}, DType::kF32)}),
                 "dyn.squeeze: output 0 has shape [3, 2], expected [3, 1, 1, 2]");
}

TEST(DynExpandDimsTest, GivenAxesAnyOrder) {
  std::mt19937 rng(21);
  struct Case {
    Ints in, axes, out;
  };
  // Negative axes count from the output's end; their order does not matter.
  const Case cases[] = {
      {{2, 3}, {0}, {1, 2, 3}},
      {{2, 3}, {2}, {2, 3, 1}},
      {{2, 3}, {-1}, {2, 3, 1}},
      {{2, 3}, {-4, 1}, {1, 1, 2, 3}},
      {{2, 3}, {4, 0, 2}, {1, 2, 1, 3, 1}},
      {{2, 3}, {3, 1}, {2, 1, 3, 1}},
      {{2, 3}, {}, {2, 3}},
      {{}, {0, -1}, {1, 1}},
      {{0, 4}, {1}, {0, 1, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrFormat("%s axes [%s]", ShapeToString(c.in), absl::StrJoin(c.axes, ",")));
    for (DType dtype : kOnePerSize) {
      NDArray x = RandomBits(c.in, dtype, rng);
      for (DType index : {DType::kI64, DType::kI32}) {
        auto out = RunKernel("dyn.expand_dims", {}, {x, IndexVector(c.axes, index)});
        ASSERT_TRUE(out.ok()) << out.status();
        ExpectSameElements((*out)[0], c.out, x);
      }
    }
  }
}

TEST(DynExpandDimsTest, Errors) {
  NDArray x = EmptyTensor({2, 3}, DType::kF32);
  // Axes are positions in the output, of rank 2 + len(axes).
  EXPECT_INVALID(RunKernel("dyn.expand_dims", {}, {x, IndexVector({3}, DType::kI64)}),
                 "dyn.expand_dims: axis 3 out of range for rank 3");
  EXPECT_INVALID(RunKernel("dyn.expand_dims", {}, {x, IndexVector({0, -5}, DType::kI32)}),
                 "dyn.expand_dims: axis -5 out of range for rank 4");
  EXPECT_INVALID(
      RunKernel("dyn.expand_dims", {}, {x, IndexVector({1, -3}, DType::kI64)}),
      "dyn.expand_dims: axes [1, -3] name axis 1 twice: expected distinct axes of rank 4");
  EXPECT_INVALID(RunKernel("dyn.expand_dims", {}, {x, IndexVector(Ints(15, 0), DType::kI64)}),
                 "dyn.expand_dims: rank 2 plus 15 new axes exceeds the maximum rank 16");
  EXPECT_INVALID(RunKernel("dyn.expand_dims", {}, {x, TensorOf<double>({1}, {0})}),
                 "unsupported dtype f64 for dyn.expand_dims axes: expected i32 or i64");
  EXPECT_INVALID(RunKernel("dyn.expand_dims", {}, {x, TensorOf<int64_t>({}, {0})}),
                 "dyn.expand_dims: axes must be 1-D, got shape []");
  EXPECT_INVALID(CallKernel("dyn.expand_dims", {}, {x, IndexVector({0}, DType::kI64)},
                            {EmptyTensor({1, 2, 3}, DType::kI32)}),
                 "dyn.expand_dims: output 0 has dtype i32, expected f32");
}

// ---------------------------------------------------------------------------------------
// transpose

// out[i] = in[j] where out index (a_0..a_n) is in index with a_k at axis perm[k].
std::function<int64_t(int64_t)> TransposeSource(const Ints& in, const Ints& perm) {
  Ints out;
  for (int64_t p : perm) out.push_back(in[p]);
  return [=](int64_t i) {
    const Ints oi = Unravel(i, out);
    Ints ii(in.size());
    for (size_t k = 0; k < perm.size(); ++k) ii[perm[k]] = oi[k];
    return Ravel(ii, in);
  };
}

void CheckTranspose(std::mt19937& rng, const Ints& in, const Ints& perm, DType dtype,
                    ThreadPool* pool = nullptr) {
  SCOPED_TRACE(absl::StrFormat("%s perm [%s] %s", ShapeToString(in), absl::StrJoin(perm, ","),
                               DTypeName(dtype)));
  NDArray x = RandomBits(in, dtype, rng);
  auto out = RunKernel("transpose", {{"axes", perm}}, {x}, {}, 1, pool);
  ASSERT_TRUE(out.ok()) << out.status();
  Ints shape;
  for (int64_t p : perm) shape.push_back(in[p]);
  ExpectGathered((*out)[0], shape, x, TransposeSource(in, perm));
}

TEST(TransposeTest, RandomPermutations) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = static_cast<int>(rng() % 6);
    const Ints in = RandomShape(rng, rank, 7);
    Ints perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (DType dtype : kOnePerSize) CheckTranspose(rng, in, perm, dtype);
  }
}

TEST(TransposeTest, BlockedAndRowPathsOnLargeShapes) {
  std::mt19937 rng(6);
  ThreadPool pool(4);
  // 2-D transposes not a multiple of the block, batched ones, the BERT head split (rows
  // stay contiguous), a moved unit-stride axis with others around it, rows longer than
  // one work item (a tall thin transpose, an identity merged into one run).
  const std::pair<Ints, Ints> cases[] = {
      {{67, 131}, {1, 0}},           {{3, 33, 65}, {0, 2, 1}},       {{12, 38, 64}, {1, 0, 2}},
      {{5, 7, 9, 11}, {3, 1, 2, 0}}, {{2, 40, 3, 40}, {0, 3, 2, 1}}, {{1, 300, 1, 2}, {3, 2, 1, 0}},
      {{40000, 3}, {1, 0}},          {{3, 20000, 2}, {0, 1, 2}},     {{9, 17000}, {1, 0}},
  };
  for (const auto& [in, perm] : cases) {
    for (DType dtype : kOnePerSize) CheckTranspose(rng, in, perm, dtype, &pool);
  }
}

TEST(TransposeTest, DefaultReversesAndNegativeAxes) {
  std::mt19937 rng(7);
  NDArray x = RandomBits({2, 3, 4}, DType::kF32, rng);
  auto reversed = RunKernel("transpose", {}, {x});
  ASSERT_TRUE(reversed.ok());
  ExpectGathered((*reversed)[0], {4, 3, 2}, x, TransposeSource({2, 3, 4}, {2, 1, 0}));
  auto negative = RunKernel("transpose", {{"axes", Ints{-1, 0, -2}}}, {x});
  ASSERT_TRUE(negative.ok());
  ExpectGathered((*negative)[0], {4, 2, 3}, x, TransposeSource({2, 3, 4}, {2, 0, 1}));
}

TEST(TransposeTest, Errors) {
  NDArray x = EmptyTensor({2, 3}, DType::kF32);
  EXPECT_INVALID(RunKernel("transpose", {{"axes", Ints{0, 0}}}, {x}),
                 "transpose: axes [0, 0] are not a permutation of the 2 axes of the input");
  EXPECT_INVALID(RunKernel("transpose", {{"axes", Ints{0}}}, {x}), "not a permutation");
  EXPECT_INVALID(RunKernel("transpose", {{"axes", Ints{0, 2}}}, {x}), "not a permutation");
  EXPECT_INVALID(RunKernel("transpose", {{"perm", Ints{1, 0}}}, {x}), "unknown attribute 'perm'");
  EXPECT_INVALID(CallKernel("transpose", {}, {x}, {EmptyTensor({2, 3}, DType::kF32)}),
                 "transpose: output 0 has shape [2, 3], expected [3, 2]");
}

// ---------------------------------------------------------------------------------------
// broadcast_to, tile

// Source of output element i when `in` is broadcast (numpy rules) to `out`.
std::function<int64_t(int64_t)> BroadcastSource(const Ints& in, const Ints& out) {
  return [=](int64_t i) {
    const Ints oi = Unravel(i, out);
    Ints ii(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      ii[k] = in[k] == 1 ? 0 : oi[out.size() - in.size() + k];
    }
    return Ravel(ii, in);
  };
}

TEST(BroadcastToTest, RandomShapes) {
  std::mt19937 rng(8);
  for (int iter = 0; iter < 50; ++iter) {
    const Ints out = RandomShape(rng, static_cast<int>(rng() % 5));
    Ints in(out.begin() + static_cast<int64_t>(rng() % (out.size() + 1)), out.end());
    for (int64_t& d : in) {
      if (rng() % 2) d = 1;
    }
    for (DType dtype : kOnePerSize) {
      NDArray x = RandomBits(in, dtype, rng);
      auto st = RunKernel("broadcast_to", {{"shape", out}}, {x});
      ASSERT_TRUE(st.ok()) << st.status();
      ExpectGathered((*st)[0], out, x, BroadcastSource(in, out));
      auto dyn = RunKernel("dyn.broadcast_to", {},
                           {x, TensorOf<int64_t>({static_cast<int64_t>(out.size())}, out)});
      ASSERT_TRUE(dyn.ok()) << dyn.status();
      ExpectGathered((*dyn)[0], out, x, BroadcastSource(in, out));
    }
  }
}

TEST(BroadcastToTest, LargeWithPool) {
  std::mt19937 rng(9);
  ThreadPool pool(4);
  for (const auto& [in, out] :
       {std::pair<Ints, Ints>{{768}, {384, 768}}, std::pair<Ints, Ints>{{384, 1}, {384, 333}},
        std::pair<Ints, Ints>{{7, 1, 5}, {3, 7, 100, 5}},
        std::pair<Ints, Ints>{{}, {50000}},  // one long fill
        std::pair<Ints, Ints>{{1, 1}, {3, 40000}}}) {
    NDArray x = RandomBits(in, DType::kF32, rng);
    auto r = RunKernel("broadcast_to", {{"shape", out}}, {x}, {}, 1, &pool);
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectGathered((*r)[0], out, x, BroadcastSource(in, out));
  }
}

TEST(BroadcastToTest, Errors) {
  NDArray x = EmptyTensor({2, 3}, DType::kF32);
  EXPECT_INVALID(RunKernel("broadcast_to", {{"shape", Ints{4, 3}}}, {x}),
                 "broadcast_to: shape [2, 3] does not broadcast to [4, 3]");
  EXPECT_INVALID(RunKernel("broadcast_to", {{"shape", Ints{3}}}, {x}), "does not broadcast to [3]");
  EXPECT_INVALID(RunKernel("broadcast_to", {{"shape", Ints{-1, 3}}}, {x}),
                 "attribute 'shape': negative dimension");
  EXPECT_INVALID(RunKernel("dyn.broadcast_to", {}, {x, TensorOf<int64_t>({2}, {1, 3})}),
                 "dyn.broadcast_to: shape [2, 3] does not broadcast to [1, 3]");
  EXPECT_INVALID(RunKernel("dyn.broadcast_to", {}, {x, TensorOf<int32_t>({2}, {-2, 3})}),
                 "dyn.broadcast_to: negative dimension in shape [-2, 3]");
  EXPECT_INVALID(RunKernel("dyn.broadcast_to", {}, {x, TensorOf<bool>({2}, {true, true})}),
                 "unsupported dtype bool for dyn.broadcast_to shape: expected i32 or i64");
}

TEST(TileTest, RandomReps) {
  std::mt19937 rng(10);
  for (int iter = 0; iter < 50; ++iter) {
    const Ints in = RandomShape(rng, static_cast<int>(rng() % 4), 4);
    Ints reps(rng() % 5);
    for (int64_t& r : reps) r = static_cast<int64_t>(rng() % 4);
    // numpy: both padded on the left with 1s to a common rank.
    const size_t rank = std::max(in.size(), reps.size());
    Ints pin(rank - in.size(), 1), preps(rank - reps.size(), 1);
    pin.insert(pin.end(), in.begin(), in.end());
    preps.insert(preps.end(), reps.begin(), reps.end());
    Ints out(rank);
    for (size_t i = 0; i < rank; ++i) out[i] = pin[i] * preps[i];
    for (DType dtype : kOnePerSize) {
      NDArray x = RandomBits(in, dtype, rng);
      // tile, and dyn.tile with the repetitions as an input read at run time.
      const NDArray reps_input = TensorOf<int64_t>({static_cast<int64_t>(reps.size())}, reps);
      for (auto r : {RunKernel("tile", {{"reps", reps}}, {x}), RunKernel("dyn.tile", {}, {x, reps_input}, {dtype})}) {
        ASSERT_TRUE(r.ok()) << r.status();
        ExpectGathered((*r)[0], out, x, [&](int64_t i) {
          Ints oi = Unravel(i, out);
          for (size_t k = 0; k < rank; ++k) oi[k] %= pin[k];
          return Ravel(oi, pin);
        });
      }
    }
  }
}

TEST(TileTest, Errors) {
  NDArray x = EmptyTensor({2, 3}, DType::kF32);
  EXPECT_INVALID(RunKernel("tile", {{"reps", Ints{2, -1}}}, {x}),
                 "tile: reps [2, -1] has a negative value");
  EXPECT_INVALID(RunKernel("dyn.tile", {}, {x, TensorOf<int64_t>({2}, {2, -1})}, {DType::kF32}),
                 "dyn.tile: reps [2, -1] has a negative value");
  EXPECT_INVALID(RunKernel("dyn.tile", {}, {x, TensorOf<float>({2}, {2, 1})}, {DType::kF32}),
                 "reps");
  EXPECT_INVALID(RunKernel("dyn.tile", {}, {x, TensorOf<int64_t>({1, 2}, {2, 1})}, {DType::kF32}),
                 "dyn.tile: reps must be 1-D, got shape [1, 2]");
  EXPECT_INVALID(RunKernel("tile", {}, {x}), "missing int list attribute 'reps'");
  EXPECT_INVALID(RunKernel("tile", {{"reps", Ints{int64_t{1} << 62, 4}}}, {x}),
                 "tile: [2, 3] repeated");
}

// ---------------------------------------------------------------------------------------
// dyn.split

// Empty tensors whose other extents multiply past int64: nothing may overflow (this
// binary runs under UBSan) and the outputs are empty.
TEST(TransformTest, EmptyTensorsWithHugeExtents) {
  const int64_t huge = int64_t{1} << 40;
  NDArray x = EmptyTensor({0, huge, huge}, DType::kF32);
  for (const auto& [name, attrs] : std::vector<std::pair<const char*, Attrs>>{
           {"transpose", {{"axes", Ints{0, 2, 1}}}},
           {"reshape", {{"newshape", Ints{huge, 0, huge}}, {"allowzero", int64_t{1}}}},
           {"squeeze", {}},
           {"expand_dims", {{"axis", int64_t{1}}}},
           {"broadcast_to", {{"shape", Ints{2, 0, huge, huge}}}},
           {"tile", {{"reps", Ints{2, 1, 1}}}}}) {
    auto r = RunKernel(name, attrs, {x});
    ASSERT_TRUE(r.ok()) << name << ": " << r.status();
    EXPECT_EQ((*r)[0]->num_elements(), 0) << name;
  }
  // The dyn.* forms likewise.
  auto squeezed = RunKernel(
      "dyn.squeeze", {}, {EmptyTensor({0, 1, huge}, DType::kF32), IndexVector({1}, DType::kI64)});
  ASSERT_TRUE(squeezed.ok()) << squeezed.status();
  EXPECT_EQ(ShapeOf((*squeezed)[0]), (Ints{0, huge}));
  auto expanded = RunKernel("dyn.expand_dims", {}, {x, IndexVector({-1, 0}, DType::kI64)});
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ(ShapeOf((*expanded)[0]), (Ints{1, 0, huge, huge, 1}));
  auto parts = RunKernel("dyn.split", {{"axis", int64_t{2}}},
                         {x, IndexVector({1, huge - 1}, DType::kI64)}, {}, 2);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(ShapeOf((*parts)[1]), (Ints{0, huge, huge - 1}));
  // Reversed, the extents overflow before the 0 (ShapeNumElements takes them in order).
  EXPECT_INVALID(RunKernel("transpose", {}, {x}), "transpose: element count of shape");
}

}  // namespace
}  // namespace dynvm::kernels::testing
