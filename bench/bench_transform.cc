// Benchmarks of the data-movement kernels, called through the registry as the VM calls
// them (wrapper checks included), on a pool of two threads:
//
//   build/bin/bench_kernels
//   --benchmark_filter='BM_(Transpose|Take|Concatenate|MemoryBandwidth)'
//
// They are memory-bound, so each reports "GBps" (bytes read plus bytes written per
// second / 1e9) to compare with BM_MemoryBandwidth of bench_gemm.cc.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"

namespace dynvm::kernels::bench {
namespace {

// BERT's head split: [heads, seq, head_dim] -> [seq, heads, head_dim]; rows of 64
// floats move whole. `/0` is that shape; `/1` a square 2-D transpose (the blocked path).
void BM_Transpose(benchmark::State& state) {
  const bool square = state.range(0) == 1;
  const std::vector<int64_t> in_shape =
      square ? std::vector<int64_t>{1024, 1024} : std::vector<int64_t>{12, 384, 64};
  const std::vector<int64_t> axes =
      square ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{1, 0, 2};
  NDArray x = RandomTensor(in_shape, 1);
  const double bytes = 2.0 * x->nbytes();
  BoundCall call("transpose", {{"axes", axes}}, {std::move(x)});
  RunLoop(state, call, BenchPool(2));
  state.counters["GBps"] = Giga(bytes);
}
BENCHMARK(BM_Transpose)->Arg(0)->Arg(1)->UseRealTime();

// BERT's word-embedding lookup: 384 token ids into a 30522 x 768 table.
void BM_Take(benchmark::State& state) {
  constexpr int64_t kVocab = 30522, kHidden = 768, kSeq = 384;
  NDArray ids = RandomTensor({1, kSeq}, 4, DType::kI64);
  std::mt19937 rng(4);
  for (int64_t i = 0; i < kSeq; ++i) ids->data_as<int64_t>()[i] = rng() % kVocab;
  const double bytes = 2.0 * 4 * kSeq * kHidden + ids->nbytes();
  BoundCall call("take", {{"axis", int64_t{0}}, {"mode", std::string("fast")}},
                 {RandomTensor({kVocab, kHidden}, 3), std::move(ids)});
  RunLoop(state, call, BenchPool(2));
  state.counters["GBps"] = Giga(bytes);
}
BENCHMARK(BM_Take)->UseRealTime();

// Joining Q, K and V projections [384, 768] along the hidden axis, and the same three
// along the sequence axis (one contiguous block each).
void BM_Concatenate(benchmark::State& state) {
  const int64_t axis = state.range(0);
  BoundCall call("concatenate", {{"axis", axis}},
                 {RandomTensor({384, 768}, 6), RandomTensor({384, 768}, 7),
                  RandomTensor({384, 768}, 8)});
  RunLoop(state, call, BenchPool(2));
  state.counters["GBps"] = Giga(2.0 * 4 * 3 * 384 * 768);
}
BENCHMARK(BM_Concatenate)->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
}  // namespace dynvm::kernels::bench
