// Profiler: where a VM's time goes, by kernel-table entry and by instruction, and
// optionally a Chrome trace of every kernel and shape-function call.
//
// Give a VM one through VmOptions::profiler; it then runs a second instantiation of
// its dispatch loop that timestamps each instruction as it starts and charges the time
// until the next to it (so a kernel call's time includes its argument gathering, and a
// call's time its frame set-up). Without a profiler the loop has no timing code at all.
// A profiler accumulates over every invocation it sees, of one executable (given
// another, it starts over), on one thread at a time.
//
//   vm::Profiler profiler(/*trace=*/true);
//   vm::VmOptions options;
//   options.profiler = &profiler;
//   vm::VirtualMachine machine(exe, options);
//   ... machine.Invoke("main", args) ...
//   std::fputs(profiler.Report().c_str(), stdout);
//   DYNVM_RETURN_IF_ERROR(profiler.WriteChromeTrace("trace.json"));
#ifndef DYNVM_VM_PROFILER_H_
#define DYNVM_VM_PROFILER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "vm/bytecode.h"
#include "vm/executable.h"

namespace dynvm::vm {

// What an instruction does, for the report's subtotals.
enum class InstructionKind : uint8_t {
  kKernel,           // InvokePacked
  kShapeFunction,    // InvokeShapeFn
  kAllocation,       // storages, tensors (and views of them), ADTs, closures, copies
  kShapeArithmetic,  // ShapeOf, Dim, MakeShape and the integer instructions
  kDispatch,         // moves, constants, calls, returns, branches, fields, kills
};
InstructionKind KindOf(Opcode op);
std::string_view KindName(InstructionKind kind);

class Profiler {
 public:
  // Trace events are kept only with `trace`, at most kMaxTraceEvents of them.
  explicit Profiler(bool trace = false) : trace_(trace) {}

  static constexpr size_t kMaxTraceEvents = size_t{1} << 22;

  // Per kernel-table entry.
  struct KernelStats {
    std::string name;        // the registry name, e.g. "nn.dense"
    int64_t calls = 0;
    int64_t nanos = 0;
    double flops = 0;        // summed over the calls whose FLOP count is known
    int64_t counted = 0;     // how many calls those were
  };
  // Per opcode.
  struct OpcodeStats {
    int64_t count = 0;
    int64_t nanos = 0;
  };

  // The VM's side. Begin and End bracket an invocation of `function`; Tick marks the
  // start of the instruction at `ip` (and the end of the one before); AddFlops adds to
  // the kernel call in progress.
  void Begin(const Executable& executable, uint32_t function);
  void Tick(const uint32_t* ip) {
    const int64_t now = Now();
    Charge(now);
    const Opcode op = static_cast<Opcode>(HeaderOpcode(*ip));
    current_op_ = op;
    current_kernel_ = op == Opcode::kInvokePacked || op == Opcode::kInvokeShapeFn
                          ? static_cast<int64_t>(ip[1])
                          : -1;
    since_ = now;
  }
  void AddFlops(std::optional<double> flops);
  void End();

  // Forgets what was measured (e.g. a cold first run before the timed ones).
  void Reset();

  // What was measured.
  int64_t invocations() const { return invocations_; }
  int64_t total_nanos() const { return total_nanos_; }
  const std::vector<KernelStats>& kernels() const { return kernels_; }
  const std::vector<KernelStats>& shape_functions() const { return shape_functions_; }
  const OpcodeStats& opcode(Opcode op) const { return opcodes_[static_cast<size_t>(op)]; }

  // Tables for people: kernels by total time (calls, total ms, mean µs, % of run,
  // GFLOP/s where known), then instruction kinds and opcodes.
  std::string Report() const;
  // The trace in Chrome's trace-event format (chrome://tracing, ui.perfetto.dev): one
  // complete event per invocation, kernel call and shape-function call.
  std::string ChromeTrace() const;
  absl::Status WriteChromeTrace(const std::string& path) const;

 private:
  struct Event {
    enum Type : uint8_t { kInvocation, kKernel, kShapeFunction } type;
    uint32_t index;    // the function invoked, or the kernel-table entry
    int64_t start_ns;  // since the first Begin
    int64_t nanos;
  };

  static int64_t Now();
  // Charges the time since the last tick to the instruction that started then.
  void Charge(int64_t now);

  bool trace_;
  const Executable* executable_ = nullptr;
  std::vector<KernelStats> kernels_;
  std::vector<KernelStats> shape_functions_;
  OpcodeStats opcodes_[static_cast<size_t>(Opcode::kNumOpcodes)] = {};
  std::vector<Event> events_;
  int64_t origin_ = 0;  // the first Begin
  uint32_t function_ = 0;  // the function being invoked
  int64_t invocation_start_ = 0;
  int64_t invocations_ = 0;
  int64_t total_nanos_ = 0;
  bool running_ = false;
  Opcode current_op_ = Opcode::kMove;
  int64_t current_kernel_ = -1;
  int64_t since_ = 0;
};

}  // namespace dynvm::vm

#endif  // DYNVM_VM_PROFILER_H_
