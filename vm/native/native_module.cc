// NativeModule::Load: a minimal static linker for one ELF64 x86-64 relocatable object.
//
// Load runs in two halves. The first only reads the (untrusted) bytes: the header, the
// section table and its names, which sections to load, the symbol table, and every
// relocation, each checked and turned into a Fixup; it also decides which symbols need
// a call stub or a GOT slot and lays out the mapping:
//
//   [ .text sections | stubs ]  [ .rodata, .eh_frame, ... sections | GOT slots ]
//   ^ code: page-aligned, R+X   ^ page-aligned, R
//
// Only then does the second half map memory (RW), copy, fill stubs and GOT slots, apply
// the Fixups (which can still fail: a displacement may not fit) and mprotect (W^X).
#include "vm/native/native_module.h"

#include <elf.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace dynvm::vm {
namespace {

constexpr uint64_t kMaxMappedBytes = uint64_t{64} << 20;
constexpr uint64_t kPageBytes = 4096;  // x86-64's base page: the unit mprotect works in
constexpr uint64_t kMaxAlign = 4096;   // no section needs more than a page
constexpr uint64_t kStubBytes = 16;    // ff 25 00 00 00 00 (jmp *0(%rip)), address, 2 x int3
constexpr uint64_t kGotSlotBytes = 8;

using Externals = absl::flat_hash_map<std::string, const void*>;

// InvalidArgument "native code: <format>".
template <typename... Args>
absl::Status Malformed(const absl::FormatSpec<Args...>& format, const Args&... args) {
  return absl::InvalidArgumentError("native code: " + absl::StrFormat(format, args...));
}

absl::Status TooBig(uint64_t bytes) {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "native code: needs at least %d bytes of memory, more than the limit of %d", bytes,
      kMaxMappedBytes));
}

// True when [offset, offset + size) lies inside [0, limit), without overflow.
bool InBounds(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

// A T read at `offset` of `bytes`, which the caller has bounds-checked (memcpy: nothing
// promises alignment).
template <typename T>
T ReadAt(std::string_view bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// `value` rounded up to `align`, a power of two; callers keep values far below 2^63.
uint64_t AlignUp(uint64_t value, uint64_t align) { return (value + align - 1) & ~(align - 1); }

// The NUL-terminated string at `offset` of the string table `table`; `what` names its
// owner in errors.
absl::StatusOr<std::string_view> StringAt(std::string_view table, uint64_t offset,
                                          std::string_view what) {
  if (offset >= table.size()) {
    return Malformed("%s name offset %d is beyond its string table of %d bytes", what, offset,
                     table.size());
  }
  size_t end = table.find('\0', offset);
  if (end == std::string_view::npos) {
    return Malformed("%s name at offset %d is not NUL-terminated", what, offset);
  }
  return table.substr(offset, end - offset);
}

struct Section {
  Elf64_Shdr header;
  std::string_view name;
  bool loaded = false;  // SHF_ALLOC and copied into the mapping
  uint64_t offset = 0;  // where it starts in the mapping, when loaded
};

struct Symbol {
  Elf64_Sym sym;
  std::string_view name;           // a section symbol's is its section's name
  const void* external = nullptr;  // undefined symbols: the address from `externals`
  int64_t stub = -1;               // index of its call stub, if calls need one
  int64_t got = -1;                // index of its GOT slot, if it needs one
};

// One checked relocation, applied once the memory is mapped.
struct Fixup {
  uint32_t section;  // the section patched
  uint64_t offset;   // where, within it
  uint32_t type;     // R_X86_64_*
  uint32_t symbol;
  int64_t addend;
};

// The object as read and checked, then laid out.
struct Object {
  std::string_view bytes;
  std::vector<Section> sections;
  std::vector<Symbol> symbols;
  uint32_t symtab = 0;  // index of the SHT_SYMTAB section
  std::vector<Fixup> fixups;
  uint64_t num_stubs = 0;
  uint64_t num_got = 0;
  uint64_t stubs_offset = 0;  // in the mapping
  uint64_t got_offset = 0;
  uint64_t code_bytes = 0;    // [0, code_bytes) becomes read+execute, the rest read-only
  uint64_t total_bytes = 0;

  // The file bytes of section `index`, once CheckInFile accepted it.
  std::string_view Contents(uint32_t index) const {
    const Elf64_Shdr& h = sections[index].header;
    return bytes.substr(h.sh_offset, h.sh_size);
  }
};

absl::Status CheckInFile(const Object& obj, uint32_t index, std::string_view label) {
  const Elf64_Shdr& h = obj.sections[index].header;
  if (h.sh_type == SHT_NOBITS || InBounds(h.sh_offset, h.sh_size, obj.bytes.size())) {
    return absl::OkStatus();
  }
  return Malformed("%s (offset %d, %d bytes) lies beyond the object's %d bytes", label,
                   h.sh_offset, h.sh_size, obj.bytes.size());
}

std::string SectionLabel(const Object& obj, uint32_t index) {
  return absl::StrFormat("section '%s'", obj.sections[index].name);
}

absl::Status CheckIdent(const Elf64_Ehdr& h) {
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) {
    return Malformed("bad magic %02x%02x%02x%02x, expected 7f454c46 (ELF)", h.e_ident[0],
                     h.e_ident[1], h.e_ident[2], h.e_ident[3]);
  }
  if (h.e_ident[EI_CLASS] != ELFCLASS64) {
    return Malformed("class %d is not ELFCLASS64 (%d)", h.e_ident[EI_CLASS], ELFCLASS64);
  }
  if (h.e_ident[EI_DATA] != ELFDATA2LSB) {
    return Malformed("data encoding %d is not little-endian (%d)", h.e_ident[EI_DATA],
                     ELFDATA2LSB);
  }
  if (h.e_ident[EI_VERSION] != EV_CURRENT || h.e_version != EV_CURRENT) {
    return Malformed("ELF version %d/%d is not EV_CURRENT (%d)", h.e_ident[EI_VERSION],
                     h.e_version, EV_CURRENT);
  }
  return absl::OkStatus();
}

absl::StatusOr<Elf64_Ehdr> ReadHeader(std::string_view bytes) {
  if (bytes.size() < sizeof(Elf64_Ehdr)) {
    return Malformed("object of %d bytes is shorter than an ELF64 header (%d)", bytes.size(),
                     sizeof(Elf64_Ehdr));
  }
  const auto h = ReadAt<Elf64_Ehdr>(bytes, 0);
  DYNVM_RETURN_IF_ERROR(CheckIdent(h));
  if (h.e_type != ET_REL) {
    return Malformed("type %d is not a relocatable object ET_REL (%d)", h.e_type, ET_REL);
  }
  if (h.e_machine != EM_X86_64) {
    return Malformed("machine %d is not x86-64 (%d)", h.e_machine, EM_X86_64);
  }
  if (h.e_shentsize != sizeof(Elf64_Shdr)) {
    return Malformed("section header size %d is not %d", h.e_shentsize, sizeof(Elf64_Shdr));
  }
  if (h.e_shnum == 0) return Malformed("no section headers (e_shnum 0)");
  if (h.e_shstrndx == SHN_UNDEF || h.e_shstrndx >= h.e_shnum) {
    return Malformed("section name table index %d is not among the %d sections", h.e_shstrndx,
                     h.e_shnum);
  }
  const uint64_t table_bytes = uint64_t{h.e_shnum} * sizeof(Elf64_Shdr);
  if (!InBounds(h.e_shoff, table_bytes, bytes.size())) {
    return Malformed("section headers (offset %d, %d bytes) lie beyond the object's %d bytes",
                     h.e_shoff, table_bytes, bytes.size());
  }
  return h;
}

// Reads the section headers and their names.
absl::Status ReadSections(const Elf64_Ehdr& h, Object* obj) {
  obj->sections.resize(h.e_shnum);
  for (uint32_t i = 0; i < h.e_shnum; ++i) {
    obj->sections[i].header = ReadAt<Elf64_Shdr>(obj->bytes, h.e_shoff + i * sizeof(Elf64_Shdr));
  }
  const uint32_t names = h.e_shstrndx;
  if (obj->sections[names].header.sh_type != SHT_STRTAB) {
    return Malformed("section name table %d has type %d, not SHT_STRTAB (%d)", names,
                     obj->sections[names].header.sh_type, SHT_STRTAB);
  }
  DYNVM_RETURN_IF_ERROR(CheckInFile(*obj, names, "section name table"));
  const std::string_view table = obj->Contents(names);
  for (uint32_t i = 1; i < h.e_shnum; ++i) {
    DYNVM_ASSIGN_OR_RETURN(obj->sections[i].name,
                           StringAt(table, obj->sections[i].header.sh_name,
                                    absl::StrFormat("section %d", i)));
  }
  return absl::OkStatus();
}

// Marks section `index` loaded if it is SHF_ALLOC and can be, or fails naming it.
absl::Status SelectSection(Object* obj, uint32_t index) {
  Section& s = obj->sections[index];
  const Elf64_Shdr& h = s.header;
  // Non-alloc sections (.comment, debug info, ...) and alloc notes (.note.gnu.property)
  // are never read by the code.
  if (!(h.sh_flags & SHF_ALLOC) || h.sh_type == SHT_NOTE) return absl::OkStatus();
  const std::string label = SectionLabel(*obj, index);
  if (h.sh_flags & SHF_TLS) return Malformed("%s is thread-local", label);
  // A writable section would be state the kernels keep, which they must not. Two kinds
  // are not state: empty ones (GCC always emits .data and .bss), and .data.rel.ro
  // (RELRO: constant tables of addresses), written only by relocations, then read-only
  // here like every other section.
  if (h.sh_flags & SHF_WRITE) {
    if (h.sh_size == 0) return absl::OkStatus();
    if (s.name != ".data.rel.ro" && !s.name.starts_with(".data.rel.ro.")) {
      return Malformed("%s is writable: generated kernels keep no mutable state", label);
    }
  }
  if (h.sh_type != SHT_PROGBITS && h.sh_type != SHT_NOBITS && h.sh_type != SHT_X86_64_UNWIND) {
    return Malformed("%s has type %d, expected SHT_PROGBITS, SHT_NOBITS or SHT_X86_64_UNWIND",
                     label, h.sh_type);
  }
  const uint64_t align = h.sh_addralign;
  if (align > kMaxAlign || (align & (align - 1)) != 0) {
    return Malformed("%s alignment %d is not a power of two up to %d", label, align, kMaxAlign);
  }
  DYNVM_RETURN_IF_ERROR(CheckInFile(*obj, index, label));
  if (h.sh_size > kMaxMappedBytes) return TooBig(h.sh_size);
  s.loaded = true;
  return absl::OkStatus();
}

// Checks where symbol `s` is defined (`label` names it), and names section symbols.
absl::Status CheckSymbolSection(const Object& obj, Symbol* s, const std::string& label) {
  const uint16_t shndx = s->sym.st_shndx;
  if (shndx == SHN_UNDEF || shndx == SHN_ABS) return absl::OkStatus();
  if (shndx == SHN_COMMON) {
    return Malformed("%s is common (SHN_COMMON): compile with -fno-common", label);
  }
  if (shndx >= SHN_LORESERVE || shndx >= obj.sections.size()) {
    return Malformed("%s has section index %d, expected SHN_UNDEF, SHN_ABS or one of the %d "
                     "sections", label, shndx, obj.sections.size());
  }
  const Section& section = obj.sections[shndx];
  if (ELF64_ST_TYPE(s->sym.st_info) == STT_SECTION) s->name = section.name;
  if (section.loaded && s->sym.st_value > section.header.sh_size) {
    return Malformed("%s value %d is beyond the %d bytes of %s", label, s->sym.st_value,
                     section.header.sh_size, SectionLabel(obj, shndx));
  }
  return absl::OkStatus();
}

absl::Status FindSymbolTable(Object* obj) {
  int count = 0;
  for (uint32_t i = 1; i < obj->sections.size(); ++i) {
    if (obj->sections[i].header.sh_type == SHT_SYMTAB) {
      obj->symtab = i;
      ++count;
    }
  }
  if (count != 1) return Malformed("found %d symbol tables, expected exactly one", count);
  const Elf64_Shdr& h = obj->sections[obj->symtab].header;
  if (h.sh_entsize != sizeof(Elf64_Sym) || h.sh_size % sizeof(Elf64_Sym) != 0) {
    return Malformed("symbol table entry size %d (table of %d bytes) is not %d", h.sh_entsize,
                     h.sh_size, sizeof(Elf64_Sym));
  }
  DYNVM_RETURN_IF_ERROR(CheckInFile(*obj, obj->symtab, "symbol table"));
  if (h.sh_link == 0 || h.sh_link >= obj->sections.size() ||
      obj->sections[h.sh_link].header.sh_type != SHT_STRTAB) {
    return Malformed("symbol table's string table %d is not a SHT_STRTAB among the %d sections",
                     h.sh_link, obj->sections.size());
  }
  return CheckInFile(*obj, h.sh_link, "symbol string table");
}

absl::Status ReadSymbols(Object* obj) {
  DYNVM_RETURN_IF_ERROR(FindSymbolTable(obj));
  const std::string_view table = obj->Contents(obj->symtab);
  const std::string_view names = obj->Contents(obj->sections[obj->symtab].header.sh_link);
  obj->symbols.resize(table.size() / sizeof(Elf64_Sym));
  for (size_t i = 0; i < obj->symbols.size(); ++i) {
    Symbol& s = obj->symbols[i];
    s.sym = ReadAt<Elf64_Sym>(table, i * sizeof(Elf64_Sym));
    DYNVM_ASSIGN_OR_RETURN(s.name,
                           StringAt(names, s.sym.st_name, absl::StrFormat("symbol %d", i)));
    const std::string label = s.name.empty() ? absl::StrFormat("symbol %d", i)
                                             : absl::StrFormat("symbol '%s'", s.name);
    DYNVM_RETURN_IF_ERROR(CheckSymbolSection(*obj, &s, label));
  }
  return absl::OkStatus();
}

enum class RelocKind { kNone, kAbs64, kPc32, kPc64, kAbs32Signed, kAbs32, kGotPc32 };

struct RelocInfo {
  const char* name;
  RelocKind kind;
  uint64_t width;  // bytes patched
};

std::optional<RelocInfo> DescribeRelocation(uint32_t type) {
  switch (type) {
    case R_X86_64_NONE: return RelocInfo{"R_X86_64_NONE", RelocKind::kNone, 0};
    case R_X86_64_64: return RelocInfo{"R_X86_64_64", RelocKind::kAbs64, 8};
    case R_X86_64_PC32: return RelocInfo{"R_X86_64_PC32", RelocKind::kPc32, 4};
    case R_X86_64_PLT32: return RelocInfo{"R_X86_64_PLT32", RelocKind::kPc32, 4};
    case R_X86_64_PC64: return RelocInfo{"R_X86_64_PC64", RelocKind::kPc64, 8};
    case R_X86_64_32S: return RelocInfo{"R_X86_64_32S", RelocKind::kAbs32Signed, 4};
    case R_X86_64_32: return RelocInfo{"R_X86_64_32", RelocKind::kAbs32, 4};
    case R_X86_64_GOTPCREL: return RelocInfo{"R_X86_64_GOTPCREL", RelocKind::kGotPc32, 4};
    case R_X86_64_GOTPCRELX: return RelocInfo{"R_X86_64_GOTPCRELX", RelocKind::kGotPc32, 4};
    case R_X86_64_REX_GOTPCRELX:
      return RelocInfo{"R_X86_64_REX_GOTPCRELX", RelocKind::kGotPc32, 4};
    default: return std::nullopt;
  }
}

// Checks that relocation section `rela` may use symbol `index`: defined in a loaded
// section, absolute, or provided by `externals`.
absl::Status ResolveSymbol(Object* obj, uint32_t rela, uint32_t index,
                           const Externals& externals) {
  Symbol& s = obj->symbols[index];
  const uint16_t shndx = s.sym.st_shndx;
  if (shndx == SHN_UNDEF && index != 0) {
    auto it = externals.find(absl::string_view(s.name.data(), s.name.size()));
    if (it == externals.end()) {
      std::vector<std::string> provided;
      for (const auto& [name, address] : externals) provided.push_back(name);
      std::sort(provided.begin(), provided.end());
      return Malformed("undefined symbol '%s' (the runtime provides: %s)", s.name,
                       provided.empty() ? "nothing" : absl::StrJoin(provided, ", "));
    }
    s.external = it->second;
  } else if (shndx != SHN_UNDEF && shndx != SHN_ABS && !obj->sections[shndx].loaded) {
    return Malformed("%s refers to symbol '%s' in %s, which is not loaded",
                     SectionLabel(*obj, rela), s.name, SectionLabel(*obj, shndx));
  }
  return absl::OkStatus();
}

absl::Status AddFixup(Object* obj, uint32_t rela, uint32_t target, const Elf64_Rela& r,
                      const Externals& externals) {
  const uint32_t type = ELF64_R_TYPE(r.r_info);
  const uint32_t index = ELF64_R_SYM(r.r_info);
  const std::optional<RelocInfo> info = DescribeRelocation(type);
  if (!info) {
    return Malformed("unsupported relocation type %d in %s", type, SectionLabel(*obj, rela));
  }
  if (index >= obj->symbols.size()) {
    return Malformed("%s names symbol %d, beyond the %d symbols", SectionLabel(*obj, rela), index,
                     obj->symbols.size());
  }
  const uint64_t size = obj->sections[target].header.sh_size;
  if (!InBounds(r.r_offset, info->width, size)) {
    return Malformed("%s at offset %d (%d bytes) lies beyond the %d bytes of %s", info->name,
                     r.r_offset, info->width, size, SectionLabel(*obj, target));
  }
  DYNVM_RETURN_IF_ERROR(ResolveSymbol(obj, rela, index, externals));
  Symbol& s = obj->symbols[index];
  if (info->kind == RelocKind::kGotPc32 && s.got < 0) s.got = obj->num_got++;
  if (info->kind == RelocKind::kPc32 && s.external != nullptr && s.stub < 0) {
    s.stub = obj->num_stubs++;
  }
  obj->fixups.push_back(Fixup{target, r.r_offset, type, index, r.r_addend});
  return absl::OkStatus();
}

// Checks the RELA section `rela` (if it patches a loaded section) and its entries.
absl::Status ReadRelaSection(Object* obj, uint32_t rela, const Externals& externals) {
  const Elf64_Shdr& h = obj->sections[rela].header;
  const std::string label = SectionLabel(*obj, rela);
  if (h.sh_info >= obj->sections.size()) {
    return Malformed("%s applies to section %d, beyond the %d sections", label, h.sh_info,
                     obj->sections.size());
  }
  if (!obj->sections[h.sh_info].loaded) return absl::OkStatus();  // debug info and such
  if (h.sh_entsize != sizeof(Elf64_Rela) || h.sh_size % sizeof(Elf64_Rela) != 0) {
    return Malformed("%s entry size %d (%d bytes) is not %d", label, h.sh_entsize, h.sh_size,
                     sizeof(Elf64_Rela));
  }
  if (h.sh_link != obj->symtab) {
    return Malformed("%s uses symbol table %d, not %d", label, h.sh_link, obj->symtab);
  }
  DYNVM_RETURN_IF_ERROR(CheckInFile(*obj, rela, label));
  const std::string_view entries = obj->Contents(rela);
  for (uint64_t at = 0; at < entries.size(); at += sizeof(Elf64_Rela)) {
    DYNVM_RETURN_IF_ERROR(
        AddFixup(obj, rela, h.sh_info, ReadAt<Elf64_Rela>(entries, at), externals));
  }
  return absl::OkStatus();
}

absl::Status ReadRelocations(Object* obj, const Externals& externals) {
  for (uint32_t i = 1; i < obj->sections.size(); ++i) {
    const uint32_t type = obj->sections[i].header.sh_type;
    if (type == SHT_REL) {
      return Malformed("%s holds SHT_REL relocations, expected SHT_RELA", SectionLabel(*obj, i));
    }
    if (type == SHT_RELA) DYNVM_RETURN_IF_ERROR(ReadRelaSection(obj, i, externals));
  }
  return absl::OkStatus();
}

// Places the loaded sections that are (or are not) `executable` from `*offset` on.
absl::Status PlaceSections(Object* obj, bool executable, uint64_t* offset) {
  for (Section& s : obj->sections) {
    if (!s.loaded || ((s.header.sh_flags & SHF_EXECINSTR) != 0) != executable) continue;
    s.offset = AlignUp(*offset, std::max<uint64_t>(s.header.sh_addralign, 1));
    *offset = s.offset + s.header.sh_size;  // both below 2^27
    if (*offset > kMaxMappedBytes) return TooBig(*offset);
  }
  return absl::OkStatus();
}

absl::Status Layout(Object* obj) {
  uint64_t offset = 0;
  DYNVM_RETURN_IF_ERROR(PlaceSections(obj, /*executable=*/true, &offset));
  obj->stubs_offset = AlignUp(offset, kStubBytes);
  offset = obj->stubs_offset + obj->num_stubs * kStubBytes;  // stubs <= symbols < 2^59
  if (offset > kMaxMappedBytes) return TooBig(offset);
  obj->code_bytes = AlignUp(offset, kPageBytes);
  offset = obj->code_bytes;
  DYNVM_RETURN_IF_ERROR(PlaceSections(obj, /*executable=*/false, &offset));
  obj->got_offset = AlignUp(offset, kGotSlotBytes);
  offset = obj->got_offset + obj->num_got * kGotSlotBytes;
  if (offset > kMaxMappedBytes) return TooBig(offset);
  obj->total_bytes = AlignUp(offset, kPageBytes);
  return absl::OkStatus();
}

uint64_t SymbolAddress(const Object& obj, uint64_t base, const Symbol& s) {
  if (s.sym.st_shndx == SHN_UNDEF) return reinterpret_cast<uintptr_t>(s.external);
  if (s.sym.st_shndx == SHN_ABS) return s.sym.st_value;
  return base + obj.sections[s.sym.st_shndx].offset + s.sym.st_value;
}

// Copies section bytes, writes the stubs and the GOT slots.
void Fill(const Object& obj, char* base) {
  for (uint32_t i = 1; i < obj.sections.size(); ++i) {
    const Section& s = obj.sections[i];
    if (s.loaded && s.header.sh_type != SHT_NOBITS) {
      std::memcpy(base + s.offset, obj.bytes.data() + s.header.sh_offset, s.header.sh_size);
    }
  }
  const uint64_t b = reinterpret_cast<uintptr_t>(base);
  for (const Symbol& s : obj.symbols) {
    const uint64_t address = SymbolAddress(obj, b, s);
    if (s.stub >= 0) {
      static constexpr unsigned char kJump[6] = {0xff, 0x25, 0, 0, 0, 0};
      char* stub = base + obj.stubs_offset + s.stub * kStubBytes;
      std::memcpy(stub, kJump, sizeof(kJump));
      std::memcpy(stub + 6, &address, 8);
      std::memset(stub + 14, 0xcc, 2);
    }
    if (s.got >= 0) std::memcpy(base + obj.got_offset + s.got * kGotSlotBytes, &address, 8);
  }
}

absl::Status ApplyFixup(const Object& obj, char* base, const Fixup& f) {
  const RelocInfo info = *DescribeRelocation(f.type);
  const Symbol& s = obj.symbols[f.symbol];
  const uint64_t b = reinterpret_cast<uintptr_t>(base);
  char* where = base + obj.sections[f.section].offset + f.offset;
  const uint64_t p = reinterpret_cast<uintptr_t>(where);
  const uint64_t a = static_cast<uint64_t>(f.addend);
  uint64_t target = SymbolAddress(obj, b, s);
  if (info.kind == RelocKind::kPc32 && s.stub >= 0) {
    target = b + obj.stubs_offset + s.stub * kStubBytes;  // calls to externals: their stub
  }
  if (info.kind == RelocKind::kGotPc32) target = b + obj.got_offset + s.got * kGotSlotBytes;
  uint64_t value = target + a;  // unsigned: wraps as the ELF arithmetic does
  const auto describe = [&] {
    return absl::StrFormat("%s at %s+%d against '%s'", info.name, SectionLabel(obj, f.section),
                           f.offset, s.name);
  };
  switch (info.kind) {
    case RelocKind::kNone: return absl::OkStatus();
    case RelocKind::kAbs64: break;
    case RelocKind::kPc64: value -= p; break;
    case RelocKind::kPc32:
    case RelocKind::kGotPc32: {
      value -= p;
      const int64_t v = static_cast<int64_t>(value);
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        return Malformed("%s is out of range: displacement %d does not fit in 32 bits",
                         describe(), v);
      }
      break;
    }
    case RelocKind::kAbs32Signed:
    case RelocKind::kAbs32: {
      const int64_t v = static_cast<int64_t>(value);
      const bool fits = info.kind == RelocKind::kAbs32 ? value <= 0xffffffffu
                                                       : v == static_cast<int32_t>(v);
      if (!fits) {
        return Malformed("absolute 32-bit relocation %s does not fit value 0x%x: compile with "
                         "-fPIC", describe(), value);
      }
      break;
    }
  }
  std::memcpy(where, &value, info.width);  // little-endian: the low bytes
  return absl::OkStatus();
}

absl::Status Protect(const Object& obj, char* base) {
  if (obj.code_bytes > 0 && mprotect(base, obj.code_bytes, PROT_READ | PROT_EXEC) != 0) {
    return absl::ErrnoToStatus(errno, "native code: mprotect of the code failed");
  }
  const uint64_t rest = obj.total_bytes - obj.code_bytes;
  if (rest > 0 && mprotect(base + obj.code_bytes, rest, PROT_READ) != 0) {
    return absl::ErrnoToStatus(errno, "native code: mprotect of the constants failed");
  }
  return absl::OkStatus();
}

// Adds the global and weak functions the object defines to `functions`.
absl::Status IndexFunctions(const Object& obj, const char* base,
                            absl::flat_hash_map<std::string, const void*>* functions) {
  for (const Symbol& s : obj.symbols) {
    const unsigned bind = ELF64_ST_BIND(s.sym.st_info);
    if (ELF64_ST_TYPE(s.sym.st_info) != STT_FUNC || (bind != STB_GLOBAL && bind != STB_WEAK) ||
        s.sym.st_shndx == SHN_UNDEF || s.sym.st_shndx == SHN_ABS ||
        !obj.sections[s.sym.st_shndx].loaded) {
      continue;
    }
    // A function must start inside executable bytes: one in constants, or at the end
    // of its section, would be called into memory that is not code.
    const Section& section = obj.sections[s.sym.st_shndx];
    if ((section.header.sh_flags & SHF_EXECINSTR) == 0 || s.sym.st_value >= section.header.sh_size) {
      return Malformed("function '%s' does not start inside executable code (section %s, "
                       "offset %d of %d bytes)",
                       s.name, SectionLabel(obj, s.sym.st_shndx), s.sym.st_value,
                       section.header.sh_size);
    }
    const void* address = base + section.offset + s.sym.st_value;
    if (!functions->emplace(std::string(s.name), address).second) {
      return Malformed("function '%s' is defined twice", s.name);
    }
  }
  return absl::OkStatus();
}

// Reads, checks and lays out `bytes`; nothing is mapped yet.
absl::StatusOr<Object> Plan(std::string_view bytes, absl::Span<const NativeExternal> externals) {
  Object obj;
  obj.bytes = bytes;
  DYNVM_ASSIGN_OR_RETURN(const Elf64_Ehdr header, ReadHeader(bytes));
  DYNVM_RETURN_IF_ERROR(ReadSections(header, &obj));
  for (uint32_t i = 1; i < obj.sections.size(); ++i) {
    DYNVM_RETURN_IF_ERROR(SelectSection(&obj, i));
  }
  DYNVM_RETURN_IF_ERROR(ReadSymbols(&obj));
  Externals by_name;
  for (const NativeExternal& e : externals) by_name.emplace(std::string(e.name), e.address);
  DYNVM_RETURN_IF_ERROR(ReadRelocations(&obj, by_name));
  DYNVM_RETURN_IF_ERROR(Layout(&obj));
  return obj;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const NativeModule>> NativeModule::Load(
    std::string_view object, absl::Span<const NativeExternal> externals) {
#if !defined(__x86_64__)
  return absl::UnimplementedError("native code: this host cannot run x86-64 code");
#else
  DYNVM_ASSIGN_OR_RETURN(const Object obj, Plan(object, externals));
  void* base = nullptr;
  if (obj.total_bytes > 0) {
    base = mmap(nullptr, obj.total_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                /*fd=*/-1, /*offset=*/0);
    if (base == MAP_FAILED) {
      return absl::ErrnoToStatus(
          errno, absl::StrFormat("native code: mmap of %d bytes failed", obj.total_bytes));
    }
  }
  std::shared_ptr<NativeModule> module(new NativeModule(base, obj.total_bytes));
  char* bytes = static_cast<char*>(base);
  Fill(obj, bytes);
  for (const Fixup& f : obj.fixups) DYNVM_RETURN_IF_ERROR(ApplyFixup(obj, bytes, f));
  DYNVM_RETURN_IF_ERROR(Protect(obj, bytes));
  DYNVM_RETURN_IF_ERROR(IndexFunctions(obj, bytes, &module->functions_));
  return module;
#endif
}

namespace {

float Sinf(float x) { return std::sin(x); }
float Cosf(float x) { return std::cos(x); }
void Sincosf(float x, float* s, float* c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
float Powf(float x, float y) { return std::pow(x, y); }
float Fmodf(float x, float y) { return std::fmod(x, y); }
float Floorf(float x) { return std::floor(x); }
float Ceilf(float x) { return std::ceil(x); }
float Roundevenf(float x) { return std::nearbyint(x); }  // the default rounding: to even

}  // namespace

absl::Span<const NativeExternal> NativeRuntimeExternals() {
  static const NativeExternal kExternals[] = {
      {"sinf", reinterpret_cast<const void*>(&Sinf)},
      {"cosf", reinterpret_cast<const void*>(&Cosf)},
      {"sincosf", reinterpret_cast<const void*>(&Sincosf)},
      {"powf", reinterpret_cast<const void*>(&Powf)},
      {"fmodf", reinterpret_cast<const void*>(&Fmodf)},
      {"floorf", reinterpret_cast<const void*>(&Floorf)},
      {"ceilf", reinterpret_cast<const void*>(&Ceilf)},
      {"roundevenf", reinterpret_cast<const void*>(&Roundevenf)},
  };
  return kExternals;
}

absl::StatusOr<const void*> NativeModule::Find(std::string_view name) const {
  auto it = functions_.find(absl::string_view(name.data(), name.size()));
  if (it == functions_.end()) {
    return absl::NotFoundError(
        absl::StrFormat("native code: no function '%s' in the module", name));
  }
  return it->second;
}

NativeModule::~NativeModule() {
  if (base_ != nullptr) munmap(base_, size_);
}

}  // namespace dynvm::vm
