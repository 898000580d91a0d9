// Tests of the recurrent kernels (kernels/nn/rnn.cc). nn.lstm_cell and nn.gru_cell
// against PyTorch's LSTMCell and GRUCell formulas written out here in double, on random
// sizes (batch and input of 0 and 1, hidden sizes not a multiple of the vector width),
// with and without biases, in place (h' over h, c' over c), over a few recurrent steps,
// and their errors. The layers nn.lstm and nn.gru against the cells run step by step
// (forwards or backwards), against the double reference over a whole sequence, with
// sequences of 0 and 1 steps, states updated in place, and their errors. ONNX's variants
// of the layers (nn.lstm's peepholes p, nn.gru's linear_before_reset=0) against the double
// reference written from ONNX's equations, on the same cases; zero peepholes against the
// plain layer, bit for bit; seq_lens (ONNX's sequence_lens) against the double reference
// with the lengths applied, lengths all seq against the layer without, bit for bit, and
// its errors; ONNX's activations and clip in every slot, and nn.rnn (ONNX's simple RNN),
// against the double reference with the same functions, and their errors; and the
// microkernels behind them, every table this CPU runs, against double references (the
// other gate microkernels are in nn_ukernels_test.cc).
//
// Tolerance: gate pre-activations are float GEMM sums of (input + hidden) products of
// values in [-1, 1] (error ~ (in + hid) eps), and the vectorised sigmoid and tanh are
// within 3e-7 absolute; states stay within [-1, 1] and cells within a few units:
// 2e-5 absolute (plus 1e-5 relative for the cell state) covers both, per cell step.
// The layers draw weights as PyTorch initialises them (±1/sqrt(hidden), see LayerInputs),
// under which each step damps earlier errors. A layer against its cells: the same
// arithmetic, except that the input GEMM runs on seq * batch rows (GemmF32's blocked path
// from 8 rows) where a cell's runs on batch rows (its few-rows path), which may round the
// sums differently; the largest difference seen is 1.5e-7 (AVX2), the tolerance 2e-6
// absolute plus 2e-6 relative. A layer against the double reference over up to 20 steps:
// largest 1.8e-7 seen, tolerance 1e-5 absolute (plus 1e-5 relative for c_n). The variants
// add one float product per gate (p c) or one GEMM over hid terms (r h against W_hn) to a
// step, the same kind of error: the same tolerance, largest 1.9e-7 seen.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/microkernels.h"
#include "kernels/nn/ukernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/nn_test_util.h"

namespace dynvm::kernels::testing {
namespace {

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// One of ONNX's activations (kernels/nn/rnn_activation.h), from its definition in ONNX's
// operator docs.
struct RefActivation {
  std::string name;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    if (name == "Relu") return std::max(x, 0.0);
    if (name == "Tanh") return std::tanh(x);
    if (name == "Sigmoid") return Sigmoid(x);
    if (name == "Affine") return alpha * x + beta;
    if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
    if (name == "ThresholdedRelu") return x >= alpha ? x : 0;
    if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
    if (name == "HardSigmoid") return std::min(std::max(alpha * x + beta, 0.0), 1.0);
    if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
    if (name == "Softsign") return x / (1 + std::abs(x));
    EXPECT_EQ(name, "Softplus");
    return std::log(1 + std::exp(x));
  }
};

// A layer's functions f, g, h, each applied to its pre-activation clipped to ±clip.
struct RefActivations {
  RefActivation f{"Sigmoid"}, g{"Tanh"}, h{"Tanh"};
  double clip = INFINITY;

  double Clip(double x) const { return std::min(std::max(x, -clip), clip); }
  double F(double x) const { return f(Clip(x)); }
  double G(double x) const { return g(Clip(x)); }
};

// The defaults of the layer with `gates` gates: the RNN's f is tanh.
RefActivations DefaultActivations(int gates) {
  RefActivations act;
  if (gates == 1) act.f = {"Tanh"};
  return act;
}

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

// A cell's weights as doubles (biases and peepholes empty when absent).
struct RefWeights {
  std::vector<double> w_ih, w_hh, b_ih, b_hh, p;
};

// The weights from input `first` on: w_ih, w_hh[, b_ih, b_hh[, p]].
RefWeights WeightsOf(const std::vector<NDArray>& in, int first, bool bias) {
  const std::vector<double> empty;
  const bool peephole = in.size() > static_cast<size_t>(first) + 4;
  return {Values(in[first]), Values(in[first + 1]), bias ? Values(in[first + 2]) : empty,
          bias ? Values(in[first + 3]) : empty, peephole ? Values(in[first + 4]) : empty};
}

// One step of PyTorch's LSTMCell on x [batch, input]: h and c [batch, hidden] updated.
// With peepholes w.p = [p_i | p_o | p_f] (ONNX's LSTM): i and f also see p_i c and p_f c
// (the previous cell state), o sees p_o c' (the new one).
// Other activations `act` replace σ (f), the tanh of g (g) and that of c' (h, unclipped).
void LstmStepReference(const CellSizes& s, const RefWeights& w, const std::vector<double>& x,
                       std::vector<double>& h, std::vector<double>& c,
                       const RefActivations& act = {}) {
  const int64_t hid = s.hidden, g4 = 4 * hid;
  const std::vector<double> gi = Linear(x, w.w_ih, w.b_ih, s.batch, s.input, g4);
  const std::vector<double> gh = Linear(h, w.w_hh, w.b_hh, s.batch, hid, g4);
  auto peephole = [&](int k, int64_t j) { return w.p.empty() ? 0.0 : w.p[k * hid + j]; };
  for (int64_t r = 0; r < s.batch; ++r) {
    for (int64_t j = 0; j < hid; ++j) {
      auto gate = [&](int k) { return gi[r * g4 + k * hid + j] + gh[r * g4 + k * hid + j]; };
      const double c_prev = c[r * hid + j];
      const double i = act.F(gate(0) + peephole(0, j) * c_prev);
      const double f = act.F(gate(1) + peephole(2, j) * c_prev);
      const double g = act.G(gate(2));
      const double cell = f * c_prev + i * g;
      const double o = act.F(gate(3) + peephole(1, j) * cell);
      c[r * hid + j] = cell;
      h[r * hid + j] = o * act.h(cell);
    }
  }
}

// One step of PyTorch's GRUCell: h updated. Without `linear_before_reset` (ONNX's
// default), n = tanh(x W_inᵀ + b_in + (r h) W_hnᵀ + b_hn). Other activations `act`
// replace σ (f) and tanh (g).
void GruStepReference(const CellSizes& s, const RefWeights& w, const std::vector<double>& x,
                      std::vector<double>& h, bool linear_before_reset = true,
                      const RefActivations& act = {}) {
  const int64_t hid = s.hidden, g3 = 3 * hid;
  const std::vector<double> gi = Linear(x, w.w_ih, w.b_ih, s.batch, s.input, g3);
  const std::vector<double> gh = Linear(h, w.w_hh, w.b_hh, s.batch, hid, g3);
  // (r h) W_hnᵀ + b_hn, for linear_before_reset=0.
  std::vector<double> rh(s.batch * hid);
  for (int64_t r = 0; r < s.batch; ++r) {
    for (int64_t j = 0; j < hid; ++j) {
      rh[r * hid + j] = act.F(gi[r * g3 + j] + gh[r * g3 + j]) * h[r * hid + j];
    }
  }
  const std::vector<double> w_hn(w.w_hh.begin() + 2 * hid * hid, w.w_hh.end());
  const std::vector<double> b_hn =
      w.b_hh.empty() ? w.b_hh : std::vector<double>(w.b_hh.begin() + 2 * hid, w.b_hh.end());
  const std::vector<double> rh_hn = Linear(rh, w_hn, b_hn, s.batch, hid, hid);
  for (int64_t r = 0; r < s.batch; ++r) {
    for (int64_t j = 0; j < hid; ++j) {
      const int64_t at = r * g3 + j;
      const double reset = act.F(gi[at] + gh[at]);
      const double update = act.F(gi[at + hid] + gh[at + hid]);
      const double hidden = linear_before_reset ? reset * gh[at + 2 * hid] : rh_hn[r * hid + j];
      const double n = act.G(gi[at + 2 * hid] + hidden);
      h[r * hid + j] = (1 - update) * n + update * h[r * hid + j];
    }
  }
}

// One step of ONNX's RNN: h = f(x w_ihᵀ + b_ih + h w_hhᵀ + b_hh).
void RnnStepReference(const CellSizes& s, const RefWeights& w, const std::vector<double>& x,
                      std::vector<double>& h, const RefActivations& act) {
  const std::vector<double> gi = Linear(x, w.w_ih, w.b_ih, s.batch, s.input, s.hidden);
  const std::vector<double> gh = Linear(h, w.w_hh, w.b_hh, s.batch, s.hidden, s.hidden);
  for (size_t k = 0; k < h.size(); ++k) h[k] = act.F(gi[k] + gh[k]);
}

// PyTorch's LSTMCell: returns h' then c', each [batch, hidden].
std::pair<std::vector<double>, std::vector<double>> LstmReference(const CellSizes& s,
                                                                  const std::vector<NDArray>& in) {
  std::vector<double> h = Values(in[1]), c = Values(in[2]);
  LstmStepReference(s, WeightsOf(in, 3, s.bias), Values(in[0]), h, c);
  return {h, c};
}

// PyTorch's GRUCell: h'.
std::vector<double> GruReference(const CellSizes& s, const std::vector<NDArray>& in) {
  std::vector<double> h = Values(in[1]);
  GruStepReference(s, WeightsOf(in, 2, s.bias), Values(in[0]), h);
  return h;
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

// ---------------------------------------------------------------------------------------
// The layers

struct LayerSizes {
  int64_t seq, batch, input, hidden;
  bool bias, reverse;
  // ONNX's variant: nn.lstm with peepholes (which need `bias`), nn.gru with
  // linear_before_reset=0.
  bool variant = false;
};

::testing::Message Describe(const LayerSizes& s) {
  return ::testing::Message() << "seq " << s.seq << " batch " << s.batch << " input " << s.input
                              << " hidden " << s.hidden << " bias " << s.bias << " reverse "
                              << s.reverse << " variant " << s.variant;
}

// `s` as ONNX's variant of the layer with `gates` gates (with biases for the LSTM).
LayerSizes VariantOf(LayerSizes s, int gates) {
  s.variant = true;
  if (gates == 4) s.bias = true;
  return s;
}

const char* LayerOp(int gates) { return gates == 4 ? "nn.lstm" : gates == 3 ? "nn.gru" : "nn.rnn"; }
const char* CellOp(int gates) { return gates == 4 ? "nn.lstm_cell" : "nn.gru_cell"; }

// The inputs of a layer: x [seq, batch, input], h0[, c0], w_ih, w_hh[, b_ih, b_hh[, p]],
// the weights, biases and peepholes drawn as PyTorch initialises weights, uniform in
// ±1/sqrt(hidden). (With weights in [-1, 1], a large hidden size makes the recurrence
// chaotic: rounding errors then grow from step to step, whatever the kernel.)
std::vector<NDArray> LayerInputs(std::mt19937& rng, const LayerSizes& s, int gates) {
  std::vector<NDArray> in = CellInputs(rng, {s.batch, s.input, s.hidden, s.bias}, gates);
  in[0] = RandomTensor({s.seq, s.batch, s.input}, DType::kF32, rng);
  if (gates == 4 && s.variant) in.push_back(Empty({3 * s.hidden}));  // drawn below
  const double bound = 1 / std::sqrt(static_cast<double>(s.hidden));
  for (size_t i = gates == 4 ? 3 : 2; i < in.size(); ++i) {
    const Shape& shape = in[i]->shape();
    in[i] = RandomTensor(std::vector<int64_t>(shape.begin(), shape.end()), DType::kF32, rng, -bound, bound);
  }
  return in;
}

// reverse=1 when `s.reverse`, else reverse=0 given or left out; for the GRU,
// linear_before_reset=0 for the variant, else =1 given or left out.
Attrs LayerAttrs(const LayerSizes& s, int gates, std::mt19937& rng) {
  Attrs attrs;
  if (s.reverse || rng() % 2 == 0) attrs["reverse"] = int64_t{s.reverse};
  if (gates == 3 && (s.variant || rng() % 2 == 0)) {
    attrs["linear_before_reset"] = int64_t{!s.variant};
  }
  return attrs;
}

// Which input step the `i`-th step of the layer reads.
int64_t StepAt(const LayerSizes& s, int64_t i) { return s.reverse ? s.seq - 1 - i : i; }

// The outputs of a layer computed by its cell kernel step by step: y, h_n[, c_n].
std::vector<std::vector<double>> RunCells(const LayerSizes& s, int gates,
                                          const std::vector<NDArray>& in) {
  const int states = gates == 4 ? 2 : 1;
  const int64_t x_step = s.batch * s.input, state = s.batch * s.hidden;
  std::vector<NDArray> cell_in = in;
  std::vector<double> y(s.seq * state);
  for (int64_t i = 0; i < s.seq; ++i) {
    const int64_t t = StepAt(s, i);
    const float* x = in[0]->data_as<float>() + t * x_step;
    cell_in[0] = TensorOf<float>({s.batch, s.input}, std::vector<float>(x, x + x_step));
    absl::StatusOr<std::vector<NDArray>> out = RunKernel(CellOp(gates), {}, cell_in, {}, states);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    for (int k = 0; k < states; ++k) cell_in[1 + k] = (*out)[k];
    const std::vector<double> h = Values(cell_in[1]);
    std::copy(h.begin(), h.end(), y.begin() + t * state);
  }
  std::vector<std::vector<double>> outputs = {y};
  for (int k = 0; k < states; ++k) outputs.push_back(Values(cell_in[1 + k]));
  return outputs;
}

// The outputs of a layer from the double reference cells: y, h_n[, c_n]. With `lens`
// (ONNX's sequence_lens), row r runs only the steps t < lens[r], its state unchanged
// and its y zero at the others. `act`: other activations than the defaults.
std::vector<std::vector<double>> LayerReference(const LayerSizes& s, int gates,
                                                const std::vector<NDArray>& in,
                                                const std::vector<int64_t>& lens = {},
                                                const RefActivations* act = nullptr) {
  const RefActivations functions = act != nullptr ? *act : DefaultActivations(gates);
  const CellSizes cell{s.batch, s.input, s.hidden, s.bias};
  const RefWeights w = WeightsOf(in, gates == 4 ? 3 : 2, s.bias);
  const int64_t x_step = s.batch * s.input, state = s.batch * s.hidden;
  const std::vector<double> x = Values(in[0]);
  std::vector<double> h = Values(in[1]), y(s.seq * state);
  std::vector<double> c = gates == 4 ? Values(in[2]) : std::vector<double>();
  for (int64_t i = 0; i < s.seq; ++i) {
    const int64_t t = StepAt(s, i);
    const std::vector<double> x_t(x.begin() + t * x_step, x.begin() + (t + 1) * x_step);
    std::vector<double> h_t = h, c_t = c;
    if (gates == 4) {
      LstmStepReference(cell, w, x_t, h_t, c_t, functions);
    } else if (gates == 3) {
      GruStepReference(cell, w, x_t, h_t, /*linear_before_reset=*/!s.variant, functions);
    } else {
      RnnStepReference(cell, w, x_t, h_t, functions);
    }
    for (int64_t r = 0; r < s.batch; ++r) {
      if (!lens.empty() && t >= lens[r]) continue;
      for (int64_t j = r * s.hidden; j < (r + 1) * s.hidden; ++j) {
        h[j] = y[t * state + j] = h_t[j];
        if (gates == 4) c[j] = c_t[j];
      }
    }
  }
  std::vector<std::vector<double>> outputs = {y, h};
  if (gates == 4) outputs.push_back(c);
  return outputs;
}

// Fixed cases (0 and 1 steps, batch 1 and 0, input 0, enough rows for GEMM's blocked
// path, hidden sizes off the vector width), then random ones.
std::vector<LayerSizes> LayerCases(std::mt19937& rng) {
  std::vector<LayerSizes> cases = {
      {0, 2, 3, 5, true, false},   {0, 1, 4, 9, false, true},   {1, 1, 4, 7, false, false},
      {1, 3, 5, 11, true, true},   {5, 1, 9, 13, true, true},   {6, 1, 2, 3, false, false},
      {3, 4, 0, 9, true, false},   {4, 0, 3, 6, true, true},    {12, 3, 16, 33, true, true},
      {10, 2, 7, 17, false, false}, {7, 5, 20, 40, true, false}, {2, 8, 3, 1, false, true},
      {20, 16, 64, 100, true, true},
  };
  for (int iter = 0; iter < 40; ++iter) {
    const int64_t r = RandomInt(rng, 0, 9);
    const int64_t seq = r == 0 ? 0 : r == 1 ? 1 : RandomInt(rng, 2, 12);
    const int64_t batch = RandomInt(rng, 0, 9) == 0 ? 1 : RandomInt(rng, 1, 5);
    cases.push_back({seq, batch, RandomInt(rng, 0, 24), RandomInt(rng, 1, 41), rng() % 2 == 0,
                     rng() % 2 == 0});
  }
  return cases;
}

constexpr double kLayerVsCells = 2e-6;      // absolute, plus the same relative
constexpr double kLayerVsReference = 1e-5;  // absolute, plus 1e-5 relative for c_n

// Expects a layer's outputs `out` (y, h_n[, c_n]) within kLayerVsReference of
// `reference`, and h_n to be the last step's y row, exactly (y[0] when reversed).
void ExpectLayerOutputs(const LayerSizes& s, const std::vector<NDArray>& out,
                        const std::vector<std::vector<double>>& reference) {
  ASSERT_EQ(out.size(), reference.size());
  for (size_t k = 0; k < out.size(); ++k) {
    ExpectClose(out[k], reference[k], kLayerVsReference, k == 2 ? 1e-5 : 0.0);
  }
  if (s.seq > 0) {
    const int64_t last = StepAt(s, s.seq - 1), state = s.batch * s.hidden;
    const float* y = out[0]->data_as<float>() + last * state;
    ExpectSameBits(out[1], TensorOf<float>({s.batch, s.hidden}, std::vector<float>(y, y + state)),
                   "h_n");
  }
}

TEST(RnnLayerTest, MatchCellsStepByStepAndTheDoubleReference) {
  std::mt19937 rng(77);
  for (int gates : {4, 3}) {
    const int outputs = gates == 4 ? 3 : 2;
    for (const LayerSizes& s : LayerCases(rng)) {
      SCOPED_TRACE(Describe(s) << " " << LayerOp(gates));
      const std::vector<NDArray> in = LayerInputs(rng, s, gates);
      absl::StatusOr<std::vector<NDArray>> out =
          RunKernel(LayerOp(gates), LayerAttrs(s, gates, rng), in, {}, outputs);
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0]->shape(), Shape({s.seq, s.batch, s.hidden}));
      for (int k = 1; k < outputs; ++k) ASSERT_EQ((*out)[k]->shape(), Shape({s.batch, s.hidden}));
      const std::vector<std::vector<double>> cells = RunCells(s, gates, in);
      const std::vector<std::vector<double>> reference = LayerReference(s, gates, in);
      ASSERT_EQ(cells.size(), static_cast<size_t>(outputs));
      for (int k = 0; k < outputs; ++k) {
        ExpectClose((*out)[k], cells[k], kLayerVsCells, kLayerVsCells);
      }
      ExpectLayerOutputs(s, *out, reference);
    }
  }
}

TEST(RnnLayerTest, OnnxVariantsMatchTheDoubleReference) {
  // nn.lstm with peepholes and nn.gru with linear_before_reset=0, on the cases above.
  std::mt19937 rng(82);
  for (int gates : {4, 3}) {
    const int outputs = gates == 4 ? 3 : 2;
    for (const LayerSizes& plain : LayerCases(rng)) {
      const LayerSizes s = VariantOf(plain, gates);
      SCOPED_TRACE(Describe(s) << " " << LayerOp(gates));
      const std::vector<NDArray> in = LayerInputs(rng, s, gates);
      ASSERT_EQ(in.size(), gates == 4 ? 8u : s.bias ? 6u : 4u);
      absl::StatusOr<std::vector<NDArray>> out =
          RunKernel(LayerOp(gates), LayerAttrs(s, gates, rng), in, {}, outputs);
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0]->shape(), Shape({s.seq, s.batch, s.hidden}));
      for (int k = 1; k < outputs; ++k) ASSERT_EQ((*out)[k]->shape(), Shape({s.batch, s.hidden}));
      ExpectLayerOutputs(s, *out, LayerReference(s, gates, in));
    }
  }
}

TEST(LstmLayerTest, ZeroPeepholesAreThePlainLayer) {
  // p c adds exactly 0 (an fma onto the gate): the plain layer's results, bit for bit.
  std::mt19937 rng(83);
  for (const LayerSizes& s : {LayerSizes{6, 3, 5, 13, true, false},
                              LayerSizes{9, 10, 7, 33, true, true}}) {
    SCOPED_TRACE(Describe(s));
    const std::vector<NDArray> in = LayerInputs(rng, s, 4);
    std::vector<NDArray> with_p = in;
    with_p.push_back(TensorOf<float>({3 * s.hidden}, std::vector<float>(3 * s.hidden, 0.0f)));
    const Attrs attrs = {{"reverse", int64_t{s.reverse}}};
    absl::StatusOr<std::vector<NDArray>> plain = RunKernel("nn.lstm", attrs, in, {}, 3);
    absl::StatusOr<std::vector<NDArray>> zero = RunKernel("nn.lstm", attrs, with_p, {}, 3);
    ASSERT_TRUE(plain.ok()) << plain.status();
    ASSERT_TRUE(zero.ok()) << zero.status();
    for (int k = 0; k < 3; ++k) ExpectSameBits((*zero)[k], (*plain)[k], "output");
  }
}

TEST(RnnLayerTest, ZeroStepsGiveTheInitialStates) {
  std::mt19937 rng(78);
  for (int gates : {4, 3, 1}) {
    for (bool variant : {false, true}) {
      const LayerSizes s{0, 3, 4, 10, true, gates == 3, variant};
      const std::vector<NDArray> in = LayerInputs(rng, s, gates);
      absl::StatusOr<std::vector<NDArray>> out =
          RunKernel(LayerOp(gates), LayerAttrs(s, gates, rng), in, {}, gates == 4 ? 3 : 2);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0]->shape(), Shape({0, 3, 10}));
      ExpectSameBits((*out)[1], in[1], "h_n");
      if (gates == 4) ExpectSameBits((*out)[2], in[2], "c_n");
    }
  }
}

TEST(RnnLayerTest, StatesInPlace) {
  // h_n written over h0 and c_n over c0, as a streaming caller carries its state.
  std::mt19937 rng(79);
  for (int gates : {4, 3, 1}) {
    for (const int64_t seq : {0, 1, 5}) {
      for (const bool variant : {false, true}) {
        const LayerSizes s{seq, 2, 6, 19, true, seq == 5, variant};
        SCOPED_TRACE(Describe(s) << " " << LayerOp(gates));
        const std::vector<NDArray> in = LayerInputs(rng, s, gates);
        const std::vector<std::vector<double>> want = LayerReference(s, gates, in);
        std::vector<NDArray> outs = {Empty({s.seq, s.batch, s.hidden}), in[1]};
        if (gates == 4) outs.push_back(in[2]);
        ASSERT_TRUE(CallWithOutputs(LayerOp(gates), LayerAttrs(s, gates, rng), in, outs).ok());
        ExpectClose(outs[0], want[0], kLayerVsReference, 0);
        ExpectClose(in[1], want[1], kLayerVsReference, 0);
        if (gates == 4) ExpectClose(in[2], want[2], kLayerVsReference, 1e-5);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// seq_lens (ONNX's sequence_lens): nn.lstm's 9th input (after p), nn.gru's 7th (after
// both biases). Against the double reference with the lengths applied (random lengths,
// 0 and seq among them, i32 and i64, reverse 0 and 1, zero and random peepholes,
// linear_before_reset 0 and 1): the same arithmetic per step as without, so the same
// tolerance, kLayerVsReference (largest seen below 2.5e-7, default and scalar ISA); y's
// rows past a row's length exactly 0, and h_n's rows bit for bit the row's last y (or
// h0, c0 for length 0).

// `s`'s layer inputs up to seq_lens: both biases, and for the LSTM p (zero unless
// `s.variant`).
std::vector<NDArray> SeqLensInputs(std::mt19937& rng, LayerSizes& s, int gates) {
  s.bias = true;
  std::vector<NDArray> in = LayerInputs(rng, s, gates);
  if (gates == 4 && !s.variant) {
    in.push_back(TensorOf<float>({3 * s.hidden}, std::vector<float>(3 * s.hidden, 0.0f)));
  }
  return in;
}

// A length per row within [0, seq], with seq and 0 among them when there are rows enough.
std::vector<int64_t> RandomLengths(std::mt19937& rng, const LayerSizes& s) {
  std::vector<int64_t> lens(s.batch);
  for (int64_t r = 0; r < s.batch; ++r) {
    lens[r] = r == 0 ? s.seq : r == 1 ? 0 : RandomInt(rng, 0, s.seq);
  }
  std::shuffle(lens.begin(), lens.end(), rng);
  return lens;
}

NDArray LengthsOf(const std::vector<int64_t>& lens, DType dtype) {
  const int64_t n = static_cast<int64_t>(lens.size());
  if (dtype == DType::kI32) {
    return TensorOf<int32_t>({n}, std::vector<int32_t>(lens.begin(), lens.end()));
  }
  return TensorOf<int64_t>({n}, lens);
}

TEST(RnnLayerTest, SeqLensMatchTheDoubleReference) {
  std::mt19937 rng(86);
  for (int gates : {4, 3, 1}) {
    const int outputs = gates == 4 ? 3 : 2;
    int index = 0;
    for (const LayerSizes& plain : LayerCases(rng)) {
      for (const bool variant : {false, true}) {
        LayerSizes s = plain;
        s.variant = variant;
        std::vector<NDArray> in = SeqLensInputs(rng, s, gates);
        const std::vector<int64_t> lens = RandomLengths(rng, s);
        in.push_back(LengthsOf(lens, rng() % 2 == 0 ? DType::kI32 : DType::kI64));
        ::testing::Message lens_text;
        for (int64_t len : lens) lens_text << " " << len;
        SCOPED_TRACE(Describe(s) << " " << LayerOp(gates) << " seq_lens" << lens_text);
        const std::vector<std::vector<double>> want = LayerReference(s, gates, in, lens);
        const std::vector<double> h0 = Values(in[1]);
        const std::vector<double> c0 = gates == 4 ? Values(in[2]) : std::vector<double>();
        // y starts as NaN (the kernel must write its zeros); every other call updates the
        // states in place (h_n over h0, c_n over c0).
        const bool in_place = ++index % 2 == 0;
        std::vector<NDArray> out = {
            TensorOf<float>({s.seq, s.batch, s.hidden},
                            std::vector<float>(s.seq * s.batch * s.hidden, std::nanf(""))),
            in_place ? in[1] : Empty({s.batch, s.hidden})};
        if (gates == 4) out.push_back(in_place ? in[2] : Empty({s.batch, s.hidden}));
        ASSERT_TRUE(CallWithOutputs(LayerOp(gates), LayerAttrs(s, gates, rng), in, out).ok());
        for (int k = 0; k < outputs; ++k) {
          ExpectClose(out[k], want[k], kLayerVsReference, k == 2 ? 1e-5 : 0.0);
        }
        const float* y = out[0]->data_as<float>();
        const int64_t hid = s.hidden, state = s.batch * hid;
        for (int64_t r = 0; r < s.batch; ++r) {
          for (int64_t t = lens[r]; t < s.seq; ++t) {
            for (int64_t j = 0; j < hid; ++j) {
              ASSERT_EQ(y[t * state + r * hid + j], 0.0f) << t << " " << r;
            }
          }
          // h_n's row: the row's last y, or h0's row (and c_n's, c0's) for length 0.
          const int64_t last = s.reverse ? 0 : lens[r] - 1;
          for (int64_t j = r * hid; j < (r + 1) * hid; ++j) {
            const double h_n = out[1]->data_as<float>()[j];
            ASSERT_EQ(h_n, lens[r] == 0 ? h0[j] : double{y[last * state + j]}) << r;
            if (gates == 4 && lens[r] == 0) {
              ASSERT_EQ(out[2]->data_as<float>()[j], c0[j]) << r;
            }
          }
        }
      }
    }
  }
}

TEST(RnnLayerTest, FullSeqLensAreTheLayerWithout) {
  // Every length seq: the results without seq_lens, bit for bit (the state kept in h_n
  // rather than in y changes no arithmetic).
  std::mt19937 rng(87);
  for (int gates : {4, 3, 1}) {
    const int outputs = gates == 4 ? 3 : 2;
    for (LayerSizes s : {LayerSizes{6, 3, 5, 13, true, false}, LayerSizes{9, 10, 7, 33, true, true},
                         LayerSizes{1, 2, 3, 4, true, true}}) {
      for (const bool variant : {false, true}) {
        s.variant = variant;
        SCOPED_TRACE(Describe(s) << " " << LayerOp(gates));
        const std::vector<NDArray> in = SeqLensInputs(rng, s, gates);
        std::vector<NDArray> with_lens = in;
        with_lens.push_back(LengthsOf(std::vector<int64_t>(s.batch, s.seq),
                                      variant ? DType::kI32 : DType::kI64));
        const Attrs attrs = LayerAttrs(s, gates, rng);
        absl::StatusOr<std::vector<NDArray>> without =
            RunKernel(LayerOp(gates), attrs, in, {}, outputs);
        absl::StatusOr<std::vector<NDArray>> with =
            RunKernel(LayerOp(gates), attrs, with_lens, {}, outputs);
        ASSERT_TRUE(without.ok()) << without.status();
        ASSERT_TRUE(with.ok()) << with.status();
        for (int k = 0; k < outputs; ++k) ExpectSameBits((*with)[k], (*without)[k], "output");
      }
    }
  }
}

TEST(RnnLayerTest, SeqLensErrors) {
  std::mt19937 rng(88);
  for (int gates : {4, 3, 1}) {
    const std::string op = LayerOp(gates);
    const int outputs = gates == 4 ? 3 : 2;
    LayerSizes s{5, 3, 2, 4, true, false};
    const std::vector<NDArray> in = SeqLensInputs(rng, s, gates);
    auto with = [&](NDArray lens) {
      std::vector<NDArray> v = in;
      v.push_back(std::move(lens));
      return RunKernel(op, {}, v, {}, outputs);
    };
    EXPECT_TRUE(with(TensorOf<int64_t>({3}, {5, 0, 2})).ok());
    ExpectInvalid(with(TensorOf<int32_t>({3}, {5, -1, 2})),
                  op + ": seq_lens[1] is -1, out of range [0, 5] (seq)");
    ExpectInvalid(with(TensorOf<int64_t>({3}, {0, 0, 6})),
                  op + ": seq_lens[2] is 6, out of range [0, 5] (seq)");
    ExpectInvalid(with(TensorOf<float>({3}, {5, 5, 5})),
                  "unsupported dtype f32 for " + op + " seq_lens: expected i32 or i64");
    ExpectInvalid(with(TensorOf<int64_t>({4}, {5, 5, 5, 5})),
                  op + ": seq_lens has shape [4], expected [3]");
    ExpectInvalid(with(TensorOf<int32_t>({3, 1}, {5, 5, 5})),
                  op + ": seq_lens has shape [3, 1], expected [3]");
  }
  // Only after all the other inputs: the LSTM's p, the GRU's biases.
  LayerSizes s{5, 3, 2, 4, true, false};
  const std::vector<NDArray> lstm = LayerInputs(rng, s, 4);
  const NDArray lens = TensorOf<int64_t>({3}, {5, 5, 5});
  std::vector<NDArray> no_p(lstm.begin(), lstm.begin() + 7);
  no_p.push_back(lens);
  ExpectInvalid(RunKernel("nn.lstm", {}, no_p, {}, 3),
                "unsupported dtype i64 for nn.lstm p: expected f32");
  ExpectInvalid(RunKernel("nn.lstm", {}, {lstm[0], lstm[1], lstm[2], lstm[3], lstm[4], lens}, {},
                          3),
                "nn.lstm takes 5 or 7 or 8 or 9 inputs");
  const std::vector<NDArray> gru = LayerInputs(rng, s, 3);
  ExpectInvalid(RunKernel("nn.gru", {}, {gru[0], gru[1], gru[2], gru[3], lens}, {}, 2),
                "nn.gru takes 4 or 6 or 7 inputs (x, h0, w_ih, w_hh and optionally b_ih, b_hh, "
                "then seq_lens), got 5");
  ExpectInvalid(RunKernel("nn.gru", {}, {gru[0], gru[1], gru[2], gru[3], gru[4], lens}, {}, 2),
                "unsupported dtype i64 for nn.gru b_hh: expected f32");
  // The cells take none.
  ExpectInvalid(RunKernel("nn.gru_cell", {},
                          {Empty({3, 2}), gru[1], gru[2], gru[3], gru[4], gru[5], lens}),
                "nn.gru_cell takes 4 or 6 inputs");
}

// ---------------------------------------------------------------------------------------
// ONNX's activations and clip (kernels/nn/rnn_activation.h), and nn.rnn: against the
// double reference with the same functions, on the layer cases (at most 8 steps) with
// random functions in every slot (their alpha and beta exact in float, or left to their
// defaults), no clip or one that binds, the variants, reverse and seq_lens. Functions
// such as Affine or Relu let the states grow past [-1, 1], so the tolerance is relative
// too: kActivationTolerance absolute and relative.

constexpr double kActivationTolerance = 1e-5;

// ONNX's names, and which of them take activation_alpha and activation_beta values.
constexpr const char* kActivationNames[] = {"Relu",       "Tanh",        "Sigmoid",  "Affine",
                                            "LeakyRelu",  "ThresholdedRelu", "ScaledTanh",
                                            "HardSigmoid", "Elu",        "Softsign", "Softplus"};

bool TakesAlpha(const std::string& name) {
  return name == "Affine" || name == "LeakyRelu" || name == "ThresholdedRelu" ||
         name == "ScaledTanh" || name == "HardSigmoid" || name == "Elu";
}
bool TakesBeta(const std::string& name) {
  return name == "Affine" || name == "ScaledTanh" || name == "HardSigmoid";
}

// The defaults of ONNX's operators of the same names (ScaledTanh's: 1, 1).
void SetDefaults(RefActivation& a) {
  a.alpha = a.name == "LeakyRelu" ? 0.01f : a.name == "HardSigmoid" ? 0.2f : 1;
  a.beta = a.name == "HardSigmoid" ? 0.5f : a.name == "ScaledTanh" ? 1 : 0;
}

// Random functions for the slots of the layer with `gates` gates (its defaults now and
// then), their names in any case, some of their alpha and beta values (the rest left to
// the defaults), and a clip now and then, always with an unbounded function (else the
// LSTM's cell state may grow past float's range): into `attrs`, and as the reference's.
RefActivations RandomActivations(std::mt19937& rng, int gates, Attrs& attrs) {
  RefActivations act = DefaultActivations(gates);
  if (rng() % 5 == 0) return act;
  RefActivation* slots[] = {&act.f, &act.g, &act.h};
  const char* attr_names[] = {"activation_f", "activation_g", "activation_h"};
  const int count = gates == 4 ? 3 : gates == 3 ? 2 : 1;
  std::vector<RefActivation*> alpha_takers, beta_takers;
  bool unbounded = false;
  for (int i = 0; i < count; ++i) {
    RefActivation& a = *slots[i];
    a.name = kActivationNames[RandomInt(rng, 0, 10)];
    SetDefaults(a);
    std::string name = a.name;
    if (rng() % 4 == 0) std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    attrs[attr_names[i]] = name;
    if (TakesAlpha(a.name)) alpha_takers.push_back(&a);
    if (TakesBeta(a.name)) beta_takers.push_back(&a);
    unbounded = unbounded || a.name == "Relu" || a.name == "Affine" || a.name == "LeakyRelu" ||
                a.name == "ThresholdedRelu" || a.name == "Elu" || a.name == "Softplus";
  }
  constexpr double kValues[] = {0.25, 0.5, 1.5, 2.0, -0.75};  // exact in float
  std::vector<double> alphas, betas;
  for (size_t i = 0, n = RandomInt(rng, 0, alpha_takers.size()); i < n; ++i) {
    alphas.push_back(alpha_takers[i]->alpha = kValues[RandomInt(rng, 0, 4)]);
  }
  for (size_t i = 0, n = RandomInt(rng, 0, beta_takers.size()); i < n; ++i) {
    betas.push_back(beta_takers[i]->beta = kValues[RandomInt(rng, 0, 4)]);
  }
  if (!alphas.empty()) attrs["activation_alpha"] = alphas;
  if (!betas.empty()) attrs["activation_beta"] = betas;
  if (unbounded || rng() % 2 == 0) {
    act.clip = rng() % 2 == 0 ? 0.5 : 3.0;
    attrs["clip"] = act.clip;
  }
  return act;
}

TEST(RnnLayerTest, ActivationsAndClipMatchTheDoubleReference) {
  std::mt19937 rng(90);
  for (int gates : {4, 3, 1}) {
    const int outputs = gates == 4 ? 3 : 2;
    for (const LayerSizes& plain : LayerCases(rng)) {
      LayerSizes s = rng() % 2 == 0 ? VariantOf(plain, gates) : plain;
      s.seq = std::min<int64_t>(s.seq, 8);
      const bool with_lens = rng() % 3 == 0;
      std::vector<NDArray> in =
          with_lens ? SeqLensInputs(rng, s, gates) : LayerInputs(rng, s, gates);
      std::vector<int64_t> lens;
      if (with_lens) {
        lens = RandomLengths(rng, s);
        in.push_back(LengthsOf(lens, DType::kI64));
      }
      Attrs attrs = LayerAttrs(s, gates, rng);
      const RefActivations act = RandomActivations(rng, gates, attrs);
      SCOPED_TRACE(Describe(s) << " " << LayerOp(gates) << " seq_lens " << with_lens << " f "
                               << act.f.name << " " << act.f.alpha << " " << act.f.beta << " g "
                               << act.g.name << " h " << act.h.name << " clip " << act.clip);
      absl::StatusOr<std::vector<NDArray>> out = RunKernel(LayerOp(gates), attrs, in, {}, outputs);
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<std::vector<double>> want = LayerReference(s, gates, in, lens, &act);
      for (int k = 0; k < outputs; ++k) {
        ExpectClose((*out)[k], want[k], kActivationTolerance, kActivationTolerance);
      }
    }
  }
}

TEST(RnnLayerTest, DefaultsNamedAreTheDefaultPath) {
  // The default functions named (in any case) and no clip: the vectorised gate passes,
  // bit for bit.
  std::mt19937 rng(91);
  for (int gates : {4, 3}) {
    const LayerSizes s{6, 3, 5, 13, true, true};
    const std::vector<NDArray> in = LayerInputs(rng, s, gates);
    Attrs named = {{"activation_f", std::string("sigmoid")}, {"activation_g", std::string("Tanh")}};
    if (gates == 4) named["activation_h"] = std::string("TANH");
    absl::StatusOr<std::vector<NDArray>> plain = RunKernel(LayerOp(gates), {}, in, {}, gates - 1);
    absl::StatusOr<std::vector<NDArray>> with = RunKernel(LayerOp(gates), named, in, {}, gates - 1);
    ASSERT_TRUE(plain.ok()) << plain.status();
    ASSERT_TRUE(with.ok()) << with.status();
    for (int k = 0; k < gates - 1; ++k) ExpectSameBits((*with)[k], (*plain)[k], "output");
  }
}

TEST(RnnLayerTest, ActivationErrors) {
  std::mt19937 rng(92);
  const LayerSizes s{5, 2, 3, 4, true, false};
  const std::vector<NDArray> in = LayerInputs(rng, s, 1);
  const std::vector<NDArray> lstm = LayerInputs(rng, s, 4);
  auto rnn = [&](Attrs attrs) { return RunKernel("nn.rnn", attrs, in, {}, 2); };
  ExpectInvalid(rnn({{"activation_f", std::string("Swish")}}),
                "unknown activation 'Swish': expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign or Softplus");
  ExpectInvalid(rnn({{"activation_f", std::string("LeakyRelu")},
                     {"activation_alpha", std::vector<double>{0.1, 0.2}}}),
                "activation_alpha has 2 and activation_beta 0 values, the activations take 1 "
                "and 0");
  ExpectInvalid(rnn({{"activation_beta", std::vector<double>{1}}}),
                "activation_alpha has 0 and activation_beta 1 values, the activations take 0 "
                "and 0");
  ExpectInvalid(rnn({{"activation_alpha", std::string("1")}}),
                "attribute 'activation_alpha' must be a list of floats");
  ExpectInvalid(rnn({{"clip", 0.0}}), "attribute 'clip' must be > 0, got 0");
  ExpectInvalid(rnn({{"clip", -1.0}}), "attribute 'clip' must be > 0, got -1");
  ExpectInvalid(rnn({{"activation_g", std::string("Tanh")}}), "activation_g");
  ExpectInvalid(rnn({{"linear_before_reset", int64_t{0}}}), "linear_before_reset");
  ExpectInvalid(RunKernel("nn.gru", {{"activation_h", std::string("Tanh")}},
                          LayerInputs(rng, s, 3), {}, 2),
                "activation_h");
  ExpectInvalid(RunKernel("nn.lstm", {{"activation_h", int64_t{1}}}, lstm, {}, 3),
                "activation_h");
}

TEST(SimpleRnnLayerTest, Errors) {
  std::mt19937 rng(93);
  const LayerSizes s{5, 2, 3, 4, true, false};
  const std::vector<NDArray> in = LayerInputs(rng, s, 1);
  auto with = [&](int index, NDArray t) {
    std::vector<NDArray> v = in;
    v[index] = std::move(t);
    return RunKernel("nn.rnn", {}, v, {}, 2);
  };
  ExpectInvalid(with(0, Empty({5, 2, 3}, DType::kF64)),
                "unsupported dtype f64 for nn.rnn x: expected f32");
  ExpectInvalid(with(1, Empty({3, 4})),
                "nn.rnn: x [5, 2, 3] and h0 [3, 4] must be [seq, batch, input_size] and [batch, "
                "hidden_size]");
  ExpectInvalid(with(2, Empty({8, 3})), "nn.rnn: w_ih has shape [8, 3], expected [4, 3]");
  ExpectInvalid(with(3, Empty({4, 3})), "nn.rnn: w_hh has shape [4, 3], expected [4, 4]");
  ExpectInvalid(with(5, Empty({8})), "nn.rnn: b_hh has shape [8], expected [4]");
  ExpectInvalid(RunKernel("nn.rnn", {}, {in[0], in[1], in[2]}, {}, 2),
                "nn.rnn takes 4 or 6 or 7 inputs (x, h0, w_ih, w_hh and optionally b_ih, b_hh, "
                "then seq_lens), got 3");
  std::vector<NDArray> lens = in;
  lens.push_back(TensorOf<int32_t>({2}, {6, 0}));
  ExpectInvalid(RunKernel("nn.rnn", {}, lens, {}, 2),
                "nn.rnn: seq_lens[0] is 6, out of range [0, 5] (seq)");
  ExpectInvalid(CallWithOutputs("nn.rnn", {}, in, {Empty({5, 2, 4}), Empty({2, 5})}),
                "nn.rnn: output 1 has shape [2, 5], expected [2, 4]");
}

TEST(LstmLayerTest, Errors) {
  std::mt19937 rng(80);
  const LayerSizes s{5, 2, 3, 4, true, false};
  const std::vector<NDArray> in = LayerInputs(rng, s, 4);
  auto with = [&](int index, NDArray t) {
    std::vector<NDArray> v = in;
    v[index] = std::move(t);
    return RunKernel("nn.lstm", {}, v, {}, 3);
  };
  ExpectInvalid(with(0, Empty({5, 2, 3}, DType::kF64)),
                "unsupported dtype f64 for nn.lstm x: expected f32");
  ExpectInvalid(with(2, Empty({2, 4}, DType::kF16)),
                "unsupported dtype f16 for nn.lstm c0: expected f32");
  ExpectInvalid(with(0, Empty({2, 3})),
                "nn.lstm: x [2, 3] and h0 [2, 4] must be [seq, batch, input_size] and [batch, "
                "hidden_size]");
  ExpectInvalid(with(1, Empty({3, 4})),
                "nn.lstm: x [5, 2, 3] and h0 [3, 4] must be [seq, batch, input_size] and [batch, "
                "hidden_size]");
  ExpectInvalid(with(1, Empty({2, 4, 1})), "must be [seq, batch, input_size] and [batch, hidden_size]");
  ExpectInvalid(with(2, Empty({2, 5})), "nn.lstm: c0 has shape [2, 5], expected [2, 4]");
  ExpectInvalid(with(3, Empty({16, 4})), "nn.lstm: w_ih has shape [16, 4], expected [16, 3]");
  ExpectInvalid(with(4, Empty({12, 4})), "nn.lstm: w_hh has shape [12, 4], expected [16, 4]");
  ExpectInvalid(with(5, Empty({4})), "nn.lstm: b_ih has shape [4], expected [16]");
  ExpectInvalid(with(6, Empty({16, 1})), "nn.lstm: b_hh has shape [16, 1], expected [16]");
  ExpectInvalid(RunKernel("nn.lstm", {}, {in[0], in[1], in[2], in[3], in[4], in[5]}, {}, 3),
                "nn.lstm takes 5 or 7 or 8 or 9 inputs (x, h0, c0, w_ih, w_hh and optionally "
                "b_ih, b_hh, then p, then seq_lens), got 6");
  // The peepholes: [3 hid], and only after both biases.
  const NDArray p = TensorOf<float>({12}, std::vector<float>(12, 0.5f));
  std::vector<NDArray> with_p = in;
  with_p.push_back(p);
  EXPECT_TRUE(RunKernel("nn.lstm", {}, with_p, {}, 3).ok());
  with_p.back() = Empty({16});
  ExpectInvalid(RunKernel("nn.lstm", {}, with_p, {}, 3),
                "nn.lstm: p has shape [16], expected [12]");
  with_p.back() = Empty({12}, DType::kF64);
  ExpectInvalid(RunKernel("nn.lstm", {}, with_p, {}, 3),
                "unsupported dtype f64 for nn.lstm p: expected f32");
  ExpectInvalid(RunKernel("nn.lstm", {}, {in[0], in[1], in[2], in[3], in[4], p}, {}, 3),
                "nn.lstm takes 5 or 7 or 8 or 9 inputs");
  with_p.back() = p;
  with_p.push_back(p);
  ExpectInvalid(RunKernel("nn.lstm", {}, with_p, {}, 3),
                "unsupported dtype f32 for nn.lstm seq_lens: expected i32 or i64");
  with_p.push_back(p);
  ExpectInvalid(RunKernel("nn.lstm", {}, with_p, {}, 3), "got 10");
  with_p.pop_back();
  with_p.pop_back();
  ExpectInvalid(RunKernel("nn.lstm_cell", {}, {in[0], in[1], in[2], in[3], in[4], in[5], in[6], p},
                          {}, 2),
                "nn.lstm_cell takes 5 or 7 inputs");
  ExpectInvalid(RunKernel("nn.lstm", {{"linear_before_reset", int64_t{0}}}, in, {}, 3),
                "kernel 'nn.lstm': unknown attribute 'linear_before_reset'");
  ExpectInvalid(RunKernel("nn.lstm", {}, in, {}, 2), "takes any number of inputs and 3 outputs");
  ExpectInvalid(RunKernel("nn.lstm", {{"reverse", int64_t{2}}}, in, {}, 3),
                "kernel 'nn.lstm': attribute 'reverse' must be 0 or 1, got 2");
  ExpectInvalid(RunKernel("nn.lstm", {{"direction", std::string("reverse")}}, in, {}, 3),
                "kernel 'nn.lstm': unknown attribute 'direction'");
  ExpectInvalid(CallWithOutputs("nn.lstm", {}, in, {Empty({5, 2, 4}), Empty({2, 4}), Empty({2, 3})}),
                "nn.lstm: output 2 has shape [2, 3], expected [2, 4]");
  ExpectInvalid(CallWithOutputs("nn.lstm", {}, in, {Empty({2, 4}), Empty({2, 4}), Empty({2, 4})}),
                "nn.lstm: output 0 has shape [2, 4], expected [5, 2, 4]");
}

TEST(GruLayerTest, Errors) {
  std::mt19937 rng(81);
  const LayerSizes s{3, 2, 3, 4, false, false};
  const std::vector<NDArray> in = LayerInputs(rng, s, 3);
  ExpectInvalid(RunKernel("nn.gru", {}, {in[0], in[1], in[2]}, {}, 2),
                "nn.gru takes 4 or 6 or 7 inputs (x, h0, w_ih, w_hh and optionally b_ih, b_hh, "
                "then seq_lens), got 3");
  ExpectInvalid(RunKernel("nn.gru", {}, {in[0], in[1], Empty({16, 3}), in[3]}, {}, 2),
                "nn.gru: w_ih has shape [16, 3], expected [12, 3]");
  ExpectInvalid(RunKernel("nn.gru", {}, {in[0], Empty({2, 4}, DType::kI32), in[2], in[3]}, {}, 2),
                "unsupported dtype i32 for nn.gru h0: expected f32");
  ExpectInvalid(RunKernel("nn.gru", {}, {in[0], in[1], in[2], in[3], Empty({12}), Empty({11})}, {}, 2),
                "nn.gru: b_hh has shape [11], expected [12]");
  ExpectInvalid(RunKernel("nn.gru", {{"reverse", 1.5}}, in, {}, 2), "kernel 'nn.gru': attribute 'reverse'");
  ExpectInvalid(RunKernel("nn.gru", {{"linear_before_reset", int64_t{2}}}, in, {}, 2),
                "kernel 'nn.gru': attribute 'linear_before_reset' must be 0 or 1, got 2");
  ExpectInvalid(RunKernel("nn.gru_cell", {{"linear_before_reset", int64_t{0}}},
                          {Empty({2, 3}), in[1], in[2], in[3]}),
                "takes no attributes, got 'linear_before_reset'");
  ExpectInvalid(CallWithOutputs("nn.gru", {}, in, {Empty({3, 2, 4}), Empty({2, 4}, DType::kF64)}),
                "unsupported dtype f64 for nn.gru output: expected f32");
}

// ---------------------------------------------------------------------------------------
// The variants' microkernels (kernels/nn/ukernels.h), every table this CPU runs, against
// double references on every length from 0 to 40 (main loop and masked tails), and in
// place. Tolerance 2e-6 absolute, as for the other gates (nn_ukernels_test.cc); the
// peepholes add one product of values within ±6 to a gate, well inside it.


class RnnUkernelsTest : public ::testing::TestWithParam<const Microkernels*> {
 protected:
  const nn::NnUkernels& uk() const { return GetParam()->nn; }
};

TEST_P(RnnUkernelsTest, LstmPeepholeGates) {
  std::mt19937 rng(84);
  for (int64_t n = 0; n <= 40; ++n) {
    SCOPED_TRACE(n);
    const std::vector<float> gates = RandomFloats(rng, 4 * n, -6, 6),
                             c = RandomFloats(rng, n, -2, 2), p = RandomFloats(rng, 3 * n, -1.5, 1.5);
    std::vector<float> h_out(n), c_out(n);
    uk().lstm_peephole_gates(n, gates.data(), c.data(), p.data(), h_out.data(), c_out.data());
    for (int64_t j = 0; j < n; ++j) {
      const double i = Sigmoid(double{gates[j]} + double{p[j]} * c[j]);
      const double f = Sigmoid(double{gates[n + j]} + double{p[2 * n + j]} * c[j]);
      const double cell = f * c[j] + i * std::tanh(gates[2 * n + j]);
      const double o = Sigmoid(gates[3 * n + j] + p[n + j] * cell);
      ASSERT_NEAR(c_out[j], cell, 2e-6) << j;
      ASSERT_NEAR(h_out[j], o * std::tanh(cell), 2e-6) << j;
    }
    std::vector<float> c_inout = c;
    uk().lstm_peephole_gates(n, gates.data(), c_inout.data(), p.data(), h_out.data(),
                             c_inout.data());
    EXPECT_EQ(c_inout, c_out);
  }
}

TEST_P(RnnUkernelsTest, GruResetBeforeLinear) {
  std::mt19937 rng(85);
  for (int64_t n = 0; n <= 40; ++n) {
    SCOPED_TRACE(n);
    const std::vector<float> gi = RandomFloats(rng, 3 * n, -6, 6),
                             gh = RandomFloats(rng, 3 * n, -6, 6), h = RandomFloats(rng, n, -1, 1);
    std::vector<float> rh(n), h_out(n);
    uk().gru_reset(n, gi.data(), gh.data(), h.data(), rh.data());
    uk().gru_prereset_gates(n, gi.data(), gh.data(), h.data(), h_out.data());
    for (int64_t j = 0; j < n; ++j) {
      ASSERT_NEAR(rh[j], Sigmoid(double{gi[j]} + gh[j]) * h[j], 2e-6) << j;
      const double z = Sigmoid(double{gi[n + j]} + gh[n + j]);
      const double m = std::tanh(double{gi[2 * n + j]} + gh[2 * n + j]);
      ASSERT_NEAR(h_out[j], (1 - z) * m + z * h[j], 2e-6) << j;
    }
    std::vector<float> h_inout = h;
    uk().gru_prereset_gates(n, gi.data(), gh.data(), h_inout.data(), h_inout.data());
    EXPECT_EQ(h_inout, h_out);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, RnnUkernelsTest, ::testing::ValuesIn(EveryMicrokernelTable()),
                         MicrokernelTableName);

}  // namespace
}  // namespace dynvm::kernels::testing
