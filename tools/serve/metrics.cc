// vm_serve's counters and histograms, and their Prometheus text (tools/serve/metrics.h).
#include "tools/serve/metrics.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dynvm::tools::serve {
namespace {

// Latency buckets from 0.5 ms to 10 s, about three per decade.
std::vector<double> LatencyBounds() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> BatchBounds() { return {1, 2, 4, 8, 16, 32, 64, 128}; }
std::vector<double> TokenBounds() { return {16, 32, 64, 128, 256, 512, 1024, 2048, 4096}; }

void Header(std::string_view name, std::string_view type, std::string_view help, std::string& out) {
  absl::StrAppendFormat(&out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  const size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::Render(std::string_view name, std::string& out) const {
  int64_t cumulative = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? absl::StrFormat("%g", bounds_[i]) : "+Inf";
    absl::StrAppendFormat(&out, "%s_bucket{le=\"%s\"} %d\n", name, le, cumulative);
  }
  absl::StrAppendFormat(&out, "%s_sum %.9g\n%s_count %d\n", name, sum_, name, count_);
}

Metrics::Metrics()
    : latency_(LatencyBounds()), batch_size_(BatchBounds()), batch_tokens_(TokenBounds()) {}

void Metrics::RecordRequest(int http_status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_by_code_[http_status];
  if (http_status < 200 || http_status >= 300) ++errors_;
  latency_.Observe(seconds);
}

void Metrics::AddInflight(int delta) {
  std::lock_guard lock(mu_);
  inflight_ += delta;
}

void Metrics::SetQueueDepth(int64_t depth) {
  std::lock_guard lock(mu_);
  queue_depth_ = depth;
}

void Metrics::RecordBatch(int64_t requests) {
  std::lock_guard lock(mu_);
  batch_size_.Observe(static_cast<double>(requests));
}

void Metrics::RecordBatchTokens(int64_t tokens) {
  std::lock_guard lock(mu_);
  batch_tokens_.Observe(static_cast<double>(tokens));
}

std::string Metrics::Render() const {
  std::lock_guard lock(mu_);
  std::string out;
  Header("dynvm_infer_requests_total", "counter", "Infer requests answered, by HTTP status.", out);
  for (const auto& [code, count] : requests_by_code_) {
    absl::StrAppend(&out, "dynvm_infer_requests_total{code=\"", code, "\"} ", count, "\n");
  }
  Header("dynvm_infer_errors_total", "counter", "Infer requests answered with a status other than 2xx.", out);
  absl::StrAppend(&out, "dynvm_infer_errors_total ", errors_, "\n");
  Header("dynvm_infer_request_duration_seconds", "histogram",
         "Time from receiving an infer request to answering it.", out);
  latency_.Render("dynvm_infer_request_duration_seconds", out);
  Header("dynvm_inflight_requests", "gauge", "Infer requests being handled.", out);
  absl::StrAppend(&out, "dynvm_inflight_requests ", inflight_, "\n");
  Header("dynvm_queue_depth", "gauge", "Requests waiting for a worker.", out);
  absl::StrAppend(&out, "dynvm_queue_depth ", queue_depth_, "\n");
  Header("dynvm_batch_size", "histogram", "Requests per VM invocation.", out);
  batch_size_.Render("dynvm_batch_size", out);
  Header("dynvm_batch_tokens", "histogram", "Real tokens per invocation of a packed entry.", out);
  batch_tokens_.Render("dynvm_batch_tokens", out);
  return out;
}

}  // namespace dynvm::tools::serve
