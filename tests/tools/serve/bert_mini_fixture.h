// The fixture of the batching tests: tiny BERT's executable (the ctest fixture's,
// tests/models/bert_mini.h), a request's outputs run alone through main, and the
// comparison of a batched request's outputs with them.
#ifndef DYNVM_TESTS_TOOLS_SERVE_BERT_MINI_FIXTURE_H_
#define DYNVM_TESTS_TOOLS_SERVE_BERT_MINI_FIXTURE_H_

#include <memory>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "serializer/executable_file.h"
#include "tests/models/bert_mini.h"
#include "tools/run/compare.h"
#include "vm/virtual_machine.h"

namespace dynvm::tools::serve {

class BertMiniServeTest : public ::testing::Test {
 protected:
  // Batched (padded or packed) rows go through GEMMs of other sizes; padded positions
  // are masked out, so only rounding differs.
  static constexpr CompareOptions kTolerance{/*atol=*/1e-4, /*rtol=*/1e-4};

  static void SetUpTestSuite() {
    absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
        serializer::LoadExecutable(bert_mini::ExePath(), kernels::DefaultRegistry());
    ASSERT_TRUE(exe.ok()) << exe.status();
    exe_ = new std::shared_ptr<const vm::Executable>(*exe);
  }
  static uint32_t MainIndex() { return *(*exe_)->FunctionIndex("main"); }
  static const vm::Function& Main() { return (*exe_)->function(MainIndex()); }
  // The flattened outputs of `args` run alone.
  static std::vector<Value> RunAlone(const std::vector<Value>& args) {
    vm::VirtualMachine machine(*exe_);
    absl::StatusOr<Value> result = machine.Invoke("main", args);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? FlattenValue(*result) : std::vector<Value>{};
  }
  static void ExpectSame(const std::vector<Value>& expected, const std::vector<Value>& got) {
    ASSERT_EQ(expected.size(), got.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(CompareValue(expected[i], got[i], kTolerance), std::nullopt) << "output " << i;
    }
  }

  // Each of `requests`' part of a batched run equals its own run.
  static void ExpectEachAsAlone(const std::vector<std::vector<Value>>& requests,
                                const std::vector<std::vector<Value>>& parts) {
    ASSERT_EQ(parts.size(), requests.size());
    for (size_t r = 0; r < requests.size(); ++r) {
      SCOPED_TRACE(r);
      ExpectSame(RunAlone(requests[r]), parts[r]);
    }
  }

  inline static std::shared_ptr<const vm::Executable>* exe_ = nullptr;
  const std::shared_ptr<Allocator> allocator_ = MakePooledAllocator();
};

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TESTS_TOOLS_SERVE_BERT_MINI_FIXTURE_H_
