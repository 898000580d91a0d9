// The dynvm instruction encoding.
//
// A function's code is a flat array of 32-bit words. Each instruction is a header word
// followed by its operands, one word each (two for 64-bit immediates):
//
//    31                        8 7          0
//   +---------------------------+------------+
//   |  length in words (24 bit) | opcode (8) |   header
//   +---------------------------+------------+
//   |                operand A               |   register, index, immediate...
//   +----------------------------------------+
//   |                operand B               |
//   +----------------------------------------+
//   |   ...   variadic: count N, then N words |
//   +----------------------------------------+
//
//   e.g.  addi r3, r1, r2          ->  [4<<8 | AddI] [3] [1] [2]
//         invoke r0, @f, (r1, r2)  ->  [6<<8 | Invoke] [0] [f] [2] [1] [2]
//
// The length in the header lets tools skip an instruction without knowing it; the
// verifier checks it equals what the operand format implies. Jump offsets are in words,
// relative to the start of the jumping instruction. There are no pointers or owned
// arrays inside instructions: code can be mmapped, copied and compared as bytes.
//
// The opcodes and their operand formats are one table, vm/opcodes.def.
#ifndef DYNVM_VM_BYTECODE_H_
#define DYNVM_VM_BYTECODE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace dynvm::vm {

enum class Opcode : uint8_t {
#define DYNVM_OPCODE(name, mnemonic, format, meaning) k##name,
#include "vm/opcodes.def"
#undef DYNVM_OPCODE
  kNumOpcodes,
};

// kFormat<Opcode::kAddI> == "WRR": the operand format as a compile-time constant.
namespace internal {
#define DYNVM_OPCODE(name, mnemonic, format, meaning) \
  inline constexpr std::string_view kFormat##name = format;
#include "vm/opcodes.def"
#undef DYNVM_OPCODE
}  // namespace internal
inline constexpr int kNumOpcodes = static_cast<int>(Opcode::kNumOpcodes);

struct OpcodeInfo {
  std::string_view mnemonic;
  std::string_view format;   // letters of vm/opcodes.def
  std::string_view meaning;
};

// Row `op` of vm/opcodes.def; `op` must be below kNumOpcodes.
const OpcodeInfo& GetOpcodeInfo(Opcode op);
// The opcode named `mnemonic`, or NotFound.
absl::StatusOr<Opcode> OpcodeFromMnemonic(std::string_view mnemonic);

// The length in words of an instruction with opcode `op` when its format has no
// variadic list, else 0. Lets the interpreter advance pc by a constant.
constexpr uint32_t FixedLength(std::string_view format) {
  uint32_t words = 1;
  for (char letter : format) {
    if (letter == '+' || letter == '#') return 0;
    words += letter == 'L' ? 2 : 1;
  }
  return words;
}

inline constexpr uint32_t kMaxInstructionWords = (1u << 24) - 1;
inline uint32_t MakeHeader(Opcode op, uint32_t length) {
  return static_cast<uint32_t>(op) | (length << 8);
}
inline uint32_t HeaderOpcode(uint32_t header) { return header & 0xff; }
inline uint32_t HeaderLength(uint32_t header) { return header >> 8; }

// An instruction unpacked for tools (assembler, disassembler, verifier). The
// interpreter reads the words directly.
struct Instruction {
  Opcode op = Opcode::kMove;
  // One value per fixed letter of the format, in order: registers, indices and dtypes
  // as their unsigned value, J as its signed offset, L as the int64.
  std::vector<int64_t> operands;
  // The variadic list of a '+' (registers) or '#' (int64 immediates) format.
  std::vector<int64_t> list;
};

// Decodes the instruction at `pc` in `code`. Fails with InvalidArgument if the opcode is
// unknown, the instruction runs past the end of `code`, or its header length disagrees
// with its format.
absl::StatusOr<Instruction> DecodeInstruction(absl::Span<const uint32_t> code, size_t pc);
// Appends the encoding of `inst` to `code`. Fails if the operand count does not match
// the format or a value does not fit its field.
absl::Status EncodeInstruction(const Instruction& inst, std::vector<uint32_t>* code);

}  // namespace dynvm::vm

#endif  // DYNVM_VM_BYTECODE_H_
