// The disassembler: prints an ExecutableSpec as dynvm assembly text (docs/assembly.md)
// that the assembler reads back to the same spec, so that
// `vm_dis x.fbs | vm_as - -o y.fbs` rewrites x.fbs byte for byte.
//
// The spec has no names for constants and kernel-table entries, so the text invents
// stable ones: constants are c0, c1, ...; a kernel entry is named after its kernel
// (`add`, then `add_1`, `add_2` for repeats). Jump targets get labels L0, L1, ... in
// code order. Tensor constants are printed inline as hex bytes.
//
//   std::string text = Disassemble(spec);
//   // .producer "dynvm"
//   // .kernel add = "add" (2 -> 1)
//   // .func @main(x: tensor f32[n], y: tensor f32[n]) -> (tensor f32[n]) regs 4
//   //   ...
#ifndef DYNVM_TOOLS_ASM_DISASSEMBLER_H_
#define DYNVM_TOOLS_ASM_DISASSEMBLER_H_

#include <string>

#include "vm/executable.h"

namespace dynvm::tools {

// The text of `spec`. Total: a spec that would not verify still prints, and reads back
// to itself, with code that does not decode as `.word` lines, jumps that land inside an
// instruction as numeric offsets, and out-of-range indices and invalid dtypes as
// numbers. Two things have no text form and make the assembler stop: functions that
// share a name, and constants other than tensors, strings, ints, floats and bools (which
// no valid executable holds).
std::string Disassemble(const vm::ExecutableSpec& spec);

// The opcode table of vm/opcodes.def, one opcode a line: number, how it is written,
// and what it does. Printed by `vm_dis --opcodes`.
std::string FormatOpcodeTable();

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_ASM_DISASSEMBLER_H_
