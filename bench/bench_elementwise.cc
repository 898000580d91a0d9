// Benchmarks of the elementwise and reduction kernels (kernels/elementwise/unary.cc, binary.cc,
// reduce.cc, fused_elementwise.cc) at BERT shapes, each called as the VM calls it: bound
// once from the default registry, outputs allocated once, then Call on a pool of 2
// threads.
//
//   build/bin/bench_kernels --benchmark_filter='BM_(Gelu|ReduceSum|AddBroadcast|FusedElementwise)'
//
// All report "GBps" (bytes read plus written per iteration) to compare with
// BM_MemoryBandwidth; gelu also reports "GFLOPS" to compare with BM_FmaPeak, counting
// the floating-point operations of its AVX2 microkernel (an FMA counts as 2).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"
#include "objects/allocator.h"

namespace dynvm::kernels::bench {
namespace {

// Binds `name` and calls it in the benchmark loop on 2 threads.
void RunKernel(benchmark::State& state, std::string_view name, const Attrs& attrs,
               std::vector<NDArray> inputs) {
  BoundCall call(name, attrs, std::move(inputs));
  RunLoop(state, call, BenchPool(2));
}

// Floating-point operations per element of the AVX2 GELU microkernel, counted in its
// instructions (an FMA counts 2; compares, min/max and logic count 0):
// 0.5 x + 0.5 x erf(x / sqrt 2) with erf = x P(x^2) / Q(x^2), P of degree 6 and Q of
// degree 4 in x^2 (20), the division, and 6 multiplies and adds.
constexpr double kGeluFlops = 27;

// The feed-forward activation of BERT-base: [seq, 3072].
void BM_Gelu(benchmark::State& state) {
  const int64_t n = state.range(0) * 3072;
  RunKernel(state, "gelu", {}, {RandomTensor({state.range(0), 3072}, 1)});
  state.counters["GBps"] = Giga(8.0 * n);
  state.counters["GFLOPS"] = Giga(kGeluFlops * n);
}
BENCHMARK(BM_Gelu)->Arg(128)->Arg(384)->UseRealTime();

void BM_ReduceSum(benchmark::State& state) {
  const int64_t rows = 384, cols = 768;
  RunKernel(state, "sum", {{"axis", int64_t{-1}}}, {RandomTensor({rows, cols}, 2)});
  state.counters["GBps"] = Giga(4.0 * (rows * cols + rows));
}
BENCHMARK(BM_ReduceSum)->UseRealTime();

// A bias add: [384, 768] + [768].
void BM_AddBroadcast(benchmark::State& state) {
  const int64_t rows = 384, cols = 768;
  RunKernel(state, "add", {}, {RandomTensor({rows, cols}, 3), RandomTensor({cols}, 4)});
  state.counters["GBps"] = Giga(4.0 * (2 * rows * cols + cols));
}
BENCHMARK(BM_AddBroadcast)->UseRealTime();

// ---------------------------------------------------------------------------------------
// fused_elementwise against the same chain run as separate kernels.

struct FusionCase {
  const char* label;
  std::vector<std::vector<int64_t>> shapes;  // of the inputs
  const char* program;
  std::vector<ChainStep> steps;  // the same chain, one kernel per operator
};

const FusionCase kFusionCases[] = {
    // BERT-base FFN: the bias add and GELU after the up-projection, [seq 128, 3072].
    {"bias+gelu [128,3072]+[3072]",
     {{128, 3072}, {3072}},
     "t0 = add(i0, i1); t1 = gelu(t0)",
     {{"add", {}, {0, 1}}, {"gelu", {}, {2}}}},
    // A residual add scaled per channel: (x + r) * gamma, [384, 768].
    {"(x+r)*gamma [384,768]",
     {{384, 768}, {384, 768}, {768}},
     "t0 = add(i0, i1); t1 = multiply(t0, i2)",
     {{"add", {}, {0, 1}}, {"multiply", {}, {3, 2}}}},
    // ResNet-50's last stage, batch 8: per-channel scale, shift and ReLU on rows of 7x7,
    // short enough that blocks group them and gather the per-channel operands.
    {"relu(x*s+b) [8,2048,7,7]*[2048,1,1]",
     {{8, 2048, 7, 7}, {2048, 1, 1}, {2048, 1, 1}},
     "t0 = multiply(i0, i1); t1 = add(t0, i2); t2 = nn.relu(t1)",
     {{"multiply", {}, {0, 1}}, {"add", {}, {3, 2}}, {"nn.relu", {}, {4}}}},
};

// Arguments: the case (kFusionCases), and 1 for fused_elementwise or 0 for the separate
// kernels. GBps counts the fused kernel's traffic (inputs read once, output written
// once) for both, so that the ratio of the two is the ratio of their times.
void BM_FusedElementwise(benchmark::State& state) {
  const FusionCase& c = kFusionCases[state.range(0)];
  std::vector<NDArray> inputs;
  int64_t bytes = 0;
  for (size_t j = 0; j < c.shapes.size(); ++j) {
    inputs.push_back(RandomTensor(c.shapes[j], static_cast<uint32_t>(j + 1)));
    bytes += 4 * inputs.back()->num_elements();
  }
  bytes += 4 * inputs.front()->num_elements();  // the output, of the first input's shape
  if (state.range(1) == 1) {
    RunKernel(state, "fused_elementwise", {{"program", std::string(c.program)}},
              std::move(inputs));
  } else {
    RunChain(state, c.steps, std::move(inputs));
  }
  state.counters["GBps"] = Giga(static_cast<double>(bytes));
  state.SetLabel(c.label);
}
BENCHMARK(BM_FusedElementwise)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->ArgNames({"chain", "fused"})
    ->UseRealTime();

}  // namespace
}  // namespace dynvm::kernels::bench
