// vm_serve: serves one function of an executable over HTTP with the Open Inference
// Protocol (KServe v2 REST), batching concurrent requests onto a pool of VMs that
// share the one loaded Executable. See docs/serving.md.
//
//   vm_serve bert.fbs --port=8000 --workers=2 --max-batch=8 --batch-delay-us=500
//            --pad=input_ids:1:0 --pad=attention_mask:1:0 --pad=token_type_ids:1:0
//
// Once listening it prints `vm_serve: listening on http://HOST:PORT` (flushed; with
// --port=0 the port chosen). SIGTERM or SIGINT stop it gracefully: no new
// connections, every request received is answered, then exit 0; a second SIGTERM or
// SIGINT kills it at once. Exit codes: 1 an error (unreadable file, unbindable
// address), 2 a malformed command line.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "serializer/executable_file.h"
#include "tools/flags.h"
#include "tools/serve/batch_plan.h"
#include "tools/serve/batcher.h"
#include "tools/serve/metrics.h"
#include "tools/serve/served_model.h"
#include "tools/serve/server.h"

namespace dynvm::tools::serve {
namespace {

constexpr int kExitError = 1;
// Real tokens per packed invocation by default: see docs/serving.md for the measurement.
constexpr int64_t kDefaultMaxBatchTokens = 128;

// The command line's values, with their defaults; those without a field of the options
// they end in are converted by FinishFlags.
struct Flags {
  std::string executable;
  std::string name;  // default: the executable's stem
  std::string function = "main";
  ServerOptions server;
  BatcherOptions batcher = {.max_batch = 8, .max_batch_tokens = kDefaultMaxBatchTokens};
  std::vector<std::string> pad_specs;
  std::vector<PadRule> pads;  // pad_specs parsed
  int64_t threads_per_worker = 0;  // 0: divide the hardware threads
  int64_t batch_delay_us = 0;
  int64_t max_queue = static_cast<int64_t>(BatcherOptions().max_queue);
  int64_t max_body_bytes = static_cast<int64_t>(ServerOptions().max_body_bytes);
  int64_t timeout_ms = 0;  // 0: no limit
  bool trust_native = false;
};

// Checks what the table cannot (--name's '/', --pad's syntax, the thread budget) and
// converts the values to the options they configure.
absl::Status FinishFlags(Flags& flags) {
  if (flags.name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrFormat("--name must not contain '/', got '%s'", flags.name));
  }
  if (flags.name.empty()) flags.name = std::filesystem::path(flags.executable).stem().string();
  for (const std::string& spec : flags.pad_specs) {
    DYNVM_ASSIGN_OR_RETURN(PadRule rule, ParsePadRule(spec));
    flags.pads.push_back(std::move(rule));
  }
  flags.batcher.batch_delay = std::chrono::microseconds(flags.batch_delay_us);
  flags.batcher.max_queue = static_cast<size_t>(flags.max_queue);
  flags.server.max_body_bytes = static_cast<size_t>(flags.max_body_bytes);
  flags.batcher.timeout =
      flags.timeout_ms == 0 ? absl::InfiniteDuration() : absl::Milliseconds(flags.timeout_ms);
  DYNVM_RETURN_IF_ERROR(CheckThreadBudget(flags.server, flags.batcher));
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  flags.batcher.threads_per_worker = flags.threads_per_worker > 0
                                         ? static_cast<int>(flags.threads_per_worker)
                                         : std::max(1, hardware / flags.batcher.workers);
  return absl::OkStatus();
}

constexpr int kMaxInt = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// vm_serve's command line (docs/cli.md, docs/serving.md), storing into `flags`.
CommandLine MakeCommandLine(Flags& flags) {
  return {
      .tool = "vm_serve",
      .positional = Positional{"exe.fbs", "executable file", &flags.executable, /*required=*/true,
                               "the executable file to serve"},
      .flags =
          {StringFlag("name", "NAME", &flags.name, "the model's name in URLs (default: the file's stem)"),
           TrustNativeSwitch(&flags.trust_native),
           StringFlag("function", "NAME", &flags.function, "the function served (default: main)"),
           StringFlag("host", "HOST", &flags.server.host, "the address to listen on (default: 127.0.0.1)"),
           IntFlag("port", "N", &flags.server.port, 0, 65535, "the port (default: 8000; 0 picks a free one)"),
           IntFlag("workers", "N", &flags.batcher.workers, 1, 1024,
                   "worker threads, one VM each (default: 1)"),
           IntFlag("threads-per-worker", "N", &flags.threads_per_worker, 1, 4096,
                   "intra-op threads of each worker's kernels (default: the hardware threads "
                   "divided among the workers)"),
           IntFlag("max-batch", "N", &flags.batcher.max_batch, 1, kMaxInt,
                   "rows (axis 0) a worker runs in one invocation (default: 8; 1 turns batching "
                   "off)"),
           IntFlag("max-batch-tokens", "N", &flags.batcher.max_batch_tokens, 0, kMaxInt,
                   "real tokens a worker runs in one invocation of the function's packed entry, "
                   "requests packed without padding (default: 128; 0 turns packing off)"),
           IntFlag("batch-delay-us", "N", &flags.batch_delay_us, 0, 60'000'000,
                   "how long a worker waits for more requests to fill a batch (default: 0, batch "
                   "only what is already queued)"),
           IntFlag("max-queue", "N", &flags.max_queue, 0, kMaxInt,
                   "requests waiting beyond which new ones get 503 (default: 32)"),
           IntFlag("max-body-bytes", "N", &flags.max_body_bytes, 1, kMaxInt64,
                   "a POST whose Content-Length is larger gets 413, unread; a JSON body may take "
                   "~12x its size while parsed (default: 16777216)"),
           IntFlag("http-threads", "N", &flags.server.http_threads, 1, 4096,
                   "connections served at once; must exceed --max-queue plus --workers x "
                   "--max-batch (default: 64)"),
           IntFlag("timeout-ms", "N", &flags.timeout_ms, 0, 24 * 3600 * 1000,
                   "time one invocation (a batch) may run; past it its requests get 504 "
                   "(default: 0, no limit)"),
           IntFlag("max-memory-bytes", "N", &flags.batcher.max_memory_bytes, 0, kMaxInt64,
                   "tensor memory one invocation may hold; past it its requests get 503 "
                   "(default: 0, no limit)"),
           RepeatedFlag("pad", "INPUT:AXIS:VALUE", &flags.pad_specs,
                        "lets requests of different extents on AXIS of INPUT share a batch, "
                        "padded with VALUE; repeat for every input with that axis's symbol")},
      .after_parse = [&flags] { return FinishFlags(flags); },
  };
}

// Waits for SIGTERM or SIGINT (blocked in every thread, see Serve): the first stops
// `server` gracefully, a second kills the process with the default action. Returns
// once `serve_returned` is set and a signal wakes it (Serve sends itself one).
void AwaitSignal(Server& server, const sigset_t& signals, const std::atomic<bool>& serve_returned) {
  bool stopping = false;
  while (true) {
    int signal = 0;
    sigwait(&signals, &signal);
    if (serve_returned) return;
    if (!stopping) {
      stopping = true;
      std::fprintf(stderr, "vm_serve: %s, draining (send it again to exit at once)\n", strsignal(signal));
      server.Stop();  // returns at once; Serve answers what it holds, then returns
      continue;
    }
    std::signal(signal, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
    raise(signal);  // unblocked in this thread with the default action: the process ends
  }
}

absl::Status Serve(const Flags& flags) {
  // Blocked before any thread starts, so every thread inherits the mask and only
  // AwaitSignal's sigwait sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  DYNVM_ASSIGN_OR_RETURN(std::shared_ptr<const vm::Executable> exe,
                         serializer::LoadExecutable(flags.executable, kernels::DefaultRegistry(),
                                                    {.trust_native_code = flags.trust_native}));
  if (exe->native_code_ignored()) PrintNativeCodeNotice("vm_serve");
  DYNVM_ASSIGN_OR_RETURN(ServedModel model, ServedModel::Create(flags.name, exe, flags.function));
  DYNVM_ASSIGN_OR_RETURN(BatchPlan plan, BatchPlan::Create(model.function(), flags.pads));
  std::fprintf(stderr, "vm_serve: model '%s' (function '%s'), %d worker(s) x %d thread(s), batching %s\n",
               model.name().c_str(), model.function().name.c_str(), flags.batcher.workers,
               flags.batcher.threads_per_worker,
               flags.batcher.max_batch > 1 ? plan.description().c_str() : "off: --max-batch=1");
  const TokenPlan tokens = TokenPlan::Create(*exe, model.function_index());
  std::fprintf(stderr, "vm_serve: packing %s\n",
               flags.batcher.max_batch_tokens == 0 ? "off: --max-batch-tokens=0"
               : tokens.enabled() ? absl::StrFormat("%s, up to %d tokens and %d rows per invocation",
                                                    tokens.description(), flags.batcher.max_batch_tokens,
                                                    flags.batcher.max_batch).c_str()
                                  : tokens.description().c_str());
  // Every limit, as set or defaulted, so an operator sees what bounds the server.
  const auto limit = [](int64_t value) { return value == 0 ? std::string("none") : std::to_string(value); };
  std::fprintf(stderr,
               "vm_serve: limits: --timeout-ms=%s --max-memory-bytes=%s --max-queue=%lld --max-body-bytes=%zu "
               "--http-threads=%d\n",
               limit(flags.timeout_ms).c_str(), limit(flags.batcher.max_memory_bytes).c_str(),
               static_cast<long long>(flags.max_queue), flags.server.max_body_bytes, flags.server.http_threads);
  Metrics metrics;
  Batcher batcher(exe, model.function_index(), std::move(plan), flags.batcher, &metrics);
  Server server(model, batcher, metrics, flags.server);
  DYNVM_ASSIGN_OR_RETURN(const int port, server.Bind());
  std::printf("vm_serve: listening on http://%s:%d\n", flags.server.host.c_str(), port);
  std::fflush(stdout);

  std::atomic<bool> serve_returned{false};
  std::thread waiter([&] { AwaitSignal(server, signals, serve_returned); });
  const absl::Status served = server.Serve();
  serve_returned = true;
  pthread_kill(waiter.native_handle(), SIGTERM);  // ends the wait
  waiter.join();
  batcher.Shutdown();  // every handler has returned; nothing is left in the queue
  if (served.ok()) std::fprintf(stderr, "vm_serve: stopped\n");
  return served;
}

}  // namespace
}  // namespace dynvm::tools::serve

int main(int argc, char** argv) {
  dynvm::tools::serve::Flags flags;
  if (const std::optional<int> exit = dynvm::tools::ParseOrExitCode(
          dynvm::tools::serve::MakeCommandLine(flags), argc, argv)) {
    return *exit;
  }
  const absl::Status served = dynvm::tools::serve::Serve(flags);
  if (!served.ok()) {
    std::fprintf(stderr, "vm_serve: %s\n", std::string(served.message()).c_str());
    return dynvm::tools::serve::kExitError;
  }
  return 0;
}
