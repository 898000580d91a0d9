// End-to-end tests of the interpreter: programs in bytecode assembly (programs/*.s) are
// assembled, saved to a file, loaded through the mmap path and verified, then run.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/api.h"
#include "serializer/executable_file.h"
#include "tools/asm/assembler.h"
#include "vm/virtual_machine.h"

namespace dynvm::vm {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const Executable> LoadProgram(const std::string& name) {
  const std::string path = std::string(DYNVM_VM_PROGRAMS) + "/" + name;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  tools::AssembleOptions options;
  options.filename = path;
  absl::StatusOr<ExecutableSpec> spec = tools::Assemble(text.str(), options);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return nullptr;
  // One file per process: ctest runs the cases of this binary in parallel processes,
  // and one must not read a file another is writing.
  const std::string file =
      ::testing::TempDir() + "/" + name + "." + std::to_string(getpid()) + ".fbs";
  absl::Status saved = serializer::SaveExecutable(*spec, file);
  EXPECT_TRUE(saved.ok()) << saved;
  absl::StatusOr<std::shared_ptr<const Executable>> exe =
      serializer::LoadExecutable(file, kernels::DefaultRegistry());
  EXPECT_TRUE(exe.ok()) << exe.status();
  std::remove(file.c_str());  // the executable keeps its mapping of the file's pages
  return exe.ok() ? *exe : nullptr;
}

int64_t RunInt(VirtualMachine& vm, std::string_view function, std::vector<Value> args) {
  absl::StatusOr<Value> out = vm.Invoke(function, args);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return -1;
  EXPECT_TRUE(out->is_int() || out->is_bool()) << out->TypeName();
  return out->int_value();
}

NDArray RandomTensor(std::vector<int64_t> shape, std::mt19937& rng) {
  NDArray t = *NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<float>()[i] = dist(rng);
  return t;
}

TEST(InterpreterTest, TailRecursiveLoopRunsInConstantMemory) {
  auto exe = LoadProgram("sum_loop.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  EXPECT_EQ(RunInt(vm, "sum", {Value::Int(1), Value::Int(1), Value::Int(0)}), 1);
  const size_t registers = vm.register_stack_capacity();
  const AllocatorStats before = vm.allocator()->stats();

  EXPECT_EQ(RunInt(vm, "sum", {Value::Int(1), Value::Int(10'000'000), Value::Int(0)}),
            int64_t{50'000'005'000'000});
  const AllocatorStats after = vm.allocator()->stats();
  EXPECT_EQ(vm.register_stack_capacity(), registers);
  EXPECT_EQ(after.allocations, before.allocations);
  EXPECT_EQ(after.peak_bytes_live, before.peak_bytes_live);
}

TEST(InterpreterTest, NonTailRecursion) {
  auto exe = LoadProgram("recursion.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  EXPECT_EQ(RunInt(vm, "fib", {Value::Int(25)}), 75025);
  EXPECT_EQ(RunInt(vm, "fib", {Value::Int(1)}), 1);
}

TEST(InterpreterTest, MutualRecursion) {
  auto exe = LoadProgram("recursion.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  EXPECT_EQ(RunInt(vm, "is_even", {Value::Int(1000)}), 1);
  EXPECT_EQ(RunInt(vm, "is_even", {Value::Int(777)}), 0);
  EXPECT_EQ(RunInt(vm, "is_odd", {Value::Int(777)}), 1);
  // Tail-called mutual recursion far deeper than the call-depth limit.
  const size_t registers_before = vm.register_stack_capacity();
  EXPECT_EQ(RunInt(vm, "tail_even", {Value::Int(1'000'001)}), 0);
  EXPECT_EQ(RunInt(vm, "tail_odd", {Value::Int(1'000'001)}), 1);
  EXPECT_EQ(vm.register_stack_capacity(), registers_before);
}

TEST(InterpreterTest, TailCallsThatReadWhatTheyWrite) {
  auto exe = LoadProgram("recursion.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  EXPECT_EQ(RunInt(vm, "swap", {Value::Int(1), Value::Int(2), Value::Int(3)}), 21);
  EXPECT_EQ(RunInt(vm, "swap", {Value::Int(1), Value::Int(2), Value::Int(4)}), 12);
  EXPECT_EQ(RunInt(vm, "grow", {Value::Int(7)}), 56);
}

TEST(InterpreterTest, ListMappedWithClosureAndFolded) {
  auto exe = LoadProgram("list.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  for (int64_t n : {0, 1, 10, 500}) {
    EXPECT_EQ(RunInt(vm, "main", {Value::Int(n), Value::Int(3)}), 3 * n * (n + 1) / 2) << n;
  }
}

TEST(InterpreterTest, ListCellsAreReleased) {
  auto exe = LoadProgram("list.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  absl::StatusOr<Value> nil = vm.Invoke("build", {Value::Int(1), Value::Int(0),
                                                  Value(ADTObj::Create(0, {}))});
  ASSERT_TRUE(nil.ok()) << nil.status();
  absl::StatusOr<Value> list =
      vm.Invoke("build", {Value::Int(1), Value::Int(3), *nil});
  ASSERT_TRUE(list.ok()) << list.status();
  // [3, 2, 1]: the caller holds the only reference to the head cell.
  const ADTObj* head = list->As<ADTObj>();
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->tag(), 1u);
  EXPECT_EQ(head->fields()[0].int_value(), 3);
  EXPECT_EQ(head->use_count(), 1);
  // Nil is shared by the caller and the last cell.
  EXPECT_EQ(nil->object()->use_count(), 2);
}

TEST(InterpreterTest, DynamicShapeFromOneExecutable) {
  auto exe = LoadProgram("dynamic_shape.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  std::mt19937 rng(7);
  for (int64_t n : {1, 7, 384}) {
    NDArray x = RandomTensor({n, 768}, rng);
    NDArray y = RandomTensor({n, 768}, rng);
    absl::StatusOr<Value> out = vm.Invoke("main", {Value(x), Value(y)});
    ASSERT_TRUE(out.ok()) << out.status();
    const NDArrayObj* z = out->As<NDArrayObj>();
    ASSERT_NE(z, nullptr);
    EXPECT_THAT(z->shape(), ::testing::ElementsAre(n, 768));
    for (int64_t i = 0; i < z->num_elements(); ++i) {
      // One f32 addition: the kernel must give exactly the rounded sum.
      ASSERT_EQ(z->data_as<float>()[i], x->data_as<float>()[i] + y->data_as<float>()[i]) << i;
    }
  }
}

TEST(InterpreterTest, OutputShapeFromTheKernelsShapeFunction) {
  auto exe = LoadProgram("dynamic_shape.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  std::mt19937 rng(11);
  NDArray x = RandomTensor({3, 4}, rng);
  NDArray y = RandomTensor({4}, rng);
  absl::StatusOr<Value> out = vm.Invoke("broadcast_add", {Value(x), Value(y)});
  ASSERT_TRUE(out.ok()) << out.status();
  const NDArrayObj* z = out->As<NDArrayObj>();
  ASSERT_NE(z, nullptr);
  EXPECT_THAT(z->shape(), ::testing::ElementsAre(3, 4));
  for (int64_t i = 0; i < 12; ++i) {
    EXPECT_EQ(z->data_as<float>()[i], x->data_as<float>()[i] + y->data_as<float>()[i % 4]);
  }
  out = vm.Invoke("broadcast_add", {Value(x), Value(RandomTensor({5}, rng))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("(invoke_shape_fn): shape function of kernel 'add': shapes [3, 4] and "
                        "[5] do not broadcast"));
}

TEST(InterpreterTest, StaticAllocationViewsAndTuples) {
  auto exe = LoadProgram("misc.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  NDArray x = *NDArrayObj::Empty({2, 3}, DType::kF32, MakeNaiveAllocator());
  for (int i = 0; i < 6; ++i) x->data_as<float>()[i] = static_cast<float>(i + 1) * 0.5f;
  absl::StatusOr<Value> out = vm.Invoke("main", {Value(x)});
  ASSERT_TRUE(out.ok()) << out.status();
  const ADTObj* tuple = out->As<ADTObj>();
  ASSERT_NE(tuple, nullptr);
  ASSERT_EQ(tuple->size(), 6u);
  const NDArrayObj* view = tuple->fields()[0].As<NDArrayObj>();
  const NDArrayObj* copy = tuple->fields()[1].As<NDArrayObj>();
  ASSERT_NE(view, nullptr);
  ASSERT_NE(copy, nullptr);
  EXPECT_THAT(view->shape(), ::testing::ElementsAre(3, 2));
  EXPECT_NE(view->data(), copy->data());
  for (int i = 0; i < 6; ++i) {
    const float expected = static_cast<float>(i + 1) * 0.5f * static_cast<float>(i + 1);
    EXPECT_EQ(view->data_as<float>()[i], expected) << i;
    EXPECT_EQ(copy->data_as<float>()[i], expected) << i;
  }
  EXPECT_EQ(tuple->fields()[2].int_value(), -4);
  EXPECT_EQ(tuple->fields()[3].int_value(), 1);
  EXPECT_EQ(tuple->fields()[4].int_value(), -4);
  EXPECT_EQ(tuple->fields()[5].int_value(), 1);
}

// set_field writes a cell in place: the caller's cell holds the new value after.
TEST(InterpreterTest, SetFieldWritesTheCell) {
  const std::shared_ptr<const Executable> exe = LoadProgram("cells.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  const Value cell(ADTObj::Create(0, {Value::Int(40)}));
  EXPECT_EQ(RunInt(vm, "bump", {cell, Value::Int(2)}), 42);
  EXPECT_EQ(RunInt(vm, "bump", {cell, Value::Int(3)}), 45);
  EXPECT_EQ(cell.As<ADTObj>()->fields()[0].int_value(), 45);
  // Not an ADT, or no such field: errors naming the instruction, and the VM runs on.
  absl::StatusOr<Value> out = vm.Invoke("poke", {Value::Int(1), Value::Int(2)});
  EXPECT_THAT(out.status().message(), HasSubstr("function 'poke', instruction 0 (set_field)"));
  out = vm.Invoke("poke", {cell, Value::Int(2)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(out.status().message(), HasSubstr("field 1 of an adt (tag 0) with 1 fields"));
  const Value pair(ADTObj::Tuple({Value::Int(1), Value::Int(2)}));
  out = vm.Invoke("poke", {pair, Value::Int(9)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(pair.As<ADTObj>()->fields()[1].int_value(), 9);
  // A write that would make a cycle (the pair in its own field, or through a closure
  // capturing it) is refused, and the pair is unchanged: nothing leaks (LeakSanitizer).
  for (const Value& holder : {pair, Value(ClosureObj::Create(0, {Value(ADTObj::Tuple({pair}))}))}) {
    out = vm.Invoke("poke", {pair, holder});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(out.status().message(), HasSubstr("would hold the adt itself"));
    EXPECT_EQ(pair.As<ADTObj>()->fields()[1].int_value(), 9);
  }
}

// Each failure is a clear error and the same VM then runs a good call.
class FailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    exe_ = LoadProgram("dynamic_shape.s");
    ASSERT_NE(exe_, nullptr);
    vm_ = std::make_unique<VirtualMachine>(exe_);
  }
  void TearDown() override {
    if (vm_ == nullptr) return;
    std::mt19937 rng(1);
    NDArray x = RandomTensor({2, 768}, rng);
    absl::StatusOr<Value> out = vm_->Invoke("main", {Value(x), Value(x)});
    EXPECT_TRUE(out.ok()) << "VM unusable after the failure: " << out.status();
  }
  std::shared_ptr<const Executable> exe_;
  std::unique_ptr<VirtualMachine> vm_;
  std::mt19937 rng_{3};
};

TEST_F(FailureTest, WrongArgumentCount) {
  absl::StatusOr<Value> out = vm_->Invoke("main", {Value(RandomTensor({1, 768}, rng_))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("'main' takes 2 arguments, got 1"));
}

TEST_F(FailureTest, WrongDtype) {
  NDArray x = RandomTensor({1, 768}, rng_);
  NDArray y = *NDArrayObj::Empty({1, 768}, DType::kI32, MakeNaiveAllocator());
  absl::StatusOr<Value> out = vm_->Invoke("main", {Value(x), Value(y)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("argument 1 ('y')"));
  EXPECT_THAT(out.status().message(), HasSubstr("expected tensor f32[n, 768], got i32[1, 768]"));
}

TEST_F(FailureTest, WrongStaticDimAndRank) {
  absl::StatusOr<Value> out =
      vm_->Invoke("main", {Value(RandomTensor({2, 767}, rng_)), Value(RandomTensor({2, 768}, rng_))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("dim 1 is 767, expected 768"));
  out = vm_->Invoke("main", {Value(RandomTensor({768}, rng_)), Value(RandomTensor({2, 768}, rng_))});
  EXPECT_THAT(out.status().message(), HasSubstr("rank 1, expected 2"));
}

TEST_F(FailureTest, InconsistentSymbolicDim) {
  absl::StatusOr<Value> out =
      vm_->Invoke("main", {Value(RandomTensor({3, 768}, rng_)), Value(RandomTensor({5, 768}, rng_))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("dim 0 is 5 but n = 3 from argument 0 ('x')"));
}

TEST_F(FailureTest, NotATensor) {
  absl::StatusOr<Value> out = vm_->Invoke("main", {Value::Int(1), Value::Int(2)});
  EXPECT_THAT(out.status().message(), HasSubstr("got int"));
}

TEST_F(FailureTest, TupleArgumentsAreCheckedFieldByField) {
  NDArray a = RandomTensor({2, 768}, rng_);
  auto pair = [](Value x, Value y) { return Value(ADTObj::Tuple({x, y})); };
  absl::StatusOr<Value> out = vm_->Invoke("first", {pair(Value(a), Value(a))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->As<NDArrayObj>(), a.get());

  out = vm_->Invoke("first", {Value(a)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("argument 0 ('p') of 'first': expected tuple("));
  out = vm_->Invoke("first", {Value(ADTObj::Tuple({Value(a)}))});
  EXPECT_THAT(out.status().message(), HasSubstr("got a tuple of 1 fields"));
  out = vm_->Invoke("first", {pair(Value(a), Value(RandomTensor({3, 768}, rng_)))});
  EXPECT_THAT(out.status().message(),
              HasSubstr("argument 0 ('p'), field 1 of 'first': expected tensor f32[n, 768], got "
                        "f32[3, 768]: dim 0 is 3 but n = 2 from argument 0 ('p'), field 0"));
  out = vm_->Invoke("first", {pair(Value::Int(1), Value(a))});
  EXPECT_THAT(out.status().message(), HasSubstr("field 0 of 'first': expected tensor f32[n, 768], got int"));
}

TEST_F(FailureTest, UnknownFunction) {
  EXPECT_EQ(vm_->Invoke("nope", {}).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(FailureTest, Fatal) {
  absl::StatusOr<Value> out = vm_->Invoke("fail", {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(out.status().message(), HasSubstr("function 'fail', instruction 0 (fatal): "
                                                "fatal: boom: this program always fails"));
}

TEST_F(FailureTest, KernelError) {
  absl::StatusOr<Value> out = vm_->Invoke(
      "add_like_x", {Value(RandomTensor({2, 3}, rng_)), Value(RandomTensor({4, 3}, rng_))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("function 'add_like_x'"));
  EXPECT_THAT(out.status().message(), HasSubstr("(invoke_packed): kernel 'add'"));
  EXPECT_THAT(out.status().message(), HasSubstr("[2, 3] and [4, 3] do not broadcast"));
}

TEST(InterpreterLimitsTest, CallDepthLimitIsAnErrorAndTheVmRecovers) {
  auto exe = LoadProgram("recursion.s");
  ASSERT_NE(exe, nullptr);
  VmOptions options;
  options.max_call_depth = 500;
  VirtualMachine vm(exe, options);
  absl::StatusOr<Value> out = vm.Invoke("forever", {Value::Int(0)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(), HasSubstr("call depth limit 500 exceeded calling 'forever'"));
  // fib(12) needs a depth of 12: well inside the limit.
  EXPECT_EQ(RunInt(vm, "fib", {Value::Int(12)}), 144);
  // A deep but bounded non-tail recursion fails the same way.
  out = vm.Invoke("is_even", {Value::Int(10'000)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(RunInt(vm, "is_even", {Value::Int(100)}), 1);
}

TEST(InterpreterLimitsTest, StepLimitEndsALongLoop) {
  auto exe = LoadProgram("sum_loop.s");
  ASSERT_NE(exe, nullptr);
  VmOptions options;
  options.max_steps = 1000;
  VirtualMachine vm(exe, options);
  absl::StatusOr<Value> out = vm.Invoke("sum", {Value::Int(1), Value::Int(1'000'000), Value::Int(0)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(),
              HasSubstr("step limit of 1000 calls and backward jumps exceeded"));
  // Each invocation gets the whole budget again.
  EXPECT_EQ(RunInt(vm, "sum", {Value::Int(1), Value::Int(999), Value::Int(0)}), 499500);
}

TEST(InterpreterLimitsTest, TimeoutEndsALongLoopAndTheVmRecovers) {
  auto exe = LoadProgram("sum_loop.s");
  ASSERT_NE(exe, nullptr);
  VmOptions options;
  options.timeout = absl::Milliseconds(5);
  VirtualMachine vm(exe, options);
  // 10^12 tail calls would take hours; the deadline ends the loop.
  absl::StatusOr<Value> out =
      vm.Invoke("sum", {Value::Int(1), Value::Int(1'000'000'000'000), Value::Int(0)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(), HasSubstr("function 'sum'"));
  EXPECT_THAT(out.status().message(), HasSubstr("deadline exceeded: the invocation had "));
  // Each invocation gets the whole timeout again.
  EXPECT_EQ(RunInt(vm, "sum", {Value::Int(1), Value::Int(999), Value::Int(0)}), 499500);
}

TEST(InterpreterLimitsTest, StepLimitHoldsUnderADeadline) {
  // With a deadline, steps are counted in slices between looks at the clock; the step
  // limit must still be exact.
  auto exe = LoadProgram("sum_loop.s");
  ASSERT_NE(exe, nullptr);
  VmOptions options;
  options.max_steps = 5000;
  options.timeout = absl::Hours(1);
  VirtualMachine vm(exe, options);
  // n = 5000 takes 5000 tail calls: allowed; one more is not.
  EXPECT_EQ(RunInt(vm, "sum", {Value::Int(1), Value::Int(5000), Value::Int(0)}), 12'502'500);
  absl::StatusOr<Value> out = vm.Invoke("sum", {Value::Int(1), Value::Int(5001), Value::Int(0)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(), HasSubstr("step limit of 5000"));
}

TEST(InterpreterLimitsTest, PerCallDeadlineIsCheckedBeforeKernels) {
  auto exe = LoadProgram("dynamic_shape.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  std::mt19937 rng(7);
  NDArray x = RandomTensor({2, 768}, rng);
  InvokeLimits past;
  past.deadline = absl::Now() - absl::Seconds(1);
  absl::StatusOr<Value> out = vm.Invoke("main", {Value(x), Value(x)}, past);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(out.status().message(), HasSubstr("before the invocation began"));
  EXPECT_EQ(x->use_count(), 1);
  // The earliest deadline there is, without overflow in the message.
  past.deadline = absl::InfinitePast();
  out = vm.Invoke("main", {Value(x), Value(x)}, past);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  InvokeLimits future;
  future.deadline = absl::Now() + absl::Hours(1);
  ASSERT_TRUE(vm.Invoke("main", {Value(x), Value(x)}, future).ok());
  // Without limits the VmOptions' (none) apply.
  EXPECT_TRUE(vm.Invoke("main", {Value(x), Value(x)}).ok());
}

TEST(InterpreterLimitsTest, MemoryLimitRefusesAnAllocationAndTheVmRecovers) {
  auto exe = LoadProgram("dynamic_shape.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  std::mt19937 rng(8);
  NDArray x = RandomTensor({100, 768}, rng);  // the output needs 307200 bytes
  InvokeLimits limits;
  limits.max_memory_bytes = 300'000;
  absl::StatusOr<Value> out = vm.Invoke("main", {Value(x), Value(x)}, limits);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(),
              HasSubstr("memory limit of 300000 bytes for this invocation exceeded: it holds 0 "
                        "bytes and asks for 307200 more"));
  EXPECT_EQ(vm.allocator()->stats().bytes_live, 0);
  // Enough for one output; the previous result, still held by the caller, does not
  // count against the next invocation.
  limits.max_memory_bytes = 307'200;
  absl::StatusOr<Value> first = vm.Invoke("main", {Value(x), Value(x)}, limits);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Value> second = vm.Invoke("main", {Value(x), Value(x)}, limits);
  ASSERT_TRUE(second.ok()) << second.status();
  // device_copy allocates too.
  limits.max_memory_bytes = 1000;
  out = vm.Invoke("copy", {Value(x)}, limits);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(), HasSubstr("(device_copy): memory limit of 1000 bytes"));
  limits.max_memory_bytes = -1;
  EXPECT_EQ(vm.Invoke("main", {Value(x), Value(x)}, limits).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(InterpreterLimitsTest, ErrorsReleaseEverythingTheFramesHeld) {
  auto exe = LoadProgram("dynamic_shape.s");
  ASSERT_NE(exe, nullptr);
  VirtualMachine vm(exe);
  std::mt19937 rng(5);
  NDArray x = RandomTensor({2, 3}, rng);
  NDArray y = RandomTensor({4, 3}, rng);
  ASSERT_FALSE(vm.Invoke("add_like_x", {Value(x), Value(y)}).ok());
  EXPECT_EQ(x->use_count(), 1);
  EXPECT_EQ(y->use_count(), 1);
  EXPECT_EQ(vm.allocator()->stats().bytes_live, 0);
}

}  // namespace
}  // namespace dynvm::vm
