// The Child-Sum Tree-LSTM of the peers (bench/models/treelstm.relay: a Tree ADT and
// recursion) on their random binary trees, per tree: compile once, build each tree as
// ADT values, check the root's h against PyTorch's, then time Invoke.
//
//   /usr/bin/python3 bench/treelstm_data.py build/treelstm        # weights, trees, goldens
//   DYNVM_TREELSTM_DATA=build/treelstm build/bin/bench_treelstm --benchmark_repetitions=5
//
// bench/compare_treelstm.py runs both and the peers' PyTorch timing. With
// DYNVM_TREELSTM_PROFILE set, each size also prints vm_run --profile's tables. Counters:
//   us_per_node   microseconds per tree node (2 * leaves - 1 nodes)
//   max_abs_diff  the largest |h - h_pytorch| over the root's h (must be <= 1e-4)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/api.h"
#include "serializer/executable_file.h"
#include "serializer/npy.h"
#include "tools/file_util.h"
#include "vm/virtual_machine.h"

namespace dynvm {
namespace {

// PyTorch and dynvm sum in different orders; a state is a few tanh/sigmoid steps from
// values of order 1.
constexpr double kTolerance = 1e-4;

template <typename T>
T OrDie(absl::StatusOr<T> v, const char* what) {
  if (!v.ok()) {
    std::fprintf(stderr, "bench_treelstm: %s: %s\n", what, std::string(v.status().message()).c_str());
    std::exit(1);
  }
  return *std::move(v);
}

std::string DataDir() {
  const char* dir = std::getenv("DYNVM_TREELSTM_DATA");
  if (dir == nullptr) {
    std::fprintf(stderr, "bench_treelstm: set DYNVM_TREELSTM_DATA to what bench/treelstm_data.py wrote\n");
    std::exit(2);
  }
  return dir;
}

NDArray Npy(const std::string& name) {
  return OrDie(serializer::ReadNpyFile(DataDir() + "/" + name, MakeNaiveAllocator()), name.c_str());
}

std::shared_ptr<const vm::Executable> Compile() {
  const std::string text =
      OrDie(tools::ReadFileOrStdin(std::string(DYNVM_SOURCE_DIR) + "/bench/models/treelstm.relay"),
            "bench/models/treelstm.relay");
  std::vector<NDArray> weights;
  for (const char* name : {"w_iou", "b_iou", "u_iou", "w_f", "b_f", "u_f"}) {
    weights.push_back(Npy(std::string(name) + ".npy"));
  }
  const compiler::Module module = OrDie(compiler::ParseModule(text, weights, "treelstm.relay"), "parse");
  vm::ExecutableSpec spec = OrDie(compiler::CompileModule(module, compiler::CompileOptions()), "compile");
  return OrDie(serializer::ReloadExecutable(spec, kernels::DefaultRegistry()), "load");
}

// The tree of `leaves` leaves as the peers build it: leaf i holds word i, and each merge
// position k replaces nodes k and k + 1 by their parent. Leaf is tag 0, Node tag 1.
Value BuildTree(int64_t leaves) {
  const NDArray words = Npy("words_" + std::to_string(leaves) + ".npy");
  const NDArray merges = Npy("merges_" + std::to_string(leaves) + ".npy");
  std::vector<Value> nodes;
  for (int64_t i = 0; i < leaves; ++i) {
    NDArray word = OrDie(NDArrayObj::Empty({1, 300}, DType::kF32, MakeNaiveAllocator()), "word");
    std::copy_n(words->data_as<float>() + i * 300, 300, word->data_as<float>());
    nodes.push_back(Value(ADTObj::Create(0, {Value(word)})));
  }
  for (int64_t j = 0; j < merges->num_elements(); ++j) {
    const int64_t k = merges->data_as<int64_t>()[j];
    if (k < 0 || k + 1 >= static_cast<int64_t>(nodes.size())) std::exit(1);
    Value parent(ADTObj::Create(1, {nodes[k], nodes[k + 1]}));
    nodes.erase(nodes.begin() + k, nodes.begin() + k + 2);
    nodes.insert(nodes.begin() + k, std::move(parent));
  }
  return nodes[0];
}

void BM_TreeLstm(benchmark::State& state) {
  static const std::shared_ptr<const vm::Executable> exe = Compile();
  const int64_t leaves = state.range(0);
  const std::vector<Value> args = {BuildTree(leaves)};
  vm::VirtualMachine machine(exe);
  // The root's h against PyTorch's.
  const Value out = OrDie(machine.Invoke("main", args), "run");
  const NDArray golden = Npy("root_h_" + std::to_string(leaves) + ".npy");
  const NDArrayObj* h = out.As<NDArrayObj>();
  if (h == nullptr || h->num_elements() != golden->num_elements()) {
    state.SkipWithError("the root's h has the wrong shape");
    return;
  }
  double max_diff = 0;
  for (int64_t i = 0; i < h->num_elements(); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(h->data_as<float>()[i]) -
                                             golden->data_as<float>()[i]));
  }
  if (!(max_diff <= kTolerance)) {
    state.SkipWithError("the root's h differs from PyTorch's by more than 1e-4");
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    absl::StatusOr<Value> h_root = machine.Invoke("main", args);
    benchmark::DoNotOptimize(h_root);
  }
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  const double nodes = static_cast<double>(2 * leaves - 1);
  state.counters["us_per_node"] = us / (nodes * static_cast<double>(state.iterations()));
  state.counters["max_abs_diff"] = max_diff;
  if (std::getenv("DYNVM_TREELSTM_PROFILE") != nullptr) {  // where a tree's time goes
    vm::Profiler profiler;
    vm::VmOptions options;
    options.profiler = &profiler;
    vm::VirtualMachine profiled(exe, options);
    for (int i = 0; i < 20; ++i) benchmark::DoNotOptimize(profiled.Invoke("main", args));
    std::fprintf(stderr, "%d leaves:\n%s\n", static_cast<int>(leaves), profiler.Report().c_str());
  }
}
BENCHMARK(BM_TreeLstm)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dynvm
