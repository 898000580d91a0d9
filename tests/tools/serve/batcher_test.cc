// Batching on tiny BERT (i64[batch, sequence] inputs): a plan's rules, and requests of
// different batch sizes and lengths merged, padded, run once and split, each equal to
// its own one-by-one run.
#include "tools/serve/batcher.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "serializer/executable_file.h"
#include "tests/models/bert_mini.h"
#include "tests/tools/serve/bert_mini_fixture.h"
#include "tools/run/compare.h"
#include "tools/serve/batch_plan.h"
#include "vm/virtual_machine.h"

namespace dynvm::tools::serve {
namespace {


using ::testing::HasSubstr;

class BatcherTest : public BertMiniServeTest {
 protected:
  static std::vector<PadRule> BertPads() {
    return {{"input_ids", 1, "0"}, {"attention_mask", 1, "0"}, {"token_type_ids", 1, "0"}};
  }
};

TEST_F(BatcherTest, PadRulesParse) {
  absl::StatusOr<PadRule> rule = ParsePadRule("input_ids:1:0");
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->input, "input_ids");
  EXPECT_EQ(rule->axis, 1);
  EXPECT_EQ(rule->value, "0");
  rule = ParsePadRule("a:b:2:-1.5");  // names may hold ':'
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->input, "a:b");
  EXPECT_EQ(rule->value, "-1.5");
  for (const char* bad : {"input_ids", "input_ids:1", ":1:0", "x:-1:0", "x:a:0", "x:1:"}) {
    EXPECT_FALSE(ParsePadRule(bad).ok()) << bad;
  }
}

TEST_F(BatcherTest, PlansFollowTheRules) {
  absl::StatusOr<BatchPlan> plan = BatchPlan::Create(Main(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->enabled());
  EXPECT_EQ(plan->description(), "on: along 'batch'");
  plan = BatchPlan::Create(Main(), BertPads());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->description(), "on: along 'batch', padding sequence");

  // Padding one input with a symbol leaves the others inconsistent.
  plan = BatchPlan::Create(Main(), {{"input_ids", 1, "0"}});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("needs --pad=attention_mask:1:VALUE"));
  plan = BatchPlan::Create(Main(), {{"nope", 1, "0"}});
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("no input 'nope'"));
  plan = BatchPlan::Create(Main(), {{"input_ids", 0, "0"}});
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("not a named symbol other than the batch dim"));
  plan = BatchPlan::Create(Main(), {{"input_ids", 2, "0"}});
  EXPECT_FALSE(plan.ok());
  std::vector<PadRule> bad_value = BertPads();
  bad_value[0].value = "1.5";  // not an i64
  plan = BatchPlan::Create(Main(), bad_value);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("--pad value '1.5' for input 'input_ids'"));

  // A function whose axis 0 is not a shared symbol runs requests alone.
  vm::Function fixed = Main();
  fixed.params[1].dims[0] = vm::DimSpec::Constant(1);
  plan = BatchPlan::Create(fixed, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->enabled());
  EXPECT_THAT(plan->description(), HasSubstr("off: axis 0 of input 'attention_mask' is not 'batch'"));
  EXPECT_FALSE(BatchPlan::Create(fixed, BertPads()).ok());
}

TEST_F(BatcherTest, CompatibleOnlyWhenUnpaddedAxesAgree) {
  const BatchPlan plain = *BatchPlan::Create(Main(), {});
  const BatchPlan padded = *BatchPlan::Create(Main(), BertPads());
  const std::vector<Value> a = bert_mini::RandomInputs(1, 5, 1, allocator_);
  const std::vector<Value> b = bert_mini::RandomInputs(3, 5, 2, allocator_);
  const std::vector<Value> c = bert_mini::RandomInputs(1, 9, 3, allocator_);
  EXPECT_TRUE(plain.Compatible(a, b));
  EXPECT_FALSE(plain.Compatible(a, c));
  EXPECT_TRUE(padded.Compatible(a, c));
  EXPECT_EQ(plain.Rows(b), 3);
}

TEST_F(BatcherTest, MergedPaddedAndSplitEqualsOneByOne) {
  const BatchPlan plan = *BatchPlan::Create(Main(), BertPads());
  std::vector<std::vector<Value>> requests = {bert_mini::RandomInputs(1, 3, 10, allocator_),
                                              bert_mini::RandomInputs(2, 11, 11, allocator_),
                                              bert_mini::RandomInputs(1, 1, 12, allocator_),
                                              bert_mini::RandomInputs(3, 7, 13, allocator_)};
  std::vector<const std::vector<Value>*> pointers;
  for (const auto& r : requests) pointers.push_back(&r);
  absl::StatusOr<std::vector<Value>> merged = plan.Merge(pointers, allocator_);
  ASSERT_TRUE(merged.ok()) << merged.status();
  const NDArrayObj& ids = *(*merged)[0].As<NDArrayObj>();
  EXPECT_EQ(ids.shape(), Shape({7, 11}));
  EXPECT_EQ(ids.data_as<int64_t>()[3], 0);  // request 0's row padded after 3 tokens
  EXPECT_EQ((*merged)[1].As<NDArrayObj>()->data_as<int64_t>()[3], 0);  // mask too

  const std::vector<Value> batched = RunAlone(*merged);
  absl::StatusOr<std::vector<std::vector<Value>>> parts = plan.Split(batched, pointers, allocator_);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ExpectEachAsAlone(requests, *parts);
}

TEST_F(BatcherTest, BatcherBatchesQueuedRequestsAndAnswersEachAlone) {
  Metrics metrics;
  BatcherOptions options;
  options.workers = 1;
  options.max_batch = 6;
  options.batch_delay = std::chrono::milliseconds(300);  // all requests arrive within it
  Batcher batcher(*exe_, *(*exe_)->FunctionIndex("main"), *BatchPlan::Create(Main(), BertPads()), options,
                  &metrics);
  std::vector<std::vector<Value>> requests;
  std::vector<Batcher::Future> futures;
  for (int i = 0; i < 5; ++i) {
    requests.push_back(bert_mini::RandomInputs(1 + i % 2, 2 + 3 * i, 100 + i, allocator_));
    absl::StatusOr<Batcher::Future> future = batcher.Submit(requests.back());
    ASSERT_TRUE(future.ok()) << future.status();
    futures.push_back(*std::move(future));
  }
  for (size_t i = 0; i < futures.size(); ++i) {
    Batcher::Result result = futures[i].get();
    ASSERT_TRUE(result.ok()) << result.status();
    ExpectSame(RunAlone(requests[i]), *result);
  }
  // 7 rows in 5 requests, at most 6 rows a batch: two invocations, not five.
  EXPECT_THAT(metrics.Render(), HasSubstr("dynvm_batch_size_count 2\n"));
  batcher.Shutdown();
}

// Each of BERT's three inputs as an empty i64 tensor of `shape` (zero elements).
std::vector<Value> EmptyInputs(const Shape& shape, const std::shared_ptr<Allocator>& allocator) {
  std::vector<Value> args;
  for (int i = 0; i < 3; ++i) args.emplace_back(*NDArrayObj::Empty(shape, DType::kI64, allocator));
  return args;
}

TEST_F(BatcherTest, RequestsWithoutElementsNeverShareABatch) {
  const BatchPlan plan = *BatchPlan::Create(Main(), BertPads());
  const std::vector<Value> good = bert_mini::RandomInputs(1, 4, 1, allocator_);
  // [0, 2^62] holds no element, so it passes every size check; padded next to a row it
  // would be [1, 2^62]. [0, 2^21] would be GBs next to seven rows.
  for (const Shape& shape : {Shape{0, int64_t{1} << 62}, Shape{0, int64_t{1} << 21}, Shape{0, 4}, Shape{2, 0}}) {
    SCOPED_TRACE(ShapeToString(shape));
    const std::vector<Value> empty = EmptyInputs(shape, allocator_);
    EXPECT_FALSE(plan.Compatible(empty, good));
    EXPECT_FALSE(plan.Compatible(good, empty));
    EXPECT_FALSE(plan.Compatible(empty, empty));
  }
  // Merge itself checks the merged size before allocating, overflow included.
  const std::vector<Value> huge = EmptyInputs({0, int64_t{1} << 62}, allocator_);
  std::vector<const std::vector<Value>*> pointers = {&huge, &good};
  absl::StatusOr<std::vector<Value>> merged = plan.Merge(pointers, allocator_);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(merged.status().message()), HasSubstr("overflow a byte count"));
  const std::vector<Value> wide = EmptyInputs({0, int64_t{1} << 21}, allocator_);
  pointers = {&wide, &good, &good, &good};
  merged = plan.Merge(pointers, allocator_);
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(std::string(merged.status().message()), HasSubstr("over twice their own"));
}

TEST_F(BatcherTest, PaddingMayAtMostDoubleABatch) {
  const BatchPlan plan = *BatchPlan::Create(Main(), BertPads());
  const std::vector<Value> long_one = bert_mini::RandomInputs(1, 4096, 1, allocator_);
  const std::vector<Value> short_one = bert_mini::RandomInputs(1, 8, 2, allocator_);
  const std::vector<Value> short_two = bert_mini::RandomInputs(1, 8, 3, allocator_);
  // 2 x 4096 padded against 4096 + 8 own: within twice.
  EXPECT_TRUE(plan.WithinPaddingBudget({&long_one}, short_one));
  // 3 x 4096 against 4096 + 16: not.
  EXPECT_FALSE(plan.WithinPaddingBudget({&long_one, &short_one}, short_two));
  // The same lengths pad nothing; close lengths stay within.
  EXPECT_TRUE(plan.WithinPaddingBudget({&short_one}, short_two));
  const std::vector<Value> nine = bert_mini::RandomInputs(1, 9, 4, allocator_);
  EXPECT_TRUE(plan.WithinPaddingBudget({&short_one, &short_two}, nine));
  std::vector<const std::vector<Value>*> pointers = {&long_one, &short_one, &short_two};
  absl::StatusOr<std::vector<Value>> merged = plan.Merge(pointers, allocator_);
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(std::string(merged.status().message()),
              HasSubstr("a batch of 3 requests would pad its inputs to 294912 bytes, over twice their own 98688"));

  // The batcher: a long request first, then seven short ones. At most one short one
  // joins the long one; the other six share a batch of their own.
  Metrics metrics;
  BatcherOptions options;
  options.max_batch = 8;
  options.batch_delay = std::chrono::milliseconds(300);
  Batcher batcher(*exe_, *(*exe_)->FunctionIndex("main"), plan, options, &metrics);
  std::vector<Batcher::Future> futures;
  futures.push_back(*batcher.Submit(bert_mini::RandomInputs(1, 512, 5, allocator_)));
  for (int i = 0; i < 7; ++i) futures.push_back(*batcher.Submit(bert_mini::RandomInputs(1, 8, 6 + i, allocator_)));
  for (Batcher::Future& f : futures) EXPECT_TRUE(f.get().ok());
  const std::string rendered = metrics.Render();
  EXPECT_THAT(rendered, HasSubstr("dynvm_batch_size_count 2\n"));
  EXPECT_THAT(rendered, HasSubstr("dynvm_batch_size_sum 8\n"));
  batcher.Shutdown();
}

TEST_F(BatcherTest, AFailingRequestInABatchFailsAlone) {
  Metrics metrics;
  BatcherOptions options;
  options.max_batch = 8;
  options.batch_delay = std::chrono::milliseconds(300);
  Batcher batcher(*exe_, *(*exe_)->FunctionIndex("main"), *BatchPlan::Create(Main(), BertPads()), options,
                  &metrics);
  std::vector<std::vector<Value>> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(bert_mini::RandomInputs(1, 3 + i, 200 + i, allocator_));
  requests[2][0].As<NDArrayObj>()->data_as<int64_t>()[1] = 5000;  // tiny BERT's vocabulary is 1000
  std::vector<Batcher::Future> futures;
  for (const std::vector<Value>& r : requests) futures.push_back(*batcher.Submit(r));
  for (size_t i = 0; i < futures.size(); ++i) {
    SCOPED_TRACE(i);
    Batcher::Result result = futures[i].get();
    if (i == 2) {
      ASSERT_FALSE(result.ok());
      EXPECT_THAT(std::string(result.status().message()), HasSubstr("index 5000"));
      EXPECT_THAT(std::string(result.status().message()), ::testing::Not(HasSubstr("in a batch")));
    } else {
      ASSERT_TRUE(result.ok()) << result.status();
      ExpectSame(RunAlone(requests[i]), *result);
    }
  }
  // One batched invocation of the four, which failed, then each of them alone.
  EXPECT_THAT(metrics.Render(), HasSubstr("dynvm_batch_size_count 5\n"));
  batcher.Shutdown();
}

TEST_F(BatcherTest, BadArgumentsFailAloneAndAFullQueueRefuses) {
  BatcherOptions options;
  options.max_queue = 0;  // refuses everything that fits the signature
  Batcher batcher(*exe_, *(*exe_)->FunctionIndex("main"), *BatchPlan::Create(Main(), {}), options, nullptr);
  std::vector<Value> args = bert_mini::RandomInputs(1, 4, 1, allocator_);
  args[2] = bert_mini::RandomInputs(1, 5, 1, allocator_)[2];  // sequence 5 against 4
  absl::StatusOr<Batcher::Future> future = batcher.Submit(args);
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(future.status().message()),
              HasSubstr("argument 2 ('token_type_ids') of 'main'"));
  future = batcher.Submit(bert_mini::RandomInputs(1, 4, 1, allocator_));
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(future.status().message()), HasSubstr("queue is full"));
  batcher.Shutdown();
  options.max_queue = 4;
  Batcher closed(*exe_, *(*exe_)->FunctionIndex("main"), *BatchPlan::Create(Main(), {}), options, nullptr);
  closed.Shutdown();
  future = closed.Submit(bert_mini::RandomInputs(1, 4, 1, allocator_));
  ASSERT_FALSE(future.ok());
  EXPECT_THAT(std::string(future.status().message()), HasSubstr("shutting down"));
}

TEST_F(BatcherTest, ShutdownFinishesQueuedRequests) {
  BatcherOptions options;
  options.workers = 2;
  options.max_batch = 1;
  options.max_queue = 64;
  Batcher batcher(*exe_, *(*exe_)->FunctionIndex("main"), *BatchPlan::Create(Main(), {}), options, nullptr);
  std::vector<Batcher::Future> futures;
  for (int i = 0; i < 16; ++i) futures.push_back(*batcher.Submit(bert_mini::RandomInputs(2, 32, i, allocator_)));
  batcher.Shutdown();
  for (Batcher::Future& f : futures) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_TRUE(f.get().ok());
  }
}

}  // namespace
}  // namespace dynvm::tools::serve
