// Packed batching on tiny BERT (tools/serve/token_plan.h): the plan its executable's
// main_packed gives, which requests can be packed, requests of different batch sizes
// and lengths packed, run once and split, each equal to its own run of main; and the
// batcher forming packed batches within --max-batch-tokens, with a request that cannot
// be packed and one that fails among them.
#include "tools/serve/token_plan.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/models/bert_mini.h"
#include "tests/tools/serve/bert_mini_fixture.h"
#include "tools/serve/batcher.h"

namespace dynvm::tools::serve {
namespace {

using ::testing::HasSubstr;

class TokenPlanTest : public BertMiniServeTest {
 protected:
  // `args` with the attention mask's last element 0: a padded request.
  std::vector<Value> WithPadding(std::vector<Value> args) const {
    const NDArrayObj& mask = *args[1].As<NDArrayObj>();
    NDArray copy = *NDArrayObj::Empty(mask.shape(), mask.dtype(), allocator_);
    std::copy_n(mask.data_as<int64_t>(), mask.num_elements(), copy->data_as<int64_t>());
    copy->data_as<int64_t>()[mask.num_elements() - 1] = 0;
    args[1] = Value(copy);
    return args;
  }
};

TEST_F(TokenPlanTest, PlanAndWhichRequestsPack) {
  const TokenPlan plan = TokenPlan::Create(**exe_, MainIndex());
  ASSERT_TRUE(plan.enabled()) << plan.description();
  EXPECT_EQ(plan.description(), "packed tokens through 'main_packed' for requests with only ones in attention_mask");
  EXPECT_EQ(plan.packed_index(), *(*exe_)->FunctionIndex("main_packed"));
  EXPECT_EQ(plan.Tokens(bert_mini::RandomInputs(2, 5, 1, allocator_)), 10);
  EXPECT_EQ(plan.Tokens(WithPadding(bert_mini::RandomInputs(2, 5, 1, allocator_))), 0);

  const TokenPlan none = TokenPlan::Create(**exe_, *(*exe_)->FunctionIndex("main_packed"));
  EXPECT_FALSE(none.enabled());
  EXPECT_EQ(none.description(), "off: the executable has no 'main_packed_packed'");
}

TEST_F(TokenPlanTest, PackedAndSplitEqualsOneByOne) {
  const TokenPlan plan = TokenPlan::Create(**exe_, MainIndex());
  std::vector<std::vector<Value>> requests = {bert_mini::RandomInputs(1, 3, 10, allocator_),
                                              bert_mini::RandomInputs(2, 11, 11, allocator_),
                                              bert_mini::RandomInputs(1, 1, 12, allocator_),
                                              bert_mini::RandomInputs(3, 7, 13, allocator_)};
  std::vector<const std::vector<Value>*> pointers;
  for (const auto& r : requests) pointers.push_back(&r);
  absl::StatusOr<std::vector<Value>> merged = plan.Merge(pointers, allocator_);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->size(), 3u);  // input_ids, token_type_ids, offsets
  EXPECT_EQ((*merged)[0].As<NDArrayObj>()->shape(), Shape({3 + 22 + 1 + 21}));
  const NDArrayObj& offsets = *(*merged)[2].As<NDArrayObj>();
  EXPECT_EQ(std::vector<int64_t>(offsets.data_as<int64_t>(), offsets.data_as<int64_t>() + offsets.num_elements()),
            (std::vector<int64_t>{0, 3, 14, 25, 26, 33, 40, 47}));

  vm::VirtualMachine machine(*exe_);
  absl::StatusOr<Value> out = machine.Invoke(plan.packed_index(), *merged);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<std::vector<std::vector<Value>>> parts = plan.Split(FlattenValue(*out), pointers, allocator_);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ExpectEachAsAlone(requests, *parts);
}

TEST_F(TokenPlanTest, BatcherPacksWithinTheTokenBudget) {
  Metrics metrics;
  BatcherOptions options;
  options.max_batch = 16;
  options.max_batch_tokens = 40;
  options.batch_delay = std::chrono::milliseconds(300);  // all requests arrive within it
  Batcher batcher(*exe_, MainIndex(), *BatchPlan::Create((*exe_)->function(MainIndex()), {}), options, &metrics);
  std::vector<std::vector<Value>> requests;
  for (int i = 0; i < 8; ++i) requests.push_back(bert_mini::RandomInputs(1 + i % 2, 1 + 4 * i, 300 + i, allocator_));
  requests[3] = WithPadding(requests[3]);  // runs alone, unpacked
  // A token id past the vocabulary (1000): its packed batch fails, and each of its
  // requests reruns alone.
  requests[5][0].As<NDArrayObj>()->data_as<int64_t>()[0] = 5000;
  std::vector<Batcher::Future> futures;
  for (const auto& r : requests) {
    absl::StatusOr<Batcher::Future> future = batcher.Submit(r);
    ASSERT_TRUE(future.ok()) << future.status();
    futures.push_back(*std::move(future));
  }
  for (size_t i = 0; i < futures.size(); ++i) {
    SCOPED_TRACE(i);
    Batcher::Result result = futures[i].get();
    if (i == 5) {
      EXPECT_FALSE(result.ok());
      continue;
    }
    ASSERT_TRUE(result.ok()) << result.status();
    ExpectSame(RunAlone(requests[i]), *result);
  }
  batcher.Shutdown();
  const std::string text = metrics.Render();
  // Every packed invocation within the budget of 40 tokens: the count of the bucket
  // le="64" is the count of all (40 is not a bound; 32 < 40 <= 64).
  const size_t count_at = text.find("dynvm_batch_tokens_count ");
  ASSERT_NE(count_at, std::string::npos) << text;
  const std::string count = text.substr(count_at + 25, text.find('\n', count_at) - count_at - 25);
  EXPECT_NE(count, "0");
  EXPECT_THAT(text, HasSubstr("dynvm_batch_tokens_bucket{le=\"64\"} " + count + "\n"));
}

}  // namespace
}  // namespace dynvm::tools::serve
