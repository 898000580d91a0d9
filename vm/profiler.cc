// The profiler (vm/profiler.h): per-kernel and per-instruction times, the report,
// and the Chrome trace.
#include "vm/profiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dynvm::vm {
namespace {

double Millis(int64_t nanos) { return static_cast<double>(nanos) / 1e6; }

// `text` as a JSON string literal.
std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

InstructionKind KindOf(Opcode op) {
  switch (op) {
    case Opcode::kInvokePacked: return InstructionKind::kKernel;
    case Opcode::kInvokeShapeFn: return InstructionKind::kShapeFunction;
    case Opcode::kAllocStorage:
    case Opcode::kAllocTensor:
    case Opcode::kAllocTensorReg:
    case Opcode::kAllocADT:
    case Opcode::kAllocClosure:
    case Opcode::kReshapeTensor:
    case Opcode::kDeviceCopy: return InstructionKind::kAllocation;
    case Opcode::kShapeOf:
    case Opcode::kDim:
    case Opcode::kMakeShape:
    case Opcode::kAddI:
    case Opcode::kSubI:
    case Opcode::kMulI:
    case Opcode::kDivI:
    case Opcode::kModI:
    case Opcode::kMinI:
    case Opcode::kMaxI:
    case Opcode::kEqI:
    case Opcode::kNeI:
    case Opcode::kLtI:
    case Opcode::kLeI: return InstructionKind::kShapeArithmetic;
    default: return InstructionKind::kDispatch;
  }
}

std::string_view KindName(InstructionKind kind) {
  switch (kind) {
    case InstructionKind::kKernel: return "kernel calls";
    case InstructionKind::kShapeFunction: return "shape functions";
    case InstructionKind::kAllocation: return "allocation";
    case InstructionKind::kShapeArithmetic: return "shape arithmetic";
    case InstructionKind::kDispatch: return "dispatch";
  }
  return "?";
}

int64_t Profiler::Now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Profiler::Begin(const Executable& executable, uint32_t function) {
  if (executable_ != &executable) {
    // Counts are per kernel-table entry and function of one executable: a profiler
    // handed another one starts over rather than mix the two.
    if (executable_ != nullptr) Reset();
    executable_ = &executable;
    kernels_.assign(executable.spec().kernels.size(), KernelStats{});
    shape_functions_.assign(executable.spec().kernels.size(), KernelStats{});
    for (size_t i = 0; i < kernels_.size(); ++i) {
      kernels_[i].name = shape_functions_[i].name = executable.kernel(i).name();
    }
  }
  function_ = function;
  running_ = false;
  invocation_start_ = Now();
  if (invocations_ == 0) origin_ = invocation_start_;
}

void Profiler::Charge(int64_t now) {
  if (!running_) {  // the first instruction of an invocation has just started
    running_ = true;
    return;
  }
  const int64_t nanos = now - since_;
  OpcodeStats& op = opcodes_[static_cast<size_t>(current_op_)];
  ++op.count;
  op.nanos += nanos;
  if (current_kernel_ < 0) return;
  const bool shape = current_op_ == Opcode::kInvokeShapeFn;
  KernelStats& k = (shape ? shape_functions_ : kernels_)[static_cast<size_t>(current_kernel_)];
  ++k.calls;
  k.nanos += nanos;
  if (trace_ && events_.size() < kMaxTraceEvents) {
    events_.push_back(Event{shape ? Event::kShapeFunction : Event::kKernel,
                            static_cast<uint32_t>(current_kernel_), since_ - origin_, nanos});
  }
}

void Profiler::AddFlops(std::optional<double> flops) {
  if (!flops || current_kernel_ < 0) return;
  KernelStats& k = kernels_[static_cast<size_t>(current_kernel_)];
  k.flops += *flops;
  ++k.counted;
}

void Profiler::End() {
  const int64_t now = Now();
  Charge(now);
  running_ = false;
  ++invocations_;
  total_nanos_ += now - invocation_start_;
  if (trace_ && events_.size() < kMaxTraceEvents) {
    events_.push_back(
        Event{Event::kInvocation, function_, invocation_start_ - origin_, now - invocation_start_});
  }
}

void Profiler::Reset() {
  const bool trace = trace_;
  *this = Profiler(trace);
}

std::string Profiler::Report() const {
  std::string out;
  const double total = std::max<double>(1, static_cast<double>(total_nanos_));
  absl::StrAppendFormat(&out, "%d invocation(s), %.3f ms in all, %.3f ms each\n\n", invocations_,
                        Millis(total_nanos_),
                        invocations_ > 0 ? Millis(total_nanos_) / static_cast<double>(invocations_) : 0);

  // Kernels and shape functions, by total time.
  struct Row {
    const KernelStats* stats;
    size_t entry;
    bool shape;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < kernels_.size(); ++i) {
    if (kernels_[i].calls > 0) rows.push_back({&kernels_[i], i, false});
    if (shape_functions_[i].calls > 0) rows.push_back({&shape_functions_[i], i, true});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.stats->nanos > b.stats->nanos; });
  absl::StrAppendFormat(&out, "%-34s %5s %8s %10s %10s %7s %9s\n", "kernel", "entry", "calls",
                        "total ms", "mean us", "% run", "GFLOP/s");
  for (const Row& r : rows) {
    const KernelStats& k = *r.stats;
    std::string gflops = "-";
    // Only when every call's count is known: a partial sum over all the time would lie.
    if (!r.shape && k.counted == k.calls && k.nanos > 0) {
      gflops = absl::StrFormat("%.1f", k.flops / static_cast<double>(k.nanos));
    }
    absl::StrAppendFormat(&out, "%-34s %5d %8d %10.3f %10.2f %7.2f %9s\n",
                          r.shape ? absl::StrCat(k.name, " (shape fn)") : k.name, r.entry, k.calls,
                          Millis(k.nanos), static_cast<double>(k.nanos) / 1e3 / static_cast<double>(k.calls),
                          100 * static_cast<double>(k.nanos) / total, gflops);
  }

  // Instruction kinds, then each opcode under its kind.
  absl::StrAppendFormat(&out, "\n%-34s %5s %8s %10s %10s %7s\n", "instructions", "", "count",
                        "total ms", "mean us", "% run");
  for (const InstructionKind kind :
       {InstructionKind::kKernel, InstructionKind::kShapeFunction, InstructionKind::kAllocation,
        InstructionKind::kShapeArithmetic, InstructionKind::kDispatch}) {
    OpcodeStats sum;
    for (size_t i = 0; i < static_cast<size_t>(Opcode::kNumOpcodes); ++i) {
      if (KindOf(static_cast<Opcode>(i)) != kind) continue;
      sum.count += opcodes_[i].count;
      sum.nanos += opcodes_[i].nanos;
    }
    if (sum.count == 0) continue;
    absl::StrAppendFormat(&out, "%-34s %5s %8d %10.3f %10.2f %7.2f\n", KindName(kind), "",
                          sum.count, Millis(sum.nanos),
                          static_cast<double>(sum.nanos) / 1e3 / static_cast<double>(sum.count),
                          100 * static_cast<double>(sum.nanos) / total);
    for (size_t i = 0; i < static_cast<size_t>(Opcode::kNumOpcodes); ++i) {
      const OpcodeStats& s = opcodes_[i];
      if (KindOf(static_cast<Opcode>(i)) != kind || s.count == 0) continue;
      absl::StrAppendFormat(&out, "  %-32s %5s %8d %10.3f %10.2f %7.2f\n",
                            GetOpcodeInfo(static_cast<Opcode>(i)).mnemonic, "", s.count, Millis(s.nanos),
                            static_cast<double>(s.nanos) / 1e3 / static_cast<double>(s.count),
                            100 * static_cast<double>(s.nanos) / total);
    }
  }
  return out;
}

std::string Profiler::ChromeTrace() const {
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    std::string name;
    std::string_view category;
    switch (e.type) {
      case Event::kInvocation:
        name = absl::StrCat("@", executable_->function(e.index).name);
        category = "invocation";
        break;
      case Event::kKernel:
        name = kernels_[e.index].name;
        category = "kernel";
        break;
      case Event::kShapeFunction:
        name = absl::StrCat(shape_functions_[e.index].name, " (shape fn)");
        category = "shape function";
        break;
    }
    absl::StrAppendFormat(&out,
                          "%s{\"name\": %s, \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, "
                          "\"dur\": %.3f, \"pid\": 1, \"tid\": 1, \"args\": {\"entry\": %d}}",
                          i > 0 ? ",\n" : "", JsonString(name), category,
                          static_cast<double>(e.start_ns) / 1e3, static_cast<double>(e.nanos) / 1e3,
                          e.type == Event::kInvocation ? -1 : static_cast<int64_t>(e.index));
  }
  return out + "\n]}\n";
}

absl::Status Profiler::WriteChromeTrace(const std::string& path) const {
  const std::string text = ChromeTrace();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat("cannot write the trace '%s'", path));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    return absl::DataLossError(absl::StrFormat("writing the trace '%s' failed", path));
  }
  return absl::OkStatus();
}

}  // namespace dynvm::vm
