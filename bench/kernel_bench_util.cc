// The kernel benchmarks' shared pieces (bench/kernel_bench_util.h): pools by size,
// random tensors, rate counters, and kernels bound and called as the VM calls them.
#include "bench/kernel_bench_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/api.h"
#include "objects/allocator.h"

namespace dynvm::kernels::bench {
namespace {

BoundKernel BindOrDie(std::string_view name, const Attrs& attrs, int num_inputs,
                      int num_outputs) {
  absl::StatusOr<BoundKernel> kernel =
      DefaultRegistry().Bind(name, attrs, num_inputs, num_outputs);
  if (!kernel.ok()) {
    std::fprintf(stderr, "binding %.*s: %s\n", static_cast<int>(name.size()), name.data(),
                 kernel.status().ToString().c_str());
    std::abort();
  }
  return *std::move(kernel);
}

}  // namespace

ThreadPool& BenchPool(int threads) {
  static auto* pools = new std::map<int, std::unique_ptr<ThreadPool>>;
  std::unique_ptr<ThreadPool>& pool = (*pools)[threads];
  if (pool == nullptr) pool = std::make_unique<ThreadPool>(threads);
  return *pool;
}

benchmark::Counter Giga(double per_iteration) {
  return benchmark::Counter(per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

std::vector<float> RandomFloats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

NDArray RandomTensor(std::vector<int64_t> shape, uint32_t seed, DType dtype) {
  NDArray t = *NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator());
  if (dtype == DType::kF32) {
    const std::vector<float> values = RandomFloats(t->num_elements(), seed);
    std::copy(values.begin(), values.end(), t->data_as<float>());
    return t;
  }
  std::mt19937 rng(seed);
  auto* bytes = static_cast<unsigned char*>(t->data());
  for (size_t i = 0; i < t->nbytes(); ++i) bytes[i] = static_cast<unsigned char>(rng() & 0x3f);
  return t;
}

BoundCall::BoundCall(std::string_view name, const Attrs& attrs, std::vector<NDArray> inputs,
                     int num_outputs, DType out_dtype)
    : inputs_(std::move(inputs)),
      kernel_(BindOrDie(name, attrs, static_cast<int>(inputs_.size()), num_outputs)) {
  for (const NDArray& in : inputs_) args_.push_back(in.get());
  std::vector<Shape> shapes(num_outputs);
  const absl::Status inferred = kernel_.InferShapes(args_.data(), shapes.data());
  if (!inferred.ok()) {
    std::fprintf(stderr, "shapes of %.*s: %s\n", static_cast<int>(name.size()), name.data(),
                 inferred.ToString().c_str());
    std::abort();
  }
  for (const Shape& shape : shapes) {
    outputs_.push_back(*NDArrayObj::Empty(shape, out_dtype, MakeNaiveAllocator()));
    args_.push_back(outputs_.back().get());
  }
}

bool BoundCall::Run(benchmark::State& state, ThreadPool& pool) {
  const absl::Status status = kernel_.Call(args_.data(), pool);
  if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  return status.ok();
}

void RunLoop(benchmark::State& state, BoundCall& call, ThreadPool& pool) {
  for (auto _ : state) {
    if (!call.Run(state, pool)) return;
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = pool.num_threads();
}

void RunChain(benchmark::State& state, const std::vector<ChainStep>& steps,
              std::vector<NDArray> values) {
  std::vector<BoundKernel> kernels;
  std::vector<std::vector<NDArrayObj*>> args;
  for (const ChainStep& step : steps) {
    absl::StatusOr<BoundKernel> kernel = DefaultRegistry().Bind(
        step.kernel, step.attrs, static_cast<int>(step.args.size()), /*num_outputs=*/1);
    std::vector<NDArrayObj*> step_args;
    for (int v : step.args) step_args.push_back(values[v].get());
    Shape shape;
    const absl::Status inferred =
        kernel.ok() ? kernel->InferShapes(step_args.data(), &shape) : kernel.status();
    if (!inferred.ok()) {
      state.SkipWithError(inferred.ToString().c_str());
      return;
    }
    values.push_back(*NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator()));
    step_args.push_back(values.back().get());
    kernels.push_back(*std::move(kernel));
    args.push_back(std::move(step_args));
  }
  ThreadPool& pool = BenchPool(2);
  for (auto _ : state) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      const absl::Status status = kernels[i].Call(args[i].data(), pool);
      if (!status.ok()) {
        state.SkipWithError(status.ToString().c_str());
        return;
      }
    }
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = pool.num_threads();
}


}  // namespace dynvm::kernels::bench
