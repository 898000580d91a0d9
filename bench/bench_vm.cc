// Benchmarks of the VM core (Google Benchmark): dispatch, calls, kernel calls, loading.
//
//   build/bin/bench_vm --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Every program is bytecode assembly, assembled and run through the same path as
// vm_run. Counters:
//   ns_per_insn     BM_DispatchLoop: nanoseconds per executed bytecode instruction
//   ns_per_call     BM_InvokeRet / BM_InvokePackedNoop: per call, including the share of
//                   the surrounding loop's 5 instructions (1 per 8 calls)
//   heap_allocs     heap allocations (operator new) per benchmark iteration
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/testing/heap_counter.h"
#include "benchmark/benchmark.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/api.h"
#include "serializer/executable_file.h"
#include "tools/asm/assembler.h"
#include "vm/virtual_machine.h"

namespace dynvm {
namespace {

constexpr int64_t kLoopIterations = 100'000;

std::shared_ptr<const vm::Executable> Build(std::string_view text,
                                            const kernels::KernelRegistry& registry) {
  absl::StatusOr<vm::ExecutableSpec> spec = tools::Assemble(text);
  if (!spec.ok()) {
    std::fprintf(stderr, "assembly failed: %s\n", spec.status().ToString().c_str());
    std::abort();
  }
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::ReloadExecutable(*spec, registry);
  if (!exe.ok()) {
    std::fprintf(stderr, "load failed: %s\n", exe.status().ToString().c_str());
    std::abort();
  }
  return *exe;
}

// Runs `function(args)` per benchmark iteration and reports `counter`: wall-clock
// nanoseconds per unit, with `units_per_call` units per invocation.
void RunLoop(benchmark::State& state, vm::VirtualMachine& machine, std::string_view function,
             std::vector<Value> args, const char* counter, double units_per_call) {
  if (!machine.Invoke(function, args).ok()) std::abort();  // warm up: grow the stack
  const int64_t allocations_before = testing::HeapAllocations();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    absl::StatusOr<Value> out = machine.Invoke(function, args);
    benchmark::DoNotOptimize(out);
  }
  const double ns = std::chrono::duration<double, std::nano>(
                        std::chrono::steady_clock::now() - start).count();
  const double allocations = static_cast<double>(testing::HeapAllocations() - allocations_before);
  const double iterations = static_cast<double>(state.iterations());
  state.counters[counter] = ns / (iterations * units_per_call);
  state.counters["heap_allocs"] = allocations / iterations;
}

constexpr char kSumLoop[] = R"(
.func @sum(i: int, n: int, acc: int) -> (int) regs 6
  lti %3, %1, %0
  if %3, done, body
body:
  addi %4, %2, %0
  load_consti %5, 1
  addi %5, %0, %5
  tail_invoke @sum, (%5, %1, %4)
done:
  ret %2
.end
)";

void BM_DispatchLoop(benchmark::State& state) {
  vm::VirtualMachine machine(Build(kSumLoop, kernels::DefaultRegistry()));
  // 6 instructions per iteration, then lti, if, ret.
  RunLoop(state, machine, "sum", {Value::Int(1), Value::Int(kLoopIterations), Value::Int(0)},
          "ns_per_insn", 6.0 * kLoopIterations + 3);
}
BENCHMARK(BM_DispatchLoop);

// A loop whose body makes 8 calls; `CALL` is the call instruction under test.
std::string CallLoop(std::string_view header, std::string_view params, std::string_view args,
                     std::string_view call) {
  std::string text(header);
  text += ".func @loop(i: int, n: int" + std::string(params) + ") -> (int) regs 8\n";
  text += "  lti %5, %1, %0\n  if %5, done, body\nbody:\n";
  for (int i = 0; i < 8; ++i) text += "  " + std::string(call) + "\n";
  text += "  load_consti %5, 1\n  addi %5, %0, %5\n";
  text += "  tail_invoke @loop, (%5, %1" + std::string(args) + ")\ndone:\n  ret %0\n.end\n";
  return text;
}

void BM_InvokeRet(benchmark::State& state) {
  const std::string text = CallLoop(".func @id(x: int) -> (int) regs 1\n  ret %0\n.end\n", "", "",
                                    "invoke %6, @id, (%0)");
  vm::VirtualMachine machine(Build(text, kernels::DefaultRegistry()));
  RunLoop(state, machine, "loop", {Value::Int(0), Value::Int(kLoopIterations)}, "ns_per_call",
          8.0 * kLoopIterations);
}
BENCHMARK(BM_InvokeRet);

absl::Status Noop(const kernels::KernelCall&) { return absl::OkStatus(); }

void BM_InvokePackedNoop(benchmark::State& state) {
  kernels::KernelRegistry registry;
  if (!registry.Register({.name = "noop", .num_inputs = 1, .num_outputs = 1, .fn = Noop}).ok()) {
    std::abort();
  }
  const std::string text = CallLoop(".kernel noop = \"noop\" (1 -> 1)\n",
                                    ", t: tensor f32[4], u: tensor f32[4]", ", %2, %3",
                                    "invoke_packed noop, 1, (%2, %3)");
  vm::VirtualMachine machine(Build(text, registry));
  auto allocator = MakeNaiveAllocator();
  RunLoop(state, machine, "loop",
          {Value::Int(0), Value::Int(kLoopIterations),
           Value(*NDArrayObj::Empty({4}, DType::kF32, allocator)),
           Value(*NDArrayObj::Empty({4}, DType::kF32, allocator))},
          "ns_per_call", 8.0 * kLoopIterations);
}
BENCHMARK(BM_InvokePackedNoop);

// An executable with one 500 MB weight, written once per process.
class WeightsFile {
 public:
  WeightsFile() : path_(std::filesystem::temp_directory_path() / "dynvm_bench_500mb.fbs") {
    constexpr int64_t kElements = 125'000'000;  // 500 MB of f32
    auto spec = tools::Assemble(R"(
.const w = int 0
.func @main() -> (any) regs 1
  load_const %0, w
  ret %0
.end
)");
    if (!spec.ok()) std::abort();
    NDArray weight = *NDArrayObj::Empty({kElements}, DType::kF32, MakeNaiveAllocator());
    std::fill_n(weight->data_as<float>(), kElements, 0.0f);
    weight->data_as<float>()[kElements - 1] = 42.0f;
    spec->constants[0] = Value(weight);
    if (!serializer::SaveExecutable(*spec, path_.string()).ok()) std::abort();
  }
  ~WeightsFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

void BM_LoadExecutable500MB(benchmark::State& state) {
  static const WeightsFile file;  // removed at exit
  for (auto _ : state) {
    auto exe = serializer::LoadExecutable(file.path(), kernels::DefaultRegistry());
    if (!exe.ok()) {
      state.SkipWithError(exe.status().ToString().c_str());
      break;
    }
    const NDArrayObj* w = (*exe)->constant(0).As<NDArrayObj>();
    // Checked before DoNotOptimize, which may be assumed to change a non-const value.
    const float last = w->data_as<float>()[w->num_elements() - 1];  // touch one weight
    if (last != 42.0f) {
      state.SkipWithError("wrong weight value");
      break;
    }
    benchmark::DoNotOptimize(last);
  }
  state.SetLabel("500 MB of weights, mmap");
}
BENCHMARK(BM_LoadExecutable500MB)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dynvm
