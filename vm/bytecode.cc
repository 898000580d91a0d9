// Instruction encoding and decoding over the opcode table (vm/bytecode.h).
#include "vm/bytecode.h"

#include <algorithm>
#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace dynvm::vm {
namespace {

constexpr std::array<OpcodeInfo, kNumOpcodes> kOpcodes = {{
#define DYNVM_OPCODE(name, mnemonic, format, meaning) {mnemonic, format, meaning},
#include "vm/opcodes.def"
#undef DYNVM_OPCODE
}};

bool IsList(char letter) { return letter == '+' || letter == '#'; }
int Words(char letter) { return letter == 'L' ? 2 : 1; }

}  // namespace

const OpcodeInfo& GetOpcodeInfo(Opcode op) { return kOpcodes[static_cast<size_t>(op)]; }

absl::StatusOr<Opcode> OpcodeFromMnemonic(std::string_view mnemonic) {
  for (size_t i = 0; i < kOpcodes.size(); ++i) {
    if (kOpcodes[i].mnemonic == mnemonic) return static_cast<Opcode>(i);
  }
  return absl::NotFoundError(absl::StrFormat("unknown instruction '%s'", mnemonic));
}

absl::StatusOr<Instruction> DecodeInstruction(absl::Span<const uint32_t> code, size_t pc) {
  if (pc >= code.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("instruction at %d starts past the end of the code (%d words)", pc,
                        code.size()));
  }
  const uint32_t header = code[pc];
  if (HeaderOpcode(header) >= static_cast<uint32_t>(kNumOpcodes)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown opcode %d at %d", HeaderOpcode(header), pc));
  }
  Instruction inst;
  inst.op = static_cast<Opcode>(HeaderOpcode(header));
  const OpcodeInfo& info = GetOpcodeInfo(inst.op);
  const size_t length = HeaderLength(header);
  if (length == 0 || length > code.size() - pc) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s at %d: length %d runs past the end of the code (%d words)", info.mnemonic, pc,
        length, code.size()));
  }
  auto end_error = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s at %d: operands do not fit in its length %d", info.mnemonic, pc, length));
  };
  size_t at = pc + 1;
  const size_t end = pc + length;
  auto read64 = [&] {
    uint64_t lo = code[at], hi = code[at + 1];
    at += 2;
    return static_cast<int64_t>(lo | (hi << 32));
  };
  for (char letter : info.format) {
    if (IsList(letter)) {
      if (at >= end) return end_error();
      const size_t count = code[at++];
      const size_t words = count * (letter == '#' ? 2 : 1);
      if (count > end - at || words > end - at) return end_error();
      inst.list.reserve(count);
      for (size_t i = 0; i < count; ++i) {
        inst.list.push_back(letter == '#' ? read64() : static_cast<int64_t>(code[at++]));
      }
      continue;
    }
    if (static_cast<size_t>(Words(letter)) > end - at) return end_error();
    if (letter == 'L') {
      inst.operands.push_back(read64());
    } else if (letter == 'J') {
      inst.operands.push_back(static_cast<int32_t>(code[at++]));
    } else {
      inst.operands.push_back(code[at++]);
    }
  }
  if (at != end) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s at %d: header length %d but operands take %d words", info.mnemonic, pc, length,
        at - pc));
  }
  return inst;
}

absl::Status EncodeInstruction(const Instruction& inst, std::vector<uint32_t>* code) {
  if (static_cast<int>(inst.op) >= kNumOpcodes) {
    return absl::InvalidArgumentError("unknown opcode");
  }
  const OpcodeInfo& info = GetOpcodeInfo(inst.op);
  const size_t start = code->size();
  code->push_back(0);  // header, patched below
  size_t next = 0;
  bool has_list = false;
  auto push64 = [&](int64_t v) {
    code->push_back(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    code->push_back(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
  };
  for (char letter : info.format) {
    if (IsList(letter)) {
      has_list = true;
      code->push_back(static_cast<uint32_t>(inst.list.size()));
      for (int64_t v : inst.list) {
        if (letter == '#') {
          push64(v);
        } else if (v < 0 || v > UINT32_MAX) {
          code->resize(start);
          return absl::InvalidArgumentError(
              absl::StrFormat("%s: register %d out of range", info.mnemonic, v));
        } else {
          code->push_back(static_cast<uint32_t>(v));
        }
      }
      continue;
    }
    if (next >= inst.operands.size()) {
      code->resize(start);
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s takes %d operands, got %d", info.mnemonic,
          std::count_if(info.format.begin(), info.format.end(), [](char c) { return !IsList(c); }),
          inst.operands.size()));
    }
    const int64_t v = inst.operands[next++];
    if (letter == 'L') {
      push64(v);
    } else if (letter == 'J' ? (v < INT32_MIN || v > INT32_MAX) : (v < 0 || v > UINT32_MAX)) {
      code->resize(start);
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: operand %d value %d does not fit in 32 bits", info.mnemonic,
                          next - 1, v));
    } else {
      code->push_back(static_cast<uint32_t>(v));
    }
  }
  if (next != inst.operands.size() || (!has_list && !inst.list.empty())) {
    code->resize(start);
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d operands given, format '%s' takes %d", info.mnemonic, inst.operands.size(),
        info.format, next));
  }
  const size_t length = code->size() - start;
  if (length > kMaxInstructionWords) {
    code->resize(start);
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: instruction of %d words is too long", info.mnemonic, length));
  }
  (*code)[start] = MakeHeader(inst.op, static_cast<uint32_t>(length));
  return absl::OkStatus();
}

}  // namespace dynvm::vm
