// The notation of the dynvm assembly text (docs/assembly.md) that the assembler and the
// disassembler share: which names go bare, how strings are quoted, how floats are
// written so that they read back bit for bit, and how each opcode's operands are spelled.
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
#include "vm/bytecode.h"

namespace dynvm::tools::internal {

// Whether `c` may continue a bare name ([A-Za-z0-9_.]).
bool IsNameChar(char c);
// The value of the hex digit `c` (either case), or -1 if it is not one.
int HexDigitValue(char c);
// Whether `name` can be written without quotes: [A-Za-z_][A-Za-z0-9_.]*, other than the
// float keywords `inf` and `nan`.
bool IsBareName(std::string_view name);
// `s` in double quotes, with `"`, `\` and every byte outside printable ASCII escaped
// (\n, \t, \r, else \xHH), so that any bytes survive.
std::string QuoteString(std::string_view s);
// `name` bare when IsBareName(name), else quoted.
std::string FormatName(std::string_view name);

// The shortest text that reads back to exactly `v`, always recognisable as a float: it
// contains a '.' or an exponent, or is `inf`, `-inf`, `nan`, `-nan`, or, for a NaN
// other than the default quiet one, `nan:0x<fraction bits>` (WebAssembly's notation).
std::string FormatDouble(double v);
// Parses a float literal as FormatDouble writes it, or any decimal or integer literal.
// InvalidArgument naming `text` if it is malformed.
absl::StatusOr<double> ParseDouble(std::string_view text);
// Parses a decimal or `0x` hexadecimal integer with an optional '-'. InvalidArgument
// naming `text` if it is malformed or outside int64.
absl::StatusOr<int64_t> ParseInt(std::string_view text);

// Whether the 'L' operand of `op` holds a float64's bits, written as a float literal
// (load_constf), rather than an int64.
bool HasFloatImmediate(vm::Opcode op);
// How `op` is written, one placeholder per operand of its format in vm/opcodes.def:
// "alloc_tensor %dst, %src, int, dtype, [int, ...]".
std::string Usage(vm::Opcode op);

}  // namespace dynvm::tools::internal

#endif  // DYNVM_TOOLS_ASM_INTERNAL_SYNTAX_H_
