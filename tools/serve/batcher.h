// The batcher: a bounded queue of requests and a pool of worker threads, each with its
// own VirtualMachine over the one shared Executable, that run them — several at once
// when the function allows it (tools/serve/batch_plan.h).
//
// A worker takes the oldest request, then gathers queued requests compatible with it
// until the batch holds `max_batch` rows or `batch_delay` has passed since it took the
// first, runs them as one invocation and hands each request its own outputs. When the
// function has a packed entry (tools/serve/token_plan.h) and the oldest request can be
// packed, the batch is instead any queued requests that can be packed whose real tokens
// fit `max_batch_tokens` (and rows `max_batch`), run on the packed entry without
// padding. Requests
// are checked against the signature when submitted, so a bad one fails alone and never
// joins a batch. A batched invocation that fails (a data-dependent kernel error, or a
// --timeout-ms / --max-memory-bytes limit) is rerun request by request, so each gets
// the answer of its own run: only the requests that fail alone fail.
//
//   Batcher batcher(exe, function_index, options, &metrics);   // starts the workers
//   absl::StatusOr<Batcher::Future> result = batcher.Submit(std::move(args));
//   absl::StatusOr<std::vector<Value>> outputs = result->get();  // flattened
//   batcher.Shutdown();          // refuses new requests, finishes queued ones, joins
#ifndef DYNVM_TOOLS_SERVE_BATCHER_H_
#define DYNVM_TOOLS_SERVE_BATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "objects/value.h"
#include "tools/serve/batch_plan.h"
#include "tools/serve/metrics.h"
#include "tools/serve/token_plan.h"
#include "vm/executable.h"

namespace dynvm::tools::serve {

struct BatcherOptions {
  int workers = 1;              // worker threads, one VM each
  int threads_per_worker = 1;   // the intra-op thread pool of each worker's VM
  int64_t max_batch = 1;        // rows (axis 0) per invocation; 1: no batching
  // Real tokens per invocation of the packed entry; 0: requests are not packed.
  int64_t max_batch_tokens = 0;
  std::chrono::microseconds batch_delay{0};  // how long a worker waits to fill a batch
  size_t max_queue = 32;        // waiting requests beyond which Submit refuses
  // Limits of each invocation (a batch is one, and each rerun after it fails):
  // vm::VmOptions' timeout and max_memory_bytes. A request that exceeds one alone fails.
  absl::Duration timeout = absl::InfiniteDuration();
  int64_t max_memory_bytes = 0;  // 0: no limit
};

class Batcher {
 public:
  using Result = absl::StatusOr<std::vector<Value>>;
  using Future = std::future<Result>;

  // Starts `options.workers` workers running function `function_index` of `executable`
  // with `plan` (batching off when the plan is or max_batch is 1). `metrics` may be
  // null; otherwise it must outlive the batcher.
  Batcher(std::shared_ptr<const vm::Executable> executable, uint32_t function_index,
          BatchPlan plan, BatcherOptions options, Metrics* metrics);
  // Shuts down.
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues `args` (one per parameter). InvalidArgument when they do not fit the
  // signature (vm::CheckArguments' message); Unavailable when the queue
  // holds max_queue requests or the batcher is shutting down. The future yields the
  // flattened outputs, or the run's error.
  absl::StatusOr<Future> Submit(std::vector<Value> args);

  // Refuses new requests, lets the workers finish every queued one, joins them.
  // Idempotent.
  void Shutdown();

  // Requests waiting for a worker.
  size_t queue_depth() const;

  // How requests are packed, derived from the executable (off when it has no packed
  // entry for the function).
  const TokenPlan& token_plan() const { return token_plan_; }

 private:
  struct Pending {
    std::vector<Value> args;
    std::promise<Result> promise;
    // Its real tokens if packed batching is on and it can be packed, else 0: computed
    // once, when submitted (it reads the attention masks).
    int64_t tokens = 0;
  };
  struct Worker;
  // Requests run as one invocation: padded (or alone), or packed.
  struct Batch {
    std::vector<Pending> requests;
    bool packed = false;
    int64_t rows = 0;    // axis 0 summed
    int64_t tokens = 0;  // packed: real tokens summed
  };

  void WorkLoop(Worker& worker);
  // Takes the next batch off the queue, waiting for one; empty once shut down and drained.
  Batch NextBatch();
  // Whether `pending` may join `batch`: for a packed batch, it can be packed and fits
  // max_batch_tokens and max_batch; otherwise max_batch, Compatible and the padding
  // budget (batch_plan.h).
  bool Fits(const Batch& batch, const Pending& pending) const;
  // Moves queued requests that fit `batch` into it.
  void Gather(Batch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `batch` as one invocation; when that fails, each request alone.
  void Run(Worker& worker, Batch& batch);
  void RunAlone(Worker& worker, Pending& pending);
  void PublishQueueDepth() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::shared_ptr<const vm::Executable> executable_;
  const uint32_t function_index_;
  const BatchPlan plan_;
  const TokenPlan token_plan_;
  const BatcherOptions options_;
  Metrics* const metrics_;

  // std::mutex, not absl::Mutex: ThreadSanitizer sees it (Debian's Abseil is not built
  // for TSan), and scripts/test.sh runs this batcher under TSan.
  mutable std::mutex mu_;
  std::condition_variable queue_changed_;  // a request arrived, or shutdown began
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;

  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_BATCHER_H_
