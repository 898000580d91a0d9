// The profiler: what it counts for a small program (calls per kernel entry, each
// instruction once, FLOPs of a dense layer), its report and its Chrome trace.
#include "vm/profiler.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
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

// The FLOP count of one call of `name` (bound with `attrs`) on `args`, inputs then one
// output.
std::optional<double> Flops(std::string_view name, std::vector<NDArray> args,
                            const kernels::Attrs& attrs = {}) {
  const int num_inputs = static_cast<int>(args.size()) - 1;
  absl::StatusOr<kernels::BoundKernel> kernel =
      kernels::DefaultRegistry().Bind(name, attrs, num_inputs, 1);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  if (!kernel.ok()) return std::nullopt;
  std::vector<NDArrayObj*> raw;
  for (const NDArray& a : args) raw.push_back(a.get());
  return kernel->Flops(raw.data());
}

TEST(KernelFlopsTest, MatrixProductsConvolutionsAndAttention) {
  auto t = [](std::vector<int64_t> shape) { return Ones(std::move(shape)); };
  EXPECT_EQ(Flops("nn.dense", {t({3, 4, 8}), t({16, 8}), t({3, 4, 16})}), 2.0 * 3 * 4 * 16 * 8);
  EXPECT_EQ(Flops("nn.conv2d", {t({2, 3, 10, 10}), t({6, 3, 3, 3}), t({2, 6, 8, 8})}),
            2.0 * (2 * 6 * 8 * 8) * (3 * 3 * 3));
  EXPECT_EQ(Flops("gemm", {t({8, 5}), t({7, 8}), t({7}), t({5, 7})}, {{"trans_a", int64_t{1}}}),
            2.0 * 5 * 7 * 8);
  // Batched products whose a broadcasts or is transposed: K from a's matrix dims.
  EXPECT_EQ(Flops("nn.batch_matmul", {t({4, 8}), t({3, 5, 8}), t({3, 4, 5})}),
            2.0 * 3 * 4 * 5 * 8);
  EXPECT_EQ(Flops("matmul", {t({2, 8, 4}), t({2, 8, 5}), t({2, 4, 5})},
                  {{"transpose_a", int64_t{1}}}),
            2.0 * 2 * 4 * 5 * 8);
  EXPECT_EQ(Flops("nn.matmul", {t({3, 4, 8}), t({8, 5}), t({3, 4, 5})}), 2.0 * 3 * 4 * 5 * 8);
  // A vector on either side: b [K] leaves out [B, M] (M is not out's second-to-last).
  EXPECT_EQ(Flops("matmul", {t({3, 4, 8}), t({8}), t({3, 4})}), 2.0 * 3 * 4 * 8);
  EXPECT_EQ(Flops("matmul", {t({8}), t({3, 8, 5}), t({3, 5})}), 2.0 * 3 * 5 * 8);
  // An empty output is no work, not 0 / 0.
  EXPECT_EQ(Flops("nn.batch_matmul", {t({0, 8}), t({0, 8}), t({0, 0})}), 0.0);
  // Attention: 2 seq_q seq_k (d + dv) per batch and head, in either layout (2 heads,
  // 3 queries, 5 keys, d 4, dv 6).
  const double attention = 2.0 * 2 * 3 * 5 * (4 + 6);
  EXPECT_EQ(Flops("nn.attention", {t({1, 2, 3, 4}), t({1, 2, 5, 4}), t({1, 2, 5, 6}),
                                   t({1, 2, 3, 6})}),
            attention);
  EXPECT_EQ(Flops("nn.attention",
                  {t({1, 3, 2, 4}), t({1, 5, 2, 4}), t({1, 5, 2, 6}), t({1, 3, 2, 6})},
                  {{"layout", std::string("BSHD")}}),
            attention);
  // Arguments the kernel does not take (the call failed), and kernels not counted.
  EXPECT_EQ(Flops("nn.attention", {t({1, 2, 3}), t({1, 2, 5, 4}), t({1, 2, 5, 6}),
                                   t({1, 2, 3, 6})}),
            std::nullopt);
  EXPECT_EQ(Flops("nn.relu", {t({3, 4}), t({3, 4})}), std::nullopt);
  EXPECT_EQ(Flops("add", {t({3, 4}), t({3, 4}), t({3, 4})}), std::nullopt);
}

}  // namespace
}  // namespace dynvm::vm
