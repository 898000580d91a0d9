// The assembly notation the assembler and disassembler share
// (tools/asm/internal/syntax.h).
#include "tools/asm/internal/syntax.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace dynvm::tools::internal {
bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

bool IsBareName(std::string_view name) {
  if (name.empty() || name == "inf" || name == "nan") return false;
  if ((name[0] >= '0' && name[0] <= '9') || name[0] == '.') return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

std::string FormatName(std::string_view name) {
  return IsBareName(name) ? std::string(name) : QuoteString(name);
}

bool HasFloatImmediate(vm::Opcode op) { return op == vm::Opcode::kLoadConstf; }

std::string Usage(vm::Opcode op) {
  const vm::OpcodeInfo& info = vm::GetOpcodeInfo(op);
  std::string out(info.mnemonic);
  std::string_view separator = " ";
  for (char letter : info.format) {
    std::string_view placeholder;
    switch (letter) {
      case 'W': placeholder = "%dst"; break;
      case 'R': placeholder = "%src"; break;
      case 'I': placeholder = "uint"; break;
      case 'J': placeholder = "label"; break;
      case 'K': placeholder = "const"; break;
      case 'F': placeholder = "@func"; break;
      case 'P': placeholder = "kernel"; break;
      case 'D': placeholder = "dtype"; break;
      case 'L': placeholder = HasFloatImmediate(op) ? "float" : "int"; break;
      case '+': placeholder = "(%src, ...)"; break;
      case '#': placeholder = "[int, ...]"; break;
    }
    out += separator;
    out += placeholder;
    separator = ", ";
  }
  return out;
}

}  // namespace dynvm::tools::internal
