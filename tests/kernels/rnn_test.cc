// Tests of nn.lstm_cell and nn.gru_cell (kernels/nn/rnn.cc) against PyTorch's LSTMCell
// and GRUCell formulas written out here in double, on random sizes (batch and input of
// 0 and 1, hidden sizes not a multiple of the vector width), with and without biases, in
// place (h' over h, c' over c), over a few recurrent steps, and their errors.
//
// Tolerance: gate pre-activations are float GEMM sums of (input + hidden) products of
// values in [-1, 1] (error ~ (in + hid) eps), and the vectorised sigmoid and tanh are
// within 3e-7 absolute; states stay within [-1, 1] and cells within a few units:
// 2e-5 absolute (plus 1e-5 relative for the cell state) covers both.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// out[r, j] = sum_k in[r, k] * w[j, k] + bias[j] (bias may be empty).
std::vector<double> Linear(const std::vector<double>& in, const std::vector<double>& w,
                           const std::vector<double>& bias, int64_t rows, int64_t k, int64_t n) {
  std::vector<double> out(rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      double s = bias.empty() ? 0.0 : bias[j];
      for (int64_t t = 0; t < k; ++t) s += in[r * k + t] * w[j * k + t];
      out[r * n + j] = s;
    }
  }
  return out;
}

struct CellSizes {
  int64_t batch, input, hidden;
  bool bias;
};

// The inputs of a cell with `gates` gate blocks: x, h, [c,] w_ih, w_hh[, b_ih, b_hh].
std::vector<NDArray> CellInputs(std::mt19937& rng, const CellSizes& s, int gates) {
  std::vector<NDArray> in = {RandomTensor({s.batch, s.input}, DType::kF32, rng),
                             RandomTensor({s.batch, s.hidden}, DType::kF32, rng)};
  if (gates == 4) in.push_back(RandomTensor({s.batch, s.hidden}, DType::kF32, rng, -2, 2));
  in.push_back(RandomTensor({gates * s.hidden, s.input}, DType::kF32, rng));
  in.push_back(RandomTensor({gates * s.hidden, s.hidden}, DType::kF32, rng));
  if (s.bias) {
    in.push_back(RandomTensor({gates * s.hidden}, DType::kF32, rng));
    in.push_back(RandomTensor({gates * s.hidden}, DType::kF32, rng));
  }
  return in;
}

// PyTorch's LSTMCell: returns h' then c', each [batch, hidden].
std::pair<std::vector<double>, std::vector<double>> LstmReference(const CellSizes& s,
                                                                  const std::vector<NDArray>& in) {
  const int64_t hid = s.hidden, g4 = 4 * hid;
  const std::vector<double> empty;
  const std::vector<double> gi =
      Linear(Values(in[0]), Values(in[3]), s.bias ? Values(in[5]) : empty, s.batch, s.input, g4);
  const std::vector<double> gh =
      Linear(Values(in[1]), Values(in[4]), s.bias ? Values(in[6]) : empty, s.batch, hid, g4);
  const std::vector<double> c = Values(in[2]);
  std::vector<double> h_out(s.batch * hid), c_out(s.batch * hid);
  for (int64_t r = 0; r < s.batch; ++r) {
    for (int64_t j = 0; j < hid; ++j) {
      auto gate = [&](int k) { return gi[r * g4 + k * hid + j] + gh[r * g4 + k * hid + j]; };
      const double i = Sigmoid(gate(0)), f = Sigmoid(gate(1)), g = std::tanh(gate(2)),
                   o = Sigmoid(gate(3));
      c_out[r * hid + j] = f * c[r * hid + j] + i * g;
      h_out[r * hid + j] = o * std::tanh(c_out[r * hid + j]);
    }
  }
  return {h_out, c_out};
}

// PyTorch's GRUCell: h'.
std::vector<double> GruReference(const CellSizes& s, const std::vector<NDArray>& in) {
  const int64_t hid = s.hidden, g3 = 3 * hid;
  const std::vector<double> empty;
  const std::vector<double> gi =
      Linear(Values(in[0]), Values(in[2]), s.bias ? Values(in[4]) : empty, s.batch, s.input, g3);
  const std::vector<double> gh =
      Linear(Values(in[1]), Values(in[3]), s.bias ? Values(in[5]) : empty, s.batch, hid, g3);
  const std::vector<double> h = Values(in[1]);
  std::vector<double> h_out(s.batch * hid);
  for (int64_t r = 0; r < s.batch; ++r) {
    for (int64_t j = 0; j < hid; ++j) {
      const int64_t at = r * g3 + j;
      const double reset = Sigmoid(gi[at] + gh[at]);
      const double update = Sigmoid(gi[at + hid] + gh[at + hid]);
      const double n = std::tanh(gi[at + 2 * hid] + reset * gh[at + 2 * hid]);
      h_out[r * hid + j] = (1 - update) * n + update * h[r * hid + j];
    }
  }
  return h_out;
}

CellSizes RandomSizes(std::mt19937& rng) {
  auto extent = [&](int64_t max) {
    const int64_t r = RandomInt(rng, 0, 9);
    return r == 0 ? 0 : r == 1 ? 1 : RandomInt(rng, 2, max);
  };
  return {extent(5), extent(24), RandomInt(rng, 1, 41), rng() % 2 == 0};
}

TEST(LstmCellTest, RandomSizes) {
  std::mt19937 rng(71);
  for (int iter = 0; iter < 80; ++iter) {
    const CellSizes s = RandomSizes(rng);
    SCOPED_TRACE(::testing::Message() << "batch " << s.batch << " input " << s.input << " hidden "
                                      << s.hidden << " bias " << s.bias);
    const std::vector<NDArray> in = CellInputs(rng, s, 4);
    absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.lstm_cell", {}, in, {}, 2);
    ASSERT_TRUE(out.ok()) << out.status();
    const auto [h, c] = LstmReference(s, in);
    ExpectClose((*out)[0], h, 2e-5, 0);
    ExpectClose((*out)[1], c, 2e-5, 1e-5);
  }
}

TEST(GruCellTest, RandomSizes) {
  std::mt19937 rng(72);
  for (int iter = 0; iter < 80; ++iter) {
    const CellSizes s = RandomSizes(rng);
    SCOPED_TRACE(::testing::Message() << "batch " << s.batch << " input " << s.input << " hidden "
                                      << s.hidden << " bias " << s.bias);
    const std::vector<NDArray> in = CellInputs(rng, s, 3);
    absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.gru_cell", {}, in);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectClose((*out)[0], GruReference(s, in), 2e-5, 0);
  }
}

TEST(LstmCellTest, InPlaceStepsOfASequence) {
  // A decoding loop updates its state in place: h' is h and c' is c.
  std::mt19937 rng(73);
  const CellSizes s{3, 10, 33, true};
  std::vector<NDArray> in = CellInputs(rng, s, 4);
  for (int step = 0; step < 4; ++step) {
    in[0] = RandomTensor({s.batch, s.input}, DType::kF32, rng);
    const auto [h, c] = LstmReference(s, in);
    ASSERT_TRUE(CallWithOutputs("nn.lstm_cell", {}, in, {in[1], in[2]}).ok());
    ExpectClose(in[1], h, 2e-5, 0);
    ExpectClose(in[2], c, 2e-5, 1e-5);
  }
}

TEST(GruCellTest, InPlaceStepsOfASequence) {
  std::mt19937 rng(74);
  const CellSizes s{2, 7, 17, true};
  std::vector<NDArray> in = CellInputs(rng, s, 3);
  for (int step = 0; step < 4; ++step) {
    const std::vector<double> h = GruReference(s, in);
    ASSERT_TRUE(CallWithOutputs("nn.gru_cell", {}, in, {in[1]}).ok());
    ExpectClose(in[1], h, 2e-5, 0);
  }
}

TEST(LstmCellTest, Errors) {
  std::mt19937 rng(75);
  const CellSizes s{2, 3, 4, true};
  const std::vector<NDArray> in = CellInputs(rng, s, 4);
  auto with = [&](int index, NDArray t) {
    std::vector<NDArray> v = in;
    v[index] = std::move(t);
    return RunKernel("nn.lstm_cell", {}, v, {}, 2);
  };
  ExpectInvalid(with(0, Empty({2, 3}, DType::kF64)),
                "unsupported dtype f64 for nn.lstm_cell x: expected f32");
  ExpectInvalid(with(6, Empty({16}, DType::kI32)),
                "unsupported dtype i32 for nn.lstm_cell b_hh: expected f32");
  ExpectInvalid(with(0, Empty({3, 3})),
                "nn.lstm_cell: x [3, 3] and h [2, 4] must be [batch, input_size] and [batch, "
                "hidden_size]");
  ExpectInvalid(with(1, Empty({8})), "must be [batch, input_size] and [batch, hidden_size]");
  ExpectInvalid(with(2, Empty({2, 5})), "nn.lstm_cell: c has shape [2, 5], expected [2, 4]");
  ExpectInvalid(with(3, Empty({12, 3})), "nn.lstm_cell: w_ih has shape [12, 3], expected [16, 3]");
  ExpectInvalid(with(4, Empty({16, 3})), "nn.lstm_cell: w_hh has shape [16, 3], expected [16, 4]");
  ExpectInvalid(with(5, Empty({4})), "nn.lstm_cell: b_ih has shape [4], expected [16]");
  ExpectInvalid(RunKernel("nn.lstm_cell", {}, {in[0], in[1], in[2], in[3], in[4], in[5]}, {}, 2),
                "nn.lstm_cell takes 5 or 7 inputs (x, h, c, w_ih, w_hh and optionally b_ih, "
                "b_hh), got 6");
  ExpectInvalid(RunKernel("nn.lstm_cell", {}, in, {}, 1),
                "takes any number of inputs and 2 outputs");
  ExpectInvalid(RunKernel("nn.lstm_cell", {{"hidden_size", int64_t{4}}}, in, {}, 2),
                "takes no attributes, got 'hidden_size'");
  ExpectInvalid(CallWithOutputs("nn.lstm_cell", {}, in, {Empty({2, 4}), Empty({2, 3})}),
                "nn.lstm_cell: output 1 has shape [2, 3], expected [2, 4]");
}

TEST(GruCellTest, Errors) {
  std::mt19937 rng(76);
  const CellSizes s{2, 3, 4, false};
  const std::vector<NDArray> in = CellInputs(rng, s, 3);
  ExpectInvalid(RunKernel("nn.gru_cell", {}, {in[0], in[1], in[2]}),
                "nn.gru_cell takes 4 or 6 inputs (x, h, w_ih, w_hh and optionally b_ih, b_hh), "
                "got 3");
  ExpectInvalid(RunKernel("nn.gru_cell", {}, {in[0], in[1], Empty({16, 3}), in[3]}),
                "nn.gru_cell: w_ih has shape [16, 3], expected [12, 3]");
  ExpectInvalid(CallWithOutputs("nn.gru_cell", {}, in, {Empty({2, 4}, DType::kF64)}),
                "unsupported dtype f64 for nn.gru_cell output: expected f32");
}

}  // namespace
}  // namespace dynvm::kernels::testing
