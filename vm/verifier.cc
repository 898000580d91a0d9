#include "vm/verifier.h"

#include <string>
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
    std::vector<std::pair<size_t, int64_t>> jumps;  // (instruction, target)
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
      last = inst->op;
      pc += HeaderLength(func_.code[pc]);
    }
    for (const auto& [pc, target] : jumps) {
      if (target < 0 || static_cast<size_t>(target) >= starts.size() || !starts[target]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("instruction %d: jump target %d is not an instruction", pc, target));
      }
    }
    if (last != Opcode::kRet && last != Opcode::kFatal && last != Opcode::kGoto &&
        last != Opcode::kTailInvoke) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "last instruction (%s) falls off the end of the code: end with ret, fatal, goto "
          "or tail_invoke",
          GetOpcodeInfo(last).mnemonic));
    }
    return absl::OkStatus();
  }

 private:
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
