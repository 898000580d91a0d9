// vm_run: runs one function of an executable file on inputs from the command line, with
// the input/output conventions of IREE's iree-run-module.
//
//   vm_run exe.fbs --input=x=@x.npy --input=2x3xf32=1,2,3,4,5,6 --output=@out.npy
//   vm_run exe.fbs --function=step --input=@x.npy --expected_output=@ref.npy
//   vm_run exe.fbs --input=@x.npy --benchmark=100
//
// The value returned is printed to stdout (tools/run/value_printer.h). Inputs bind to
// parameters by position or by name (tools/run/input_parser.h) and the VM checks them
// against the signature. Outputs are the result flattened depth-first (a tuple's fields
// in order): --output writes the tensor ones to .npy files, --expected_output compares
// all of them (tools/run/compare.h). Exit codes: 0 success; 1 an error (unreadable
// file, bad input, run-time failure); 2 a malformed command line; 3 an output differs
// from --expected_output. Each failure is one line on stderr. See docs/cli.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "serializer/executable_file.h"
#include "serializer/npy.h"
#include "tools/flags.h"
#include "tools/run/compare.h"
#include "tools/run/input_parser.h"
#include "tools/run/latency.h"
#include "tools/run/value_printer.h"
#include "vm/virtual_machine.h"

namespace dynvm::tools {
namespace {

// Exit codes besides 0 and kExitUsage, as every tool uses them (docs/cli.md), and
// vm_run's own for an output that differs from --expected_output.
constexpr int kExitError = 1;
constexpr int kExitMismatch = 3;

// The command line's values, with their defaults.
struct Flags {
  std::string executable;
  std::string function = "main";
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;  // the paths: the '@' is dropped after parsing
  std::vector<std::string> expected_outputs;
  CompareOptions compare;
  int64_t benchmark = 0;
  int64_t threads = 0;  // 0: the default pool's size
  int64_t max_call_depth = vm::VmOptions().max_call_depth;
  int64_t max_steps = 0;         // 0: no limit, as for the three below
  int64_t timeout_ms = 0;
  int64_t max_memory_bytes = 0;
  bool profile = false;
  bool trust_native = false;
  std::string trace;  // the path, if any
};

// Checks that every --output is @file.npy, and drops the '@'.
absl::Status TakeOutputPaths(Flags& flags) {
  for (std::string& output : flags.outputs) {
    if (!output.starts_with('@') || output.size() == 1) {
      return absl::InvalidArgumentError(absl::StrFormat("--output must be @file.npy, got '%s'", output));
    }
    output.erase(0, 1);
  }
  return absl::OkStatus();
}

constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// vm_run's command line (docs/cli.md), storing into `flags`.
CommandLine MakeCommandLine(Flags& flags) {
  return {
      .tool = "vm_run",
      .positional = Positional{"exe.fbs", "executable file", &flags.executable, /*required=*/true,
                               "the executable file to run"},
      .flags =
          {StringFlag("function", "NAME", &flags.function, "the function to run (default: main)"),
           RepeatedFlag("input", "SPEC", &flags.inputs,
                        "one per parameter, in order or as NAME=SPEC; SPEC is @file.npy, an "
                        "inline tensor 2x3xf32=1,2,3,4,5,6 (f32=3.5 is 0-d, 0x3xf32= empty), or "
                        "a scalar 5, 1.5, true"),
           RepeatedFlag("output", "@file.npy", &flags.outputs,
                        "one per tensor output (the result flattened depth-first): writes it as "
                        ".npy; if given, one for every tensor output"),
           RepeatedFlag("expected_output", "SPEC", &flags.expected_outputs,
                        "one per output (flattened): compares with SPEC; a difference exits with "
                        "code 3"),
           NumberFlag("atol", "X", &flags.compare.atol, 0,
                      "absolute float tolerance of --expected_output: |got - expected| <= atol + "
                      "rtol * |expected| (default 1e-06)"),
           NumberFlag("rtol", "X", &flags.compare.rtol, 0,
                      "relative float tolerance of --expected_output (default 1e-05)"),
           IntFlag("benchmark", "N", &flags.benchmark, 1, kMaxCount,
                   "after the first run, times N more and prints as the last line: latency_ms "
                   "median=.. p10=.. p90=.. min=.. runs=N"),
           IntFlag("threads", "N", &flags.threads, 1, 4096,
                   "intra-op threads kernels parallelise on (default: the number of hardware "
                   "threads)"),
           IntFlag("max_call_depth", "N", &flags.max_call_depth, 1, kMaxCount,
                   "frames deeper than N fail the run (default 10000)"),
           IntFlag("max_steps", "N", &flags.max_steps, 0, kMaxInt64,
                   "calls and backward jumps one run may make (default: 0, no limit)"),
           IntFlag("timeout_ms", "N", &flags.timeout_ms, 0, kMaxInt64,
                   "time one run may take (default: 0, no limit)"),
           IntFlag("max_memory_bytes", "N", &flags.max_memory_bytes, 0, kMaxInt64,
                   "tensor memory one run may hold at once (default: 0, no limit)"),
           TrustNativeSwitch(&flags.trust_native),
           Switch("profile", &flags.profile,
                  "prints, after the runs, where their time went: per kernel (calls, total ms, "
                  "mean us, % of the run, GFLOP/s where known) and per instruction kind and "
                  "opcode; with --benchmark, of the timed runs only"),
           StringFlag("trace", "trace.json", &flags.trace,
                      "writes every kernel and shape-function call of the runs (with "
                      "--benchmark, the timed ones) in Chrome's trace-event format "
                      "(chrome://tracing, Perfetto)")},
      .after_parse = [&flags] { return TakeOutputPaths(flags); },
  };
}

absl::StatusOr<uint32_t> FindFunction(const vm::Executable& exe, const Flags& flags) {
  if (std::optional<uint32_t> index = exe.FunctionIndex(flags.function)) return *index;
  std::string names;
  for (const vm::Function& f : exe.functions()) {
    absl::StrAppendFormat(&names, "%s%s", names.empty() ? "" : ", ", f.name);
  }
  return absl::NotFoundError(absl::StrFormat("no function '%s' in '%s' (it has %s)", flags.function,
                                             flags.executable, names));
}

// `outputs`, each with its name when the signature names it.
struct Outputs {
  std::vector<Value> values;
  std::vector<std::string> names;  // one per value, or empty

  Outputs(const vm::Function& function, const Value& result) : values(FlattenValue(result)) {
    for (const vm::ValueSpec* spec : function.outputs()) names.push_back(spec->name);
    if (names.size() != values.size()) names.clear();  // another shape than the signature
  }
  bool all_named() const {
    return !names.empty() && std::none_of(names.begin(), names.end(), [](const std::string& n) { return n.empty(); });
  }
  // "output 1 ('pooler_output')", or "output 1" without a name.
  std::string Label(size_t i) const {
    if (names.empty() || names[i].empty()) return absl::StrFormat("output %d", i);
    return absl::StrFormat("output %d ('%s')", i, names[i]);
  }
};

// The result as vm_run prints it: each output under its name when the signature names
// them all, else the value as it is.
std::string FormatResult(const Value& result, const Outputs& outputs, const PrintOptions& print) {
  if (!outputs.all_named()) return FormatValue(result, print);
  std::string text;
  for (size_t i = 0; i < outputs.values.size(); ++i) {
    absl::StrAppend(&text, i > 0 ? "\n" : "", outputs.names[i], ": ", FormatValue(outputs.values[i], print));
  }
  return text;
}

// Writes the tensors among `outputs` to the --output files, one each.
absl::Status WriteOutputs(const Flags& flags, const Outputs& named) {
  const std::vector<Value>& outputs = named.values;
  std::vector<size_t> tensors;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].As<NDArrayObj>() != nullptr) tensors.push_back(i);
  }
  if (flags.outputs.size() != tensors.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--output given %d times but '%s' returned %d tensor outputs",
                        flags.outputs.size(), flags.function, tensors.size()));
  }
  for (size_t k = 0; k < tensors.size(); ++k) {
    const NDArray tensor = outputs[tensors[k]].AsRef<NDArrayObj>();
    DYNVM_RETURN_IF_ERROR(serializer::WriteNpyFile(flags.outputs[k], tensor));
    std::printf("wrote %s (%s) to %s\n", named.Label(tensors[k]).c_str(),
                TensorTypeString(*tensor).c_str(), flags.outputs[k].c_str());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Value>> ParseExpectedOutputs(
    const Flags& flags, const std::shared_ptr<Allocator>& allocator) {
  std::vector<Value> expected;
  for (const std::string& spec : flags.expected_outputs) {
    absl::StatusOr<Value> value = ParseValue(spec, vm::ValueSpec::Kind::kAny, allocator);
    if (!value.ok()) {
      return absl::Status(value.status().code(), absl::StrFormat("--expected_output '%s': %s", spec,
                                                                 value.status().message()));
    }
    expected.push_back(*std::move(value));
  }
  return expected;
}

// The first difference between `outputs` and `expected`, if any.
absl::StatusOr<std::optional<std::string>> CheckOutputs(const Flags& flags,
                                                        absl::Span<const Value> expected,
                                                        const Outputs& named) {
  const std::vector<Value>& outputs = named.values;
  if (expected.size() != outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--expected_output given %d times but '%s' returned %d outputs",
                        expected.size(), flags.function, outputs.size()));
  }
  std::optional<std::string> first;
  int differ = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::optional<std::string> diff = CompareValue(expected[i], outputs[i], flags.compare);
    if (diff.has_value() && differ++ == 0) first = absl::StrFormat("%s: %s", named.Label(i), *diff);
  }
  if (differ > 1)
    absl::StrAppendFormat(&*first, " (%d of %d outputs differ)", differ, outputs.size());
  return first;
}

absl::Status Benchmark(vm::VirtualMachine& machine, uint32_t function, absl::Span<const Value> args,
                       int64_t runs) {
  std::vector<double> milliseconds;
  milliseconds.reserve(runs);
  for (int64_t i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    DYNVM_RETURN_IF_ERROR(machine.Invoke(function, args).status());
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    milliseconds.push_back(elapsed.count());
  }
  std::printf("%s\n", LatencyLine(milliseconds).c_str());
  return absl::OkStatus();
}

// Runs what `flags` ask for. Returns the first difference from --expected_output, if
// any; errors otherwise.
absl::StatusOr<std::optional<std::string>> Run(const Flags& flags) {
  DYNVM_ASSIGN_OR_RETURN(std::shared_ptr<const vm::Executable> exe,
                         serializer::LoadExecutable(flags.executable, kernels::DefaultRegistry(),
                                                    {.trust_native_code = flags.trust_native}));
  if (exe->native_code_ignored()) PrintNativeCodeNotice("vm_run");
  DYNVM_ASSIGN_OR_RETURN(const uint32_t function, FindFunction(*exe, flags));
  vm::VmOptions options;
  options.max_call_depth = static_cast<uint32_t>(flags.max_call_depth);
  options.max_steps = flags.max_steps;
  if (flags.timeout_ms > 0) options.timeout = absl::Milliseconds(flags.timeout_ms);
  options.max_memory_bytes = flags.max_memory_bytes;
  std::optional<kernels::ThreadPool> pool;
  if (flags.threads > 0) options.thread_pool = &pool.emplace(static_cast<int>(flags.threads));
  std::optional<vm::Profiler> profiler;
  if (flags.profile || !flags.trace.empty()) {
    options.profiler = &profiler.emplace(/*trace=*/!flags.trace.empty());
  }
  vm::VirtualMachine machine(exe, options);
  DYNVM_ASSIGN_OR_RETURN(const std::vector<Value> args,
                         BindInputs(exe->function(function), flags.inputs, machine.allocator()));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<Value> expected,
                         ParseExpectedOutputs(flags, machine.allocator()));

  DYNVM_ASSIGN_OR_RETURN(const Value result, machine.Invoke(function, args));
  PrintOptions print;
  print.functions = exe->functions();
  const Outputs outputs(exe->function(function), result);
  std::printf("%s\n", FormatResult(result, outputs, print).c_str());
  if (!flags.outputs.empty()) DYNVM_RETURN_IF_ERROR(WriteOutputs(flags, outputs));
  std::optional<std::string> diff;
  if (!flags.expected_outputs.empty()) {
    DYNVM_ASSIGN_OR_RETURN(diff, CheckOutputs(flags, expected, outputs));
  }
  if (flags.benchmark > 0 && !diff.has_value()) {  // nothing is timed when an output differs
    if (profiler) profiler->Reset();  // profile the timed runs, not the cold first one
    DYNVM_RETURN_IF_ERROR(Benchmark(machine, function, args, flags.benchmark));
  }
  if (flags.profile) std::printf("\n%s", profiler->Report().c_str());
  if (!flags.trace.empty()) {
    DYNVM_RETURN_IF_ERROR(profiler->WriteChromeTrace(flags.trace));
    std::printf("wrote the trace of %ld run(s) to %s\n", static_cast<long>(profiler->invocations()),
                flags.trace.c_str());
  }
  return diff;
}

}  // namespace
}  // namespace dynvm::tools

int main(int argc, char** argv) {
  dynvm::tools::Flags flags;
  if (const std::optional<int> exit = dynvm::tools::ParseOrExitCode(
          dynvm::tools::MakeCommandLine(flags), argc, argv)) {
    return *exit;
  }
  absl::StatusOr<std::optional<std::string>> outcome = dynvm::tools::Run(flags);
  std::fflush(stdout);
  if (!outcome.ok()) {
    std::fprintf(stderr, "vm_run: %s\n", std::string(outcome.status().message()).c_str());
    return dynvm::tools::kExitError;
  }
  if (outcome->has_value()) {
    std::fprintf(stderr, "vm_run: %s\n", (*outcome)->c_str());
    return dynvm::tools::kExitMismatch;
  }
  return 0;
}
