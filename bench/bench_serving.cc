// BERT serving offline, in process: every request of a trace (the peers' make_trace.py:
// [{id, seq_len, arrival_s}]) queued at once on vm_serve's batcher, one worker of 2
// threads, answered in arrival order — packed by tokens (main_packed, --max-batch-tokens
// 64, 128 and 256, --max-batch 8: `mode:0/tokens:N`), padded (`mode:1`, --max-batch 8
// with the three inputs' sequence axis padded, vm_serve's padding budget) and one at a
// time (`mode:2`). A request's token ids are the
// peers' LCG with its id as seed (vocabulary 30522), its mask all ones, its token types 0.
//
//   DYNVM_SERVING_EXE=bert_base.fbs DYNVM_SERVING_TRACE=trace_zipf.json
//     build/bin/bench_serving --benchmark_min_time=5       (one command line)
//
// Before timing, each mode's answers are checked against every request's own run of
// main (1e-4, the serving tests' tolerance). bench/compare_serving.py runs it beside
// the peers. Counters:
//   tokens_per_s    real tokens answered per second
//   requests        requests per pass; real_tokens their tokens
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "nlohmann/json.hpp"
#include "objects/allocator.h"
#include "serializer/executable_file.h"
#include "tools/run/compare.h"
#include "tools/serve/batcher.h"
#include "vm/virtual_machine.h"

namespace dynvm::tools::serve {
namespace {

constexpr int64_t kVocab = 30522;
constexpr CompareOptions kTolerance{/*atol=*/1e-4, /*rtol=*/1e-4};

const char* Env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) {
    std::fprintf(stderr, "bench_serving: set %s (see the file's comment)\n", name);
    std::exit(2);
  }
  return value;
}

struct Trace {
  std::shared_ptr<const vm::Executable> exe;
  std::vector<std::vector<Value>> requests;  // input_ids, attention_mask, token_type_ids
  std::vector<std::vector<Value>> expected;  // each request's own run of main
  int64_t tokens = 0;
};

// The peers' token ids (bert_model.token_ids): a 64-bit LCG from the seed.
NDArray TokenIds(int64_t length, uint64_t seed) {
  NDArray ids = *NDArrayObj::Empty({1, length}, DType::kI64, MakeNaiveAllocator());
  uint64_t s = seed;
  for (int64_t i = 0; i < length; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    ids->data_as<int64_t>()[i] = 1000 + static_cast<int64_t>((s >> 33) % (kVocab - 1000));
  }
  return ids;
}

NDArray Filled(int64_t length, int64_t value) {
  NDArray t = *NDArrayObj::Empty({1, length}, DType::kI64, MakeNaiveAllocator());
  std::fill_n(t->data_as<int64_t>(), length, value);
  return t;
}

const Trace& LoadTrace() {
  static const Trace* trace = [] {
    auto* t = new Trace;
    absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = serializer::LoadExecutable(
        Env("DYNVM_SERVING_EXE"), kernels::DefaultRegistry(), {.trust_native_code = true});
    if (!exe.ok()) {
      std::fprintf(stderr, "bench_serving: %s\n", std::string(exe.status().message()).c_str());
      std::exit(1);
    }
    t->exe = *exe;
    std::ifstream in(Env("DYNVM_SERVING_TRACE"));
    nlohmann::json requests = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!requests.is_array()) {
      std::fprintf(stderr, "bench_serving: the trace is not a JSON list of requests\n");
      std::exit(1);
    }
    std::stable_sort(requests.begin(), requests.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return std::make_pair(a["arrival_s"].get<double>(), a["id"].get<int64_t>()) <
             std::make_pair(b["arrival_s"].get<double>(), b["id"].get<int64_t>());
    });
    vm::VirtualMachine machine(t->exe);
    for (const nlohmann::json& r : requests) {
      const int64_t length = r["seq_len"].get<int64_t>();
      t->requests.push_back({Value(TokenIds(length, r["id"].get<uint64_t>())), Value(Filled(length, 1)),
                             Value(Filled(length, 0))});
      absl::StatusOr<Value> out = machine.Invoke("main", t->requests.back());
      if (!out.ok()) {
        std::fprintf(stderr, "bench_serving: %s\n", std::string(out.status().message()).c_str());
        std::exit(1);
      }
      t->expected.push_back(FlattenValue(*out));
      t->tokens += length;
    }
    return t;
  }();
  return *trace;
}

enum Mode { kPacked, kPadded, kAlone };

// Submits every request and waits for all answers; false (with `error`) if one fails
// or, with `check`, differs from its own run.
bool Pass(Batcher& batcher, const Trace& trace, bool check, std::string& error) {
  std::vector<Batcher::Future> futures;
  for (const std::vector<Value>& r : trace.requests) {
    absl::StatusOr<Batcher::Future> f = batcher.Submit(r);
    if (!f.ok()) {
      error = std::string(f.status().message());
      return false;
    }
    futures.push_back(*std::move(f));
  }
  for (size_t i = 0; i < futures.size(); ++i) {
    Batcher::Result result = futures[i].get();
    if (!result.ok()) {
      error = std::string(result.status().message());
      return false;
    }
    for (size_t k = 0; check && k < result->size(); ++k) {
      if (std::optional<std::string> diff = CompareValue(trace.expected[i][k], (*result)[k], kTolerance)) {
        error = "request " + std::to_string(i) + " output " + std::to_string(k) + ": " + *diff;
        return false;
      }
    }
  }
  return true;
}

void BM_ServeOffline(benchmark::State& state) {
  const Trace& trace = LoadTrace();
  const Mode mode = static_cast<Mode>(state.range(0));
  const int64_t budget = state.range(1);  // packed: --max-batch-tokens
  const uint32_t main = *trace.exe->FunctionIndex("main");
  BatcherOptions options;
  options.workers = 1;
  options.threads_per_worker = 2;
  options.max_batch = mode == kAlone ? 1 : 8;
  options.max_batch_tokens = mode == kPacked ? budget : 0;
  options.max_queue = trace.requests.size();
  std::vector<PadRule> pads;
  if (mode == kPadded) pads = {{"input_ids", 1, "0"}, {"attention_mask", 1, "0"}, {"token_type_ids", 1, "0"}};
  Metrics metrics;
  Batcher batcher(trace.exe, main, *BatchPlan::Create(trace.exe->function(main), pads), options, &metrics);
  std::string error;
  if (!Pass(batcher, trace, /*check=*/true, error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  for (auto _ : state) {
    if (!Pass(batcher, trace, /*check=*/false, error)) {
      state.SkipWithError(error.c_str());
      return;
    }
  }
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(trace.tokens) * state.iterations(),
                                                      benchmark::Counter::kIsRate);
  state.counters["requests"] = static_cast<double>(trace.requests.size());
  state.counters["real_tokens"] = static_cast<double>(trace.tokens);
}
BENCHMARK(BM_ServeOffline)
    ->ArgNames({"mode", "tokens"})
    ->Args({kPacked, 64})
    ->Args({kPacked, 128})
    ->Args({kPacked, 256})
    ->Args({kPadded, 0})
    ->Args({kAlone, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace dynvm::tools::serve
