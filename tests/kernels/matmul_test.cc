// Tests of the matrix-multiply kernels (kernels/gemm/matmul.cc) — nn.dense, nn.matmul /
// matmul, nn.batch_matmul, gemm, layout_transform and nn.contrib_dense_pack — against a plain reference written here (double
// precision, one output element at a time, batch broadcasting by index arithmetic), on
// seeded random shapes with 0- and 1-sized extents, 1-D operands, broadcast batch dims,
// transposes, every epilogue, in place residuals and 1 or 2 threads; and their errors.
//
// Tolerance, relative to the magnitudes summed: a float sum of k products differs from
// the exact one by at most k u S (u = 2^-24, S = sum_p |a_ip| |b_pj|). We allow
// 1.2 * (k + 4) * 2u * |alpha| * S (twice the bound, times 1.2 for the activations, whose
// slope is at most 1.13) plus 2e-6 * (1 + |expected|) for the vectorised activations and
// the final roundings of the bias and residual additions.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

double Activate(const std::string& activation, double x) {
  if (activation == "relu") return x > 0 ? x : 0;
  if (activation == "gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (activation == "gelu_tanh") {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

// What a reference computes: the values and their tolerances.
struct Expected {
  std::vector<double> values, tolerances;
  void Add(double dot, double magnitude, int64_t k, double alpha, double bias,
           const std::string& activation, double residual) {
    const double v = Activate(activation, alpha * dot + bias) + residual;
    values.push_back(v);
    tolerances.push_back(1.2 * (k + 4) * 2 * std::ldexp(1.0, -24) * std::fabs(alpha) * magnitude +
                         2e-6 * (1 + std::fabs(v)));
  }
};

// A matrix operand as the reference reads it: element (r, c) of batch `batch` of a
// [batch..., rows, cols] tensor, through an optional transpose.
struct Operand {
  std::vector<double> v;
  std::vector<int64_t> shape;  // at least 2-D (1-D operands promoted by the caller)
  bool transpose = false;
  int64_t rows() const { return shape[shape.size() - (transpose ? 1 : 2)]; }
  int64_t cols() const { return shape[shape.size() - (transpose ? 2 : 1)]; }
  // `out_batch` is an index into the broadcast batch shape `batch_shape`.
  double At(const std::vector<int64_t>& batch_shape, int64_t out_batch, int64_t r, int64_t c) const {
    const size_t own = shape.size() - 2;
    int64_t offset = 0, stride = 1;
    for (size_t i = batch_shape.size(); i-- > 0;) {  // numpy broadcasting, by hand
      const int64_t index = out_batch % batch_shape[i];
      out_batch /= batch_shape[i];
      const size_t from_end = batch_shape.size() - 1 - i;
      if (from_end >= own) continue;
      const int64_t dim = shape[own - 1 - from_end];
      offset += (dim == 1 ? 0 : index) * stride;
      stride *= dim;
    }
    const int64_t stored_rows = shape[own], stored_cols = shape[own + 1];
    const int64_t sr = transpose ? c : r, sc = transpose ? r : c;
    return v[(offset * stored_rows + sr) * stored_cols + sc];
  }
};

// out[batch, i, j] = sum_p a[batch, i, p] b[batch, p, j], over the broadcast batch.
Expected ReferenceMatmul(const Operand& a, const Operand& b,
                         const std::vector<int64_t>& batch_shape, double alpha = 1,
                         const std::vector<double>* bias = nullptr,
                         const std::string& activation = "none",
                         const std::vector<double>* residual = nullptr) {
  Expected e;
  const int64_t m = a.rows(), k = a.cols(), n = b.cols();
  for (int64_t batch = 0; batch < NumElements(batch_shape); ++batch) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = a.At(batch_shape, batch, i, p), y = b.At(batch_shape, batch, p, j);
          dot += x * y;
          magnitude += std::fabs(x * y);
        }
        e.Add(dot, magnitude, k, alpha, bias ? (*bias)[j] : 0, activation,
              residual ? (*residual)[(batch * m + i) * n + j] : 0);
      }
    }
  }
  return e;
}

std::vector<int64_t> ShapeOf(const NDArray& t) { return {t->shape().begin(), t->shape().end()}; }

// ---------------------------------------------------------------------------------------
// nn.dense

TEST(DenseTest, MatchesReferenceOnRandomShapes) {
  std::mt19937 rng(1);
  ThreadPool two(2);
  const char* const kActivations[] = {"none", "relu", "gelu", "gelu_tanh"};
  for (int iter = 0; iter < 60; ++iter) {
    const int rank = static_cast<int>(RandomInt(rng, 1, 3));
    std::vector<int64_t> x_shape;
    for (int i = 0; i + 1 < rank; ++i) x_shape.push_back(RandomInt(rng, 0, 5));
    const int64_t k = RandomInt(rng, 0, 40), n = RandomInt(rng, 0, 37);
    x_shape.push_back(k);
    const NDArray x = RandomTensor(x_shape, DType::kF32, rng);
    const NDArray w = RandomTensor({n, k}, DType::kF32, rng);
    const NDArray bias = RandomTensor({n}, DType::kF32, rng);
    const bool with_bias = (iter / 4) % 2 == 0;  // every activation with and without
    const std::string activation = kActivations[iter % 4];
    SCOPED_TRACE(::testing::Message() << ShapeToString(x->shape()) << " n=" << n << " bias="
                                      << with_bias << " " << activation);
    std::vector<NDArray> inputs = {x, w};
    if (with_bias) inputs.push_back(bias);
    absl::StatusOr<std::vector<NDArray>> out =
        RunKernel("nn.dense", {{"activation", activation}, {"units", n}}, inputs, {}, 1,
                  iter % 3 == 0 ? &two : nullptr);
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<int64_t> want_shape = x_shape;
    want_shape.back() = n;
    EXPECT_EQ(ShapeOf((*out)[0]), want_shape);
    // x as [rows, k] against w transposed.
    const std::vector<int64_t> leading(x_shape.begin(), x_shape.end() - 1);
    const Operand a{Values(x), {NumElements(leading), k}};
    const Operand b{Values(w), {n, k}, /*transpose=*/true};
    const std::vector<double> bias_values = Values(bias);
    const Expected e = ReferenceMatmul(a, b, {}, 1, with_bias ? &bias_values : nullptr, activation);
    ExpectClose((*out)[0], e.values, e.tolerances);
  }
}

TEST(DenseTest, BertSizedLayerOnTwoThreads) {
  std::mt19937 rng(2);
  ThreadPool two(2);
  const NDArray x = RandomTensor({2, 37, 96}, DType::kF32, rng);
  const NDArray w = RandomTensor({200, 96}, DType::kF32, rng);
  const NDArray bias = RandomTensor({200}, DType::kF32, rng);
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel("nn.dense", {{"activation", "gelu"}}, {x, w, bias}, {}, 1, &two);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> bias_values = Values(bias);
  const Expected e = ReferenceMatmul({Values(x), {74, 96}}, {Values(w), {200, 96}, true}, {}, 1,
                                     &bias_values, "gelu");
  ExpectClose((*out)[0], e.values, e.tolerances);
}

TEST(DenseTest, Errors) {
  std::mt19937 rng(3);
  const NDArray x = RandomTensor({4, 8}, DType::kF32, rng);
  const NDArray w = RandomTensor({5, 8}, DType::kF32, rng);
  ExpectInvalid(RunKernel("nn.dense", {}, {RandomTensor({4, 8}, DType::kF64, rng), w}),
                "unsupported dtype f64 for nn.dense data: expected f32");
  ExpectInvalid(RunKernel("nn.dense", {}, {x, RandomTensor({5, 8}, DType::kI32, rng)}),
                "unsupported dtype i32 for nn.dense weight: expected f32");
  ExpectInvalid(RunKernel("nn.dense", {}, {x, RandomTensor({5, 7}, DType::kF32, rng)}),
                "nn.dense: inner dimensions differ: [4, 8] and [5, 7] give k = 8 and 7");
  ExpectInvalid(RunKernel("nn.dense", {}, {x, RandomTensor({5, 8, 1}, DType::kF32, rng)}),
                "nn.dense: weight has shape [5, 8, 1], expected [units, k]");
  ExpectInvalid(RunKernel("nn.dense", {}, {RandomTensor({}, DType::kF32, rng), w}),
                "nn.dense: data has rank 0, expected at least 1");
  ExpectInvalid(RunKernel("nn.dense", {}, {x, w, RandomTensor({4}, DType::kF32, rng)}),
                "nn.dense: bias has shape [4], expected [5]");
  ExpectInvalid(RunKernel("nn.dense", {}, {x}), "nn.dense takes 2 or 3 inputs");
  ExpectInvalid(RunKernel("nn.dense", {}, {x, w, w, w}), "nn.dense takes 2 or 3 inputs");
  ExpectInvalid(RunKernel("nn.dense", {{"units", 6}}, {x, w}),
                "nn.dense: attribute units is 6 but the weight gives 5");
  ExpectInvalid(RunKernel("nn.dense", {{"activation", "tanh"}}, {x, w}),
                "attribute 'activation' must be none, relu, gelu or gelu_tanh, got 'tanh'");
  ExpectInvalid(RunKernel("nn.dense", {{"activation", 1}}, {x, w}), "activation");
  ExpectInvalid(RunKernel("nn.dense", {{"out_dtype", "float16"}}, {x, w}),
                "attribute 'out_dtype' must be f32, got 'float16'");
  ExpectInvalid(RunKernel("nn.dense", {{"unit", 5}}, {x, w}), "unknown attribute 'unit'");
  ExpectInvalid(CallWithOutputs("nn.dense", {}, {x, w}, {Empty({4, 6})}),
                "nn.dense: output 0 has shape [4, 6], expected [4, 5]");
  ExpectInvalid(CallWithOutputs("nn.dense", {}, {x, w}, {Empty({4, 5}, DType::kF64)}),
                "unsupported dtype f64 for nn.dense output: expected f32");
}

// ---------------------------------------------------------------------------------------
// layout_transform (NC -> NC16n) and nn.contrib_dense_pack

const Attrs kPackAttrs = {{"src_layout", "NC"}, {"dst_layout", "NC16n"}};

// layout_transform's output element by element: [ceil(n / 16), k, 16], out[q, p, r] =
// w[16 q + r, p], zeros past n.
TEST(LayoutTransformTest, PacksDenseWeightsIntoNC16n) {
  std::mt19937 rng(7);
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {16, 3}, {37, 20}, {0, 5}, {5, 0}}) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " k=" << k);
    const NDArray w = RandomTensor({n, k}, DType::kF32, rng);
    absl::StatusOr<std::vector<NDArray>> out = RunKernel("layout_transform", kPackAttrs, {w});
    ASSERT_TRUE(out.ok()) << out.status();
    const int64_t panels = (n + 15) / 16;
    ASSERT_EQ(ShapeOf((*out)[0]), (std::vector<int64_t>{panels, k, 16}));
    const std::vector<double> got = Values((*out)[0]), want_w = Values(w);
    for (int64_t q = 0; q < panels; ++q) {
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t r = 0; r < 16; ++r) {
          const int64_t row = 16 * q + r;
          ASSERT_EQ(got[(q * k + p) * 16 + r], row < n ? want_w[row * k + p] : 0.0)
              << q << ", " << p << ", " << r;
        }
      }
    }
  }
}

// nn.contrib_dense_pack on a packed weight computes what nn.dense computes on the
// weight, with every epilogue, for row counts on both GEMM paths (few rows, tiles).
TEST(DensePackTest, MatchesDenseOnTheUnpackedWeight) {
  std::mt19937 rng(8);
  ThreadPool two(2);
  const char* const kActivations[] = {"none", "relu", "gelu", "gelu_tanh"};
  for (int iter = 0; iter < 40; ++iter) {
    std::vector<int64_t> x_shape;
    if (iter % 2 == 0) x_shape.push_back(RandomInt(rng, 0, 3));
    x_shape.push_back(iter % 5 == 0 ? RandomInt(rng, 1, 7) : RandomInt(rng, 0, 30));
    const int64_t k = RandomInt(rng, 0, 40), n = RandomInt(rng, 1, 50);
    x_shape.push_back(k);
    const NDArray x = RandomTensor(x_shape, DType::kF32, rng);
    const NDArray w = RandomTensor({n, k}, DType::kF32, rng);
    const NDArray bias = RandomTensor({n}, DType::kF32, rng);
    const bool with_bias = (iter / 4) % 2 == 0;
    const std::string activation = kActivations[iter % 4];
    SCOPED_TRACE(::testing::Message() << ShapeToString(x->shape()) << " n=" << n << " bias="
                                      << with_bias << " " << activation);
    absl::StatusOr<std::vector<NDArray>> packed = RunKernel("layout_transform", kPackAttrs, {w});
    ASSERT_TRUE(packed.ok()) << packed.status();
    std::vector<NDArray> inputs = {x, (*packed)[0]};
    if (with_bias) inputs.push_back(bias);
    absl::StatusOr<std::vector<NDArray>> out =
        RunKernel("nn.contrib_dense_pack", {{"activation", activation}, {"units", n}}, inputs,
                  {}, 1, iter % 3 == 0 ? &two : nullptr);
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<int64_t> want_shape = x_shape;
    want_shape.back() = n;
    EXPECT_EQ(ShapeOf((*out)[0]), want_shape);
    const std::vector<int64_t> leading(x_shape.begin(), x_shape.end() - 1);
    const std::vector<double> bias_values = Values(bias);
    const Expected e = ReferenceMatmul({Values(x), {NumElements(leading), k}},
                                       {Values(w), {n, k}, /*transpose=*/true}, {}, 1,
                                       with_bias ? &bias_values : nullptr, activation);
    ExpectClose((*out)[0], e.values, e.tolerances);
  }
}

// Without `units`, the output has every column of the panels (the padding's are zeros).
TEST(DensePackTest, UnitsDefaultToAllPanelColumns) {
  std::mt19937 rng(9);
  const NDArray x = RandomTensor({3, 4}, DType::kF32, rng);
  const NDArray w = RandomTensor({20, 4}, DType::kF32, rng);
  absl::StatusOr<std::vector<NDArray>> packed = RunKernel("layout_transform", kPackAttrs, {w});
  ASSERT_TRUE(packed.ok()) << packed.status();
  absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.contrib_dense_pack", {}, {x, (*packed)[0]});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(ShapeOf((*out)[0]), (std::vector<int64_t>{3, 32}));
  const std::vector<double> got = Values((*out)[0]);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 20; j < 32; ++j) EXPECT_EQ(got[i * 32 + j], 0.0) << i << ", " << j;
  }
}

TEST(DensePackTest, Errors) {
  std::mt19937 rng(10);
  const NDArray x = RandomTensor({4, 8}, DType::kF32, rng);
  const NDArray w = RandomTensor({2, 8, 16}, DType::kF32, rng);  // 17 to 32 units
  ExpectInvalid(RunKernel("layout_transform", {{"src_layout", "NCHW"}, {"dst_layout", "NCHW8c"}},
                          {x}),
                "layout_transform: only src_layout=\"NC\" dst_layout=\"NC16n\" (packing a "
                "dense weight) is supported, got src_layout=\"NCHW\" dst_layout=\"NCHW8c\"");
  ExpectInvalid(RunKernel("layout_transform", {{"src_layout", "NC"}}, {x}), "dst_layout");
  ExpectInvalid(RunKernel("layout_transform", kPackAttrs, {w}),
                "layout_transform: data has shape [2, 8, 16], expected [N, C] for layout NC");
  ExpectInvalid(RunKernel("layout_transform", kPackAttrs, {RandomTensor({4, 8}, DType::kI64, rng)}),
                "unsupported dtype i64 for layout_transform data: expected f32");
  ExpectInvalid(RunKernel("nn.contrib_dense_pack", {}, {x, RandomTensor({5, 8}, DType::kF32, rng)}),
                "nn.contrib_dense_pack: weight has shape [5, 8], expected [ceil(units / 16), k, "
                "16] (layout NC16n)");
  ExpectInvalid(RunKernel("nn.contrib_dense_pack", {}, {x, RandomTensor({2, 8, 8}, DType::kF32, rng)}),
                "weight has shape [2, 8, 8]");
  ExpectInvalid(RunKernel("nn.contrib_dense_pack", {}, {x, RandomTensor({2, 7, 16}, DType::kF32, rng)}),
                "nn.contrib_dense_pack: inner dimensions differ: [4, 8] and [2, 7, 16] give k = 8 and 7");
  ExpectInvalid(RunKernel("nn.contrib_dense_pack", {{"units", 16}}, {x, w}),
                "nn.contrib_dense_pack: attribute units is 16 but the packed weight [2, 8, 16] "
                "holds 17 to 32");
  ExpectInvalid(RunKernel("nn.contrib_dense_pack", {{"units", 20}},
                          {x, w, RandomTensor({32}, DType::kF32, rng)}),
                "nn.contrib_dense_pack: bias has shape [32], expected [20]");
  ExpectInvalid(RunKernel("nn.contrib_dense_pack", {{"weight_layout", "NC8n"}}, {x, w}),
                "nn.contrib_dense_pack: attribute 'weight_layout' must be \"NC16n\", got \"NC8n\"");
  ExpectInvalid(RunKernel("nn.contrib_dense_pack", {}, {x}),
                "nn.contrib_dense_pack takes 2 or 3 inputs");
  ExpectInvalid(RunKernel("nn.contrib_dense_pack", {}, {RandomTensor({4, 8}, DType::kF64, rng), w}),
                "unsupported dtype f64 for nn.contrib_dense_pack data: expected f32");
  ExpectInvalid(CallWithOutputs("nn.contrib_dense_pack", {{"units", 20}}, {x, w}, {Empty({4, 32})}),
                "nn.contrib_dense_pack: output 0 has shape [4, 32], expected [4, 20]");
}

// ---------------------------------------------------------------------------------------
// nn.matmul, matmul and nn.batch_matmul

// Runs `op` on a and b and compares with the reference; 1-D operands are promoted as
// numpy does and their axes removed from the expected shape.
void CheckMatmul(const std::string& op, const std::vector<int64_t>& a_shape,
                 const std::vector<int64_t>& b_shape, bool ta, bool tb, std::mt19937& rng,
                 ThreadPool* pool = nullptr) {
  SCOPED_TRACE(::testing::Message() << op << " " << ShapeToString(a_shape) << " x "
                                    << ShapeToString(b_shape) << " ta=" << ta << " tb=" << tb);
  const NDArray a = RandomTensor(a_shape, DType::kF32, rng);
  const NDArray b = RandomTensor(b_shape, DType::kF32, rng);
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel(op, {{"transpose_a", ta}, {"transpose_b", tb}}, {a, b}, {}, 1, pool);
  ASSERT_TRUE(out.ok()) << out.status();
  Operand oa{Values(a), a_shape, ta}, ob{Values(b), b_shape, tb};
  if (a_shape.size() == 1) oa.shape = {1, a_shape[0]};
  if (b_shape.size() == 1) ob.shape = {b_shape[0], 1};
  // The broadcast batch shape, by hand.
  std::vector<int64_t> batch;
  const size_t ba = oa.shape.size() - 2, bb = ob.shape.size() - 2;
  for (size_t i = 0; i < std::max(ba, bb); ++i) {
    const int64_t da = i < ba ? oa.shape[ba - 1 - i] : 1, db = i < bb ? ob.shape[bb - 1 - i] : 1;
    batch.insert(batch.begin(), da == 1 ? db : da);
  }
  std::vector<int64_t> want_shape = batch;
  if (a_shape.size() > 1) want_shape.push_back(oa.rows());
  if (b_shape.size() > 1) want_shape.push_back(ob.cols());
  EXPECT_EQ(ShapeOf((*out)[0]), want_shape);
  const Expected e = ReferenceMatmul(oa, ob, batch);
  ExpectClose((*out)[0], e.values, e.tolerances);
}

TEST(MatmulTest, NumpySemantics) {
  std::mt19937 rng(4);
  for (const std::string op : {"matmul", "nn.matmul"}) {
    CheckMatmul(op, {5, 7}, {7, 3}, false, false, rng);
    CheckMatmul(op, {7}, {7, 3}, false, false, rng);           // row vector: [3]
    CheckMatmul(op, {5, 7}, {7}, false, false, rng);           // column vector: [5]
    CheckMatmul(op, {7}, {7}, false, false, rng);              // dot: a scalar
    CheckMatmul(op, {4, 1, 5, 7}, {3, 7, 2}, false, false, rng);  // batch [4, 3]
    CheckMatmul(op, {7}, {2, 7, 3}, false, false, rng);        // [2, 3]
    CheckMatmul(op, {2, 3, 5, 7}, {7}, false, false, rng);     // [2, 3, 5]
    CheckMatmul(op, {2, 7, 5}, {2, 3, 7}, true, true, rng);
    CheckMatmul(op, {0, 5, 7}, {7, 3}, false, false, rng);     // empty batch
    CheckMatmul(op, {5, 0}, {0, 3}, false, false, rng);        // k = 0: zeros
    CheckMatmul(op, {1, 1}, {1, 1}, false, false, rng);
  }
}

TEST(MatmulTest, RandomShapesAndBatchPaths) {
  std::mt19937 rng(5);
  ThreadPool two(2);
  for (int iter = 0; iter < 60; ++iter) {
    const int batch_rank = static_cast<int>(RandomInt(rng, 0, 2));
    std::vector<int64_t> a_shape, b_shape;
    for (int i = 0; i < batch_rank; ++i) {
      const int64_t d = RandomInt(rng, 0, 3);
      a_shape.push_back(RandomInt(rng, 0, 1) ? d : 1);
      b_shape.push_back(RandomInt(rng, 0, 1) ? d : 1);
    }
    if (RandomInt(rng, 0, 2) == 0 && !b_shape.empty()) b_shape.erase(b_shape.begin());
    const int64_t m = RandomInt(rng, 0, 20), k = RandomInt(rng, 0, 20), n = RandomInt(rng, 0, 20);
    const bool ta = RandomInt(rng, 0, 1), tb = RandomInt(rng, 0, 1);
    a_shape.insert(a_shape.end(), {ta ? k : m, ta ? m : k});
    b_shape.insert(b_shape.end(), {tb ? n : k, tb ? k : n});
    CheckMatmul("nn.matmul", a_shape, b_shape, ta, tb, rng, iter % 2 ? &two : nullptr);
  }
  // A shared weight (folded into one product), and many small products (parallel over
  // the batch), on two threads.
  CheckMatmul("matmul", {3, 50, 64}, {64, 70}, false, false, rng, &two);
  CheckMatmul("nn.batch_matmul", {24, 30, 16}, {24, 30, 16}, false, true, rng, &two);
  CheckMatmul("nn.batch_matmul", {2, 12, 40, 16}, {2, 12, 40, 16}, true, false, rng, &two);
}

TEST(BatchMatmulTest, RelayDefaultsAndBroadcast) {
  std::mt19937 rng(6);
  const NDArray a = RandomTensor({3, 4, 5}, DType::kF32, rng);
  const NDArray b = RandomTensor({1, 6, 5}, DType::kF32, rng);  // [batch, n, k]
  absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.batch_matmul", {}, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ShapeOf((*out)[0]), (std::vector<int64_t>{3, 4, 6}));
  const Expected e =
      ReferenceMatmul({Values(a), {3, 4, 5}}, {Values(b), {1, 6, 5}, true}, {3});
  ExpectClose((*out)[0], e.values, e.tolerances);
  CheckMatmul("nn.batch_matmul", {2, 4, 5}, {2, 5, 6}, false, false, rng);
}

TEST(MatmulTest, Errors) {
  std::mt19937 rng(7);
  const NDArray a = RandomTensor({2, 4, 5}, DType::kF32, rng);
  const NDArray b = RandomTensor({3, 5, 6}, DType::kF32, rng);
  ExpectInvalid(RunKernel("matmul", {}, {a, b}),
                "matmul: batch dimensions of [2, 4, 5] and [3, 5, 6] do not broadcast");
  ExpectInvalid(RunKernel("nn.matmul", {}, {a, RandomTensor({4, 6}, DType::kF32, rng)}),
                "nn.matmul: inner dimensions differ: [2, 4, 5] and [4, 6] give k = 5 and 4");
  ExpectInvalid(RunKernel("matmul", {}, {RandomTensor({5}, DType::kI64, rng), b}),
                "unsupported dtype i64 for matmul a: expected f32");
  ExpectInvalid(RunKernel("matmul", {}, {a, RandomTensor({}, DType::kF32, rng)}),
                "matmul: b has rank 0, expected at least 1");
  ExpectInvalid(RunKernel("matmul", {{"transpose_a", 1}}, {RandomTensor({5}, DType::kF32, rng), b}),
                "matmul: cannot transpose the 1-D a");
  ExpectInvalid(RunKernel("nn.batch_matmul", {}, {RandomTensor({5}, DType::kF32, rng), b}),
                "nn.batch_matmul: a has rank 1, expected at least 2");
  ExpectInvalid(RunKernel("nn.batch_matmul", {}, {a, RandomTensor({2, 6, 4}, DType::kF32, rng)}),
                "nn.batch_matmul: inner dimensions differ");
  ExpectInvalid(RunKernel("nn.matmul", {{"transpose_b", 2}}, {a, b}),
                "attribute 'transpose_b' must be 0 or 1, got 2");
  ExpectInvalid(RunKernel("nn.batch_matmul", {{"units", 6}}, {a, b}), "unknown attribute 'units'");
  ExpectInvalid(RunKernel("nn.matmul", {{"units", 7}}, {a, RandomTensor({5, 6}, DType::kF32, rng)}),
                "nn.matmul: attribute units is 7 but the weight gives 6");
  ExpectInvalid(RunKernel("matmul", {}, {a}), "kernel 'matmul' takes 2 inputs and 1 outputs");
  ExpectInvalid(CallWithOutputs("matmul", {}, {a, RandomTensor({5, 6}, DType::kF32, rng)},
                                {Empty({2, 4, 5})}),
                "matmul: output 0 has shape [2, 4, 5], expected [2, 4, 6]");
}

// ---------------------------------------------------------------------------------------
// gemm

TEST(GemmKernelTest, EveryEpilogue) {
  std::mt19937 rng(8);
  ThreadPool two(2);
  const char* const kActs[] = {"none", "relu", "gelu", "gelu_tanh"};
  for (int iter = 0; iter < 64; ++iter) {
    const bool ta = iter & 1, tb = iter & 2, with_bias = iter & 4, with_residual = iter & 8;
    const std::string activation = kActs[iter >> 4];
    const int64_t m = RandomInt(rng, 0, 30), k = RandomInt(rng, 0, 300), n = RandomInt(rng, 0, 40);
    const double alpha = iter % 3 == 0 ? 1.0 : -0.5;
    SCOPED_TRACE(::testing::Message() << "m=" << m << " k=" << k << " n=" << n << " iter=" << iter);
    const NDArray a = RandomTensor({ta ? k : m, ta ? m : k}, DType::kF32, rng);
    const NDArray b = RandomTensor({tb ? n : k, tb ? k : n}, DType::kF32, rng);
    const NDArray bias = RandomTensor({n}, DType::kF32, rng);
    const NDArray residual = RandomTensor({m, n}, DType::kF32, rng);
    std::vector<NDArray> inputs = {a, b};
    if (with_bias) inputs.push_back(bias);
    if (with_residual) inputs.push_back(residual);
    const Attrs attrs = {{"trans_a", ta},   {"trans_b", tb},
                         {"alpha", alpha},  {"activation", activation},
                         {"residual", with_residual}};
    absl::StatusOr<std::vector<NDArray>> out = RunKernel("gemm", attrs, inputs, {}, 1, &two);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> bias_values = Values(bias), residual_values = Values(residual);
    const Expected e = ReferenceMatmul(
        {Values(a), ShapeOf(a), ta}, {Values(b), ShapeOf(b), tb}, {}, alpha,
        with_bias ? &bias_values : nullptr, activation, with_residual ? &residual_values : nullptr);
    ExpectClose((*out)[0], e.values, e.tolerances);
  }
}

// The VM may hand the residual in as the output itself (an in-place add).
TEST(GemmKernelTest, ResidualMayBeTheOutput) {
  std::mt19937 rng(9);
  const NDArray a = RandomTensor({20, 600}, DType::kF32, rng);  // k spans several blocks
  const NDArray b = RandomTensor({600, 30}, DType::kF32, rng);
  const NDArray c = RandomTensor({20, 30}, DType::kF32, rng);
  const std::vector<double> residual = Values(c);
  ASSERT_TRUE(CallWithOutputs("gemm", {{"residual", 1}}, {a, b, c}, {c}).ok());
  const Expected e =
      ReferenceMatmul({Values(a), {20, 600}}, {Values(b), {600, 30}}, {}, 1, nullptr, "none",
                      &residual);
  ExpectClose(c, e.values, e.tolerances);
}

TEST(GemmKernelTest, Errors) {
  std::mt19937 rng(10);
  const NDArray a = RandomTensor({4, 5}, DType::kF32, rng);
  const NDArray b = RandomTensor({5, 6}, DType::kF32, rng);
  const NDArray bias = RandomTensor({6}, DType::kF32, rng);
  ExpectInvalid(RunKernel("gemm", {}, {a, b, bias, bias}),
                "gemm takes 2 or 3 inputs (a, b[, bias] (residual=0)), got 4");
  ExpectInvalid(RunKernel("gemm", {{"residual", 1}}, {a, b}),
                "gemm takes 3 or 4 inputs (a, b[, bias], residual (residual=1)), got 2");
  ExpectInvalid(RunKernel("gemm", {{"residual", 1}}, {a, b, bias}),
                "gemm: residual has shape [6], expected [4, 6]");
  ExpectInvalid(RunKernel("gemm", {}, {a, b, RandomTensor({5}, DType::kF32, rng)}),
                "gemm: bias has shape [5], expected [6]");
  ExpectInvalid(RunKernel("gemm", {{"trans_b", 1}}, {a, b}),
                "gemm: inner dimensions differ: [4, 5] and [5, 6] give k = 5 and 6");
  ExpectInvalid(RunKernel("gemm", {}, {RandomTensor({2, 2, 5}, DType::kF32, rng), b}),
                "gemm: a and b must be matrices, got shapes [2, 2, 5] and [5, 6]");
  ExpectInvalid(RunKernel("gemm", {}, {a, RandomTensor({5, 6}, DType::kBool, rng)}),
                "unsupported dtype bool for gemm b: expected f32");
  ExpectInvalid(RunKernel("gemm", {{"alpha", INFINITY}}, {a, b}),
                "attribute 'alpha' must be a finite f32");
  ExpectInvalid(RunKernel("gemm", {{"alpha", 1e300}}, {a, b}),
                "attribute 'alpha' must be a finite f32");
  ExpectInvalid(RunKernel("gemm", {{"activation", "gelu_erf"}}, {a, b}),
                "attribute 'activation' must be none, relu, gelu or gelu_tanh, got 'gelu_erf'");
  ExpectInvalid(RunKernel("gemm", {{"beta", 1.0}}, {a, b}), "unknown attribute 'beta'");
  ExpectInvalid(CallWithOutputs("gemm", {}, {a, b}, {Empty({4, 6}, DType::kI32)}),
                "unsupported dtype i32 for gemm output: expected f32");
}

}  // namespace
}  // namespace dynvm::kernels::testing
