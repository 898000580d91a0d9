// The HTTP routes of vm_serve on cpp-httplib (tools/serve/server.h): health, metadata,
// inference, metrics, and their error replies.
#include "tools/serve/server.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <exception>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/version.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tools/serve/inference_protocol.h"

namespace dynvm::tools::serve {
namespace {

constexpr char kJson[] = "application/json";

// The HTTP status of a request refused before it runs.
int HttpStatus(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted: return 503;
    default: return 500;
  }
}

// An answer to an infer request.
struct Reply {
  int status = 200;
  std::string body;
  std::optional<size_t> json_length;  // set when the body carries binary outputs

  static Reply Error(int status, absl::string_view message) {
    return {status, ErrorBody(std::string_view(message.data(), message.size())), {}};
  }
  static Reply Refused(const absl::Status& status) { return Error(HttpStatus(status.code()), status.message()); }
};

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Why a POST's body may not be read, from its headers alone, as an HTTP status and a
// message; nullopt when it may. cpp-httplib 0.11.4 applies set_payload_max_length to
// Content-Length only: it reads a chunked body whole, and inflates a gzip or br body
// into req.body without a limit. So only identity bodies of a declared, bounded length
// get through.
std::optional<std::pair<int, std::string>> RefuseBody(const httplib::Request& request, size_t max_body_bytes) {
  if (request.has_header("Transfer-Encoding")) {
    return std::pair{411, absl::StrFormat("Transfer-Encoding '%s' is not accepted: send the body with a "
                                          "Content-Length",
                                          request.get_header_value("Transfer-Encoding"))};
  }
  for (size_t i = 0; i < request.get_header_value_count("Content-Encoding"); ++i) {
    const std::string encoding = request.get_header_value("Content-Encoding", i);
    if (!EqualsIgnoringCase(encoding, "identity")) {
      return std::pair{415, absl::StrFormat("Content-Encoding '%s' is not accepted: send the body "
                                            "uncompressed (identity)",
                                            encoding)};
    }
  }
  const size_t lengths = request.get_header_value_count("Content-Length");
  if (lengths == 0) return std::pair{411, std::string("a POST needs a Content-Length header")};
  const std::string value = request.get_header_value("Content-Length");
  uint64_t length = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
  if (lengths > 1 || ec != std::errc() || ptr != value.data() + value.size()) {
    return std::pair{400, absl::StrFormat("Content-Length must be one byte count, got '%s'%s", value,
                                          lengths > 1 ? " and others" : "")};
  }
  if (length > max_body_bytes) {
    return std::pair{413, absl::StrFormat("request body of %d bytes over the limit of %d bytes "
                                          "(--max-body-bytes)",
                                          length, max_body_bytes)};
  }
  return std::nullopt;
}

// Counts an infer request in flight while it lives, and records its status and
// duration when it ends, on every path out of the handler (exceptions included).
class InflightRequest {
 public:
  explicit InflightRequest(Metrics& metrics)
      : metrics_(metrics), start_(std::chrono::steady_clock::now()) {
    metrics_.AddInflight(1);
  }
  ~InflightRequest() {
    metrics_.AddInflight(-1);
    metrics_.RecordRequest(status_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  InflightRequest(const InflightRequest&) = delete;
  InflightRequest& operator=(const InflightRequest&) = delete;

  void set_status(int status) { status_ = status; }

 private:
  Metrics& metrics_;
  const std::chrono::steady_clock::time_point start_;
  int status_ = 500;  // until answered: an exception becomes a 500
};

}  // namespace

absl::Status CheckThreadBudget(const ServerOptions& server, const BatcherOptions& batcher) {
  const int64_t per_worker = std::max<int64_t>(batcher.max_batch, 1);
  const int64_t held = static_cast<int64_t>(batcher.max_queue) + int64_t{batcher.workers} * per_worker;
  if (held < server.http_threads) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--http-threads=%d must exceed --max-queue=%d plus --workers=%d x --max-batch=%d (%d requests "
      "can hold a thread each); raise --http-threads to at least %d or lower the others",
      server.http_threads, batcher.max_queue, batcher.workers, per_worker, held, held + 1));
}

struct Server::Impl {
  Impl(const ServedModel& model, Batcher& batcher, Metrics& metrics, ServerOptions options)
      : model(model), batcher(batcher), metrics(metrics), options(std::move(options)),
        allocator(MakePooledAllocator()) {}

  void Route();
  Reply Infer(const httplib::Request& request, const std::string& model_name);
  bool ServesModel(const std::string& name, httplib::Response& response) const;

  const ServedModel& model;
  Batcher& batcher;
  Metrics& metrics;
  const ServerOptions options;
  // Where request tensors live until their run is over (thread-safe, shared by handlers).
  const std::shared_ptr<Allocator> allocator;
  httplib::Server http;
  std::atomic<bool> ready{true};
  // Stop() before or during Serve()'s start (Dekker-style: each side writes its flag,
  // then reads the other's; seq_cst makes at least one of them see the other).
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> serve_started{false};
  std::atomic<bool> serve_returned{false};
};

bool Server::Impl::ServesModel(const std::string& name, httplib::Response& response) const {
  if (name == model.name()) return true;
  response.status = 404;
  response.set_content(ErrorBody(absl::StrFormat("unknown model '%s' (this server serves '%s')", name,
                                                 model.name())),
                       kJson);
  return false;
}

Reply Server::Impl::Infer(const httplib::Request& request, const std::string& model_name) {
  if (model_name != model.name()) {
    return Reply::Error(404, absl::StrFormat("unknown model '%s' (this server serves '%s')", model_name,
                                             model.name()));
  }
  std::optional<size_t> json_length;
  if (request.has_header(kHeaderLengthHeader)) {
    const std::string value = request.get_header_value(kHeaderLengthHeader);
    size_t length = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (ec != std::errc() || ptr != value.data() + value.size()) {
      return Reply::Error(400, absl::StrFormat("%s must be a byte count, got '%s'", kHeaderLengthHeader, value));
    }
    json_length = length;
  }
  absl::StatusOr<InferRequest> parsed = ParseInferRequest(request.body, json_length, allocator);
  if (!parsed.ok()) return Reply::Refused(parsed.status());
  absl::StatusOr<std::vector<size_t>> selected = model.SelectOutputs(parsed->outputs);
  if (!selected.ok()) return Reply::Refused(selected.status());
  absl::StatusOr<std::vector<Value>> args = model.BindInputs(std::move(parsed->inputs));
  if (!args.ok()) return Reply::Refused(args.status());
  absl::StatusOr<Batcher::Future> future = batcher.Submit(*std::move(args));
  if (!future.ok()) return Reply::Refused(future.status());
  Batcher::Result outputs = future->get();
  if (!outputs.ok()) {
    // A limit the run hit is the server's answer to load (504, 503); the rest are 500.
    const absl::StatusCode code = outputs.status().code();
    const int status = code == absl::StatusCode::kDeadlineExceeded    ? 504
                       : code == absl::StatusCode::kResourceExhausted ? 503
                                                                      : 500;
    return Reply::Error(status, outputs.status().message());
  }
  if (outputs->size() != model.output_names().size()) {
    return Reply::Error(500, absl::StrFormat("'%s' returned %d outputs, its signature has %d",
                                             model.function().name, outputs->size(),
                                             model.output_names().size()));
  }
  std::vector<InferOutput> chosen;
  for (size_t k = 0; k < selected->size(); ++k) {
    const size_t i = (*selected)[k];
    const bool binary = parsed->outputs.empty() ? parsed->binary_outputs
                                                : parsed->outputs[k].binary.value_or(parsed->binary_outputs);
    chosen.push_back({model.output_names()[i], (*outputs)[i], binary});
  }
  absl::StatusOr<EncodedResponse> encoded = EncodeInferResponse(model.name(), parsed->id, chosen);
  if (!encoded.ok()) return Reply::Error(500, encoded.status().message());
  return {200, std::move(encoded->body), encoded->json_length};
}

void Server::Impl::Route() {
  http.Get("/v2", [](const httplib::Request&, httplib::Response& response) {
    const nlohmann::json metadata = {{"name", "dynvm"},
                                     {"version", DYNVM_VERSION_STRING},
                                     {"extensions", {"binary_tensor_data"}}};
    response.set_content(metadata.dump(), kJson);
  });
  http.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(R"({"live":true})", kJson);
  });
  http.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& response) {
    response.status = ready ? 200 : 503;
    response.set_content(ready ? R"({"ready":true})" : R"({"ready":false})", kJson);
  });
  http.Get(R"(/v2/models/([^/]+))", [this](const httplib::Request& request, httplib::Response& response) {
    if (ServesModel(request.matches[1], response)) response.set_content(model.MetadataJson(), kJson);
  });
  http.Get(R"(/v2/models/([^/]+)/ready)", [this](const httplib::Request& request, httplib::Response& response) {
    if (!ServesModel(request.matches[1], response)) return;
    response.status = ready ? 200 : 503;
    response.set_content(ready ? R"({"ready":true})" : R"({"ready":false})", kJson);
  });
  http.Post(R"(/v2/models/([^/]+)/infer)", [this](const httplib::Request& request, httplib::Response& response) {
    InflightRequest inflight(metrics);
    Reply reply = Infer(request, request.matches[1]);
    inflight.set_status(reply.status);
    response.status = reply.status;
    if (reply.json_length.has_value()) {
      response.set_header(kHeaderLengthHeader, std::to_string(*reply.json_length));
      response.set_content(std::move(reply.body), "application/octet-stream");
    } else {
      response.set_content(std::move(reply.body), kJson);
    }
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(metrics.Render(), "text/plain; version=0.0.4");
  });
  // Errors httplib answers itself (no route, body too large, unreadable request) get
  // the same JSON body as ours; ours already have one.
  http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& request,
                                                                      httplib::Response& response) {
    if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message;
    switch (response.status) {
      case 404: message = absl::StrFormat("no route for %s %s", request.method, request.path); break;
      case 413: message = absl::StrFormat("request body over the limit of %d bytes (--max-body-bytes)",
                                          options.max_body_bytes); break;
      default: message = absl::StrFormat("bad request (HTTP %d)", response.status);
    }
    response.set_content(ErrorBody(message), kJson);
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
    std::string message = "unknown exception";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
    }
    response.status = 500;
    response.set_content(ErrorBody(message), kJson);
  });
  // Runs once the headers are read, before any of the body is: refused bodies are never
  // read. The unread body is still on the connection, so the answer closes it.
  http.set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
    if (request.method != "POST") return httplib::Server::HandlerResponse::Unhandled;
    const std::optional<std::pair<int, std::string>> refused = RefuseBody(request, options.max_body_bytes);
    if (!refused.has_value()) return httplib::Server::HandlerResponse::Unhandled;
    response.status = refused->first;
    response.set_header("Connection", "close");
    response.set_content(ErrorBody(refused->second), kJson);
    if (request.path.ends_with("/infer")) metrics.RecordRequest(refused->first, 0);
    return httplib::Server::HandlerResponse::Handled;
  });
  http.set_payload_max_length(options.max_body_bytes);  // a second guard, same limit
  http.set_keep_alive_max_count(1000);
  // Responses go out in two writes (headers, body); with Nagle the second waits for
  // the client's delayed ACK, 40 ms a request.
  http.set_tcp_nodelay(true);
  http.new_task_queue = [threads = options.http_threads] { return new httplib::ThreadPool(threads); };
}

Server::Server(const ServedModel& model, Batcher& batcher, Metrics& metrics, ServerOptions options)
    : impl_(std::make_unique<Impl>(model, batcher, metrics, std::move(options))) {
  impl_->Route();
}

Server::~Server() = default;

absl::StatusOr<int> Server::Bind() {
  const ServerOptions& options = impl_->options;
  if (options.port == 0) {
    const int port = impl_->http.bind_to_any_port(options.host);
    if (port < 0) return absl::UnavailableError(absl::StrFormat("cannot bind %s to a free port", options.host));
    return port;
  }
  if (!impl_->http.bind_to_port(options.host, options.port)) {
    return absl::UnavailableError(absl::StrFormat("cannot bind %s:%d", options.host, options.port));
  }
  return options.port;
}

absl::Status Server::Serve() {
  impl_->serve_started = true;
  if (impl_->stop_requested) {  // Stop() came first: never listen
    impl_->serve_returned = true;
    return absl::OkStatus();
  }
  const bool listened = impl_->http.listen_after_bind();
  impl_->serve_returned = true;
  if (!listened && impl_->ready) return absl::UnavailableError("the server stopped accepting connections");
  return absl::OkStatus();
}

void Server::Stop() {
  impl_->ready = false;
  impl_->stop_requested = true;
  // httplib's stop() does nothing until its listen loop has set is_running(): a Stop()
  // between Serve()'s start and that moment would be lost and the server never stop.
  while (impl_->serve_started && !impl_->serve_returned && !impl_->http.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->http.stop();
}

}  // namespace dynvm::tools::serve
