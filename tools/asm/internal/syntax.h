// The notation of the dynvm assembly text (docs/assembly.md) that the assembler and the
// disassembler share: which names go bare and how each opcode's operands are spelled;
// strings and numbers are written as base/literals.h writes them.
// Keeping both directions here is what makes `vm_dis x.fbs | vm_as -` reproduce x.fbs.
//
//   FormatDouble(1.0)           == "1.0"          // always marked as a float
//   FormatDouble(0.1)           == "0.1"          // shortest text that reads back exactly
//   ParseDouble("nan:0x1")                        // a NaN with payload 1
//   FormatName("input.1")       == "input.1"
//   FormatName("onnx::Gemm_0")  == "\"onnx::Gemm_0\""
//   Usage(Opcode::kMove)        == "move %dst, %src"
#ifndef DYNVM_TOOLS_ASM_INTERNAL_SYNTAX_H_
#define DYNVM_TOOLS_ASM_INTERNAL_SYNTAX_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "base/literals.h"
#include "vm/bytecode.h"

namespace dynvm::tools::internal {

// Whether `c` may continue a bare name ([A-Za-z0-9_.]).
bool IsNameChar(char c);
// Whether `name` can be written without quotes: [A-Za-z_][A-Za-z0-9_.]*, other than the
// float keywords `inf` and `nan`.
bool IsBareName(std::string_view name);
// `name` bare when IsBareName(name), else quoted.
std::string FormatName(std::string_view name);


// Whether the 'L' operand of `op` holds a float64's bits, written as a float literal
// (load_constf), rather than an int64.
bool HasFloatImmediate(vm::Opcode op);
// How `op` is written, one placeholder per operand of its format in vm/opcodes.def:
// "alloc_tensor %dst, %src, int, dtype, [int, ...]".
std::string Usage(vm::Opcode op);

}  // namespace dynvm::tools::internal

#endif  // DYNVM_TOOLS_ASM_INTERNAL_SYNTAX_H_
