// Tests of vm/native/native_module.h. The runtime cannot depend on a compiler, so a small
// builder here assembles ELF64 relocatable objects from sections, symbols and RELA
// entries around hand-written x86-64 machine code; the tests load them, call the
// functions, and check each rejection of malformed input (code and message), then
// sweep truncated and corrupted objects, which must fail cleanly (ASan + UBSan).
#include "vm/native/native_module.h"

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dynvm::vm {
namespace {

using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

template <typename T>
void Append(std::string* out, const T& value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
void Put(std::string* bytes, size_t offset, const T& value) {
  ASSERT_LE(offset + sizeof(T), bytes->size());
  std::memcpy(bytes->data() + offset, &value, sizeof(T));
}

template <typename T>
T Get(const std::string& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// Where the header of section `index` of a built object starts.
size_t SectionHeader(const std::string& object, int index) {
  return Get<uint64_t>(object, offsetof(Elf64_Ehdr, e_shoff)) + index * sizeof(Elf64_Shdr);
}

// Assembles an ELF64 x86-64 ET_REL object: the sections added (indexes 1, 2, ...), then
// one relocation section per patched section, .symtab, .strtab and .shstrtab; contents
// follow the header, the section header table comes last.
class ElfBuilder {
 public:
  // Adds a section and returns its index. For SHT_NOBITS `bytes` only gives the size.
  uint16_t Section(std::string name, uint32_t type, uint64_t flags, std::string bytes,
                   uint64_t align = 1) {
    sections_.push_back({std::move(name), type, flags, std::move(bytes), align});
    return static_cast<uint16_t>(sections_.size());
  }
  uint16_t Text(std::string code) {
    return Section(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, std::move(code), 16);
  }
  uint16_t Rodata(std::string bytes) {
    return Section(".rodata", SHT_PROGBITS, SHF_ALLOC, std::move(bytes), 8);
  }
  // Adds a symbol and returns its index in the symbol table (0 is the null symbol).
  uint32_t Symbol(std::string name, uint16_t shndx, uint64_t value, uint8_t type,
                  uint8_t bind = STB_GLOBAL) {
    symbols_.push_back({std::move(name), shndx, value, type, bind});
    return static_cast<uint32_t>(symbols_.size());
  }
  uint32_t Function(std::string name, uint16_t section, uint64_t value = 0) {
    return Symbol(std::move(name), section, value, STT_FUNC);
  }
  uint32_t Undefined(std::string name) { return Symbol(std::move(name), SHN_UNDEF, 0, STT_NOTYPE); }
  uint32_t SectionSymbol(uint16_t section) {
    return Symbol("", section, 0, STT_SECTION, STB_LOCAL);
  }
  void Rela(uint16_t target, uint64_t offset, uint32_t type, uint32_t symbol, int64_t addend) {
    relas_[target].push_back({offset, ELF64_R_INFO(symbol, type), addend});
  }
  // Relocation sections are SHT_RELA unless a test says otherwise.
  void set_relocation_type(uint32_t type) { relocation_type_ = type; }

  std::string Build() const;

 private:
  struct Sec {
    std::string name;
    uint32_t type;
    uint64_t flags;
    std::string bytes;
    uint64_t align;
    uint32_t link = 0;
    uint32_t info = 0;
    uint64_t entsize = 0;
  };
  struct Sym {
    std::string name;
    uint16_t shndx;
    uint64_t value;
    uint8_t type;
    uint8_t bind;
  };

  std::vector<Sec> AllSections() const;

  std::vector<Sec> sections_;
  std::vector<Sym> symbols_;
  std::map<uint16_t, std::vector<Elf64_Rela>> relas_;
  uint32_t relocation_type_ = SHT_RELA;
};

std::vector<ElfBuilder::Sec> ElfBuilder::AllSections() const {
  std::vector<Sec> all = sections_;
  const uint32_t symtab = static_cast<uint32_t>(sections_.size() + relas_.size() + 1);
  for (const auto& [target, entries] : relas_) {
    std::string bytes;
    for (const Elf64_Rela& r : entries) Append(&bytes, r);
    all.push_back({".rela" + sections_[target - 1].name, relocation_type_, 0, bytes, 8, symtab,
                   target, sizeof(Elf64_Rela)});
  }
  std::string symtab_bytes(sizeof(Elf64_Sym), '\0');
  std::string strtab(1, '\0');
  for (const Sym& s : symbols_) {
    Elf64_Sym sym{};
    sym.st_name = static_cast<uint32_t>(s.name.empty() ? 0 : strtab.size());
    if (!s.name.empty()) strtab += s.name + '\0';
    sym.st_info = ELF64_ST_INFO(s.bind, s.type);
    sym.st_shndx = s.shndx;
    sym.st_value = s.value;
    Append(&symtab_bytes, sym);
  }
  all.push_back({".symtab", SHT_SYMTAB, 0, symtab_bytes, 8, symtab + 1, 1, sizeof(Elf64_Sym)});
  all.push_back({".strtab", SHT_STRTAB, 0, strtab, 1});
  all.push_back({".shstrtab", SHT_STRTAB, 0, "", 1});
  return all;
}

std::string ElfBuilder::Build() const {
  std::vector<Sec> all = AllSections();
  std::string names(1, '\0');
  std::vector<uint32_t> name_offsets;
  for (const Sec& s : all) {
    name_offsets.push_back(static_cast<uint32_t>(names.size()));
    names += s.name + '\0';
  }
  all.back().bytes = names;
  std::string out(sizeof(Elf64_Ehdr), '\0');
  std::vector<Elf64_Shdr> headers(1 + all.size(), Elf64_Shdr{});
  for (size_t i = 0; i < all.size(); ++i) {
    const Sec& s = all[i];
    out.resize((out.size() + 7) & ~size_t{7}, '\0');
    headers[i + 1] = Elf64_Shdr{name_offsets[i], s.type, s.flags, 0, out.size(), s.bytes.size(),
                                s.link, s.info, s.align, s.entsize};
    if (s.type != SHT_NOBITS) out += s.bytes;
  }
  out.resize((out.size() + 7) & ~size_t{7}, '\0');
  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_REL;
  h.e_machine = EM_X86_64;
  h.e_version = EV_CURRENT;
  h.e_shoff = out.size();
  h.e_ehsize = sizeof(Elf64_Ehdr);
  h.e_shentsize = sizeof(Elf64_Shdr);
  h.e_shnum = static_cast<uint16_t>(headers.size());
  h.e_shstrndx = static_cast<uint16_t>(headers.size() - 1);
  std::memcpy(out.data(), &h, sizeof(h));
  for (const Elf64_Shdr& sh : headers) Append(&out, sh);
  return out;
}

int DynvmTestTwice(int x) { return 2 * x; }
int DynvmTestOther(int x) { return x + 1; }

const void* TwiceAddress() { return reinterpret_cast<const void*>(&DynvmTestTwice); }

const NativeExternal kExternals[] = {
    {"dynvm_test_twice", TwiceAddress()},
    {"dynvm_test_other", reinterpret_cast<const void*>(&DynvmTestOther)},
};

absl::StatusOr<std::shared_ptr<const NativeModule>> Load(const std::string& object) {
  return NativeModule::Load(object, kExternals);
}

template <typename Fn>
Fn As(const void* address) {
  return reinterpret_cast<Fn>(const_cast<void*>(address));
}

// Calls the function `name` of `module` as `Fn`.
template <typename Fn, typename... Args>
auto Call(const NativeModule& module, std::string_view name, Args... args) {
  absl::StatusOr<const void*> address = module.Find(name);
  EXPECT_TRUE(address.ok()) << address.status();
  return As<Fn>(*address)(args...);
}

const std::string kReturn42 = Bytes({0xb8, 0x2a, 0, 0, 0, 0xc3});           // mov eax, 42; ret
const std::string kLeaRaxRet = Bytes({0x48, 0x8d, 0x05, 0, 0, 0, 0, 0xc3});  // lea rax, [rip+X]
const std::string kMovRaxRet = Bytes({0x48, 0x8b, 0x05, 0, 0, 0, 0, 0xc3});  // mov rax, [rip+X]
// sub rsp, 8; mov edi, 21; call X; add rsp, 8; ret (the rel32 at offset 10)
const std::string kCall21 = Bytes({0x48, 0x83, 0xec, 0x08, 0xbf, 0x15, 0, 0, 0, 0xe8, 0, 0, 0, 0,
                                   0x48, 0x83, 0xc4, 0x08, 0xc3});

// `answer` returns 42; `load` returns the float in .rodata (PC32); `call` returns
// dynvm_test_twice(21) (PLT32 through a stub); plus .eh_frame and non-alloc sections.
std::string RichObject() {
  ElfBuilder b;
  const std::string load = Bytes({0xf3, 0x0f, 0x10, 0x05, 0, 0, 0, 0, 0xc3});  // movss xmm0
  const uint16_t text = b.Text(kReturn42 + load + kCall21);
  float value = 2.5f;
  const uint16_t rodata = b.Rodata(std::string(reinterpret_cast<const char*>(&value), 4));
  const uint16_t eh = b.Section(".eh_frame", SHT_X86_64_UNWIND, SHF_ALLOC, std::string(8, '\0'), 8);
  b.Section(".comment", SHT_PROGBITS, SHF_MERGE | SHF_STRINGS, std::string("clang\0", 6));
  b.Section(".note.GNU-stack", SHT_PROGBITS, 0, "");
  b.Function("answer", text, 0);
  b.Function("load", text, 6);
  b.Function("call", text, 15);
  b.Rela(text, 6 + 4, R_X86_64_PC32, b.SectionSymbol(rodata), -4);
  b.Rela(text, 15 + 10, R_X86_64_PLT32, b.Undefined("dynvm_test_twice"), -4);
  b.Rela(eh, 0, R_X86_64_PC32, b.SectionSymbol(text), 0);
  return b.Build();
}

// The permissions ("r-xp", ...) /proc/self/maps lists for `address`.
std::string Permissions(const void* address) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    std::vector<std::string> range = absl::StrSplit(fields[0], '-');
    uint64_t begin = 0, end = 0;
    if (absl::SimpleHexAtoi(range[0], &begin) && absl::SimpleHexAtoi(range[1], &end) &&
        begin <= a && a < end) {
      return fields[1];
    }
  }
  return "unmapped";
}

TEST(NativeModuleTest, ReturnsConstant) {
  ElfBuilder b;
  b.Function("answer", b.Text(kReturn42));
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Call<int (*)()>(**module, "answer"), 42);
  EXPECT_EQ((*module)->size() % 4096, 0u);
  EXPECT_GT((*module)->size(), 0u);
}

TEST(NativeModuleTest, RodataCallsAndUnwindTables) {
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(RichObject());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Call<int (*)()>(**module, "answer"), 42);
  EXPECT_EQ(Call<float (*)()>(**module, "load"), 2.5f);
  EXPECT_EQ(Call<int (*)()>(**module, "call"), 42);
}

TEST(NativeModuleTest, CodeIsReadExecuteAndConstantsReadOnly) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42 + kLeaRaxRet);
  b.Function("answer", text, 0);
  b.Function("table", text, 6);
  b.Rela(text, 6 + 3, R_X86_64_PC32, b.SectionSymbol(b.Rodata(std::string(8, 'x'))), -4);
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Permissions(*(*module)->Find("answer")), "r-xp");
  EXPECT_EQ(Permissions(Call<const void* (*)()>(**module, "table")), "r--p");
}

// Clang puts constant tables of addresses in .data.rel.ro (writable only for the
// dynamic linker's relocations); GCC emits empty .data and .bss.
TEST(NativeModuleTest, RelroTablesAndEmptyWritableSections) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42 + kLeaRaxRet);
  const uint16_t relro =
      b.Section(".data.rel.ro", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, std::string(8, '\0'), 8);
  b.Section(".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, "");
  b.Section(".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, "");
  const uint32_t answer = b.Function("answer", text, 0);
  b.Function("table", text, 6);
  b.Rela(text, 6 + 3, R_X86_64_PC32, b.SectionSymbol(relro), -4);
  b.Rela(relro, 0, R_X86_64_64, answer, 0);
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* table = Call<const void* const* (*)()>(**module, "table");
  EXPECT_EQ(table[0], *(*module)->Find("answer"));
  EXPECT_EQ(Permissions(table), "r--p");
}

TEST(NativeModuleTest, AbsoluteAndPcRelative64BitEntries) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42 + kLeaRaxRet);
  const uint16_t rodata = b.Rodata(std::string(24, '\0'));
  const uint32_t answer = b.Function("answer", text, 0);
  b.Function("table", text, 6);
  b.Rela(text, 6 + 3, R_X86_64_PC32, b.SectionSymbol(rodata), -4);
  b.Rela(rodata, 0, R_X86_64_64, answer, 0);
  b.Rela(rodata, 8, R_X86_64_64, b.Undefined("dynvm_test_twice"), 0);
  b.Rela(rodata, 16, R_X86_64_PC64, answer, 2);
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* table = Call<const uint64_t* (*)()>(**module, "table");
  const auto address = reinterpret_cast<uint64_t>(*(*module)->Find("answer"));
  EXPECT_EQ(table[0], address);
  EXPECT_EQ(table[1], reinterpret_cast<uint64_t>(TwiceAddress()));  // no stub for data
  EXPECT_EQ(table[2], address + 2 - reinterpret_cast<uint64_t>(&table[2]));
}

TEST(NativeModuleTest, GotSlotsAndAddressesOfExternals) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42 + kMovRaxRet + kMovRaxRet + kLeaRaxRet);
  const uint32_t answer = b.Function("answer", text, 0);
  b.Function("got_answer", text, 6);
  b.Function("got_twice", text, 14);
  b.Function("twice", text, 22);
  const uint32_t twice = b.Undefined("dynvm_test_twice");
  b.Rela(text, 6 + 3, R_X86_64_REX_GOTPCRELX, answer, -4);
  b.Rela(text, 14 + 3, R_X86_64_GOTPCREL, twice, -4);
  b.Rela(text, 22 + 3, R_X86_64_PC32, twice, -4);  // the stub stands in for the function
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Call<const void* (*)()>(**module, "got_answer"), *(*module)->Find("answer"));
  EXPECT_EQ(Call<const void* (*)()>(**module, "got_twice"), TwiceAddress());
  EXPECT_EQ(As<int (*)(int)>(Call<const void* (*)()>(**module, "twice"))(21), 42);
}

TEST(NativeModuleTest, SeveralCallsShareStubs) {
  ElfBuilder b;
  const uint16_t text = b.Text(kCall21 + kCall21 + kCall21);
  const uint32_t twice = b.Undefined("dynvm_test_twice");
  const uint32_t other = b.Undefined("dynvm_test_other");
  for (int i = 0; i < 3; ++i) b.Function(absl::StrCat("f", i), text, 19 * i);
  b.Rela(text, 10, R_X86_64_PLT32, twice, -4);
  b.Rela(text, 19 + 10, R_X86_64_PLT32, other, -4);
  b.Rela(text, 38 + 10, R_X86_64_PLT32, twice, -4);
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Call<int (*)()>(**module, "f0"), 42);
  EXPECT_EQ(Call<int (*)()>(**module, "f1"), 22);
  EXPECT_EQ(Call<int (*)()>(**module, "f2"), 42);
}

TEST(NativeModuleTest, FunctionsMustStartInsideCode) {
  {
    ElfBuilder b;
    b.Text(kReturn42);
    b.Function("constant", b.Rodata("\x2a\0\0\0"));
    absl::Status status = Load(b.Build()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("function 'constant' does not start inside executable code"));
  }
  {
    ElfBuilder b;
    b.Function("past_the_end", b.Text(kReturn42), kReturn42.size());
    absl::Status status = Load(b.Build()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("function 'past_the_end' does not start inside"));
  }
}

TEST(NativeModuleTest, Absolute32BitRelocationThatFits) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42);
  b.Function("answer", text);
  b.Rela(text, 1, R_X86_64_32, b.Symbol("forty", SHN_ABS, 40, STT_NOTYPE), 3);
  b.Rela(text, 0, R_X86_64_NONE, 0, 0);
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Call<int (*)()>(**module, "answer"), 43);
}

TEST(NativeModuleTest, IgnoresNonAllocSectionsAndTheirRelocations) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42);
  const uint16_t debug = b.Section(".debug_info", SHT_PROGBITS, 0, std::string(4, '\0'));
  b.Section(".note.gnu.property", SHT_NOTE, SHF_ALLOC, std::string(16, '\0'), 8);
  b.Function("answer", text);
  b.Rela(debug, 0, R_X86_64_32, b.SectionSymbol(text), 0);  // would not fit if applied
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Call<int (*)()>(**module, "answer"), 42);
}

TEST(NativeModuleTest, FindOnlyGlobalFunctions) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42 + kReturn42);
  b.Function("answer", text);
  b.Symbol("weak", text, 6, STT_FUNC, STB_WEAK);
  b.Symbol("local", text, 6, STT_FUNC, STB_LOCAL);
  b.Symbol("data", text, 0, STT_OBJECT);
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Call<int (*)()>(**module, "weak"), 42);
  for (const char* name : {"missing", "local", "data"}) {
    absl::StatusOr<const void*> found = (*module)->Find(name);
    EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound) << name;
    EXPECT_THAT(found.status().message(), HasSubstr(absl::StrCat("'", name, "'")));
  }
}

TEST(NativeModuleTest, EmptyModuleMapsNothing) {
  ElfBuilder b;
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(b.Build());
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->size(), 0u);
}

void ExpectError(const std::string& object, std::string_view substring,
                 absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = Load(object);
  ASSERT_FALSE(module.ok()) << "expected an error with: " << substring;
  EXPECT_EQ(module.status().code(), code) << module.status();
  EXPECT_THAT(module.status().message(), HasSubstr("native code: "));
  EXPECT_THAT(module.status().message(), HasSubstr(substring));
}

std::string Answer() {
  ElfBuilder b;
  b.Function("answer", b.Text(kReturn42));
  return b.Build();
}

TEST(NativeModuleTest, RejectsBadHeaders) {
  ExpectError("", "object of 0 bytes is shorter than an ELF64 header (64)");
  ExpectError(Answer().substr(0, 20), "object of 20 bytes");
  std::string object = Answer();
  object[0] = 'X';
  ExpectError(object, "bad magic 58454c46, expected 7f454c46");
  object = Answer();
  object[EI_CLASS] = ELFCLASS32;
  ExpectError(object, "class 1 is not ELFCLASS64 (2)");
  object = Answer();
  object[EI_DATA] = ELFDATA2MSB;
  ExpectError(object, "data encoding 2 is not little-endian (1)");
  object = Answer();
  object[EI_VERSION] = 0;
  ExpectError(object, "ELF version 0/1 is not EV_CURRENT (1)");
  object = Answer();
  Put<uint16_t>(&object, offsetof(Elf64_Ehdr, e_machine), 183);
  ExpectError(object, "machine 183 is not x86-64 (62)");
  object = Answer();
  Put<uint16_t>(&object, offsetof(Elf64_Ehdr, e_type), ET_DYN);
  ExpectError(object, "type 3 is not a relocatable object ET_REL (1)");
  object = Answer();
  Put<uint16_t>(&object, offsetof(Elf64_Ehdr, e_shentsize), 40);
  ExpectError(object, "section header size 40 is not 64");
  object = Answer();
  Put<uint16_t>(&object, offsetof(Elf64_Ehdr, e_shstrndx), 99);
  ExpectError(object, "section name table index 99 is not among the");
}

TEST(NativeModuleTest, RejectsSectionTableBeyondTheBuffer) {
  std::string object = Answer();
  Put<uint64_t>(&object, offsetof(Elf64_Ehdr, e_shoff), object.size() - 10);
  ExpectError(object, "section headers (offset");
  Put<uint64_t>(&object, offsetof(Elf64_Ehdr, e_shoff), ~uint64_t{0} - 8);
  ExpectError(object, "lie beyond the object's");
}

TEST(NativeModuleTest, RejectsSectionBytesBeyondTheBuffer) {
  std::string object = Answer();
  Put<uint64_t>(&object, SectionHeader(object, 1) + offsetof(Elf64_Shdr, sh_offset),
                ~uint64_t{0} - 2);
  ExpectError(object, "section '.text' (offset 18446744073709551613, 6 bytes) lies beyond");
  object = Answer();
  Put<uint64_t>(&object, SectionHeader(object, 1) + offsetof(Elf64_Shdr, sh_size), 1 << 20);
  ExpectError(object, "section '.text' (offset");
}

TEST(NativeModuleTest, RejectsBadSectionNames) {
  std::string object = Answer();
  Put<uint32_t>(&object, SectionHeader(object, 1) + offsetof(Elf64_Shdr, sh_name), 1000);
  ExpectError(object, "section 1 name offset 1000 is beyond its string table");
}

TEST(NativeModuleTest, RejectsBadRelocations) {
  auto build = [](uint64_t offset, uint32_t type, uint32_t symbol) {
    ElfBuilder b;
    const uint16_t text = b.Text(kReturn42);
    b.Function("answer", text);
    b.Rela(text, offset, type, symbol, 0);
    return b.Build();
  };
  ExpectError(build(0, R_X86_64_PC32, 99),
              "section '.rela.text' names symbol 99, beyond the 2 symbols");
  ExpectError(build(4, R_X86_64_PC32, 1),
              "R_X86_64_PC32 at offset 4 (4 bytes) lies beyond the 6 bytes of section '.text'");
  ExpectError(build(~uint64_t{0} - 1, R_X86_64_64, 1), "lies beyond the 6 bytes");
  ExpectError(build(0, 37, 1), "unsupported relocation type 37 in section '.rela.text'");
}

TEST(NativeModuleTest, RejectsRelRelocations) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42);
  b.Rela(text, 0, R_X86_64_PC32, b.Function("answer", text), 0);
  b.set_relocation_type(SHT_REL);
  ExpectError(b.Build(), "section '.rela.text' holds SHT_REL relocations, expected SHT_RELA");
}

TEST(NativeModuleTest, RejectsUnknownExternals) {
  ElfBuilder b;
  const uint16_t text = b.Text(kCall21);
  b.Function("f", text);
  b.Rela(text, 10, R_X86_64_PLT32, b.Undefined("dynvm_missing"), -4);
  ExpectError(b.Build(), "undefined symbol 'dynvm_missing' (the runtime provides: "
                         "dynvm_test_other, dynvm_test_twice)");
}

TEST(NativeModuleTest, RejectsWritableAndBadlyAlignedSections) {
  ElfBuilder b;
  b.Text(kReturn42);
  b.Section(".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, "abcd", 4);
  ExpectError(b.Build(), "section '.data' is writable: generated kernels keep no mutable state");
  for (uint64_t align : {3, 8192}) {
    ElfBuilder c;
    c.Section(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, kReturn42, align);
    ExpectError(c.Build(), absl::StrCat("section '.text' alignment ", align,
                                        " is not a power of two up to 4096"));
  }
}

TEST(NativeModuleTest, RejectsBadSymbols) {
  ElfBuilder b;
  b.Text(kReturn42);
  b.Symbol("shared", SHN_COMMON, 8, STT_OBJECT);
  ExpectError(b.Build(), "symbol 'shared' is common (SHN_COMMON): compile with -fno-common");
  ElfBuilder c;
  c.Function("answer", c.Text(kReturn42), 7);
  ExpectError(c.Build(), "symbol 'answer' value 7 is beyond the 6 bytes of section '.text'");
  ElfBuilder d;
  d.Function("answer", 42);
  ExpectError(d.Build(), "symbol 'answer' has section index 42");
}

TEST(NativeModuleTest, RejectsSymbolsOfUnloadedSections) {
  ElfBuilder b;
  const uint16_t text = b.Text(kLeaRaxRet);
  const uint16_t comment = b.Section(".comment", SHT_PROGBITS, 0, "clang");
  b.Rela(text, 3, R_X86_64_PC32, b.SectionSymbol(comment), -4);
  ExpectError(b.Build(), "section '.rela.text' refers to symbol '.comment' in section "
                         "'.comment', which is not loaded");
}

TEST(NativeModuleTest, RejectsRelocationsThatDoNotFit) {
  ElfBuilder b;
  const uint16_t text = b.Text(kReturn42 + kLeaRaxRet);
  const uint32_t far = b.Symbol("far", SHN_ABS, uint64_t{1} << 40, STT_NOTYPE);
  b.Rela(text, 1, R_X86_64_32S, far, 0);
  ExpectError(b.Build(), "absolute 32-bit relocation R_X86_64_32S at section '.text'+1 against "
                         "'far' does not fit value 0x10000000000: compile with -fPIC");
  ElfBuilder c;
  const uint16_t text2 = c.Text(kLeaRaxRet);
  c.Rela(text2, 3, R_X86_64_PC32, c.Symbol("far", SHN_ABS, uint64_t{1} << 62, STT_NOTYPE), -4);
  ExpectError(c.Build(), "R_X86_64_PC32 at section '.text'+3 against 'far' is out of range");
}

TEST(NativeModuleTest, RejectsHugeSections) {
  ElfBuilder b;
  b.Text(kReturn42);
  b.Section(".bss.big", SHT_NOBITS, SHF_ALLOC, "", 8);
  std::string object = b.Build();
  Put<uint64_t>(&object, SectionHeader(object, 2) + offsetof(Elf64_Shdr, sh_size),
                uint64_t{1} << 40);
  ExpectError(object,
              "needs at least 1099511627776 bytes of memory, more than the limit of 67108864",
              absl::StatusCode::kResourceExhausted);
}

// Every prefix of a valid object lacks part of the section table (it comes last).
TEST(NativeModuleTest, EveryTruncationFails) {
  const std::string object = RichObject();
  ASSERT_TRUE(Load(object).ok());
  for (size_t size = 0; size < object.size(); ++size) {
    EXPECT_FALSE(Load(object.substr(0, size)).ok()) << size;
  }
}

// Corrupted bytes may load (code bytes are not checked) or fail, but never crash.
TEST(NativeModuleTest, CorruptedBytesNeverCrash) {
  const std::string object = RichObject();
  int failures = 0;
  for (size_t i = 0; i < object.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string corrupted = object;
      corrupted[i] = static_cast<char>(corrupted[i] ^ flip);
      failures += Load(corrupted).ok() ? 0 : 1;
    }
  }
  EXPECT_GT(failures, 0);
}

}  // namespace
}  // namespace dynvm::vm
