// Tests of nn.attention (kernels/nn/attention.cc) against a naive attention written here
// (scores, softmax and the weighted sum of values, in double, one query at a time), on
// random sizes including 0 and 1 extents, every mask broadcast pattern, an explicit
// scale, score rows long enough to split queries into several blocks, and its errors;
// each case in both layouts ("BHSD", and "BSHD" on the same tensors with heads and
// sequence swapped). nn.varlen_attention (packed sequences of any lengths, 0 to 512, in
// any mix) against the same naive attention of each sequence alone, and against
// nn.attention of each sequence alone, which runs the same float code: 1e-6 absolute.
//
// Tolerance: with q, k, v in [-1, 1] the scores carry float GEMM rounding of about
// head_dim * eps, the softmax a few eps relative, and the output sums seq_k products of
// probabilities and values: 2e-5 absolute plus 1e-4 relative covers it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

struct Dims {
  int64_t batch, heads, seq_q, seq_k, head_dim, value_dim;
};

// Element of a mask of `shape` (right-aligned broadcasting) at [b, h, i, j].
double MaskAt(const std::vector<double>& mask, const std::vector<int64_t>& shape, int64_t b,
              int64_t h, int64_t i, int64_t j) {
  const int64_t index[4] = {b, h, i, j};
  int64_t flat = 0;
  const size_t lead = 4 - shape.size();
  for (size_t k = 0; k < shape.size(); ++k) {
    flat = flat * shape[k] + (shape[k] == 1 ? 0 : index[lead + k]);
  }
  return mask[flat];
}

std::vector<double> NaiveAttention(const Dims& d, const std::vector<double>& q,
                                   const std::vector<double>& k, const std::vector<double>& v,
                                   const std::vector<double>* mask,
                                   const std::vector<int64_t>& mask_shape, double scale) {
  std::vector<double> out(d.batch * d.heads * d.seq_q * d.value_dim, 0.0);
  std::vector<double> p(d.seq_k);
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      const int64_t bh = b * d.heads + h;
      for (int64_t i = 0; i < d.seq_q; ++i) {
        double max = -INFINITY;
        for (int64_t j = 0; j < d.seq_k; ++j) {
          double s = 0;
          for (int64_t t = 0; t < d.head_dim; ++t) {
            s += q[(bh * d.seq_q + i) * d.head_dim + t] * k[(bh * d.seq_k + j) * d.head_dim + t];
          }
          p[j] = s * scale + (mask ? MaskAt(*mask, mask_shape, b, h, i, j) : 0.0);
          max = std::max(max, p[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < d.seq_k; ++j) sum += p[j] = std::exp(p[j] - max);
        for (int64_t j = 0; j < d.seq_k; ++j) {
          for (int64_t t = 0; t < d.value_dim; ++t) {
            out[(bh * d.seq_q + i) * d.value_dim + t] +=
                p[j] / sum * v[(bh * d.seq_k + j) * d.value_dim + t];
          }
        }
      }
    }
  }
  return out;
}

// Values of a [d0, d1, d2, d3] tensor (row-major) with axes 1 and 2 swapped.
template <typename T>
std::vector<T> SwapAxes12(const std::vector<T>& x, int64_t d0, int64_t d1, int64_t d2,
                          int64_t d3) {
  std::vector<T> y(x.size());
  for (int64_t a = 0; a < d0; ++a) {
    for (int64_t b = 0; b < d1; ++b) {
      for (int64_t c = 0; c < d2; ++c) {
        for (int64_t e = 0; e < d3; ++e) {
          y[((a * d2 + c) * d1 + b) * d3 + e] = x[((a * d1 + b) * d2 + c) * d3 + e];
        }
      }
    }
  }
  return y;
}

// q, k or v [batch, heads, seq, dim] as layout "BSHD" takes it: [batch, seq, heads, dim].
NDArray SeqMajor(const NDArray& x) {
  const Shape& s = x->shape();
  std::vector<float> values(x->data_as<float>(), x->data_as<float>() + x->num_elements());
  return TensorOf<float>({s[0], s[2], s[1], s[3]}, SwapAxes12(values, s[0], s[1], s[2], s[3]));
}

// Runs nn.attention on random q, k, v (and a mask of `mask_shape` if given) and compares
// with the naive attention, in both layouts.
void CheckAttention(std::mt19937& rng, const Dims& d, const std::vector<int64_t>* mask_shape,
                    const double* scale = nullptr) {
  SCOPED_TRACE(::testing::Message()
               << "b " << d.batch << " h " << d.heads << " sq " << d.seq_q << " sk " << d.seq_k
               << " d " << d.head_dim << " dv " << d.value_dim << " mask "
               << (mask_shape ? ShapeToString(*mask_shape) : "none"));
  std::vector<NDArray> inputs = {
      RandomTensor({d.batch, d.heads, d.seq_q, d.head_dim}, DType::kF32, rng),
      RandomTensor({d.batch, d.heads, d.seq_k, d.head_dim}, DType::kF32, rng),
      RandomTensor({d.batch, d.heads, d.seq_k, d.value_dim}, DType::kF32, rng)};
  std::vector<double> mask;
  if (mask_shape != nullptr) {
    inputs.push_back(RandomTensor(*mask_shape, DType::kF32, rng, -3.0, 3.0));
    mask = Values(inputs.back());
  }
  Attrs attrs;
  if (scale != nullptr) attrs["scale"] = *scale;
  absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.attention", attrs, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  const double s = scale ? *scale : d.head_dim > 0 ? 1 / std::sqrt(double(d.head_dim)) : 1.0;
  const std::vector<double> expected =
      NaiveAttention(d, Values(inputs[0]), Values(inputs[1]), Values(inputs[2]),
                     mask_shape ? &mask : nullptr,
                     mask_shape ? *mask_shape : std::vector<int64_t>{}, s);
  ExpectClose((*out)[0], expected, 2e-5, 1e-4);

  SCOPED_TRACE("layout BSHD");
  for (int i = 0; i < 3; ++i) inputs[i] = SeqMajor(inputs[i]);
  attrs["layout"] = std::string("BSHD");
  out = RunKernel("nn.attention", attrs, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectClose((*out)[0], SwapAxes12(expected, d.batch, d.heads, d.seq_q, d.value_dim), 2e-5,
              1e-4);
}

int64_t SmallExtent(std::mt19937& rng, int64_t max) {
  const int64_t r = RandomInt(rng, 0, 9);
  return r == 0 ? 0 : r < 3 ? 1 : RandomInt(rng, 2, max);
}

TEST(AttentionTest, RandomSizesWithoutMask) {
  std::mt19937 rng(31);
  for (int iter = 0; iter < 60; ++iter) {
    const Dims d{SmallExtent(rng, 2),  SmallExtent(rng, 3),  SmallExtent(rng, 20),
                 SmallExtent(rng, 20), SmallExtent(rng, 17), RandomInt(rng, 1, 17)};
    CheckAttention(rng, d, nullptr);
  }
}

TEST(AttentionTest, EveryMaskBroadcast) {
  std::mt19937 rng(32);
  const Dims d{2, 3, 5, 9, 8, 8};
  const std::vector<std::vector<int64_t>> masks = {
      {},           {9},          {5, 9},       {1, 9},      {2, 1, 1, 9},
      {1, 3, 5, 9}, {2, 3, 5, 9}, {2, 3, 5, 1}, {3, 1, 9},   {1, 1, 1, 1},
      {2, 1, 5, 9}, {5, 1},       {1, 1, 5, 9}, {1, 3, 1, 1}};
  for (const std::vector<int64_t>& mask : masks) CheckAttention(rng, d, &mask);
}

TEST(AttentionTest, ExplicitScale) {
  std::mt19937 rng(33);
  for (double scale : {0.0, 0.5, 2.0, -1.0}) {
    const std::vector<int64_t> mask = {1, 1, 4, 6};
    CheckAttention(rng, {1, 2, 4, 6, 5, 3}, &mask, &scale);
  }
}

TEST(AttentionTest, SeveralQueryBlocksPerHead) {
  // Score blocks hold 32K floats: seq_k = 3000 gives blocks of 10 query rows.
  std::mt19937 rng(34);
  const std::vector<int64_t> mask = {1, 2, 1, 3000};
  CheckAttention(rng, {1, 2, 23, 3000, 4, 3}, &mask);
  CheckAttention(rng, {2, 1, 33, 1500, 2, 2}, nullptr);
}

TEST(AttentionTest, BertHead) {
  std::mt19937 rng(35);
  const std::vector<int64_t> mask = {1, 1, 1, 64};
  CheckAttention(rng, {1, 4, 64, 64, 64, 64}, &mask);
}

TEST(AttentionTest, PaddingMaskWithNegativeInfinity) {
  // Keys masked with -inf get probability 0: the output is the mean of the unmasked values
  // when the scores are equal (q = 0).
  const float inf = std::numeric_limits<float>::infinity();
  NDArray q = TensorOf<float>({1, 1, 1, 2}, {0, 0});
  NDArray k = TensorOf<float>({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6});
  NDArray v = TensorOf<float>({1, 1, 3, 1}, {1, 10, 100});
  NDArray mask = TensorOf<float>({3}, {0, -inf, 0});
  absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.attention", {}, {q, k, v, mask});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectClose((*out)[0], {50.5}, 1e-5, 1e-6);
}

TEST(AttentionTest, Errors) {
  NDArray q = Empty({1, 2, 3, 4}), k = Empty({1, 2, 5, 4}), v = Empty({1, 2, 5, 6});
  ExpectInvalid(RunKernel("nn.attention", {}, {Empty({2, 3, 4}), k, v}),
                "nn.attention: q must have rank 4 [batch, heads, seq, dim], got shape [2, 3, 4]");
  ExpectInvalid(RunKernel("nn.attention", {}, {q, Empty({1, 3, 5, 4}), v}),
                "nn.attention: q [1, 2, 3, 4], k [1, 3, 5, 4] and v [1, 2, 5, 6] do not fit");
  ExpectInvalid(RunKernel("nn.attention", {}, {q, k, Empty({1, 2, 4, 6})}), "do not fit");
  ExpectInvalid(RunKernel("nn.attention", {}, {q, Empty({1, 2, 5, 3}), v}), "do not fit");
  ExpectInvalid(RunKernel("nn.attention", {}, {q, k, v, Empty({2, 5})}),
                "nn.attention: mask shape [2, 5] does not broadcast to the scores' shape "
                "[1, 2, 3, 5]");
  ExpectInvalid(RunKernel("nn.attention", {}, {q, k, v, Empty({1, 1, 1, 1, 5})}),
                "does not broadcast");
  ExpectInvalid(RunKernel("nn.attention", {}, {q, k, v, Empty({5}, DType::kBool)}),
                "unsupported dtype bool for nn.attention mask: expected f32");
  ExpectInvalid(RunKernel("nn.attention", {}, {q, k}),
                "nn.attention takes 3 or 4 inputs (q, k, v and an optional mask), got 2");
  ExpectInvalid(RunKernel("nn.attention", {}, {q, k, v, v, v}), "takes 3 or 4 inputs");
  const double inf = std::numeric_limits<double>::infinity();
  ExpectInvalid(RunKernel("nn.attention", {{"scale", inf}}, {q, k, v}),
                "attribute 'scale' must be finite, got inf");
  ExpectInvalid(RunKernel("nn.attention", {{"causal", int64_t{1}}}, {q, k, v}),
                "unknown attribute 'causal'");
  ExpectInvalid(CallWithOutputs("nn.attention", {}, {q, k, v}, {Empty({1, 2, 3, 4})}),
                "nn.attention: output 0 has shape [1, 2, 3, 4], expected [1, 2, 3, 6]");
  ExpectInvalid(RunKernel("nn.attention", {{"layout", std::string("BHDS")}}, {q, k, v}),
                "attribute 'layout' must be \"BHSD\" or \"BSHD\", got \"BHDS\"");
  // BSHD: q [1, 2, 3, 4] has 3 heads of 4 over 2 positions; k [1, 2, 5, 4] 5 heads.
  const Attrs bshd = {{"layout", std::string("BSHD")}};
  ExpectInvalid(RunKernel("nn.attention", bshd, {q, k, v}),
                "nn.attention: q [1, 2, 3, 4], k [1, 2, 5, 4] and v [1, 2, 5, 6] do not fit: "
                "expected k [1, seq_k, 3, 4] and v [1, seq_k, 3, value_dim]");
  ExpectInvalid(RunKernel("nn.attention", bshd, {Empty({2, 3, 4}), k, v}),
                "q must have rank 4 [batch, seq, heads, dim]");
  ExpectInvalid(CallWithOutputs("nn.attention", bshd, {q, Empty({1, 7, 3, 4}), Empty({1, 7, 3, 6})},
                                {Empty({1, 3, 2, 6})}),
                "nn.attention: output 0 has shape [1, 3, 2, 6], expected [1, 2, 3, 6]");
}

// Rows [begin, begin + len) of a [tokens, heads, dim] tensor's values, as nn.attention's
// BHSD q, k or v of one sequence: [1, heads, len, dim].
std::vector<double> SequenceHeads(const std::vector<double>& x, int64_t begin, int64_t len,
                                  int64_t heads, int64_t dim) {
  const std::vector<double> rows(x.begin() + begin * heads * dim,
                                 x.begin() + (begin + len) * heads * dim);
  return SwapAxes12(rows, 1, len, heads, dim);
}

// Runs nn.varlen_attention on random q, k, v packing sequences of `lengths` and compares
// each sequence's rows with the naive attention of that sequence alone, and with
// nn.attention (layout BSHD, batch 1) of it.
void CheckVarlen(std::mt19937& rng, const std::vector<int64_t>& lengths, int64_t heads,
                 int64_t head_dim, int64_t value_dim, DType offsets_dtype = DType::kI64) {
  SCOPED_TRACE(::testing::Message() << "lengths " << ShapeToString(lengths) << " h " << heads
                                    << " d " << head_dim << " dv " << value_dim);
  std::vector<int64_t> offsets = {0};
  for (int64_t len : lengths) offsets.push_back(offsets.back() + len);
  const int64_t tokens = offsets.back();
  const NDArray q = RandomTensor({tokens, heads, head_dim}, DType::kF32, rng);
  const NDArray k = RandomTensor({tokens, heads, head_dim}, DType::kF32, rng);
  const NDArray v = RandomTensor({tokens, heads, value_dim}, DType::kF32, rng);
  const int64_t n = static_cast<int64_t>(offsets.size());
  const NDArray offsets_tensor =
      offsets_dtype == DType::kI32
          ? TensorOf<int32_t>({n}, std::vector<int32_t>(offsets.begin(), offsets.end()))
          : TensorOf<int64_t>({n}, offsets);
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel("nn.varlen_attention", {}, {q, k, v, offsets_tensor});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0]->shape(), (Shape{tokens, heads, value_dim}));
  const std::vector<double> qv = Values(q), kv = Values(k), vv = Values(v), got = Values((*out)[0]);
  for (size_t s = 0; s < lengths.size(); ++s) {
    const int64_t begin = offsets[s], len = lengths[s];
    if (len == 0) continue;
    SCOPED_TRACE(::testing::Message() << "sequence " << s << " of length " << len);
    const Dims d{1, heads, len, len, head_dim, value_dim};
    const std::vector<double> expected = SwapAxes12(
        NaiveAttention(d, SequenceHeads(qv, begin, len, heads, head_dim),
                       SequenceHeads(kv, begin, len, heads, head_dim),
                       SequenceHeads(vv, begin, len, heads, value_dim), nullptr, {},
                       1 / std::sqrt(double(head_dim))),
        1, heads, len, value_dim);
    const int64_t row = heads * value_dim;
    const NDArray rows = TensorOf<float>(
        {len, heads, value_dim}, std::vector<float>((*out)[0]->data_as<float>() + begin * row,
                                                    (*out)[0]->data_as<float>() + (begin + len) * row));
    ExpectClose(rows, expected, 2e-5, 1e-4);

    auto slice = [&](const NDArray& x, int64_t dim) {
      const float* data = x->data_as<float>() + begin * heads * dim;
      return TensorOf<float>({1, len, heads, dim}, std::vector<float>(data, data + len * heads * dim));
    };
    absl::StatusOr<std::vector<NDArray>> alone =
        RunKernel("nn.attention", {{"layout", std::string("BSHD")}},
                  {slice(q, head_dim), slice(k, head_dim), slice(v, value_dim)});
    ASSERT_TRUE(alone.ok()) << alone.status();
    ExpectClose(rows, Values((*alone)[0]), 1e-6, 0.0);
  }
}

TEST(VarlenAttentionTest, MixesOfLengths) {
  std::mt19937 rng(36);
  CheckVarlen(rng, {1}, 2, 8, 8);
  CheckVarlen(rng, {5}, 3, 4, 6, DType::kI32);
  CheckVarlen(rng, {1, 512, 3}, 2, 16, 16);
  CheckVarlen(rng, {0, 7, 0, 0, 33, 0}, 2, 8, 5);
  CheckVarlen(rng, {64, 64, 64}, 4, 64, 64);
  for (int iter = 0; iter < 4; ++iter) {
    std::vector<int64_t> lengths(RandomInt(rng, 1, 6));
    for (int64_t& len : lengths) len = RandomInt(rng, 1, 9) < 3 ? RandomInt(rng, 1, 4) : RandomInt(rng, 1, 300);
    CheckVarlen(rng, lengths, RandomInt(rng, 1, 3), RandomInt(rng, 1, 20), RandomInt(rng, 1, 20),
                iter % 2 == 0 ? DType::kI64 : DType::kI32);
  }
}

TEST(VarlenAttentionTest, NoSequencesOrNoTokens) {
  const NDArray empty = Empty({0, 2, 4});
  for (const std::vector<int64_t>& offsets : {std::vector<int64_t>{0}, {0, 0, 0}}) {
    absl::StatusOr<std::vector<NDArray>> out = RunKernel(
        "nn.varlen_attention", {},
        {empty, empty, empty, TensorOf<int64_t>({static_cast<int64_t>(offsets.size())}, offsets)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0]->shape(), (Shape{0, 2, 4}));
  }
}

TEST(VarlenAttentionTest, ExplicitScale) {
  // One key: the output is its value whatever the scale; two equal keys' values averaged.
  NDArray q = TensorOf<float>({3, 1, 1}, {1, 2, 3});
  NDArray v = TensorOf<float>({3, 1, 1}, {10, 20, 30});
  NDArray offsets = TensorOf<int64_t>({3}, {0, 1, 3});
  NDArray k = TensorOf<float>({3, 1, 1}, {5, 0, 0});
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel("nn.varlen_attention", {{"scale", 3.0}}, {q, k, v, offsets});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectClose((*out)[0], {10, 25, 25}, 1e-5, 1e-6);
}

TEST(VarlenAttentionTest, Errors) {
  NDArray x = Empty({5, 2, 4}), v = Empty({5, 2, 3});
  NDArray offsets = TensorOf<int64_t>({3}, {0, 2, 5});
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, x, v}),
                "kernel 'nn.varlen_attention' takes 4 inputs and 1 outputs, not 3 and 1");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {Empty({1, 5, 2, 4}), x, v, offsets}),
                "nn.varlen_attention: q must have rank 3 [tokens, heads, dim], got shape [1, 5, 2, 4]");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, Empty({5, 2, 3}), v, offsets}),
                "nn.varlen_attention: q [5, 2, 4], k [5, 2, 3] and v [5, 2, 3] do not fit: "
                "expected k [5, 2, 4] and v [5, 2, value_dim]");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, x, Empty({4, 2, 3}), offsets}), "do not fit");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, x, v, Empty({3})}),
                "unsupported dtype f32 for nn.varlen_attention offsets");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, x, v, TensorOf<int64_t>({1, 2}, {0, 5})}),
                "nn.varlen_attention: offsets must have rank 1 [sequences + 1], got shape [1, 2]");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, x, v, TensorOf<int64_t>({2}, {1, 5})}),
                "nn.varlen_attention: offsets[0] is 1, expected 0");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, x, v, TensorOf<int64_t>({3}, {0, 3, 2})}),
                "nn.varlen_attention: offsets[2] is 2 after 3: expected offsets rising to 5 (the tokens)");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, x, v, TensorOf<int32_t>({3}, {0, 9, 5})}),
                "offsets[1] is 9 after 0");
  ExpectInvalid(RunKernel("nn.varlen_attention", {}, {x, x, v, TensorOf<int64_t>({2}, {0, 4})}),
                "nn.varlen_attention: the last offset is 4, expected 5 (the tokens)");
  ExpectInvalid(RunKernel("nn.varlen_attention", {{"layout", std::string("BSHD")}}, {x, x, v, offsets}),
                "unknown attribute 'layout'");
  ExpectInvalid(CallWithOutputs("nn.varlen_attention", {}, {x, x, v, offsets}, {Empty({5, 2, 4})}),
                "nn.varlen_attention: output 0 has shape [5, 2, 4], expected [5, 2, 3]");
}

}  // namespace
}  // namespace dynvm::kernels::testing
