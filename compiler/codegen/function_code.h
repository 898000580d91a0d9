// A function's bytecode between generation and encoding, in the form the bytecode passes
// (memory planning, register allocation) rewrite: a list of unpacked instructions whose
// jump operands are instruction indices, not word offsets, so that instructions can be
// inserted and removed. Encode turns the indices into the VM's relative word offsets.
//
// What each instruction reads and writes comes from its format in vm/opcodes.def, with
// one exception the format cannot say: invoke_shape_fn writes the last B registers of
// its list. invoke_packed's outputs are read (the tensors exist; the kernel fills them).
#ifndef DYNVM_COMPILER_CODEGEN_FUNCTION_CODE_H_
#define DYNVM_COMPILER_CODEGEN_FUNCTION_CODE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "vm/bytecode.h"
#include "vm/executable_spec.h"

namespace dynvm::compiler {

// FunctionCode::sources' entry for an instruction of no known source.
inline constexpr uint32_t kNoSource = UINT32_MAX;

struct FunctionCode {
  // Jump operands (J) hold the index of the target instruction; code.size() is the end.
  std::vector<vm::Instruction> code;
  // Registers 0..num_params-1 hold the arguments on entry.
  uint32_t num_params = 0;
  uint32_t num_registers = 0;
  // Per instruction, where it comes from: an index into the executable's sources, or
  // kNoSource. As long as `code`, or shorter when the rest have none.
  std::vector<uint32_t> sources = {};
};

// The registers `inst` reads, in operand order (a register read twice appears twice).
std::vector<uint32_t> UsedRegisters(const vm::Instruction& inst);
// The registers `inst` writes.
std::vector<uint32_t> DefinedRegisters(const vm::Instruction& inst);
// Calls `f` on every register operand of `inst` (read or written), which it may change.
void ForEachRegister(vm::Instruction& inst, const std::function<void(int64_t&)>& f);

// The instructions control may reach after instruction `at`: the next one, the jump
// targets, or none (ret, fatal, tail_invoke).
std::vector<size_t> Successors(const FunctionCode& f, size_t at);
// Whether `op` computes its results from its operands alone, so that an instruction
// whose results nobody reads may go (constants, shape arithmetic, allocation).
bool IsPure(vm::Opcode op);

// Rebuilds `f.code` keeping the instructions `keep` selects, with `before[i]` inserted in
// front of instruction i (and before[code.size()] at the end); jumps to i land on the
// first instruction inserted before it. `keep` and `before` may be empty (keep all,
// insert nothing). Kept instructions keep their sources; inserted ones have none.
void Rewrite(FunctionCode& f, const std::vector<bool>& keep,
             std::vector<std::vector<vm::Instruction>> before);

// The VM's encoding of `f`, jump indices turned into relative word offsets; and, into
// `source_map` if given, an entry for each instruction with a source.
absl::StatusOr<std::vector<uint32_t>> Encode(const FunctionCode& f,
                                             std::vector<vm::SourceEntry>* source_map = nullptr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_CODEGEN_FUNCTION_CODE_H_
