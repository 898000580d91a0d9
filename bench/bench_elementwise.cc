// Benchmarks of the elementwise and reduction kernels (kernels/unary.cc, binary.cc,
// reduce.cc) at BERT shapes, each called as the VM calls it: bound once from the default
// registry, outputs allocated once, then Call on a pool of 2 threads.
//
//   build/bin/bench_kernels --benchmark_filter='BM_(Gelu|ReduceSum|AddBroadcast)'
//
// All report "GBps" (bytes read plus written per iteration) to compare with
// BM_MemoryBandwidth; gelu also reports "GFLOPS" to compare with BM_FmaPeak, counting
// the floating-point operations of its AVX2 microkernel (an FMA counts as 2).
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"

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

}  // namespace
}  // namespace dynvm::kernels::bench
