// The bytecode verifier (vm/verifier.h): decoding and operand checks per function,
// then the defined-register analysis over basic blocks.
#include "vm/verifier.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "objects/ndarray.h"
#include "objects/string_object.h"
#include "vm/bytecode.h"

namespace dynvm::vm {
namespace {

// The only device this runtime has (DLPack's kDLCPU).
constexpr int64_t kCpuDevice = 1;

absl::Status VerifySpec(const ValueSpec& spec, const std::string& what, int depth) {
  if (static_cast<uint8_t>(spec.kind) > static_cast<uint8_t>(ValueSpec::Kind::kTuple)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s has an unknown kind %d", what, static_cast<int>(spec.kind)));
  }
  // Checked for every kind, not only tensors: files store dtype and dims for all, and
  // tools must be able to print whatever verifies.
  if (!IsValidDType(static_cast<uint32_t>(spec.dtype))) {
    return absl::InvalidArgumentError(absl::StrFormat("%s has an invalid dtype", what));
  }
  if (spec.dims.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has rank %d, above the maximum %d", what, spec.dims.size(), kMaxRank));
  }
  for (const DimSpec& dim : spec.dims) {
    if (dim.extent < -1 || (dim.extent >= 0 && !dim.symbol.empty())) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s has an invalid dimension %d", what, dim.extent));
    }
  }
  if (spec.kind != ValueSpec::Kind::kTuple && !spec.fields.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s has fields but is not a tuple", what));
  }
  if (spec.kind == ValueSpec::Kind::kTuple && depth == kMaxSpecDepth) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s nests tuples deeper than the maximum %d", what, kMaxSpecDepth));
  }
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    DYNVM_RETURN_IF_ERROR(VerifySpec(spec.fields[i], absl::StrFormat("%s field %d", what, i), depth + 1));
  }
  return absl::OkStatus();
}

absl::Status VerifySignature(const std::vector<ValueSpec>& specs, std::string_view what) {
  for (size_t i = 0; i < specs.size(); ++i) {
    DYNVM_RETURN_IF_ERROR(VerifySpec(specs[i], absl::StrFormat("%s %d", what, i), 1));
  }
  return absl::OkStatus();
}

// What an instruction does to one of its registers.
enum class Access : uint8_t {
  kRead,
  kDefine,    // written with a value
  kUndefine,  // kill: set to none
};

struct RegisterAccess {
  uint32_t reg;
  Access access;
};

// Appends what `inst`, which passed CheckInstruction, does to registers: its reads, then
// its writes, the order in which every opcode performs them (invoke and invoke_closure
// write their destination only when the callee returns).
//
// [RULE lists] A '+' list is read, except that invoke_shape_fn writes the output shapes
// into the last B registers of its list. invoke_packed's outputs (its last B registers)
// are written in place, into the tensors they already hold: reads. kill's 'W' leaves its
// register undefined.
void AppendAccesses(const Instruction& inst, std::vector<RegisterAccess>& out) {
  const std::string_view format = GetOpcodeInfo(inst.op).format;
  const bool has_list = !format.empty() && format.back() == '+';
  const size_t written_tail =
      inst.op == Opcode::kInvokeShapeFn ? static_cast<size_t>(inst.operands[1]) : 0;
  const size_t read_list = has_list ? inst.list.size() - written_tail : 0;
  // operands[i] belongs to format[i]: the variadic letter, if any, comes last.
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    if (format[i] == 'R') out.push_back({static_cast<uint32_t>(inst.operands[i]), Access::kRead});
  }
  for (size_t i = 0; i < read_list; ++i) {
    out.push_back({static_cast<uint32_t>(inst.list[i]), Access::kRead});
  }
  const Access write = inst.op == Opcode::kKillRegister ? Access::kUndefine : Access::kDefine;
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    if (format[i] == 'W') out.push_back({static_cast<uint32_t>(inst.operands[i]), write});
  }
  for (size_t i = read_list; has_list && i < inst.list.size(); ++i) {
    out.push_back({static_cast<uint32_t>(inst.list[i]), Access::kDefine});
  }
}

bool EndsBlock(Opcode op) {
  return op == Opcode::kGoto || op == Opcode::kIf || op == Opcode::kRet ||
         op == Opcode::kFatal || op == Opcode::kTailInvoke;
}

// A function's code as the definedness analysis sees it, gathered by FunctionVerifier
// while it checks each instruction.
struct CodeSummary {
  std::vector<uint32_t> pcs;  // the start of each instruction, ascending
  std::vector<Opcode> ops;
  // The accesses of instruction i are accesses[access_begin[i] .. access_begin[i + 1]).
  std::vector<uint32_t> access_begin;
  std::vector<RegisterAccess> accesses;
  // (instruction pc, target pc) of every jump, ascending by pc; an if's two targets in
  // operand order.
  std::vector<std::pair<size_t, int64_t>> jumps;
};

// [RULE defined-before-read] Proves that every register an instruction reads is defined
// on every path from the entry to it: parameters are defined at the entry, a write
// defines its register, kill undefines it.
//
// A forward "must" dataflow over basic blocks (leaders: the entry, jump targets, and the
// instruction after a jump or terminator): one bitset of the registers defined at each
// block's entry, meet = intersection, solved by sweeps over the blocks in code order (in
// which compiled code has only forward jumps and settles in one sweep). Blocks start at
// "not reached" and take their first predecessor's set when reached; unreachable blocks
// are never visited and so not checked: they cannot run.
//
// Both costs are bounded against hostile code: memory by kMaxDefinednessBits, checked
// before the bitsets are allocated; time by kMaxDefinednessSweeps sweeps, each at most
// one visit of every block (sets only shrink, so the sweeps end, but a chain of backward
// jumps can take one sweep per link).
class DefinednessCheck {
 public:
  DefinednessCheck(const Function& func, const CodeSummary& code) : func_(func), code_(code) {}

  absl::Status Run() {
    if (func_.num_registers == 0) return absl::OkStatus();  // nothing to read
    FindBlocks();
    words_ = (func_.num_registers + 63) / 64;
    const uint64_t bits = static_cast<uint64_t>(blocks_.size()) * words_ * 64;
    if (bits > kMaxDefinednessBits) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "too large to verify: %d basic blocks of %d registers need %d bits to track which "
          "registers are defined, above the budget of %d",
          blocks_.size(), func_.num_registers, bits, kMaxDefinednessBits));
    }
    DYNVM_RETURN_IF_ERROR(Solve());
    return CheckReads();
  }

 private:
  struct Block {
    uint32_t first;  // instruction indices [first, end)
    uint32_t end;
    uint32_t num_successors = 0;
    uint32_t successors[2] = {0, 0};
  };

  // The index of the instruction that starts at `pc`, an instruction start.
  uint32_t InstructionAt(int64_t pc) const {
    return static_cast<uint32_t>(
        std::lower_bound(code_.pcs.begin(), code_.pcs.end(), static_cast<uint32_t>(pc)) -
        code_.pcs.begin());
  }

  void FindBlocks() {
    const size_t n = code_.pcs.size();
    std::vector<bool> leader(n, false);
    leader[0] = true;
    for (const auto& [pc, target] : code_.jumps) leader[InstructionAt(target)] = true;
    for (size_t i = 0; i + 1 < n; ++i) {
      if (EndsBlock(code_.ops[i])) leader[i + 1] = true;
    }
    std::vector<uint32_t> block_of(n);
    for (uint32_t i = 0; i < n; ++i) {
      if (leader[i]) {
        if (!blocks_.empty()) blocks_.back().end = i;
        blocks_.push_back(Block{i, 0});
      }
      block_of[i] = static_cast<uint32_t>(blocks_.size() - 1);
    }
    blocks_.back().end = static_cast<uint32_t>(n);
    for (size_t b = 0; b < blocks_.size(); ++b) {
      Block& block = blocks_[b];
      const uint32_t last = block.end - 1;
      switch (code_.ops[last]) {
        case Opcode::kGoto:
        case Opcode::kIf: {
          const size_t pc = code_.pcs[last];
          auto it = std::lower_bound(code_.jumps.begin(), code_.jumps.end(),
                                     std::make_pair(pc, INT64_MIN));
          for (; it != code_.jumps.end() && it->first == pc; ++it) {
            block.successors[block.num_successors++] = block_of[InstructionAt(it->second)];
          }
          break;
        }
        case Opcode::kRet:
        case Opcode::kFatal:
        case Opcode::kTailInvoke: break;
        // The verified last instruction does not fall through, so a next block exists.
        default: block.successors[block.num_successors++] = static_cast<uint32_t>(b + 1);
      }
    }
  }

  // Applies the writes and kills of `block` to `defined`; reads are CheckReads' business.
  void Transfer(const Block& block, uint64_t* defined) const {
    for (uint32_t a = code_.access_begin[block.first]; a < code_.access_begin[block.end]; ++a) {
      const RegisterAccess& access = code_.accesses[a];
      const uint64_t bit = uint64_t{1} << (access.reg % 64);
      if (access.access == Access::kDefine) defined[access.reg / 64] |= bit;
      if (access.access == Access::kUndefine) defined[access.reg / 64] &= ~bit;
    }
  }

  // Fills defined_in_ with the registers defined on every path to each reached block:
  // sweeps over the blocks in code order, each visiting the blocks whose entry set
  // changed. A forward jump's target is visited later in the same sweep, a backward
  // jump's in the next: code with forward jumps only settles in one sweep, a loop nest
  // in about its depth plus one.
  absl::Status Solve() {
    const size_t num_blocks = blocks_.size();
    defined_in_.assign(num_blocks * words_, 0);
    reached_.assign(num_blocks, false);
    for (uint32_t r = 0; r < func_.num_params(); ++r) {
      defined_in_[r / 64] |= uint64_t{1} << (r % 64);
    }
    std::vector<bool> changed(num_blocks, false);
    std::vector<uint64_t> defined(words_);
    reached_[0] = changed[0] = true;
    for (uint64_t sweep = 0;; ++sweep) {
      bool visited = false;
      for (uint32_t b = 0; b < num_blocks; ++b) {
        if (!changed[b]) continue;
        if (sweep == kMaxDefinednessSweeps) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "too costly to verify: which registers are defined does not settle within %d "
              "sweeps over its %d basic blocks",
              kMaxDefinednessSweeps, num_blocks));
        }
        changed[b] = false;
        visited = true;
        const uint64_t* in = &defined_in_[b * words_];
        std::copy(in, in + words_, defined.begin());
        Transfer(blocks_[b], defined.data());
        for (uint32_t k = 0; k < blocks_[b].num_successors; ++k) {
          const uint32_t s = blocks_[b].successors[k];
          if (Meet(s, defined.data())) changed[s] = true;
        }
      }
      if (!visited) return absl::OkStatus();
    }
  }

  // Narrows block `s`'s entry set to the registers also in `defined` (or sets it, when
  // `s` is reached for the first time). Returns whether it changed.
  bool Meet(uint32_t s, const uint64_t* defined) {
    uint64_t* in = &defined_in_[s * words_];
    if (!reached_[s]) {
      reached_[s] = true;
      std::copy(defined, defined + words_, in);
      return true;
    }
    bool changed = false;
    for (size_t w = 0; w < words_; ++w) {
      const uint64_t meet = in[w] & defined[w];
      changed |= meet != in[w];
      in[w] = meet;
    }
    return changed;
  }

  // Walks each reached block from its solved entry set; fails at the first read, in code
  // order, of a register not defined there.
  absl::Status CheckReads() const {
    std::vector<uint64_t> defined(words_);
    for (size_t b = 0; b < blocks_.size(); ++b) {
      if (!reached_[b]) continue;
      const Block& block = blocks_[b];
      std::copy_n(&defined_in_[b * words_], words_, defined.begin());
      for (uint32_t i = block.first; i < block.end; ++i) {
        for (uint32_t a = code_.access_begin[i]; a < code_.access_begin[i + 1]; ++a) {
          const RegisterAccess& access = code_.accesses[a];
          if (access.access != Access::kRead) continue;
          if ((defined[access.reg / 64] >> (access.reg % 64) & 1) == 0) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "instruction %d (%s): reads register %d, which is not defined on every path "
                "to it",
                code_.pcs[i], GetOpcodeInfo(code_.ops[i]).mnemonic, access.reg));
          }
        }
        Transfer(Block{i, i + 1}, defined.data());
      }
    }
    return absl::OkStatus();
  }

  const Function& func_;
  const CodeSummary& code_;
  std::vector<Block> blocks_;
  size_t words_ = 0;                  // uint64 words per register set
  std::vector<uint64_t> defined_in_;  // block b's entry set at [b * words_, (b + 1) * words_)
  std::vector<bool> reached_;
};

class FunctionVerifier {
 public:
  FunctionVerifier(const ExecutableSpec& spec, const Function& func) : spec_(spec), func_(func) {}

  absl::Status Run() {
    if (func_.num_registers < func_.num_params() || func_.num_registers > kMaxRegisters) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "frame of %d registers: needs at least its %d parameters and at most %d",
          func_.num_registers, func_.num_params(), kMaxRegisters));
    }
    DYNVM_RETURN_IF_ERROR(VerifySignature(func_.params, "parameter"));
    DYNVM_RETURN_IF_ERROR(VerifySignature(func_.results, "result"));
    if (func_.results.size() > 1) {
      return absl::InvalidArgumentError("a function returns one value (a tuple for several)");
    }
    if (func_.code.empty()) return absl::InvalidArgumentError("empty code");
    std::vector<bool> starts(func_.code.size(), false);
    CodeSummary summary;
    std::vector<std::pair<size_t, int64_t>>& jumps = summary.jumps;
    Opcode last = Opcode::kMove;
    for (size_t pc = 0; pc < func_.code.size();) {
      starts[pc] = true;
      absl::StatusOr<Instruction> inst = DecodeInstruction(func_.code, pc);
      if (!inst.ok()) return inst.status();
      absl::Status status = CheckInstruction(*inst, pc, jumps);
      if (!status.ok()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "instruction %d (%s): %s", pc, GetOpcodeInfo(inst->op).mnemonic, status.message()));
      }
      summary.pcs.push_back(static_cast<uint32_t>(pc));
      summary.ops.push_back(inst->op);
      summary.access_begin.push_back(static_cast<uint32_t>(summary.accesses.size()));
      AppendAccesses(*inst, summary.accesses);
      last = inst->op;
      pc += HeaderLength(func_.code[pc]);
    }
    summary.access_begin.push_back(static_cast<uint32_t>(summary.accesses.size()));
    for (const auto& [pc, target] : jumps) {
      if (target < 0 || static_cast<size_t>(target) >= starts.size() || !starts[target]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("instruction %d: jump target %d is not an instruction", pc, target));
      }
    }
    DYNVM_RETURN_IF_ERROR(CheckSourceMap(starts));
    if (last != Opcode::kRet && last != Opcode::kFatal && last != Opcode::kGoto &&
        last != Opcode::kTailInvoke) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "last instruction (%s) falls off the end of the code: end with ret, fatal, goto "
          "or tail_invoke",
          GetOpcodeInfo(last).mnemonic));
    }
    return DefinednessCheck(func_, summary).Run();
  }

 private:
  // [RULE source-map] Entries name instruction starts in increasing order, and sources
  // in the table.
  absl::Status CheckSourceMap(const std::vector<bool>& starts) const {
    for (size_t i = 0; i < func_.source_map.size(); ++i) {
      const SourceEntry& e = func_.source_map[i];
      if (e.pc >= starts.size() || !starts[e.pc]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("source map entry %d: pc %d is not an instruction", i, e.pc));
      }
      if (i > 0 && e.pc <= func_.source_map[i - 1].pc) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "source map entry %d: pc %d does not follow the previous entry's %d", i, e.pc,
            func_.source_map[i - 1].pc));
      }
      DYNVM_RETURN_IF_ERROR(CheckIndex(e.source, spec_.sources.size(), "source"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckRegister(int64_t reg) const {
    if (reg < 0 || reg >= func_.num_registers) {
      return absl::InvalidArgumentError(
          absl::StrFormat("register %d out of range: frame has %d", reg, func_.num_registers));
    }
    return absl::OkStatus();
  }

  absl::Status CheckIndex(int64_t index, size_t size, std::string_view table) const {
    if (index < 0 || static_cast<size_t>(index) >= size) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s index %d out of range: the table has %d", table, index, size));
    }
    return absl::OkStatus();
  }

  absl::Status CheckInstruction(const Instruction& inst, size_t pc,
                                std::vector<std::pair<size_t, int64_t>>& jumps) const {
    const std::string_view format = GetOpcodeInfo(inst.op).format;
    size_t next = 0;
    for (char letter : format) {
      if (letter == '+') {
        for (int64_t reg : inst.list) DYNVM_RETURN_IF_ERROR(CheckRegister(reg));
        continue;
      }
      if (letter == '#') {
        if (inst.list.size() > static_cast<size_t>(kMaxRank)) {
          return absl::InvalidArgumentError(
              absl::StrFormat("rank %d above the maximum %d", inst.list.size(), kMaxRank));
        }
        for (int64_t dim : inst.list) {
          if (dim < 0) return absl::InvalidArgumentError(absl::StrFormat("negative dim %d", dim));
        }
        continue;
      }
      const int64_t v = inst.operands[next++];
      switch (letter) {
        case 'W':
        case 'R': DYNVM_RETURN_IF_ERROR(CheckRegister(v)); break;
        case 'K': DYNVM_RETURN_IF_ERROR(CheckIndex(v, spec_.constants.size(), "constant")); break;
        case 'F': DYNVM_RETURN_IF_ERROR(CheckIndex(v, spec_.functions.size(), "function")); break;
        case 'P': DYNVM_RETURN_IF_ERROR(CheckIndex(v, spec_.kernels.size(), "kernel")); break;
        case 'D':
          if (!IsValidDType(static_cast<uint32_t>(v))) {
            return absl::InvalidArgumentError(absl::StrFormat("invalid dtype %d", v));
          }
          break;
        case 'J': jumps.emplace_back(pc, static_cast<int64_t>(pc) + v); break;
        default: break;  // I and L: checked per opcode below
      }
    }
    return CheckSemantics(inst);
  }

  // Rules that tie operands to the tables they index.
  absl::Status CheckSemantics(const Instruction& inst) const {
    const auto& ops = inst.operands;
    switch (inst.op) {
      case Opcode::kFatal:
        if (spec_.constants[ops[0]].As<StringObj>() == nullptr) {
          return absl::InvalidArgumentError(
              absl::StrFormat("constant %d is a %s, expected a string message", ops[0],
                              spec_.constants[ops[0]].TypeName()));
        }
        break;
      case Opcode::kInvoke:
      case Opcode::kTailInvoke: {
        const Function& callee = spec_.functions[ops[inst.op == Opcode::kInvoke ? 1 : 0]];
        if (inst.list.size() != callee.num_params()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "calls '%s' with %d arguments, it takes %d", callee.name, inst.list.size(),
              callee.num_params()));
        }
        break;
      }
      case Opcode::kAllocClosure: {
        const Function& callee = spec_.functions[ops[1]];
        if (inst.list.size() > callee.num_params()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "captures %d values for '%s', which takes %d parameters", inst.list.size(),
              callee.name, callee.num_params()));
        }
        break;
      }
      case Opcode::kInvokePacked:
      case Opcode::kInvokeShapeFn: {
        const KernelEntry& entry = spec_.kernels[ops[0]];
        if (ops[1] != entry.num_outputs ||
            inst.list.size() != static_cast<size_t>(entry.num_inputs) + entry.num_outputs) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "kernel '%s' takes %d inputs and %d outputs, the call passes %d arguments with "
              "%d outputs",
              entry.name, entry.num_inputs, entry.num_outputs, inst.list.size(), ops[1]));
        }
        break;
      }
      case Opcode::kAllocTensor:
        if (ops[2] < 0) {
          return absl::InvalidArgumentError(absl::StrFormat("negative offset %d", ops[2]));
        }
        break;
      case Opcode::kDim:
        if (ops[2] >= kMaxRank) {
          return absl::InvalidArgumentError(
              absl::StrFormat("axis %d above the maximum rank %d", ops[2], kMaxRank));
        }
        break;
      case Opcode::kDeviceCopy:
        if (ops[2] != kCpuDevice || ops[3] != kCpuDevice) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "device types %d -> %d: only the CPU (1) is available", ops[2], ops[3]));
        }
        break;
      default: break;
    }
    return absl::OkStatus();
  }

  const ExecutableSpec& spec_;
  const Function& func_;
};

absl::Status VerifyConstants(const ExecutableSpec& spec) {
  for (size_t i = 0; i < spec.constants.size(); ++i) {
    const Value& c = spec.constants[i];
    if (c.is_none() || (c.is_object() && c.As<NDArrayObj>() == nullptr &&
                        c.As<StringObj>() == nullptr)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "constant %d is a %s: expected a tensor, string, int, float or bool", i, c.TypeName()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyExecutable(const ExecutableSpec& spec) {
  DYNVM_RETURN_IF_ERROR(VerifyConstants(spec));
  absl::flat_hash_set<std::string> names;
  for (const KernelEntry& entry : spec.kernels) {
    if (entry.num_inputs > 1024 || entry.num_outputs > 1024) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel '%s' declares %d inputs and %d outputs", entry.name, entry.num_inputs,
          entry.num_outputs));
    }
  }
  for (const Function& func : spec.functions) {
    if (!names.insert(func.name).second) {
      return absl::InvalidArgumentError(absl::StrFormat("function '%s' defined twice", func.name));
    }
    absl::Status status = FunctionVerifier(spec, func).Run();
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("function '%s': %s", func.name, status.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace dynvm::vm
