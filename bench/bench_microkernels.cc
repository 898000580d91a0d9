// The map and row micro-kernels of every level this CPU runs, side by side, whatever
// DYNVM_ISA selects: BM_Microkernel/<level>/<kernel> over 4096 floats (16 KiB, in L1) on
// one thread, counter "Gelems" (elements per second, in billions). What a level gains
// over another is the ratio of two rows; the kernels' time at BERT's shapes, threads and
// memory traffic included, is in bench_elementwise.cc and bench_nn.cc.
//
//   build/bin/bench_kernels --benchmark_filter=BM_Microkernel
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"
#include "kernels/cpu_features.h"
#include "kernels/elementwise/ukernels.h"
#include "kernels/microkernels.h"

namespace dynvm::kernels::bench {
namespace {

constexpr int64_t kElements = 4096;

using elementwise::VUnaryOp;

// One micro-kernel call on x (values in [-4, 4)) into y.
using Body = std::function<void(const Microkernels&, const float* x, float* y)>;

void MicrokernelBenchmark(benchmark::State& state, const Microkernels& table, const Body& body) {
  std::vector<float> x = RandomFloats(kElements, 7), y(kElements);
  for (float& v : x) v *= 4.0f;
  for (auto _ : state) {
    body(table, x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["Gelems"] = Giga(static_cast<double>(kElements));
}

Body Unary(VUnaryOp op) {
  return [op](const Microkernels& uk, const float* x, float* y) {
    uk.elementwise.vunary[static_cast<int>(op)](kElements, x, y, nullptr);
  };
}

const bool kRegistered = [] {
  const std::pair<const char*, Body> kBodies[] = {
      {"exp", Unary(VUnaryOp::kExp)},
      {"tanh", Unary(VUnaryOp::kTanh)},
      {"sigmoid", Unary(VUnaryOp::kSigmoid)},
      {"gelu", Unary(VUnaryOp::kGeluErf)},
      {"rsum", [](const Microkernels& uk, const float* x, float*) {
         benchmark::DoNotOptimize(uk.elementwise.rsum(kElements, x));
       }},
      {"rmax", [](const Microkernels& uk, const float* x, float*) {
         benchmark::DoNotOptimize(uk.elementwise.rmax(kElements, x));
       }},
      // softmax's middle pass: y = exp(x - max) and its sum
      {"raddstoreexpminusmax", [](const Microkernels& uk, const float* x, float* y) {
         benchmark::DoNotOptimize(uk.nn.raddstoreexpminusmax(kElements, x, 4.0f, y));
       }},
  };
  for (Isa isa : kIsas) {
    const Microkernels* table = MicrokernelsFor(isa);
    if (table == nullptr) continue;
    for (const auto& [name, body] : kBodies) {
      benchmark::RegisterBenchmark(
          ("BM_Microkernel/" + std::string(IsaName(isa)) + "/" + name).c_str(),
          [table, body = body](benchmark::State& state) {
            MicrokernelBenchmark(state, *table, body);
          });
    }
  }
  return true;
}();

}  // namespace
}  // namespace dynvm::kernels::bench
