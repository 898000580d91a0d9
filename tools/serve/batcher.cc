// The batcher's queue, workers and batch formation (tools/serve/batcher.h).
#include "tools/serve/batcher.h"

#include <chrono>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "kernels/thread_pool.h"
#include "tools/run/compare.h"
#include "vm/virtual_machine.h"

namespace dynvm::tools::serve {

struct Batcher::Worker {
  Worker(std::shared_ptr<const vm::Executable> executable, const BatcherOptions& batcher)
      : pool(batcher.threads_per_worker),
        machine(std::move(executable), Options(&pool, batcher)) {}

  static vm::VmOptions Options(kernels::ThreadPool* pool, const BatcherOptions& batcher) {
    vm::VmOptions options;
    options.thread_pool = pool;
    options.timeout = batcher.timeout;
    options.max_memory_bytes = batcher.max_memory_bytes;
    return options;
  }

  kernels::ThreadPool pool;
  vm::VirtualMachine machine;
  std::thread thread;
};

Batcher::Batcher(std::shared_ptr<const vm::Executable> executable, uint32_t function_index,
                 BatchPlan plan, BatcherOptions options, Metrics* metrics)
    : executable_(executable),
      function_index_(function_index),
      plan_(std::move(plan)),
      token_plan_(TokenPlan::Create(*executable_, function_index)),
      options_(options),
      metrics_(metrics) {
  for (int i = 0; i < options_.workers; ++i) {
    workers_.push_back(std::make_unique<Worker>(executable_, options_));
  }
  // Threads start once every VM exists: none of them touches workers_ afterwards.
  for (auto& worker : workers_) worker->thread = std::thread([this, w = worker.get()] { WorkLoop(*w); });
}

Batcher::~Batcher() { Shutdown(); }

absl::StatusOr<Batcher::Future> Batcher::Submit(std::vector<Value> args) {
  const vm::Function& function = executable_->function(function_index_);
  if (absl::Status fits = vm::CheckArguments(function, args); !fits.ok()) return fits;
  const int64_t tokens = options_.max_batch_tokens > 0 ? token_plan_.Tokens(args) : 0;
  Future future;
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) return absl::UnavailableError("the server is shutting down");
    if (queue_.size() >= options_.max_queue) {
      return absl::UnavailableError(absl::StrFormat(
          "the queue is full (%d requests waiting); retry later", queue_.size()));
    }
    Pending& pending = queue_.emplace_back();
    pending.args = std::move(args);
    pending.tokens = tokens;
    future = pending.promise.get_future();
    PublishQueueDepth();
  }
  // All workers: an idle one takes it, and one gathering a batch may add it.
  queue_changed_.notify_all();
  return future;
}

void Batcher::Shutdown() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
  }
  queue_changed_.notify_all();
  for (auto& worker : workers_) {
    if (worker->thread.joinable()) worker->thread.join();
  }
}

size_t Batcher::queue_depth() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void Batcher::PublishQueueDepth() {
  if (metrics_ != nullptr) metrics_->SetQueueDepth(static_cast<int64_t>(queue_.size()));
}

void Batcher::WorkLoop(Worker& worker) {
  while (true) {
    Batch batch = NextBatch();
    if (batch.requests.empty()) return;
    Run(worker, batch);
  }
}

bool Batcher::Fits(const Batch& batch, const Pending& pending) const {
  const std::vector<Value>& args = pending.args;
  if (batch.rows + plan_.Rows(args) > options_.max_batch) return false;
  if (batch.packed) return pending.tokens > 0 && batch.tokens + pending.tokens <= options_.max_batch_tokens;
  if (!plan_.Compatible(batch.requests[0].args, args)) return false;
  std::vector<const std::vector<Value>*> members;
  for (const Pending& pending : batch.requests) members.push_back(&pending.args);
  return plan_.WithinPaddingBudget(members, args);
}

void Batcher::Gather(Batch& batch) {
  for (auto it = queue_.begin(); it != queue_.end() && batch.rows < options_.max_batch;) {
    if (!Fits(batch, *it)) {
      ++it;
      continue;
    }
    batch.rows += plan_.Rows(it->args);
    batch.tokens += it->tokens;
    batch.requests.push_back(std::move(*it));
    it = queue_.erase(it);
  }
}

Batcher::Batch Batcher::NextBatch() {
  std::unique_lock lock(mu_);
  queue_changed_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
  Batch batch;
  if (queue_.empty()) return batch;  // shutting down, and nothing is left
  batch.requests.push_back(std::move(queue_.front()));
  queue_.pop_front();
  batch.rows = plan_.Rows(batch.requests[0].args);
  batch.tokens = batch.requests[0].tokens;
  batch.packed = batch.tokens > 0;
  if ((batch.packed || plan_.enabled()) && options_.max_batch > 1) {
    Gather(batch);
    const auto deadline = std::chrono::steady_clock::now() + options_.batch_delay;
    // Wakes when a request that fits arrives (or on shutdown, which runs what is here).
    auto can_grow = [&] {
      if (shutting_down_) return true;
      for (const Pending& pending : queue_) {
        if (Fits(batch, pending)) return true;
      }
      return false;
    };
    while (batch.rows < options_.max_batch && !shutting_down_ &&
           queue_changed_.wait_until(lock, deadline, can_grow)) {
      Gather(batch);
    }
  }
  PublishQueueDepth();
  return batch;
}

void Batcher::RunAlone(Worker& worker, Pending& pending) {
  absl::StatusOr<Value> result = worker.machine.Invoke(function_index_, pending.args);
  if (result.ok()) {
    pending.promise.set_value(FlattenValue(*result));
  } else {
    pending.promise.set_value(result.status());
  }
}

void Batcher::Run(Worker& worker, Batch& batch) {
  if (metrics_ != nullptr) {
    metrics_->RecordBatch(static_cast<int64_t>(batch.requests.size()));
    if (batch.packed) metrics_->RecordBatchTokens(batch.tokens);
  }
  vm::VirtualMachine& machine = worker.machine;
  if (batch.requests.size() == 1) {
    RunAlone(worker, batch.requests[0]);
    return;
  }
  std::vector<const std::vector<Value>*> requests;
  for (const Pending& pending : batch.requests) requests.push_back(&pending.args);
  absl::StatusOr<std::vector<std::vector<Value>>> parts = [&]() -> absl::StatusOr<std::vector<std::vector<Value>>> {
    absl::StatusOr<std::vector<Value>> merged =
        batch.packed ? token_plan_.Merge(requests, machine.allocator()) : plan_.Merge(requests, machine.allocator());
    if (!merged.ok()) return merged.status();
    absl::StatusOr<Value> result =
        machine.Invoke(batch.packed ? token_plan_.packed_index() : function_index_, *merged);
    if (!result.ok()) return result.status();
    return batch.packed ? token_plan_.Split(FlattenValue(*result), requests, machine.allocator())
                        : plan_.Split(FlattenValue(*result), requests, machine.allocator());
  }();
  if (parts.ok()) {
    for (size_t r = 0; r < batch.requests.size(); ++r) batch.requests[r].promise.set_value(std::move((*parts)[r]));
    return;
  }
  // The failure may be one request's (a token id past the vocabulary, an invocation
  // limit its rows exceed): each request gets the answer of its own run.
  for (Pending& pending : batch.requests) {
    if (metrics_ != nullptr) metrics_->RecordBatch(1);
    RunAlone(worker, pending);
  }
}

}  // namespace dynvm::tools::serve
