// One Executable shared by many VirtualMachines on many threads: 8 threads × 200
// invocations of tiny BERT (tests/models/bert/bert_mini.onnx) at random batch sizes and
// lengths, each result equal, bit for bit, to the one a single thread computed first.
// Kernels do the same arithmetic per element whichever thread runs which chunk, so any
// difference is a race. Run under ThreadSanitizer by scripts/test.sh.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "serializer/executable_file.h"
#include "tests/models/bert_mini.h"
#include "vm/virtual_machine.h"

namespace dynvm::vm {
namespace {

constexpr int kThreads = 8;
constexpr int kInvocationsPerThread = 200;

struct Case {
  std::vector<Value> inputs;   // input_ids, attention_mask, token_type_ids
  std::vector<Value> outputs;  // what one thread computed alone
};

bool SameBits(const Value& a, const Value& b) {
  const NDArrayObj* x = a.As<NDArrayObj>();
  const NDArrayObj* y = b.As<NDArrayObj>();
  return x != nullptr && y != nullptr && x->dtype() == y->dtype() && x->shape() == y->shape() &&
         std::memcmp(x->data(), y->data(), x->nbytes()) == 0;
}

TEST(SharingTest, ManyVmsOnManyThreadsAgreeWithOneThread) {
  absl::StatusOr<std::shared_ptr<const Executable>> exe =
      serializer::LoadExecutable(bert_mini::ExePath(), kernels::DefaultRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();

  // The cases and their single-threaded results. Inputs are read-only to the model, so
  // all threads share them.
  std::shared_ptr<Allocator> allocator = MakeNaiveAllocator();
  std::vector<Case> cases;
  {
    VirtualMachine alone(*exe);
    for (int64_t batch : {1, 2, 3}) {
      for (int64_t length : {1, 2, 7, 16, 33, 64}) {
        Case& c = cases.emplace_back();
        c.inputs = bert_mini::RandomInputs(batch, length, static_cast<uint32_t>(cases.size()),
                                           allocator);
        absl::StatusOr<Value> out = alone.Invoke("main", c.inputs);
        ASSERT_TRUE(out.ok()) << out.status();
        c.outputs = FlattenValue(*out);
        ASSERT_EQ(c.outputs.size(), 2u);
      }
    }
  }

  std::atomic<int> mismatches{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      VirtualMachine vm(*exe);
      std::mt19937 pick(static_cast<uint32_t>(t));
      std::uniform_int_distribution<size_t> which(0, cases.size() - 1);
      for (int i = 0; i < kInvocationsPerThread; ++i) {
        const Case& c = cases[which(pick)];
        absl::StatusOr<Value> out = vm.Invoke("main", c.inputs);
        if (!out.ok()) {
          ++failures;
          continue;
        }
        const std::vector<Value> outputs = FlattenValue(*out);
        if (outputs.size() != c.outputs.size() || !SameBits(outputs[0], c.outputs[0]) ||
            !SameBits(outputs[1], c.outputs[1])) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0) << "of " << kThreads * kInvocationsPerThread << " invocations";
}

}  // namespace
}  // namespace dynvm::vm
