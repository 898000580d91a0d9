// The GEMM benchmarks of every level of kernels this CPU runs, and this machine's peaks.
//
//   build/bin/bench_kernels --benchmark_filter='BM_(Gemm|FmaPeak|MemoryBandwidth)'
//
// BM_FmaPeak and BM_MemoryBandwidth measure what the hardware can do, so that every
// other benchmark of bench_kernels can state its share of it: compute-bound kernels
// report a "GFLOPS" counter to compare with BM_FmaPeak, memory-bound ones a "GBps"
// counter to compare with BM_MemoryBandwidth. Benchmarks of other kernel families live
// in bench/bench_<family>.cc, linked into this binary.
//
// Counters:
//   GFLOPS  floating-point operations per second / 1e9 (an FMA counts as 2)
//   GBps    bytes read plus bytes written per second / 1e9
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "bench/kernel_bench_util.h"
#include "benchmark/benchmark.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/microkernels.h"
#include "kernels/scratch.h"
#include "kernels/thread_pool.h"

namespace dynvm::kernels::bench {
namespace {

// C[M, N] = A[M, K] · B[K, N], row-major and untransposed like torch.mm, so that the
// figures compare with shared/peers/bench_gemm.py, on `table`'s micro-kernels.
// With `packed_b`, B is packed once ahead (GemmPackB), as for a model's weights.
void GemmBenchmark(benchmark::State& state, const Microkernels& table, int threads,
                   bool packed_b) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const std::vector<float> a = RandomFloats(m * k, 1), b = RandomFloats(k * n, 2);
  std::vector<float> c(m * n);
  GemmArgs args{.m = m, .n = n, .k = k, .a = a.data(), .lda = k, .b = b.data(), .ldb = n,
                .c = c.data(), .ldc = n};
  ScratchBuffer packed;
  if (packed_b) {
    float* panels = packed.As<float>(GemmPackedBSize(k, n));
    GemmPackB(k, n, b.data(), n, /*trans_b=*/false, panels);
    args.b = panels;
    args.b_packed = true;
  }
  ThreadPool& pool = BenchPool(threads);
  for (auto _ : state) {
    internal::GemmF32With(table.gemm, args, pool);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = Giga(2.0 * m * n * k);
}

// The shapes of BERT-base's projections (seq 128 and 384), a single-row GEMV, and a
// cube.
void GemmShapes(benchmark::internal::Benchmark* b) {
  for (const auto& [m, k, n] : {std::tuple{128, 768, 768}, {128, 768, 3072}, {128, 3072, 768},
                                {384, 768, 3072}, {1, 768, 768}, {1024, 1024, 1024}}) {
    b->Args({m, k, n});
  }
  b->UseRealTime();
}

// A BERT-base encoder layer's four projections with packed weights (Q/K/V combined
// 768 -> 2304, output 768 -> 768, FFN 768 -> 3072 and 3072 -> 768) at M rows, over 8
// layers' weights (227 MB, 7 times the largest L3 we run on), layer after layer as a
// model runs them: at short sequences every weight comes from memory once per
// inference, and "GBps" (the weights' bytes per second) compares with
// BM_MemoryBandwidth. Named BM_GemmWeightStream/M.
void BM_GemmWeightStream(benchmark::State& state) {
  const int64_t m = state.range(0);
  constexpr int64_t kLayers = 8;
  constexpr std::tuple<int64_t, int64_t> kShapes[] = {{768, 2304}, {768, 768}, {768, 3072},
                                                      {3072, 768}};
  std::vector<std::vector<float>> weights;
  int64_t weight_bytes = 0, flops = 0;
  for (int64_t layer = 0; layer < kLayers; ++layer) {
    for (const auto& [k, n] : kShapes) {
      const std::vector<float> w = RandomFloats(k * n, 10 + layer);
      std::vector<float>& packed = weights.emplace_back(GemmPackedBSize(k, n));
      GemmPackB(k, n, w.data(), n, /*trans_b=*/false, packed.data());
      weight_bytes += static_cast<int64_t>(packed.size() * sizeof(float));
      flops += 2 * m * k * n;
    }
  }
  const std::vector<float> a = RandomFloats(m * 3072, 1);
  std::vector<float> c(m * 3072);
  ThreadPool& pool = BenchPool(2);
  for (auto _ : state) {
    for (size_t i = 0; i < weights.size(); ++i) {
      const auto& [k, n] = kShapes[i % std::size(kShapes)];
      GemmF32({.m = m, .n = n, .k = k, .a = a.data(), .lda = k, .b = weights[i].data(),
               .ldb = n, .b_packed = true, .c = c.data(), .ldc = n},
              pool);
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = Giga(static_cast<double>(flops));
  state.counters["GBps"] = Giga(static_cast<double>(weight_bytes));
}
BENCHMARK(BM_GemmWeightStream)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Arg(64)->UseRealTime();

// A table's micro-kernel alone (no epilogue) on one thread, over operands that stay in
// L1: a kc = 384 B panel and eight A panels, each tile added to a C block MR x NR in L1
// too. What it reaches of BM_FmaPeak/<level>/1 is the ceiling of every GEMM above; the
// gap between the two is the driver's (packing, cache misses, threads).
void GemmMicroKernelBenchmark(benchmark::State& state, const Microkernels& table) {
  const internal::GemmUkernels& kernels = table.gemm;
  constexpr int64_t kKc = 384, kAPanels = 8;
  const std::vector<float> a = RandomFloats(kAPanels * kKc * kernels.mr, 1);
  const std::vector<float> b = RandomFloats(kKc * kernels.nr, 2);
  std::vector<float> c(kernels.mr * kernels.nr);
  internal::GemmTile tile{};
  tile.mr = kernels.mr;
  tile.nr = kernels.nr;
  tile.kc = kKc;
  tile.b = b.data();
  tile.b_stride = kKc * kGemmPanelWidth;  // NR / 16 panels, one after the other
  tile.c = c.data();
  tile.ldc = kernels.nr;
  tile.accumulate = tile.last = true;
  tile.alpha = 1.0f;
  const internal::GemmMicroKernelFn micro_kernel = kernels.micro_kernel[0];
  for (auto _ : state) {
    for (int64_t i = 0; i < kAPanels; ++i) {
      tile.a = a.data() + i * kKc * kernels.mr;
      micro_kernel(tile);
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = Giga(2.0 * kAPanels * kKc * kernels.mr * kernels.nr);
}

// nn.dense as BERT's feed-forward layer runs it: W[N, K] transposed, bias and GELU fused
// into the epilogue (2 threads).
void BM_GemmDenseGelu(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const std::vector<float> x = RandomFloats(m * k, 1), w = RandomFloats(n * k, 2);
  const std::vector<float> bias = RandomFloats(n, 3);
  std::vector<float> y(m * n);
  const GemmArgs args{.m = m, .n = n, .k = k, .a = x.data(), .lda = k, .b = w.data(),
                      .ldb = k, .trans_b = true, .c = y.data(), .ldc = n,
                      .bias = bias.data(), .activation = Activation::kGeluErf};
  for (auto _ : state) {
    GemmF32(args, BenchPool(2));
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = Giga(2.0 * m * n * k);
}
BENCHMARK(BM_GemmDenseGelu)
    ->Args({128, 768, 3072})
    ->Args({384, 768, 3072})
    ->Args({1, 768, 3072})
    ->UseRealTime();

// Independent FMA chains, enough of them to cover the FMA latency times the number of
// FMA pipes (4 cycles x 2 pipes on Zen 3, Zen 4 and Skylake; 12 leaves slack), on
// vector registers `reg` (ymm: 8 floats, zmm: 16). Written in assembly because compilers
// spill an array of accumulators to the stack; operands are zeros, so no denormal or
// overflow slows the units down.
constexpr int kFmaChains = 12;
constexpr int64_t kFmaSteps = 1 << 16;

#define DYNVM_FMA_ZERO(reg, i) "vxorps %%" reg #i ", %%" reg #i ", %%" reg #i "\n\t"
#define DYNVM_FMA_STEP(reg, i) "vfmadd231ps %%" reg "14, %%" reg "15, %%" reg #i "\n\t"
#define DYNVM_FMA_TWELVE(op, reg)                                                      \
  op(reg, 0) op(reg, 1) op(reg, 2) op(reg, 3) op(reg, 4) op(reg, 5) op(reg, 6) op(reg, 7) \
      op(reg, 8) op(reg, 9) op(reg, 10) op(reg, 11)
#define DYNVM_FMA_CHAINS(reg)                                                             \
  int64_t steps = kFmaSteps;                                                              \
  __asm__ volatile(DYNVM_FMA_TWELVE(DYNVM_FMA_ZERO, reg) DYNVM_FMA_ZERO(reg, 14)          \
                       DYNVM_FMA_ZERO(reg, 15) "1:\n\t" DYNVM_FMA_TWELVE(DYNVM_FMA_STEP, reg) \
                           "dec %0\n\t"                                                   \
                           "jnz 1b\n\t"                                                   \
                           "vzeroupper"                                                   \
                   : "+r"(steps)                                                          \
                   :                                                                      \
                   : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",  \
                     "xmm9", "xmm10", "xmm11", "xmm14", "xmm15", "cc")

void FmaChains256() { DYNVM_FMA_CHAINS("ymm"); }
void FmaChains512() { DYNVM_FMA_CHAINS("zmm"); }

#undef DYNVM_FMA_CHAINS
#undef DYNVM_FMA_TWELVE
#undef DYNVM_FMA_STEP
#undef DYNVM_FMA_ZERO

// The FMA units' peak at one vector width, named by the level whose kernels use that
// width: what every GFLOPS counter compares with.
struct FmaWidth {
  const char* level;
  const char* feature;  // what the CPU needs for it (kernels/cpu_features.h)
  int lanes;
  void (*chains)();
};
constexpr FmaWidth kFmaWidths[] = {{"avx2", "fma", 8, FmaChains256},
                                   {"avx512", "avx512f", 16, FmaChains512}};

void FmaPeakBenchmark(benchmark::State& state, const FmaWidth& width) {
  const int threads = static_cast<int>(state.range(0));
  // Many more chunks than threads, each long (~1 ms), so that the threads share the
  // work evenly and waking a worker is negligible.
  constexpr int64_t kChunks = 16;
  for (auto _ : state) {
    BenchPool(threads).ParallelFor(kChunks, /*grain=*/1, [&width](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) width.chains();
    });
  }
  state.counters["GFLOPS"] = Giga(2.0 * width.lanes * kFmaChains * kFmaSteps * kChunks);
}

// STREAM's triad, a[i] = b[i] + s * c[i], over three arrays of 64 MiB each: twice the L3
// of the largest machines we run on, so every access goes to memory. Bytes count the
// three arrays once each, as STREAM does (the write-allocate read of `a` is not counted).
void BM_MemoryBandwidth(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  constexpr int64_t kElements = int64_t{1} << 24;
  std::vector<float> a(kElements, 0.0f);
  const std::vector<float> b = RandomFloats(kElements, 3), c = RandomFloats(kElements, 4);
  float* pa = a.data();
  const float *pb = b.data(), *pc = c.data();
  for (auto _ : state) {
    BenchPool(threads).ParallelFor(kElements, /*grain=*/1 << 16, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) pa[i] = pb[i] + 3.0f * pc[i];
    });
    benchmark::ClobberMemory();
  }
  state.counters["GBps"] = Giga(3.0 * sizeof(float) * kElements);
}
BENCHMARK(BM_MemoryBandwidth)->Arg(1)->Arg(2)->UseRealTime();

// The benchmarks of every level this CPU runs, whatever DYNVM_ISA selects, named by
// level: BM_Gemm/avx2/M/K/N (2 threads), BM_GemmPackedB/avx2/M/K/N, BM_GemmMicroKernel/
// avx2, BM_FmaPeak/avx2/T (T threads; avx512 where the CPU has AVX-512F).
// BM_GemmOneThread/M/K/N runs the selected level only.
const bool kPerLevelBenchmarksRegistered = [] {
  for (Isa isa : kIsas) {
    const Microkernels* table = MicrokernelsFor(isa);
    if (table == nullptr) continue;
    const std::string level(IsaName(isa));
    GemmShapes(benchmark::RegisterBenchmark(
        ("BM_Gemm/" + level).c_str(),
        [table](benchmark::State& state) { GemmBenchmark(state, *table, 2, false); }));
    GemmShapes(benchmark::RegisterBenchmark(
        ("BM_GemmPackedB/" + level).c_str(),
        [table](benchmark::State& state) { GemmBenchmark(state, *table, 2, true); }));
    benchmark::RegisterBenchmark(
        ("BM_GemmMicroKernel/" + level).c_str(),
        [table](benchmark::State& state) { GemmMicroKernelBenchmark(state, *table); })
        ->UseRealTime();
  }
  GemmShapes(benchmark::RegisterBenchmark("BM_GemmOneThread", [](benchmark::State& state) {
    GemmBenchmark(state, GetMicrokernels(), 1, false);
  }));
  for (const FmaWidth& width : kFmaWidths) {
    if (!CpuHasFeature(width.feature)) continue;
    benchmark::RegisterBenchmark(
        (std::string("BM_FmaPeak/") + width.level).c_str(),
        [&width](benchmark::State& state) { FmaPeakBenchmark(state, width); })
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
}  // namespace dynvm::kernels::bench
