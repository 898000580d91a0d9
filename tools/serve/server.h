// The HTTP face of vm_serve: the Open Inference Protocol's REST routes (KServe v2) and
// /metrics, on cpp-httplib, in front of a ServedModel and its Batcher.
//
//   GET  /v2                        server metadata
//   GET  /v2/health/live            200 while the process runs
//   GET  /v2/health/ready           200 while serving, 503 once shutting down
//   GET  /v2/models/NAME            model metadata
//   GET  /v2/models/NAME/ready      like /v2/health/ready, for the model
//   POST /v2/models/NAME/infer      inference (tools/serve/inference_protocol.h)
//   GET  /metrics                   Prometheus text (tools/serve/metrics.h)
//
// Every error is {"error": "..."}: 400 for a bad request (malformed JSON, an unknown,
// missing or mistyped input, a wrong shape), 404 for an unknown model or route, 411 for
// a POST without Content-Length or with Transfer-Encoding, 413 for a Content-Length
// over max_body_bytes, 415 for a Content-Encoding other than identity (411, 413 and
// 415 are answered from the headers, before any of the body is read, and close the
// connection), 503 when the queue is full, an invocation exceeds its memory limit or
// the server is shutting down, 504 when an invocation exceeds its time limit, 500 when
// the run fails otherwise. Each is answered and the server goes on serving.
//
//   Server server(model, batcher, metrics, options);
//   DYNVM_ASSIGN_OR_RETURN(int port, server.Bind());
//   DYNVM_RETURN_IF_ERROR(server.Serve());   // until Stop(), from another thread
#ifndef DYNVM_TOOLS_SERVE_SERVER_H_
#define DYNVM_TOOLS_SERVE_SERVER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/serve/batcher.h"
#include "tools/serve/metrics.h"
#include "tools/serve/served_model.h"

namespace dynvm::tools::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                         // 0: any free port
  // A POST whose Content-Length is larger gets 413 before its body is read. A JSON
  // body takes up to ~12 times its size while parsed (inference_protocol.h), so with
  // JSON bodies a request may hold ~12 x max_body_bytes for a moment.
  size_t max_body_bytes = size_t{16} << 20;
  // Threads handling connections. A keep-alive connection holds one while it is open,
  // and a request holds its connection's while queued or running, so this must exceed
  // BatcherOptions::max_queue plus the requests the workers run at once (see
  // CheckThreadBudget). Connections beyond it are accepted but wait, unanswered, in
  // cpp-httplib's (unbounded) task queue.
  int http_threads = 64;
};

// OK when `server.http_threads` exceeds the requests that can hold one of them with the
// queue full: `batcher.max_queue` waiting plus `batcher.workers` x (`max_batch` or 1)
// running. Otherwise InvalidArgument naming the flags, since a full queue could then
// never be reached (503) and clients would wait for threads instead.
absl::Status CheckThreadBudget(const ServerOptions& server, const BatcherOptions& batcher);

class Server {
 public:
  // `model`, `batcher` and `metrics` must outlive the server.
  Server(const ServedModel& model, Batcher& batcher, Metrics& metrics, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens on options.host:options.port; returns the port (the one chosen
  // when options.port is 0). Unavailable when the address cannot be bound.
  absl::StatusOr<int> Bind();
  // Accepts and serves connections until Stop(). Returns once every handler has
  // finished, so requests in flight at Stop() are answered.
  absl::Status Serve();
  // Stops accepting connections and marks the server not ready. Thread-safe, and safe
  // to call before or while Serve() starts: a Serve() not yet listening then returns
  // at once, or is stopped as soon as it listens (Stop waits for that, briefly).
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_SERVER_H_
