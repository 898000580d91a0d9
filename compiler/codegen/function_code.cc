// FunctionCode (compiler/codegen/function_code.h): building the unpacked
// instruction list, its basic blocks, and encoding it into bytecode words.
#include "compiler/codegen/function_code.h"

#include <string_view>
#include <utility>

#include "base/status_macros.h"

namespace dynvm::compiler {
namespace {

using vm::Instruction;
using vm::Opcode;

// The fixed letters of `op`'s format (the variadic marker excluded).
std::string_view FixedLetters(Opcode op) {
  std::string_view format = vm::GetOpcodeInfo(op).format;
  if (!format.empty() && (format.back() == '+' || format.back() == '#')) format.remove_suffix(1);
  return format;
}

bool HasRegisterList(Opcode op) { return vm::GetOpcodeInfo(op).format.back() == '+'; }

// How many registers at the end of the list `inst` writes.
size_t WrittenListTail(const Instruction& inst) {
  return inst.op == Opcode::kInvokeShapeFn ? static_cast<size_t>(inst.operands[1]) : 0;
}

}  // namespace

std::vector<uint32_t> UsedRegisters(const Instruction& inst) {
  std::vector<uint32_t> used;
  const std::string_view letters = FixedLetters(inst.op);
  for (size_t i = 0; i < letters.size(); ++i) {
    if (letters[i] == 'R') used.push_back(static_cast<uint32_t>(inst.operands[i]));
  }
  if (HasRegisterList(inst.op)) {
    const size_t read = inst.list.size() - WrittenListTail(inst);
    for (size_t i = 0; i < read; ++i) used.push_back(static_cast<uint32_t>(inst.list[i]));
  }
  return used;
}

std::vector<uint32_t> DefinedRegisters(const Instruction& inst) {
  std::vector<uint32_t> defined;
  const std::string_view letters = FixedLetters(inst.op);
  for (size_t i = 0; i < letters.size(); ++i) {
    if (letters[i] == 'W') defined.push_back(static_cast<uint32_t>(inst.operands[i]));
  }
  if (HasRegisterList(inst.op)) {
    for (size_t i = inst.list.size() - WrittenListTail(inst); i < inst.list.size(); ++i) {
      defined.push_back(static_cast<uint32_t>(inst.list[i]));
    }
  }
  return defined;
}

void ForEachRegister(Instruction& inst, const std::function<void(int64_t&)>& f) {
  const std::string_view letters = FixedLetters(inst.op);
  for (size_t i = 0; i < letters.size(); ++i) {
    if (letters[i] == 'R' || letters[i] == 'W') f(inst.operands[i]);
  }
  if (HasRegisterList(inst.op)) {
    for (int64_t& r : inst.list) f(r);
  }
}

std::vector<size_t> Successors(const FunctionCode& f, size_t at) {
  const Instruction& inst = f.code[at];
  switch (inst.op) {
    case Opcode::kRet:
    case Opcode::kFatal:
    case Opcode::kTailInvoke: return {};
    case Opcode::kGoto: return {static_cast<size_t>(inst.operands[0])};
    case Opcode::kIf:
      return {static_cast<size_t>(inst.operands[1]), static_cast<size_t>(inst.operands[2])};
    default: return {at + 1};
  }
}

bool IsPure(Opcode op) {
  switch (op) {
    case Opcode::kMove:
    case Opcode::kLoadConst:
    case Opcode::kLoadConsti:
    case Opcode::kLoadConstf:
    case Opcode::kAllocStorage:
    case Opcode::kAllocTensor:
    case Opcode::kAllocTensorReg:
    case Opcode::kAllocADT:
    case Opcode::kAllocClosure:
    case Opcode::kShapeOf:
    case Opcode::kDim:
    case Opcode::kMakeShape:
    case Opcode::kAddI:
    case Opcode::kMulI:
    case Opcode::kMinI:
    case Opcode::kMaxI:
    case Opcode::kEqI:
    case Opcode::kNeI:
    case Opcode::kLtI:
    case Opcode::kLeI: return true;
    // Their failures (an allocation too large, overflow of shape arithmetic) only matter
    // for a result someone reads (dim of a parameter reads an extent the signature or
    // the types guarantee). get_field, divi and modi stay: they check what
    // the program computed (an index, a zero divisor), and calls have effects.
    default: return false;
  }
}

void Rewrite(FunctionCode& f, const std::vector<bool>& keep,
             std::vector<std::vector<Instruction>> before) {
  const size_t n = f.code.size();
  before.resize(n + 1);
  std::vector<Instruction> out;
  std::vector<uint32_t> sources;
  std::vector<size_t> new_index(n + 1);
  for (size_t i = 0; i <= n; ++i) {
    new_index[i] = out.size();
    for (Instruction& inst : before[i]) out.push_back(std::move(inst));
    sources.resize(out.size(), kNoSource);
    if (i < n && (keep.empty() || keep[i])) {
      out.push_back(std::move(f.code[i]));
      sources.push_back(i < f.sources.size() ? f.sources[i] : kNoSource);
    }
  }
  for (Instruction& inst : out) {
    if (inst.op == Opcode::kGoto) inst.operands[0] = static_cast<int64_t>(new_index[inst.operands[0]]);
    if (inst.op == Opcode::kIf) {
      inst.operands[1] = static_cast<int64_t>(new_index[inst.operands[1]]);
      inst.operands[2] = static_cast<int64_t>(new_index[inst.operands[2]]);
    }
  }
  f.code = std::move(out);
  f.sources = std::move(sources);
}

absl::StatusOr<std::vector<uint32_t>> Encode(const FunctionCode& f, std::vector<vm::SourceEntry>* source_map) {
  // Every instruction's length is fixed by its operand count, not by the values of its
  // offsets, so positions can be measured before the offsets are known.
  std::vector<int64_t> position;
  std::vector<uint32_t> scratch;
  int64_t words = 0;
  for (const Instruction& inst : f.code) {
    position.push_back(words);
    scratch.clear();
    DYNVM_RETURN_IF_ERROR(vm::EncodeInstruction(inst, &scratch));
    words += static_cast<int64_t>(scratch.size());
  }
  position.push_back(words);
  if (source_map != nullptr) {
    source_map->clear();
    for (size_t i = 0; i < f.code.size() && i < f.sources.size(); ++i) {
      if (f.sources[i] != kNoSource) source_map->push_back({static_cast<uint32_t>(position[i]), f.sources[i]});
    }
  }
  std::vector<uint32_t> code;
  for (size_t i = 0; i < f.code.size(); ++i) {
    Instruction inst = f.code[i];
    if (inst.op == Opcode::kGoto) inst.operands[0] = position[inst.operands[0]] - position[i];
    if (inst.op == Opcode::kIf) {
      inst.operands[1] = position[inst.operands[1]] - position[i];
      inst.operands[2] = position[inst.operands[2]] - position[i];
    }
    DYNVM_RETURN_IF_ERROR(vm::EncodeInstruction(inst, &code));
  }
  return code;
}

}  // namespace dynvm::compiler
