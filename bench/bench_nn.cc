// Benchmarks of the neural-network kernels (kernels/nn/) at BERT and ResNet-50 shapes,
// each called as the VM calls it: bound once from the default registry, outputs
// allocated once, then Call on a pool of 2 threads.
//
//   build/bin/bench_kernels
//   --benchmark_filter='BM_(Softmax|LayerNorm|Attention|Conv2d|LstmCell)'
//
// Memory-bound kernels (softmax, layer_norm) report "GBps", bytes read plus written per
// iteration, to compare with BM_MemoryBandwidth (bench_gemm.cc); compute-bound ones
// (attention, convolution, LSTM) report "GFLOPS", to compare with BM_FmaPeak.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"
#include "objects/allocator.h"

namespace dynvm::kernels::bench {
namespace {

// Softmax over the last axis of BERT-base's attention scores, [12 heads, seq, seq].
void BM_Softmax(benchmark::State& state) {
  const int64_t seq = state.range(0);
  BoundCall call("nn.softmax", {{"axis", int64_t{-1}}}, {RandomTensor({12, seq, seq}, 1)});
  RunLoop(state, call, BenchPool(2));
  state.counters["GBps"] = Giga(2.0 * 4 * 12 * seq * seq);
}
BENCHMARK(BM_Softmax)->Arg(128)->Arg(384)->UseRealTime();

// BERT-base's attention probabilities, softmax(scores * 0.125 + mask) over [12, seq,
// seq] scores and a [1, 1, seq] padding mask, three ways: variant 0 runs multiply, add
// and nn.softmax; 1 runs fused_elementwise and nn.softmax; 2 runs nn.softmax with the
// chain as its prologue, whose result never reaches memory. GBps counts the one-call
// traffic (scores read, probabilities written) for all three, so that rates compare
// as times do.
void BM_SoftmaxPrologue(benchmark::State& state) {
  const int64_t seq = state.range(0);
  const std::string program = "t0 = multiply(i0, 0.125); t1 = add(t0, i1)";
  std::vector<NDArray> inputs = {RandomTensor({12, seq, seq}, 1), RandomTensor({1, 1, seq}, 2)};
  switch (state.range(1)) {
    case 0: {
      NDArray scale = *NDArrayObj::Empty({}, DType::kF32, MakeNaiveAllocator());
      *scale->data_as<float>() = 0.125f;
      inputs.push_back(std::move(scale));
      RunChain(state,
               {{"multiply", {}, {0, 2}}, {"add", {}, {3, 1}}, {"nn.softmax", {}, {4}}},
               std::move(inputs));
      break;
    }
    case 1:
      RunChain(state,
               {{"fused_elementwise", {{"program", program}}, {0, 1}}, {"nn.softmax", {}, {2}}},
               std::move(inputs));
      break;
    default: {
      BoundCall call("nn.softmax", {{"prologue", program}}, std::move(inputs));
      RunLoop(state, call, BenchPool(2));
    }
  }
  state.counters["GBps"] = Giga(2.0 * 4 * 12 * seq * seq);
  state.SetLabel(state.range(1) == 0   ? "multiply+add+softmax"
                 : state.range(1) == 1 ? "fused_elementwise+softmax"
                                       : "softmax with prologue");
}
BENCHMARK(BM_SoftmaxPrologue)
    ->ArgsProduct({{128, 384}, {0, 1, 2}})
    ->ArgNames({"seq", "variant"})
    ->UseRealTime();

// BERT-base's layer norm over [seq, 768].
void BM_LayerNorm(benchmark::State& state) {
  const int64_t seq = state.range(0);
  BoundCall call("nn.layer_norm", {{"epsilon", 1e-12}},
                 {RandomTensor({seq, 768}, 2), RandomTensor({768}, 3), RandomTensor({768}, 4)});
  RunLoop(state, call, BenchPool(2));
  state.counters["GBps"] = Giga(4.0 * (2 * seq * 768 + 2 * 768));
}
BENCHMARK(BM_LayerNorm)->Arg(128)->Arg(384)->UseRealTime();

// BERT-base self-attention of one sequence: 12 heads of 64, with a padding mask.
void BM_Attention(benchmark::State& state) {
  const int64_t seq = state.range(0);
  BoundCall call("nn.attention", {},
                 {RandomTensor({1, 12, seq, 64}, 5), RandomTensor({1, 12, seq, 64}, 6),
                  RandomTensor({1, 12, seq, 64}, 7), RandomTensor({1, 1, 1, seq}, 8)});
  RunLoop(state, call, BenchPool(2));
  state.counters["GFLOPS"] = Giga(2.0 * 2 * 12 * seq * seq * 64);  // q·kᵀ and p·v
}
BENCHMARK(BM_Attention)->Arg(128)->Arg(384)->UseRealTime();

// A ResNet-50 conv2_x layer, 3x3 64 -> 64 over 56x56 with padding 1, and the 1x1
// 256 -> 64 that precedes it; both with a bias. Arguments: in channels, out channels,
// kernel size.
void BM_Conv2d(benchmark::State& state) {
  const int64_t in_c = state.range(0), out_c = state.range(1), k = state.range(2);
  BoundCall call("nn.conv2d", {{"padding", std::vector<int64_t>{k / 2}}},
                 {RandomTensor({1, in_c, 56, 56}, 9), RandomTensor({out_c, in_c, k, k}, 10),
                  RandomTensor({out_c}, 11)});
  RunLoop(state, call, BenchPool(2));
  state.counters["GFLOPS"] = Giga(2.0 * out_c * in_c * k * k * 56 * 56);
}
BENCHMARK(BM_Conv2d)
    ->Args({64, 64, 3})
    ->Args({256, 64, 1})
    ->UseRealTime();

// One LSTM step, hidden and input 512, at batch 1 (a decoder) and 64.
void BM_LstmCell(benchmark::State& state) {
  const int64_t batch = state.range(0), hidden = 512;
  BoundCall call("nn.lstm_cell", {},
                 {RandomTensor({batch, hidden}, 12), RandomTensor({batch, hidden}, 13),
                  RandomTensor({batch, hidden}, 14), RandomTensor({4 * hidden, hidden}, 15),
                  RandomTensor({4 * hidden, hidden}, 16), RandomTensor({4 * hidden}, 17),
                  RandomTensor({4 * hidden}, 18)},
                 /*num_outputs=*/2);
  RunLoop(state, call, BenchPool(2));
  state.counters["GFLOPS"] = Giga(2.0 * 2 * batch * 4 * hidden * hidden);
}
BENCHMARK(BM_LstmCell)->Arg(1)->Arg(64)->UseRealTime();

}  // namespace
}  // namespace dynvm::kernels::bench
