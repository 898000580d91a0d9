// The run cases of the corpus's whole models (model_*.relay): each at several batch
// sizes, lengths or tree shapes against a reference computed here in double.
// Tolerances, as |got - want| <= tol * (1 + |want|): 1e-5 for the perceptron, the
// recurrent cells and the list library (sums of at most 16 products of values in
// [-1, 1], then sigmoid/tanh/softmax); 1e-4 for attention, whose scores are sums of 16
// products of projections of magnitude up to ~4 and go through exp.
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/compiler/relay_text/corpus_util.h"

namespace dynvm::compiler::corpus {
namespace {

void ModelMlp(vm::VirtualMachine& machine) {
  std::mt19937 rng(101);
  const NDArray w1 = Random({16, 8}, rng), b1 = Random({16}, rng), w2 = Random({4, 16}, rng), b2 = Random({4}, rng);
  for (int64_t n : {1, 3, 17, 64}) {
    const NDArray x = Random({n, 8}, rng);
    Values h = MatMul(ValuesOf(x), ValuesOf(w1), n, 8, 16, /*transpose_b=*/true);
    for (int64_t i = 0; i < n * 16; ++i) h[i] = std::max(0.0, h[i] + ValuesOf(b1)[i % 16]);
    Values o = MatMul(h, ValuesOf(w2), n, 16, 4, /*transpose_b=*/true);
    for (int64_t i = 0; i < n * 4; ++i) o[i] += ValuesOf(b2)[i % 4];
    SoftmaxRows(o, n, 4);
    const auto out = Invoke(machine, {Value(x), Value(w1), Value(b1), Value(w2), Value(b2)});
    ASSERT_TRUE(out);
    ExpectTensor(*out, DType::kF32, {n, 4}, o, 1e-5);
  }
}

void ModelAttention(vm::VirtualMachine& machine) {
  std::mt19937 rng(102);
  const NDArray wq = Random({16, 16}, rng), wk = Random({16, 16}, rng), wv = Random({16, 16}, rng);
  for (int64_t n : {1, 5, 33}) {
    const NDArray x = Random({n, 16}, rng);
    const Values xv = ValuesOf(x);
    const Values q = MatMul(xv, ValuesOf(wq), n, 16, 16, true), k = MatMul(xv, ValuesOf(wk), n, 16, 16, true),
                 v = MatMul(xv, ValuesOf(wv), n, 16, 16, true);
    Values s = MatMul(q, k, n, 16, n, true);
    for (double& e : s) e *= 0.25;
    SoftmaxRows(s, n, n);
    const auto out = Invoke(machine, {Value(x), Value(wq), Value(wk), Value(wv)});
    ASSERT_TRUE(out);
    ExpectTensor(*out, DType::kF32, {n, 16}, MatMul(s, v, n, n, 16, false), 1e-4);
  }
}

// One LSTM step on [b, 4] inputs with hidden size 8, gates i, f, g, o in that order.
struct LstmState {
  Values h, c;
};
LstmState LstmStep(const Values& x, const LstmState& s, const Values& w_ih, const Values& w_hh, const Values& bias,
                   int64_t b) {
  const Values gx = MatMul(x, w_ih, b, 4, 32, true), gh = MatMul(s.h, w_hh, b, 8, 32, true);
  LstmState next{Values(b * 8), Values(b * 8)};
  for (int64_t r = 0; r < b; ++r) {
    const auto gate = [&](int g, int64_t j) { return gx[r * 32 + g * 8 + j] + gh[r * 32 + g * 8 + j] + bias[g * 8 + j]; };
    for (int64_t j = 0; j < 8; ++j) {
      const double i = Sigmoid(gate(0, j)), f = Sigmoid(gate(1, j)), g = std::tanh(gate(2, j)),
                   o = Sigmoid(gate(3, j));
      next.c[r * 8 + j] = f * s.c[r * 8 + j] + i * g;
      next.h[r * 8 + j] = o * std::tanh(next.c[r * 8 + j]);
    }
  }
  return next;
}

void ModelLstmFold(vm::VirtualMachine& machine) {
  std::mt19937 rng(103);
  const NDArray w_ih = Random({32, 4}, rng), w_hh = Random({32, 8}, rng), bias = Random({32}, rng);
  for (int64_t b : {1, 2}) {
    for (int64_t length : {0, 1, 3, 10}) {
      const NDArray h0 = Random({b, 8}, rng), c0 = Random({b, 8}, rng);
      LstmState state{ValuesOf(h0), ValuesOf(c0)};
      std::vector<Value> xs;
      for (int64_t t = 0; t < length; ++t) {
        const NDArray x = Random({b, 4}, rng);
        xs.push_back(Value(x));
        state = LstmStep(ValuesOf(x), state, ValuesOf(w_ih), ValuesOf(w_hh), ValuesOf(bias), b);
      }
      const auto out =
          Invoke(machine, {MakeList(xs), Value(h0), Value(c0), Value(w_ih), Value(w_hh), Value(bias)});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 2);
      ExpectTensor(r[0], DType::kF32, {b, 8}, state.h, 1e-5);
      ExpectTensor(r[1], DType::kF32, {b, 8}, state.c, 1e-5);
    }
  }
}

// The weights of the child-sum Tree-LSTM of model_tree_lstm.relay.
struct TreeLstmWeights {
  Values w, u, wf, uf;  // [12, 3], [12, 4], [4, 3], [4, 4]
};
struct Tree {
  Value value;      // Node(x, children) as the program takes it
  LstmState state;  // (h, c), each [1, 4]
  int64_t size;
};

// A random tree of depth at most `depth`, up to three children a node, with its state.
Tree BuildTree(int depth, const TreeLstmWeights& p, std::mt19937& rng) {
  const NDArray x = Random({1, 3}, rng);
  const Values xv = ValuesOf(x);
  const int children = depth == 0 ? 0 : std::uniform_int_distribution<int>(0, 3)(rng);
  std::vector<Value> child_values;
  Values h_sum(4, 0.0), fc_sum(4, 0.0);
  const Values wfx = MatMul(xv, p.wf, 1, 3, 4, true);
  int64_t size = 1;
  for (int i = 0; i < children; ++i) {
    const Tree child = BuildTree(depth - 1, p, rng);
    child_values.push_back(child.value);
    size += child.size;
    const Values ufh = MatMul(child.state.h, p.uf, 1, 4, 4, true);
    for (int j = 0; j < 4; ++j) {
      h_sum[j] += child.state.h[j];
      fc_sum[j] += Sigmoid(wfx[j] + ufh[j]) * child.state.c[j];
    }
  }
  const Values wx = MatMul(xv, p.w, 1, 3, 12, true), uh = MatMul(h_sum, p.u, 1, 4, 12, true);
  LstmState state{Values(4), Values(4)};
  for (int j = 0; j < 4; ++j) {
    const double i = Sigmoid(wx[j] + uh[j]), o = Sigmoid(wx[4 + j] + uh[4 + j]), u = std::tanh(wx[8 + j] + uh[8 + j]);
    state.c[j] = i * u + fc_sum[j];
    state.h[j] = o * std::tanh(state.c[j]);
  }
  return {Value(ADTObj::Create(0, {Value(x), MakeList(child_values)})), state, size};
}

void ModelTreeLstm(vm::VirtualMachine& machine) {
  std::mt19937 rng(104);
  const NDArray w = Random({12, 3}, rng), u = Random({12, 4}, rng), wf = Random({4, 3}, rng), uf = Random({4, 4}, rng);
  const TreeLstmWeights p{ValuesOf(w), ValuesOf(u), ValuesOf(wf), ValuesOf(uf)};
  for (int trial = 0; trial < 8; ++trial) {
    const Tree tree = BuildTree(trial % 4, p, rng);
    const auto out = Invoke(machine, {tree.value, Value(w), Value(u), Value(wf), Value(uf)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectTensor(r[0], DType::kF32, {1, 4}, tree.state.h, 1e-5);
    ExpectTensor(r[1], DType::kF32, {1, 4}, tree.state.c, 1e-5);
    ExpectScalar(r[2], DType::kI64, static_cast<double>(tree.size));
  }
}

void ModelListLibrary(vm::VirtualMachine& machine) {
  std::mt19937 rng(105);
  for (int64_t n : {1, 3}) {
    for (int64_t length : {0, 1, 4, 7}) {
      std::vector<Value> items;
      std::vector<Values> xs;
      while (static_cast<int64_t>(xs.size()) < length) {
        const NDArray x = Random({n}, rng);
        const Values xv = ValuesOf(x);
        // Sums within 1e-3 of the threshold (0) could compare differently in float32.
        if (std::fabs(std::accumulate(xv.begin(), xv.end(), 0.0)) < 1e-3) continue;
        xs.push_back(xv);
        items.push_back(Value(x));
      }
      const NDArray seed = Random({n}, rng);
      const Values sv = ValuesOf(seed);
      const auto out = Invoke(machine, {MakeList(items), Value(seed), Value(Scalar(DType::kF32, 0))});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 6);
      ExpectScalar(r[0], DType::kI64, static_cast<double>(length));
      Values squares = sv, alternating = sv;
      for (const Values& x : xs) squares = Zip(squares, x, [](double a, double v) { return a + v * v; });
      for (auto it = xs.rbegin(); it != xs.rend(); ++it) alternating = Zip(*it, alternating, std::minus<double>());
      ExpectTensor(r[1], DType::kF32, {n}, squares, 1e-5);
      std::vector<Values> kept;
      for (const Values& x : xs) {
        if (std::accumulate(x.begin(), x.end(), 0.0) > 0) kept.push_back(x);
      }
      const std::vector<Value> filtered = ListItems(r[2]), reversed = ListItems(r[3]), appended = ListItems(r[5]);
      ASSERT_EQ(filtered.size(), kept.size());
      for (size_t i = 0; i < kept.size(); ++i) ExpectTensor(filtered[i], DType::kF32, {n}, kept[i]);
      ASSERT_EQ(reversed.size(), xs.size());
      for (size_t i = 0; i < xs.size(); ++i) ExpectTensor(reversed[i], DType::kF32, {n}, xs[xs.size() - 1 - i]);
      ExpectTensor(r[4], DType::kF32, {n}, alternating, 1e-5);
      ASSERT_EQ(appended.size(), xs.size() + 1);
      for (size_t i = 0; i < xs.size(); ++i) ExpectTensor(appended[i], DType::kF32, {n}, xs[i]);
      ExpectTensor(appended.back(), DType::kF32, {n}, sv);
    }
  }
}

}  // namespace

std::vector<Case> ModelCases() {
  return {
      {"model_mlp.relay", ModelMlp},
      {"model_attention.relay", ModelAttention},
      {"model_lstm_fold.relay", ModelLstmFold},
      {"model_tree_lstm.relay", ModelTreeLstm},
      {"model_list_library.relay", ModelListLibrary},
  };
}

}  // namespace dynvm::compiler::corpus
