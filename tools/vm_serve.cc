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
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "serializer/executable_file.h"
#include "tools/flag_util.h"
#include "tools/serve/batch_plan.h"
#include "tools/serve/batcher.h"
#include "tools/serve/metrics.h"
#include "tools/serve/served_model.h"
#include "tools/serve/server.h"

namespace dynvm::tools::serve {
namespace {

constexpr char kUsage[] = R"(usage: vm_serve exe.fbs [flags]

  --name=NAME              the model's name in URLs (default: the file's stem)
  --function=NAME          the function served (default: main)
  --host=HOST              the address to listen on (default: 127.0.0.1)
  --port=N                 the port (default: 8000; 0 picks a free one)
  --workers=N              worker threads, one VM each (default: 1)
  --threads-per-worker=N   intra-op threads of each worker's kernels (default: the
                           hardware threads divided among the workers)
  --max-batch=N            rows (axis 0) a worker runs in one invocation (default: 8;
                           1 turns batching off)
  --batch-delay-us=N       how long a worker waits for more requests to fill a batch
                           (default: 0, batch only what is already queued)
  --max-queue=N            requests waiting beyond which new ones get 503 (default: 32)
  --max-body-bytes=N       a POST whose Content-Length is larger gets 413, unread; a
                           JSON body may take ~40x its size while parsed
                           (default: 16777216)
  --http-threads=N         connections served at once; must exceed --max-queue plus
                           --workers x --max-batch (default: 64)
  --timeout-ms=N           time one invocation (a batch) may run; past it its requests
                           get 504 (default: 0, no limit)
  --max-memory-bytes=N     tensor memory one invocation may hold; past it its requests
                           get 503 (default: 0, no limit)
  --pad=INPUT:AXIS:VALUE   lets requests of different extents on AXIS of INPUT share a
                           batch, padded with VALUE; repeat for every input with that
                           axis's symbol
  --help                   this text
)";

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

struct Flags {
  std::string executable;
  std::string name;
  std::string function = "main";
  ServerOptions server;
  BatcherOptions batcher;
  std::vector<PadRule> pads;
  int64_t threads_per_worker = 0;  // 0: divide the hardware threads
  bool help = false;
};

absl::Status ApplyFlag(std::string_view name, std::string_view value, Flags& flags) {
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  int64_t n = 0;
  if (name == "name") {
    if (value.empty() || value.find('/') != std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrFormat("--name must be non-empty without '/', got '%s'", value));
    }
    flags.name = value;
  } else if (name == "function") {
    flags.function = value;
  } else if (name == "host") {
    flags.server.host = value;
  } else if (name == "port") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 0, 65535, n));
    flags.server.port = static_cast<int>(n);
  } else if (name == "workers") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 1, 1024, n));
    flags.batcher.workers = static_cast<int>(n);
  } else if (name == "threads-per-worker") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 1, 4096, flags.threads_per_worker));
  } else if (name == "max-batch") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 1, kMaxInt, flags.batcher.max_batch));
  } else if (name == "batch-delay-us") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 0, 60'000'000, n));
    flags.batcher.batch_delay = std::chrono::microseconds(n);
  } else if (name == "max-queue") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 0, kMaxInt, n));
    flags.batcher.max_queue = static_cast<size_t>(n);
  } else if (name == "max-body-bytes") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 1, std::numeric_limits<int64_t>::max(), n));
    flags.server.max_body_bytes = static_cast<size_t>(n);
  } else if (name == "http-threads") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 1, 4096, n));
    flags.server.http_threads = static_cast<int>(n);
  } else if (name == "timeout-ms") {
    DYNVM_RETURN_IF_ERROR(ParseIntFlag(name, value, 0, 24 * 3600 * 1000, n));
    flags.batcher.timeout = n == 0 ? absl::InfiniteDuration() : absl::Milliseconds(n);
  } else if (name == "max-memory-bytes") {
    DYNVM_RETURN_IF_ERROR(
        ParseIntFlag(name, value, 0, std::numeric_limits<int64_t>::max(), flags.batcher.max_memory_bytes));
  } else if (name == "pad") {
    DYNVM_ASSIGN_OR_RETURN(PadRule rule, ParsePadRule(value));
    flags.pads.push_back(std::move(rule));
  } else {
    return absl::InvalidArgumentError(absl::StrFormat("unknown flag '--%s'", name));
  }
  return absl::OkStatus();
}

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  flags.batcher.max_batch = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      flags.help = true;
    } else if (arg.starts_with("--")) {
      const size_t eq = arg.find('=');
      if (eq == std::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrFormat("flag '%s' needs a value: %s=VALUE", arg, arg));
      }
      DYNVM_RETURN_IF_ERROR(ApplyFlag(arg.substr(2, eq - 2), arg.substr(eq + 1), flags));
    } else if (arg.starts_with('-')) {
      return absl::InvalidArgumentError(absl::StrFormat("unknown flag '%s'", arg));
    } else if (!flags.executable.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("more than one executable: '%s' and '%s'", flags.executable, arg));
    } else {
      flags.executable = arg;
    }
  }
  if (flags.executable.empty() && !flags.help) {
    return absl::InvalidArgumentError("missing the executable file (vm_serve exe.fbs ...)");
  }
  if (flags.name.empty()) flags.name = std::filesystem::path(flags.executable).stem().string();
  if (!flags.help) DYNVM_RETURN_IF_ERROR(CheckThreadBudget(flags.server, flags.batcher));
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  flags.batcher.threads_per_worker =
      flags.threads_per_worker > 0 ? static_cast<int>(flags.threads_per_worker)
                                   : std::max(1, hardware / flags.batcher.workers);
  return flags;
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
                         serializer::LoadExecutable(flags.executable, kernels::DefaultRegistry()));
  DYNVM_ASSIGN_OR_RETURN(ServedModel model, ServedModel::Create(flags.name, exe, flags.function));
  DYNVM_ASSIGN_OR_RETURN(BatchPlan plan, BatchPlan::Create(model.function(), flags.pads));
  std::fprintf(stderr, "vm_serve: model '%s' (function '%s'), %d worker(s) x %d thread(s), batching %s\n",
               model.name().c_str(), model.function().name.c_str(), flags.batcher.workers,
               flags.batcher.threads_per_worker,
               flags.batcher.max_batch > 1 ? plan.description().c_str() : "off: --max-batch=1");
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
  absl::StatusOr<dynvm::tools::serve::Flags> flags = dynvm::tools::serve::ParseFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "vm_serve: %s (see vm_serve --help)\n",
                 std::string(flags.status().message()).c_str());
    return dynvm::tools::serve::kExitUsage;
  }
  if (flags->help) {
    std::fputs(dynvm::tools::serve::kUsage, stdout);
    return 0;
  }
  const absl::Status served = dynvm::tools::serve::Serve(*flags);
  if (!served.ok()) {
    std::fprintf(stderr, "vm_serve: %s\n", std::string(served.message()).c_str());
    return dynvm::tools::serve::kExitError;
  }
  return 0;
}
