// The profiler: what it counts for a small program (calls per kernel entry, each
// instruction once, FLOPs of a dense layer), its report and its Chrome trace.
#include "vm/profiler.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/flops.h"
#include "kernels/kernel.h"
#include "objects/api.h"
#include "tools/asm/assembler.h"
#include "vm/virtual_machine.h"

namespace dynvm::vm {
namespace {

using ::testing::HasSubstr;

// y = relu(dense(x, w)) for x [n, 8] and w [16, 8], with the output shape from the
// dense kernel's shape function.
constexpr char kProgram[] = R"(
.kernel dense = "nn.dense" (2 -> 1)
.kernel relu = "nn.relu" (1 -> 1)
.func @main(x: tensor f32[n, 8], w: tensor f32[16, 8]) -> (tensor f32[n, 16]) regs 8
  invoke_shape_fn dense, 1, (%0, %1, %2)
  dim %3, %0, 0
  load_consti %4, 64
  muli %3, %3, %4
  alloc_storage %4, %3
  load_consti %5, 0
  alloc_tensor_reg %6, %4, %5, f32, %2
  invoke_packed dense, 1, (%0, %1, %6)
  alloc_tensor_reg %7, %4, %5, f32, %2
  invoke_packed relu, 1, (%6, %7)
  ret %7
.end
; Fails at its second instruction: relu gets an int.
.func @boom() -> (any) regs 1
  load_consti %0, 1
  invoke_packed relu, 1, (%0, %0)
  ret %0
.end
)";

std::shared_ptr<const Executable> Load() {
  absl::StatusOr<ExecutableSpec> spec = tools::Assemble(kProgram);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const Executable>> exe =
      Executable::Create(*std::move(spec), kernels::DefaultRegistry());
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? *exe : nullptr;
}

NDArray Ones(std::vector<int64_t> shape) {
  NDArray t = *NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator());
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<float>()[i] = 1;
  return t;
}

TEST(ProfilerTest, CountsEveryInstructionAndKernelCall) {
  std::shared_ptr<const Executable> exe = Load();
  ASSERT_NE(exe, nullptr);
  Profiler profiler(/*trace=*/true);
  VmOptions options;
  options.profiler = &profiler;
  VirtualMachine machine(exe, options);
  constexpr int kRuns = 3;
  for (int i = 0; i < kRuns; ++i) {
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(Ones({5, 8})), Value(Ones({16, 8}))});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->As<NDArrayObj>()->data_as<float>()[0], 8.0f);  // the profiled loop computes
  }
  EXPECT_EQ(profiler.invocations(), kRuns);
  EXPECT_GT(profiler.total_nanos(), 0);
  ASSERT_EQ(profiler.kernels().size(), 2u);
  const Profiler::KernelStats& dense = profiler.kernels()[0];
  EXPECT_EQ(dense.name, "nn.dense");
  EXPECT_EQ(dense.calls, kRuns);
  EXPECT_EQ(dense.counted, kRuns);
  EXPECT_EQ(dense.flops, kRuns * 2.0 * 5 * 16 * 8);
  EXPECT_EQ(profiler.kernels()[1].calls, kRuns);
  EXPECT_EQ(profiler.kernels()[1].counted, 0);  // relu's count is not known
  EXPECT_EQ(profiler.shape_functions()[0].calls, kRuns);
  EXPECT_EQ(profiler.opcode(Opcode::kInvokePacked).count, 2 * kRuns);
  EXPECT_EQ(profiler.opcode(Opcode::kAllocTensorReg).count, 2 * kRuns);
  EXPECT_EQ(profiler.opcode(Opcode::kRet).count, kRuns);
  EXPECT_EQ(profiler.opcode(Opcode::kMulI).count, kRuns);

  const std::string report = profiler.Report();
  EXPECT_THAT(report, HasSubstr("3 invocation(s)"));
  EXPECT_THAT(report, HasSubstr("nn.dense (shape fn)"));
  for (const std::string_view kind : {"kernel calls", "shape functions", "allocation",
                                      "shape arithmetic", "dispatch"}) {
    EXPECT_THAT(report, HasSubstr(kind));
  }

  // One event per kernel call, shape-function call and invocation.
  const std::string trace = profiler.ChromeTrace();
  EXPECT_THAT(trace, HasSubstr("{\"displayTimeUnit\": \"ms\", \"traceEvents\": ["));
  int events = 0;
  for (size_t at = trace.find("\"ph\": \"X\""); at != std::string::npos;
       at = trace.find("\"ph\": \"X\"", at + 1)) {
    ++events;
  }
  EXPECT_EQ(events, kRuns * 4);
  EXPECT_THAT(trace, HasSubstr("\"name\": \"@main\", \"cat\": \"invocation\""));
  EXPECT_THAT(trace, HasSubstr("\"name\": \"nn.dense (shape fn)\", \"cat\": \"shape function\""));

  profiler.Reset();
  EXPECT_EQ(profiler.invocations(), 0);
  EXPECT_EQ(profiler.ChromeTrace(), "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n\n]}\n");
}

TEST(ProfilerTest, FailedRunsStillEndTheirInvocation) {
  std::shared_ptr<const Executable> exe = Load();
  ASSERT_NE(exe, nullptr);
  Profiler profiler;
  VmOptions options;
  options.profiler = &profiler;
  VirtualMachine machine(exe, options);
  // Refused by the signature check: nothing ran, nothing is counted.
  EXPECT_FALSE(machine.Invoke("main", {Value(Ones({5, 7})), Value(Ones({16, 8}))}).ok());
  EXPECT_EQ(profiler.invocations(), 0);
  // Fails while running: the invocation ends, its instructions are counted.
  EXPECT_FALSE(machine.Invoke("boom", {}).ok());
  EXPECT_EQ(profiler.invocations(), 1);
  EXPECT_EQ(profiler.opcode(Opcode::kLoadConsti).count, 1);
  EXPECT_TRUE(machine.Invoke("main", {Value(Ones({2, 8})), Value(Ones({16, 8}))}).ok());
  EXPECT_EQ(profiler.invocations(), 2);
  EXPECT_EQ(profiler.kernels()[0].calls, 1);
}

TEST(ProfilerTest, AnotherExecutableStartsOver) {
  std::shared_ptr<const Executable> first = Load(), second = Load();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  Profiler profiler(/*trace=*/true);
  VmOptions options;
  options.profiler = &profiler;
  const std::vector<Value> args = {Value(Ones({2, 8})), Value(Ones({16, 8}))};
  VirtualMachine a(first, options), b(second, options);
  ASSERT_TRUE(a.Invoke("main", args).ok());
  ASSERT_TRUE(a.Invoke("main", args).ok());
  ASSERT_TRUE(b.Invoke("main", args).ok());
  EXPECT_EQ(profiler.invocations(), 1);
  EXPECT_EQ(profiler.kernels()[0].calls, 1);
  EXPECT_EQ(profiler.opcode(Opcode::kRet).count, 1);
}

TEST(KernelFlopsTest, MatrixProductsAndConvolutions) {
  auto t = [](std::vector<int64_t> shape) { return Ones(std::move(shape)); };
  NDArray a = t({3, 4, 8}), w = t({16, 8}), out = t({3, 4, 16});
  NDArrayObj* dense[] = {a.get(), w.get(), out.get()};
  EXPECT_EQ(kernels::KernelFlops("nn.dense", dense, 2), 2.0 * 3 * 4 * 16 * 8);
  NDArray x = t({2, 3, 10, 10}), k = t({6, 3, 3, 3}), y = t({2, 6, 8, 8});
  NDArrayObj* conv[] = {x.get(), k.get(), y.get()};
  EXPECT_EQ(kernels::KernelFlops("nn.conv2d", conv, 2), 2.0 * (2 * 6 * 8 * 8) * (3 * 3 * 3));
  NDArray ga = t({8, 5}), gb = t({7, 8}), gc = t({7}), gout = t({5, 7});  // trans_a
  NDArrayObj* gemm[] = {ga.get(), gb.get(), gc.get(), gout.get()};
  EXPECT_EQ(kernels::KernelFlops("gemm", gemm, 3), 2.0 * 5 * 7 * 8);
  // Batched products whose a broadcasts or is transposed: K from a's matrix dims.
  NDArray ba = t({4, 8}), bb = t({3, 5, 8}), bout = t({3, 4, 5});
  NDArrayObj* batch[] = {ba.get(), bb.get(), bout.get()};
  EXPECT_EQ(kernels::KernelFlops("nn.batch_matmul", batch, 2), 2.0 * 3 * 4 * 5 * 8);
  NDArray ta = t({2, 8, 4}), tb = t({2, 8, 5}), tout = t({2, 4, 5});  // aᵀ b
  NDArrayObj* transposed[] = {ta.get(), tb.get(), tout.get()};
  EXPECT_EQ(kernels::KernelFlops("matmul", transposed, 2), 2.0 * 2 * 4 * 5 * 8);
  // An empty output is no work, not 0 / 0.
  NDArray ea = t({0, 8}), ew = t({0, 8}), eout = t({0, 0});
  NDArrayObj* empty[] = {ea.get(), ew.get(), eout.get()};
  EXPECT_EQ(kernels::KernelFlops("nn.batch_matmul", empty, 2), 0.0);
  EXPECT_EQ(kernels::KernelFlops("nn.relu", dense, 1), std::nullopt);
  EXPECT_EQ(kernels::KernelFlops("add", dense, 2), std::nullopt);
}

}  // namespace
}  // namespace dynvm::vm
