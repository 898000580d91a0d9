// What the kernel benchmarks (bench_kernels) share: thread pools by size, random
// tensors, rate counters, and a kernel bound and called as the VM calls it.
//
//   BoundCall call("nn.softmax", {{"axis", int64_t{-1}}}, {RandomTensor({12, 384, 384}, 1)});
//   RunLoop(state, call, BenchPool(2));
//   state.counters["GBps"] = Giga(bytes_per_call);
#ifndef DYNVM_BENCH_KERNEL_BENCH_UTIL_H_
#define DYNVM_BENCH_KERNEL_BENCH_UTIL_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::bench {

// The pool of `threads` threads, created on first use and kept, so that no benchmark
// pays for starting threads.
ThreadPool& BenchPool(int threads);

// A rate counter of `per_iteration` units per iteration, in billions per second (GFLOPS,
// GBps).
benchmark::Counter Giga(double per_iteration);

// `n` floats uniform in [-1, 1) from `seed`.
std::vector<float> RandomFloats(int64_t n, uint32_t seed);

// A tensor of `shape`: f32 uniform in [-1, 1), or for other dtypes random bytes below
// 64 (small, valid values of every dtype).
NDArray RandomTensor(std::vector<int64_t> shape, uint32_t seed, DType dtype = DType::kF32);

// A kernel bound from the default registry with its inputs, and outputs of `out_dtype`
// allocated from its shape function: ready to call repeatedly. A kernel that does not
// bind or infer its shapes aborts the benchmark binary (a bug in the benchmark).
class BoundCall {
 public:
  BoundCall(std::string_view name, const Attrs& attrs, std::vector<NDArray> inputs,
            int num_outputs = 1, DType out_dtype = DType::kF32);

  // Calls the kernel on `pool`; a failure ends the benchmark with the error.
  bool Run(benchmark::State& state, ThreadPool& pool);

 private:
  std::vector<NDArray> inputs_;
  std::vector<NDArray> outputs_;
  BoundKernel kernel_;
  std::vector<NDArrayObj*> args_;
};

// Calls `call` on `pool` for every iteration of `state`.
void RunLoop(benchmark::State& state, BoundCall& call, ThreadPool& pool);

// One kernel of a chain run as separate calls, to compare with a fused kernel; `args`
// index the chain's values: its inputs, then the results of the steps before.
struct ChainStep {
  const char* kernel;
  Attrs attrs;
  std::vector<int> args;
};

// Calls the kernels of `steps` in turn on 2 threads, as an unfused executable does: each
// result is written to a tensor allocated once and read back by the next kernel.
// `values` are the chain's inputs.
void RunChain(benchmark::State& state, const std::vector<ChainStep>& steps,
              std::vector<NDArray> values);

}  // namespace dynvm::kernels::bench

#endif  // DYNVM_BENCH_KERNEL_BENCH_UTIL_H_
