// Steady state of a served model: once an executable has run at the shapes a server
// sees (and, with worker threads, each worker has run its largest task), running at
// those shapes again makes no heap allocation — no operator new
// (object headers come from objects/object_memory.h's caches) and no memory from the
// system for tensors (the VM's pooled allocator serves every storage). The tiny BERT of
// tests/models/bert, compiled as vm_compile compiles it, at mixed batches and lengths.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/testing/heap_counter.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx/importer.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "serializer/executable_file.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

NDArray Ids(int64_t batch, int64_t length, int64_t modulus) {
  absl::StatusOr<NDArray> t = NDArrayObj::Empty({batch, length}, DType::kI64, MakeNaiveAllocator());
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < batch * length; ++i) (*t)->data_as<int64_t>()[i] = (i * 7 + 3) % modulus;
  return *t;
}

// Runs the tiny BERT on a pool of `threads` threads; see the tests below.
void CheckSteadyState(int threads) {
  absl::StatusOr<Module> module =
      onnx_frontend::ImportOnnxFile(std::string(DYNVM_MODELS_DIR) + "/bert/bert_mini.onnx");
  ASSERT_TRUE(module.ok()) << module.status();
  CompileOptions options;
  options.target_cpu = "native";
  absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(*module, options);
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::ReloadExecutable(*spec, kernels::DefaultRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  kernels::ThreadPool pool(threads);
  std::shared_ptr<Allocator> storage = MakePooledAllocator();
  vm::VirtualMachine machine(*exe, vm::VmOptions{.thread_pool = &pool, .allocator = storage});

  struct Shape2 {
    int64_t batch, length;
  };
  const std::vector<Shape2> shapes = {{1, 64}, {2, 1}, {1, 7}, {2, 33}, {1, 1}, {2, 64}, {1, 17}};
  // Allocations of one inference at `s`: operator new calls, and storages the pool had
  // to get from the system.
  const auto run = [&](Shape2 s) {
    const std::vector<Value> args = {Value(Ids(s.batch, s.length, 100)),
                                     Value(Ids(s.batch, s.length, 2)),
                                     Value(Ids(s.batch, s.length, 2))};
    const int64_t system_before = storage->stats().system_allocations;
    const int64_t before = testing::HeapAllocations();
    {
      absl::StatusOr<Value> out = machine.Invoke("main", args);
      EXPECT_TRUE(out.ok()) << out.status();
    }  // the caller drops the result, as a server does once it has answered
    const int64_t made = testing::HeapAllocations() - before;
    return std::make_pair(made, storage->stats().system_allocations - system_before);
  };
  // Warm-up: the pool gets each shape's storages and the object caches their headers.
  int64_t warm_up = 0;
  for (Shape2 s : shapes) warm_up += run(s).first;
  EXPECT_GT(warm_up, 0);  // the counter sees the first runs' allocations
  if (threads == 1) {
    // One thread runs every task, so its kernels' scratch buffers have grown too.
    for (int round = 0; round < 3; ++round) {
      for (Shape2 s : shapes) {
        const auto [heap, system] = run(s);
        EXPECT_EQ(heap, 0) << "operator new calls at batch " << s.batch << ", length " << s.length;
        EXPECT_EQ(system, 0) << "storages from the system at batch " << s.batch << ", length "
                             << s.length;
      }
    }
    return;
  }
  // With workers, each thread's scratch buffers (kernels/scratch.h) grow to the
  // largest task that thread has run, and which thread runs which task varies from run
  // to run: the heap count reaches zero within some rounds, not a fixed number. Storages
  // come from the pool from the second round on.
  int64_t heap_in_round = -1;
  for (int round = 0; round < 50 && heap_in_round != 0; ++round) {
    heap_in_round = 0;
    for (Shape2 s : shapes) {
      const auto [heap, system] = run(s);
      heap_in_round += heap;
      EXPECT_EQ(system, 0) << "storages from the system at batch " << s.batch << ", length "
                           << s.length;
    }
  }
  EXPECT_EQ(heap_in_round, 0) << "operator new calls in every one of 50 rounds";
}

TEST(SteadyStateTest, OneThreadAllocatesNothingOnceWarm) { CheckSteadyState(1); }

TEST(SteadyStateTest, TwoThreadsReachARoundWithoutAllocation) { CheckSteadyState(2); }

}  // namespace
}  // namespace dynvm::compiler
