// A time limit reaches into kernels (kernels/deadline.h): an invocation whose one
// kernel is a GEMM (or attention) much longer than its limit ends soon after the limit, not when the
// GEMM would have, with DEADLINE_EXCEEDED naming the limit; the VM then runs the same
// function to the right result. Durations are compared with the same GEMM's full run
// measured in the same test, so a slow or noisy machine scales both.
#include <algorithm>
#include <chrono>
#include <memory>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "tests/compiler/compile_and_load.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

constexpr int64_t kN = 1536;  // 2 * 1536^3 = 7.2 GFLOP: tens of ms or more on 2 threads

NDArray Filled(int64_t rows, int64_t cols, float value) {
  NDArray t = *NDArrayObj::Empty({rows, cols}, DType::kF32, MakeNaiveAllocator());
  std::fill(t->data_as<float>(), t->data_as<float>() + rows * cols, value);
  return t;
}

double MillisecondsOf(vm::VirtualMachine& machine, const NDArray& x, const NDArray& w, absl::Status* status) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Value> out = machine.Invoke("main", {Value(x), Value(w)});
  const auto stop = std::chrono::steady_clock::now();
  *status = out.status();
  if (out.ok()) {
    EXPECT_EQ(out->As<NDArrayObj>()->data_as<float>()[kN * kN - 1], 0.5f * 0.25f * kN);
  }
  return std::chrono::duration<double, std::milli>(stop - start).count();
}

TEST(DeadlineTest, ATimeLimitEndsAGemmInTheMiddle) {
  const std::shared_ptr<const vm::Executable> exe = testing::ParseCompileAndLoad(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(n, 1536), float32], %w: Tensor[(1536, 1536), float32]) {
  nn.dense(%x, %w)
})", "deadline.relay", {});
  ASSERT_NE(exe, nullptr);
  const NDArray x = Filled(kN, kN, 0.5f), w = Filled(kN, kN, 0.25f);
  vm::VirtualMachine unlimited(exe);
  absl::Status status;
  MillisecondsOf(unlimited, x, w, &status);  // warms the pool and the scratch buffers
  double full = MillisecondsOf(unlimited, x, w, &status);
  ASSERT_TRUE(status.ok()) << status;
  full = std::min(full, MillisecondsOf(unlimited, x, w, &status));

  vm::VmOptions options;
  options.timeout = absl::Milliseconds(std::max(1.0, full / 10));
  vm::VirtualMachine limited(exe, options);
  const double cut = MillisecondsOf(limited, x, w, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_NE(status.message().find("deadline exceeded"), absl::string_view::npos) << status;
  // Stopped within a block of the limit, not at the end of the GEMM.
  EXPECT_LT(cut, full / 2) << "full run " << full << " ms, limit " << full / 10 << " ms";

  options.timeout = absl::InfiniteDuration();
  vm::VirtualMachine again(exe, options);
  MillisecondsOf(limited, x, w, &status);  // the limited VM is usable: it fails the same way
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  MillisecondsOf(again, x, w, &status);
  EXPECT_TRUE(status.ok()) << status;
}

// The same inside attention, whose blocks of queries are GEMMs and a softmax each: 8
// heads of 2048 queries over 2048 keys.
TEST(DeadlineTest, ATimeLimitEndsAttentionInTheMiddle) {
  const std::shared_ptr<const vm::Executable> exe = testing::ParseCompileAndLoad(R"(#[version = "0.0.5"]
def @main(%q: Tensor[(1, 8, 2048, 64), float32], %k: Tensor[(1, 8, 2048, 64), float32],
          %v: Tensor[(1, 8, 2048, 64), float32]) {
  nn.attention(%q, %k, %v, scale=0.125f)
})", "attention.relay", {});
  ASSERT_NE(exe, nullptr);
  NDArray x = *NDArrayObj::Empty({1, 8, 2048, 64}, DType::kF32, MakeNaiveAllocator());
  std::fill(x->data_as<float>(), x->data_as<float>() + x->num_elements(), 0.5f);
  const auto run = [&](vm::VirtualMachine& machine, absl::Status* status) {
    const auto start = std::chrono::steady_clock::now();
    *status = machine.Invoke("main", {Value(x), Value(x), Value(x)}).status();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  vm::VirtualMachine unlimited(exe);
  absl::Status status;
  run(unlimited, &status);
  double full = run(unlimited, &status);
  ASSERT_TRUE(status.ok()) << status;
  full = std::min(full, run(unlimited, &status));
  vm::VmOptions options;
  options.timeout = absl::Milliseconds(std::max(1.0, full / 10));
  vm::VirtualMachine limited(exe, options);
  const double cut = run(limited, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_LT(cut, full / 2) << "full run " << full << " ms, limit " << full / 10 << " ms";
}

}  // namespace
}  // namespace dynvm::compiler
