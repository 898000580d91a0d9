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
    std::vector<Pending> batch = NextBatch();
    if (batch.empty()) return;
    Run(worker, batch);
  }
}

bool Batcher::Fits(const std::vector<Pending>& batch, int64_t rows, const std::vector<Value>& args) const {
  if (rows + plan_.Rows(args) > options_.max_batch || !plan_.Compatible(batch[0].args, args)) return false;
  std::vector<const std::vector<Value>*> members;
  for (const Pending& pending : batch) members.push_back(&pending.args);
  return plan_.WithinPaddingBudget(members, args);
}

void Batcher::Gather(std::vector<Pending>& batch, int64_t& rows) {
  for (auto it = queue_.begin(); it != queue_.end() && rows < options_.max_batch;) {
    const int64_t more = plan_.Rows(it->args);
    if (!Fits(batch, rows, it->args)) {
      ++it;
      continue;
    }
    rows += more;
    batch.push_back(std::move(*it));
    it = queue_.erase(it);
  }
}

std::vector<Batcher::Pending> Batcher::NextBatch() {
  std::unique_lock lock(mu_);
  queue_changed_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
  std::vector<Pending> batch;
  if (queue_.empty()) return batch;  // shutting down, and nothing is left
  batch.push_back(std::move(queue_.front()));
  queue_.pop_front();
  if (plan_.enabled() && options_.max_batch > 1) {
    int64_t rows = plan_.Rows(batch[0].args);
    Gather(batch, rows);
    const auto deadline = std::chrono::steady_clock::now() + options_.batch_delay;
    // Wakes when a request that fits arrives (or on shutdown, which runs what is here).
    auto can_grow = [&] {
      if (shutting_down_) return true;
      for (const Pending& pending : queue_) {
        if (Fits(batch, rows, pending.args)) return true;
      }
      return false;
    };
    while (rows < options_.max_batch && !shutting_down_ &&
           queue_changed_.wait_until(lock, deadline, can_grow)) {
      Gather(batch, rows);
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

void Batcher::Run(Worker& worker, std::vector<Pending>& batch) {
  if (metrics_ != nullptr) metrics_->RecordBatch(static_cast<int64_t>(batch.size()));
  vm::VirtualMachine& machine = worker.machine;
  if (batch.size() == 1) {
    RunAlone(worker, batch[0]);
    return;
  }
  std::vector<const std::vector<Value>*> requests;
  for (const Pending& pending : batch) requests.push_back(&pending.args);
  absl::StatusOr<std::vector<std::vector<Value>>> parts = [&]() -> absl::StatusOr<std::vector<std::vector<Value>>> {
    absl::StatusOr<std::vector<Value>> merged = plan_.Merge(requests, machine.allocator());
    if (!merged.ok()) return merged.status();
    absl::StatusOr<Value> result = machine.Invoke(function_index_, *merged);
    if (!result.ok()) return result.status();
    return plan_.Split(FlattenValue(*result), requests, machine.allocator());
  }();
  if (parts.ok()) {
    for (size_t r = 0; r < batch.size(); ++r) batch[r].promise.set_value(std::move((*parts)[r]));
    return;
  }
  // The failure may be one request's (a token id past the vocabulary, an invocation
  // limit its rows exceed): each request gets the answer of its own run.
  for (Pending& pending : batch) {
    if (metrics_ != nullptr) metrics_->RecordBatch(1);
    RunAlone(worker, pending);
  }
}

}  // namespace dynvm::tools::serve
