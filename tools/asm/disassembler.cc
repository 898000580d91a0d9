// The disassembler (tools/asm/disassembler.h): an ExecutableSpec printed as
// assembly text that reads back to the same spec.
#include "tools/asm/disassembler.h"

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "objects/ndarray.h"
#include "objects/string_object.h"
#include "tools/asm/internal/syntax.h"
#include "vm/bytecode.h"

namespace dynvm::tools {
namespace {

using internal::FormatName;

template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

// A dtype by name, or by number when it is not one (an unverified spec).
std::string DTypeText(int64_t raw) {
  if (raw >= 0 && raw <= UINT32_MAX && IsValidDType(static_cast<uint32_t>(raw))) {
    return std::string(DTypeName(static_cast<DType>(raw)));
  }
  return absl::StrCat(raw);
}

// Kernel entries are named after their kernel, made a bare name and suffixed `_1`,
// `_2`, ... until unique, so the same table always gets the same names.
std::vector<std::string> KernelNames(const std::vector<vm::KernelEntry>& kernels) {
  absl::flat_hash_set<std::string> taken;
  std::vector<std::string> names;
  names.reserve(kernels.size());
  for (const vm::KernelEntry& entry : kernels) {
    std::string base = entry.name;
    std::replace_if(
        base.begin(), base.end(), [](char c) { return !internal::IsNameChar(c); }, '_');
    if (!internal::IsBareName(base)) base = absl::StrCat("k_", base);
    std::string name = base;
    for (int i = 1; !taken.insert(name).second; ++i) name = absl::StrCat(base, "_", i);
    names.push_back(std::move(name));
  }
  return names;
}

void AppendAttrValue(std::string* out, const kernels::AttrValue& value) {
  auto join_doubles = [](const std::vector<double>& v) {
    return absl::StrJoin(v, ", ", [](std::string* s, double d) { *s += FormatDouble(d); });
  };
  std::visit(Overloaded{
                 [&](int64_t v) { absl::StrAppend(out, v); },
                 [&](double v) { *out += FormatDouble(v); },
                 [&](const std::string& v) { *out += QuoteString(v); },
                 [&](const std::vector<int64_t>& v) {
                   absl::StrAppend(out, "[", absl::StrJoin(v, ", "), "]");
                 },
                 // `[]` alone reads as an empty int list.
                 [&](const std::vector<double>& v) {
                   absl::StrAppend(out, v.empty() ? "f64[" : "[", join_doubles(v), "]");
                 },
             },
             value);
}

void AppendKernel(std::string* out, const vm::KernelEntry& entry, const std::string& name) {
  absl::StrAppend(out, ".kernel ", name, " = ", QuoteString(entry.name), " (", entry.num_inputs,
                  " -> ", entry.num_outputs, ")");
  if (!entry.attrs.empty()) {
    const char* separator = " {";
    for (const auto& [key, value] : entry.attrs) {
      absl::StrAppend(out, separator, FormatName(key), " = ");
      AppendAttrValue(out, value);
      separator = ", ";
    }
    *out += "}";
  }
  *out += "\n";
}

void AppendHex(std::string* out, const NDArrayObj& tensor) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const uint8_t*>(tensor.data());
  const size_t start = out->size();
  out->resize(start + 2 * tensor.nbytes());
  char* hex = out->data() + start;
  for (size_t i = 0; i < tensor.nbytes(); ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 15];
  }
}

void AppendConstant(std::string* out, size_t index, const Value& value) {
  absl::StrAppend(out, ".const c", index, " = ");
  if (value.is_int()) {
    absl::StrAppend(out, "int ", value.int_value());
  } else if (value.is_float()) {
    absl::StrAppend(out, "float ", FormatDouble(value.float_value()));
  } else if (value.is_bool()) {
    absl::StrAppend(out, "bool ", value.bool_value() ? "true" : "false");
  } else if (const StringObj* s = value.As<StringObj>()) {
    absl::StrAppend(out, "string ", QuoteString(s->value()));
  } else if (const NDArrayObj* t = value.As<NDArrayObj>()) {
    absl::StrAppend(out, "tensor ", DTypeText(static_cast<int64_t>(t->dtype())),
                    ShapeToString(t->shape()), " hex \"");
    AppendHex(out, *t);
    *out += "\"";
  } else {
    // No text form: the assembler stops at this line rather than invent a value.
    absl::StrAppend(out, "unsupported ", QuoteString(value.TypeName()));
  }
  *out += "\n";
}

// Only tensors use a dtype and dims, but the file keeps them for every kind, so they
// are printed whenever they differ from what the assembler would fill in.
void AppendSpecShape(std::string* out, const vm::ValueSpec& spec) {
  if (spec.kind != vm::ValueSpec::Kind::kTensor && spec.dtype == DType::kF32 &&
      spec.dims.empty()) {
    return;
  }
  auto dim = [](std::string* s, const vm::DimSpec& d) {
    if (d.extent != -1) {
      absl::StrAppend(s, d.extent);
    } else {
      *s += d.symbol.empty() ? "?" : FormatName(d.symbol);
    }
  };
  absl::StrAppend(out, " ", DTypeText(static_cast<int64_t>(spec.dtype)), "[",
                  absl::StrJoin(spec.dims, ", ", dim), "]");
}

void AppendSignature(std::string* out, const std::vector<vm::ValueSpec>& specs);

// [NAME: ] KIND [DTYPE[DIMS]] [(FIELDS)], as the assembler reads it.
void AppendValueSpec(std::string* out, const vm::ValueSpec& spec) {
  if (!spec.name.empty()) absl::StrAppend(out, FormatName(spec.name), ": ");
  switch (spec.kind) {
    case vm::ValueSpec::Kind::kAny: *out += "any"; break;
    case vm::ValueSpec::Kind::kInt: *out += "int"; break;
    case vm::ValueSpec::Kind::kFloat: *out += "float"; break;
    case vm::ValueSpec::Kind::kBool: *out += "bool"; break;
    case vm::ValueSpec::Kind::kTensor: *out += "tensor"; break;
    case vm::ValueSpec::Kind::kTuple: *out += "tuple"; break;
    default: *out += "unknown"; return;  // an unverified spec; the assembler rejects it
  }
  AppendSpecShape(out, spec);
  if (spec.kind == vm::ValueSpec::Kind::kTuple) AppendSignature(out, spec.fields);
}

void AppendSignature(std::string* out, const std::vector<vm::ValueSpec>& specs) {
  *out += "(";
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i > 0) *out += ", ";
    AppendValueSpec(out, specs[i]);
  }
  *out += ")";
}

// A unit of code: a decoded instruction, or one raw word where decoding failed.
struct CodeItem {
  uint32_t offset = 0;
  std::optional<vm::Instruction> inst;
};

// Decodes `code` into items. From the first word that does not decode on, every word is
// a raw item; `*error` says why (empty when all of it decoded).
std::vector<CodeItem> DecodeItems(const std::vector<uint32_t>& code, std::string* error) {
  std::vector<CodeItem> items;
  for (size_t pc = 0; pc < code.size();) {
    absl::StatusOr<vm::Instruction> inst = vm::DecodeInstruction(code, pc);
    if (!inst.ok()) {
      *error = std::string(inst.status().message());
      for (; pc < code.size(); ++pc) items.push_back({static_cast<uint32_t>(pc), std::nullopt});
      break;
    }
    items.push_back({static_cast<uint32_t>(pc), *std::move(inst)});
    pc += vm::HeaderLength(code[pc]);
  }
  return items;
}

// Labels L0, L1, ... in code order for every jump target that starts an item or is
// the end of the code; other targets stay numeric.
std::map<int64_t, std::string> JumpLabels(const std::vector<CodeItem>& items, size_t code_size) {
  absl::flat_hash_set<int64_t> starts = {static_cast<int64_t>(code_size)};
  for (const CodeItem& item : items) starts.insert(item.offset);
  std::map<int64_t, std::string> labels;
  for (const CodeItem& item : items) {
    if (!item.inst) continue;
    size_t next = 0;
    for (char letter : vm::GetOpcodeInfo(item.inst->op).format) {
      if (letter == '+' || letter == '#') continue;
      const int64_t target = item.offset + item.inst->operands[next++];
      if (letter == 'J' && starts.contains(target)) labels.try_emplace(target);
    }
  }
  int count = 0;
  for (auto& [target, name] : labels) name = absl::StrCat("L", count++);
  return labels;
}

// What operands refer to by name.
struct Context {
  const vm::ExecutableSpec& spec;
  const std::vector<std::string>& kernel_names;
  std::map<int64_t, std::string> labels;  // of the function being printed
};

std::string FormatOperand(char letter, int64_t v, const CodeItem& item, const Context& ctx) {
  auto in = [v](size_t size) { return v >= 0 && static_cast<uint64_t>(v) < size; };
  switch (letter) {
    case 'W':
    case 'R': return absl::StrCat("%", v);
    case 'J': {
      auto it = ctx.labels.find(item.offset + v);
      return it != ctx.labels.end() ? it->second : absl::StrCat(v);
    }
    case 'K': return in(ctx.spec.constants.size()) ? absl::StrCat("c", v) : absl::StrCat(v);
    case 'F':
      return in(ctx.spec.functions.size()) ? absl::StrCat("@", FormatName(ctx.spec.functions[v].name))
                                           : absl::StrCat(v);
    case 'P': return in(ctx.kernel_names.size()) ? ctx.kernel_names[v] : absl::StrCat(v);
    case 'D': return DTypeText(v);
    case 'L':
      return internal::HasFloatImmediate(item.inst->op) ? FormatDouble(std::bit_cast<double>(v))
                                                        : absl::StrCat(v);
    default: return absl::StrCat(v);  // I
  }
}

// The width mnemonics are padded to, so that operands line up.
size_t MnemonicWidth() {
  size_t width = 0;
  for (int op = 0; op < vm::kNumOpcodes; ++op) {
    width = std::max(width, vm::GetOpcodeInfo(static_cast<vm::Opcode>(op)).mnemonic.size());
  }
  return width;
}

void AppendInstruction(std::string* out, const CodeItem& item, const Context& ctx) {
  static const size_t kWidth = MnemonicWidth();
  const vm::Instruction& inst = *item.inst;
  const vm::OpcodeInfo& info = vm::GetOpcodeInfo(inst.op);
  absl::StrAppendFormat(out, "  %-*s", kWidth, info.mnemonic);
  const char* separator = " ";
  size_t next = 0;
  for (char letter : info.format) {
    *out += separator;
    separator = ", ";
    if (letter == '+') {
      absl::StrAppend(out, "(",
                      absl::StrJoin(inst.list, ", ",
                                    [](std::string* s, int64_t r) { absl::StrAppend(s, "%", r); }),
                      ")");
    } else if (letter == '#') {
      absl::StrAppend(out, "[", absl::StrJoin(inst.list, ", "), "]");
    } else {
      *out += FormatOperand(letter, inst.operands[next++], item, ctx);
    }
  }
  *out += "\n";
}

void AppendFunction(std::string* out, const vm::Function& func, Context& ctx) {
  absl::StrAppend(out, ".func @", FormatName(func.name));
  AppendSignature(out, func.params);
  if (!func.results.empty()) {
    *out += " -> ";
    AppendSignature(out, func.results);
  }
  absl::StrAppend(out, " regs ", func.num_registers, "\n");
  std::string error;
  const std::vector<CodeItem> items = DecodeItems(func.code, &error);
  ctx.labels = JumpLabels(items, func.code.size());
  auto append_label = [&](int64_t offset) {
    auto it = ctx.labels.find(offset);
    if (it != ctx.labels.end()) absl::StrAppend(out, it->second, ":\n");
  };
  for (const CodeItem& item : items) {
    append_label(item.offset);
    if (item.inst) {
      AppendInstruction(out, item, ctx);
      continue;
    }
    if (!error.empty()) {  // before the first raw word only
      absl::StrAppend(out, "  ; does not decode: ", error, "\n");
      error.clear();
    }
    absl::StrAppendFormat(out, "  .word 0x%08x\n", func.code[item.offset]);
  }
  append_label(static_cast<int64_t>(func.code.size()));
  *out += ".end\n";
}

}  // namespace

std::string Disassemble(const vm::ExecutableSpec& spec) {
  std::string out = absl::StrCat(".producer ", QuoteString(spec.producer), "\n");
  if (!spec.native.object.empty()) {
    // Machine code has no text form: comments say what there is and which fused
    // programs it computes; the kernels holding those programs run it.
    absl::StrAppendFormat(&out,
                          "; native code: %d bytes of x86-64 object code for cpu '%s' "
                          "(requires %s); not reassembled by vm_as\n",
                          spec.native.object.size(), spec.native.cpu,
                          absl::StrJoin(spec.native.features, ", "));
    for (const auto& [program, symbol] : spec.native.programs) {
      absl::StrAppendFormat(&out, ";   %s: %s\n", symbol, program);
    }
  }
  const std::vector<std::string> kernel_names = KernelNames(spec.kernels);
  if (!spec.kernels.empty()) out += "\n";
  for (size_t i = 0; i < spec.kernels.size(); ++i) {
    AppendKernel(&out, spec.kernels[i], kernel_names[i]);
  }
  if (!spec.constants.empty()) out += "\n";
  for (size_t i = 0; i < spec.constants.size(); ++i) AppendConstant(&out, i, spec.constants[i]);
  Context ctx{spec, kernel_names, {}};
  for (const vm::Function& func : spec.functions) {
    out += "\n";
    AppendFunction(&out, func, ctx);
  }
  return out;
}

std::string FormatOpcodeTable() {
  std::vector<std::string> usages;
  size_t width = 0;
  for (int op = 0; op < vm::kNumOpcodes; ++op) {
    usages.push_back(internal::Usage(static_cast<vm::Opcode>(op)));
    width = std::max(width, usages.back().size());
  }
  std::string out = absl::StrFormat("%-6s  %-*s  %s\n", "opcode", width, "usage", "meaning");
  for (int op = 0; op < vm::kNumOpcodes; ++op) {
    absl::StrAppendFormat(&out, "%6d  %-*s  %s\n", op, width, usages[op],
                          vm::GetOpcodeInfo(static_cast<vm::Opcode>(op)).meaning);
  }
  return out;
}

}  // namespace dynvm::tools
