// Tests of nn.attention (kernels/nn/attention.cc) against a naive attention written here
// (scores, softmax and the weighted sum of values, in double, one query at a time), on
// random sizes including 0 and 1 extents, every mask broadcast pattern, an explicit
// scale, score rows long enough to split queries into several blocks, and its errors;
// each case in both layouts ("BHSD", and "BSHD" on the same tensors with heads and
// sequence swapped).
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

}  // namespace
}  // namespace dynvm::kernels::testing
