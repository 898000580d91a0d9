// What vm_serve counts, and its Prometheus text exposition (GET /metrics).
//
//   dynvm_infer_requests_total{code="200"}   infer requests answered, by HTTP status
//   dynvm_infer_errors_total                 of those, the ones not 2xx
//   dynvm_infer_request_duration_seconds     histogram of their latency, receipt to answer
//   dynvm_inflight_requests                  infer requests being handled now
//   dynvm_queue_depth                        requests waiting for a worker
//   dynvm_batch_size                         histogram of requests per VM invocation
//   dynvm_batch_tokens                       histogram of real tokens per packed invocation
//
// Every method is thread-safe and cheap (a mutex around a few additions): handlers and
// workers call them per request.
//
//   metrics.RecordRequest(200, 0.0042);
//   std::string text = metrics.Render();   // text/plain; version=0.0.4
#ifndef DYNVM_TOOLS_SERVE_METRICS_H_
#define DYNVM_TOOLS_SERVE_METRICS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"

namespace dynvm::tools::serve {

// Counts of observations at most each bound (cumulative when rendered), their count and sum.
class Histogram {
 public:
  // `bounds` ascending; an implicit +Inf bucket follows.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Appends the `name`_bucket{le=...}, `name`_sum and `name`_count lines to `out`.
  void Render(std::string_view name, std::string& out) const;

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, not cumulative; the last is +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();

  // An infer request answered with `http_status` after `seconds`.
  void RecordRequest(int http_status, double seconds);
  // An infer request starts (+1) or ends (-1) being handled.
  void AddInflight(int delta);
  // The number of requests waiting for a worker.
  void SetQueueDepth(int64_t depth);
  // One VM invocation ran `requests` requests together.
  void RecordBatch(int64_t requests);
  // One invocation of a packed entry ran `tokens` real tokens (tools/serve/token_plan.h).
  void RecordBatchTokens(int64_t tokens);

  // The Prometheus text exposition (format 0.0.4) of everything above.
  std::string Render() const;

 private:
  mutable std::mutex mu_;  // std::mutex: visible to ThreadSanitizer
  std::map<int, int64_t> requests_by_code_ ABSL_GUARDED_BY(mu_);
  int64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
  Histogram latency_ ABSL_GUARDED_BY(mu_);
  int64_t inflight_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t queue_depth_ ABSL_GUARDED_BY(mu_) = 0;
  Histogram batch_size_ ABSL_GUARDED_BY(mu_);
  Histogram batch_tokens_ ABSL_GUARDED_BY(mu_);
};

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_METRICS_H_
