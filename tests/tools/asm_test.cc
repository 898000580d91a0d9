// Round trips of the assembly text: Assemble(Disassemble(spec)) == spec for everything a
// spec can hold, and the features of the text the disassembler never prints (raw jump
// offsets, `rN` registers, inferred frames, npy constants). Errors: asm_error_test.cc.
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "objects/string_object.h"
#include "tools/asm/assembler.h"
#include "tools/asm/disassembler.h"
#include "tools/asm/internal/syntax.h"
#include "vm/bytecode.h"
#include "vm/verifier.h"

namespace dynvm::tools {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string ReadTestdata(const std::string& name) {
  return ReadFile(std::string(DYNVM_ASM_TESTDATA) + "/" + name);
}

AssembleOptions TestdataOptions() {
  AssembleOptions options;
  options.filename = "program.s";
  options.base_dir = DYNVM_ASM_TESTDATA;
  return options;
}

vm::ExecutableSpec MustAssemble(const std::string& text, const AssembleOptions& options = {}) {
  absl::StatusOr<vm::ExecutableSpec> spec = Assemble(text, options);
  EXPECT_TRUE(spec.ok()) << spec.status() << "\n" << text;
  return spec.ok() ? *std::move(spec) : vm::ExecutableSpec();
}

// Values compared by kind and contents; floats bit for bit.
bool SameValue(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  if (a.is_int() || a.is_bool()) return a.int_value() == b.int_value();
  if (a.is_float()) {
    return std::bit_cast<uint64_t>(a.float_value()) == std::bit_cast<uint64_t>(b.float_value());
  }
  if (const StringObj* s = a.As<StringObj>()) {
    return b.As<StringObj>() != nullptr && s->value() == b.As<StringObj>()->value();
  }
  const NDArrayObj* x = a.As<NDArrayObj>();
  const NDArrayObj* y = b.As<NDArrayObj>();
  return x != nullptr && y != nullptr && x->dtype() == y->dtype() && x->shape() == y->shape() &&
         std::memcmp(x->data(), y->data(), x->nbytes()) == 0;
}

void ExpectSameSpec(const vm::ExecutableSpec& a, const vm::ExecutableSpec& b) {
  EXPECT_EQ(a.producer, b.producer);
  EXPECT_TRUE(a.functions == b.functions);
  EXPECT_TRUE(a.kernels == b.kernels);
  ASSERT_EQ(a.constants.size(), b.constants.size());
  for (size_t i = 0; i < a.constants.size(); ++i) {
    EXPECT_TRUE(SameValue(a.constants[i], b.constants[i])) << "constant " << i;
  }
}

// Disassembles `spec`, assembles the text, and checks both the spec and the text are
// reproduced. Returns the text.
std::string ExpectRoundTrip(const vm::ExecutableSpec& spec) {
  const std::string text = Disassemble(spec);
  absl::StatusOr<vm::ExecutableSpec> again = Assemble(text);
  EXPECT_TRUE(again.ok()) << again.status() << "\n" << text;
  if (!again.ok()) return text;
  ExpectSameSpec(spec, *again);
  EXPECT_EQ(Disassemble(*again), text);
  return text;
}

vm::Function MakeFunction(std::string name, uint32_t registers,
                          const std::vector<vm::Instruction>& code) {
  vm::Function func;
  func.name = std::move(name);
  func.num_registers = registers;
  for (const vm::Instruction& inst : code) {
    EXPECT_TRUE(vm::EncodeInstruction(inst, &func.code).ok());
  }
  return func;
}

NDArray MakeTensor(DType dtype, std::vector<int64_t> shape) {
  NDArray t = *NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator());
  auto* bytes = static_cast<uint8_t*>(t->data());
  for (size_t i = 0; i < t->nbytes(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  return t;
}

TEST(AsmTest, ProgramVerifiesAndReachesAFixpoint) {
  const vm::ExecutableSpec spec = MustAssemble(ReadTestdata("program.s"), TestdataOptions());
  EXPECT_TRUE(vm::VerifyExecutable(spec).ok()) << vm::VerifyExecutable(spec);
  ExpectRoundTrip(spec);
}

TEST(AsmTest, DocsExampleVerifiesAndReachesAFixpoint) {
  const std::string doc = ReadFile(std::string(DYNVM_DOCS_DIR) + "/assembly.md");
  const size_t start = doc.find("```asm\n");
  ASSERT_NE(start, std::string::npos) << "docs/assembly.md has no ```asm block";
  const size_t end = doc.find("```", start + 7);
  const vm::ExecutableSpec spec = MustAssemble(doc.substr(start + 7, end - start - 7));
  EXPECT_EQ(spec.functions.size(), 2u);
  EXPECT_TRUE(vm::VerifyExecutable(spec).ok()) << vm::VerifyExecutable(spec);
  ExpectRoundTrip(spec);
}

TEST(AsmTest, ProgramUsesEveryOpcode) {
  const vm::ExecutableSpec spec = MustAssemble(ReadTestdata("program.s"), TestdataOptions());
  std::set<vm::Opcode> seen;
  for (const vm::Function& func : spec.functions) {
    for (size_t pc = 0; pc < func.code.size(); pc += vm::HeaderLength(func.code[pc])) {
      seen.insert(vm::DecodeInstruction(func.code, pc)->op);
    }
  }
  for (int op = 0; op < vm::kNumOpcodes; ++op) {
    EXPECT_TRUE(seen.contains(static_cast<vm::Opcode>(op)))
        << vm::GetOpcodeInfo(static_cast<vm::Opcode>(op)).mnemonic
        << " is missing from tests/tools/testdata/program.s";
  }
}

TEST(AsmTest, ProgramReadsNpyConstantsRelativeToBaseDir) {
  const vm::ExecutableSpec spec = MustAssemble(ReadTestdata("program.s"), TestdataOptions());
  ASSERT_FALSE(spec.constants.empty());
  const NDArrayObj* w = spec.constants[0].As<NDArrayObj>();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype(), DType::kF32);
  EXPECT_EQ(w->shape(), Shape({2, 3}));
  EXPECT_EQ(w->data_as<float>()[5], 6.0f);
}

// Every opcode, with operand values derived from its format alone, so that an opcode
// appended to vm/opcodes.def is covered without touching this test.
TEST(AsmTest, EveryOpcodeRoundTripsGenerically) {
  std::vector<vm::Instruction> code;
  for (int op = 0; op < vm::kNumOpcodes; ++op) {
    vm::Instruction inst;
    inst.op = static_cast<vm::Opcode>(op);
    int jumps = 0;
    for (char letter : vm::GetOpcodeInfo(inst.op).format) {
      switch (letter) {
        case '+': inst.list = {1, 2, 3}; break;
        case '#': inst.list = {2, -3, std::numeric_limits<int64_t>::max()}; break;
        case 'J': inst.operands.push_back(jumps++ == 0 ? 0 : 1); break;  // a label; mid-instruction
        case 'D': inst.operands.push_back(static_cast<int64_t>(DType::kBF16)); break;
        case 'L': inst.operands.push_back(std::numeric_limits<int64_t>::min() + op); break;
        default: inst.operands.push_back(op % 2); break;
      }
    }
    code.push_back(inst);
  }
  vm::ExecutableSpec spec;
  spec.functions = {MakeFunction("all", 4, code), MakeFunction("other", 1, {})};
  spec.kernels = {{"k", {}, 1, 1}, {"k", {}, 2, 1}};
  spec.constants = {Value::Int(1), Value::Int(2)};
  ExpectRoundTrip(spec);
}

TEST(AsmTest, FloatsRoundTripBitForBit) {
  const double kValues[] = {0.0,
                            -0.0,
                            0.1,
                            1.0,
                            -1.0,
                            100.0,
                            1e21,
                            1e-05,
                            123456789012345680000.0,
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::max(),
                            -std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(),
                            -std::numeric_limits<double>::quiet_NaN(),
                            std::bit_cast<double>(0x7ff0000000000001),
                            std::bit_cast<double>(0xfff4000000000abc)};
  vm::ExecutableSpec spec;
  std::vector<vm::Instruction> code;
  kernels::Attrs attrs;
  std::vector<double> list;
  for (double v : kValues) {
    const std::string text = FormatDouble(v);
    EXPECT_NE(text.find_first_of(".en"), std::string::npos) << text;
    absl::StatusOr<double> parsed = ParseDouble(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(std::bit_cast<uint64_t>(*parsed), std::bit_cast<uint64_t>(v)) << text;
    spec.constants.push_back(Value::Float(v));
    code.push_back({vm::Opcode::kLoadConstf, {0, std::bit_cast<int64_t>(v)}, {}});
    attrs[absl::StrCat("a", attrs.size())] = v;
    list.push_back(v);
  }
  attrs["list"] = list;
  spec.kernels = {{"k", attrs, 1, 1}};
  spec.functions = {MakeFunction("f", 1, code)};
  // Attributes holding NaN compare unequal, so compare their bits through the text.
  const std::string text = Disassemble(spec);
  const vm::ExecutableSpec again = MustAssemble(text);
  EXPECT_EQ(Disassemble(again), text);
  EXPECT_TRUE(spec.functions == again.functions);
  for (size_t i = 0; i < spec.constants.size(); ++i) {
    EXPECT_TRUE(SameValue(spec.constants[i], again.constants[i])) << i;
  }
  const auto& again_list = std::get<std::vector<double>>(again.kernels[0].attrs.at("list"));
  ASSERT_EQ(again_list.size(), list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(again_list[i]), std::bit_cast<uint64_t>(list[i]));
  }
}

TEST(AsmTest, NamesAndStringsKeepEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  vm::ExecutableSpec spec;
  spec.producer = all;
  vm::Function func = MakeFunction(all, 1, {{vm::Opcode::kRet, {0}, {}}});
  vm::ValueSpec param;
  param.name = all;
  param.kind = vm::ValueSpec::Kind::kTensor;
  param.dtype = DType::kI64;
  param.dims = {vm::DimSpec::Symbol(all), vm::DimSpec::Symbol("768"), vm::DimSpec::Any(),
                vm::DimSpec::Constant(4), vm::DimSpec::Symbol("n")};
  func.params = {param};
  // Only tensors use a dtype and dims, but files keep them for every kind.
  func.results = {vm::ValueSpec{"", vm::ValueSpec::Kind::kBool, DType::kF32, {}, {}},
                  vm::ValueSpec{"", vm::ValueSpec::Kind::kInt, DType::kI64, {}, {}},
                  vm::ValueSpec{"", vm::ValueSpec::Kind::kAny, DType::kF32, {param.dims[2]}, {}}};
  spec.functions = {func};
  spec.kernels = {{all, {{all, all}, {"", std::string()}}, 1, 0}};
  spec.constants = {Value(MakeObject<StringObj>(all)), Value(MakeObject<StringObj>(""))};
  const std::string text = ExpectRoundTrip(spec);
  EXPECT_THAT(text, HasSubstr(" -> (bool, int i64[], any f32[?]) regs 1\n"));
}

TEST(AsmTest, TupleSignaturesRoundTrip) {
  const std::string text =
      ".func @f(p: tuple(x: tensor f32[n], tuple(int, tuple()))) -> "
      "(tuple(logits: tensor f32[n, 2], \"a b\": tensor i64[n])) regs 1\n  ret %0\n.end\n";
  absl::StatusOr<vm::ExecutableSpec> spec = Assemble(text);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const vm::ValueSpec& p = spec->functions[0].params[0];
  ASSERT_EQ(p.kind, vm::ValueSpec::Kind::kTuple);
  ASSERT_EQ(p.fields.size(), 2u);
  EXPECT_EQ(p.fields[0].name, "x");
  EXPECT_EQ(p.fields[1].fields[1].kind, vm::ValueSpec::Kind::kTuple);
  EXPECT_TRUE(p.fields[1].fields[1].fields.empty());
  EXPECT_EQ(spec->functions[0].results[0].fields[1].name, "a b");
  EXPECT_TRUE(vm::VerifyExecutable(*spec).ok());
  EXPECT_THAT(ExpectRoundTrip(*spec), HasSubstr(text.substr(0, text.find('\n'))));
}

TEST(AsmTest, ConstantsOfEveryKindAndDType) {
  vm::ExecutableSpec spec;
  for (int dtype = 0; dtype < kNumDTypes; ++dtype) {
    if (static_cast<DType>(dtype) == DType::kString) continue;  // no constant is one
    spec.constants.push_back(Value(MakeTensor(static_cast<DType>(dtype), {2, 3})));
  }
  spec.constants.push_back(Value(MakeTensor(DType::kF32, {})));     // a scalar
  spec.constants.push_back(Value(MakeTensor(DType::kI8, {0, 4})));  // no elements
  spec.constants.push_back(Value::Int(std::numeric_limits<int64_t>::min()));
  spec.constants.push_back(Value::Float(-2.5));
  spec.constants.push_back(Value::Bool(false));
  spec.constants.push_back(Value::Bool(true));
  const std::string text = ExpectRoundTrip(spec);
  EXPECT_THAT(text, HasSubstr(".const c13 = tensor f32[] hex \"0b30557a\"\n"));
  EXPECT_THAT(text, HasSubstr(".const c14 = tensor i8[0, 4] hex \"\"\n"));
  EXPECT_THAT(text, HasSubstr(".const c15 = int -9223372036854775808\n"));
}

TEST(AsmTest, AttributesOfEveryKind) {
  kernels::Attrs attrs = {{"i", int64_t{-7}},
                          {"f", 2.0},
                          {"s", std::string("a \"b\"")},
                          {"ints", std::vector<int64_t>{1, -2}},
                          {"no_ints", std::vector<int64_t>{}},
                          {"floats", std::vector<double>{1.0, 0.25}},
                          {"no_floats", std::vector<double>{}},
                          {"odd key", int64_t{0}}};
  vm::ExecutableSpec spec;
  spec.kernels = {{"nn.conv2d", attrs, 3, 1}};
  const std::string text = ExpectRoundTrip(spec);
  EXPECT_THAT(text, HasSubstr(".kernel nn.conv2d = \"nn.conv2d\" (3 -> 1) {f = 2.0, floats = "
                              "[1.0, 0.25], i = -7, ints = [1, -2], no_floats = f64[], no_ints "
                              "= [], \"odd key\" = 0, s = \"a \\\"b\\\"\"}\n"));
}

TEST(AsmTest, KernelEntriesGetStableUniqueNames) {
  vm::ExecutableSpec spec;
  for (const char* name : {"add", "add", "nn.dense", "1x", "", "add_1", "inf"}) {
    spec.kernels.push_back({name, {}, 1, 1});
  }
  std::vector<vm::Instruction> code;
  for (int i = 0; i < 7; ++i) code.push_back({vm::Opcode::kInvokePacked, {i, 1}, {0, 1}});
  code.push_back({vm::Opcode::kRet, {0}, {}});
  spec.functions = {MakeFunction("f", 2, code)};
  const std::string text = ExpectRoundTrip(spec);
  for (const char* line :
       {".kernel add = \"add\"", ".kernel add_1 = \"add\"", ".kernel nn.dense = \"nn.dense\"",
        ".kernel k_1x = \"1x\"", ".kernel k_ = \"\"", ".kernel add_1_1 = \"add_1\"",
        ".kernel k_inf = \"inf\"", "invoke_packed    add_1_1, 1, (%0, %1)"}) {
    EXPECT_THAT(text, HasSubstr(line));
  }
}

TEST(AsmTest, LabelsAndNumericOffsetsResolveToRelativeWords) {
  const vm::ExecutableSpec spec = MustAssemble(
      ".func @f(c: bool)\n"
      "top: if %0, next, 5   ; 4 words\n"
      "next:\n"
      "  goto top\n"
      "  goto end\n"
      "end:\n"
      ".end\n");
  ASSERT_EQ(spec.functions.size(), 1u);
  EXPECT_EQ(spec.functions[0].num_registers, 1u);
  EXPECT_THAT(spec.functions[0].code,
              ::testing::ElementsAre(vm::MakeHeader(vm::Opcode::kIf, 4), 0, 4, 5,
                                     vm::MakeHeader(vm::Opcode::kGoto, 2), uint32_t(-4),
                                     vm::MakeHeader(vm::Opcode::kGoto, 2), 2));
  const std::string text = ExpectRoundTrip(spec);
  EXPECT_THAT(text, HasSubstr("L0:\n  if               %0, L1, 5\nL1:\n"));
  EXPECT_THAT(text, HasSubstr("  goto             L2\nL2:\n.end\n"));
}

TEST(AsmTest, InfersTheFrameAndAcceptsAlternativeSpellings) {
  const vm::ExecutableSpec spec = MustAssemble(
      ".func @f(a: int, b: int)\n"
      "  addi r5, %0, r1\n"
      "  load_consti %2, 0x10\n"
      "  alloc_tensor %6, %2, 0, float32, [1]\n"
      "  ret %5\n"
      ".end\n"
      ".func @g(a: int, b: int, c: int)\n"
      "  tail_invoke 0, (%0, %1)\n"
      ".end\n");
  ASSERT_EQ(spec.functions.size(), 2u);
  EXPECT_EQ(spec.functions[0].num_registers, 7u);
  EXPECT_EQ(spec.functions[1].num_registers, 3u);
  const absl::StatusOr<vm::Instruction> addi = vm::DecodeInstruction(spec.functions[0].code, 0);
  EXPECT_THAT(addi->operands, ::testing::ElementsAre(5, 0, 1));
  const absl::StatusOr<vm::Instruction> consti = vm::DecodeInstruction(spec.functions[0].code, 4);
  EXPECT_THAT(consti->operands, ::testing::ElementsAre(2, 16));
}

TEST(AsmTest, UndecodableCodeAndBadIndicesStillRoundTrip) {
  vm::ExecutableSpec spec;
  vm::Function func =
      MakeFunction("broken", 2,
                   {{vm::Opcode::kLoadConst, {0, 9}, {}},             // no such constant
                    {vm::Opcode::kInvoke, {0, 4}, {1}},               // no such function
                    {vm::Opcode::kInvokePacked, {3, 1}, {0}},         // no such kernel
                    {vm::Opcode::kAllocTensor, {0, 1, 0, 200}, {2}},  // no such dtype
                    {vm::Opcode::kGoto, {1}, {}}});                   // into the middle of itself
  func.code.push_back(0xffffffff);
  func.code.push_back(7);
  vm::ValueSpec weird;
  weird.kind = vm::ValueSpec::Kind::kTensor;
  weird.dtype = static_cast<DType>(77);
  weird.dims = {vm::DimSpec::Constant(-5)};
  func.params = {weird};
  spec.functions = {func};
  const std::string text = ExpectRoundTrip(spec);
  EXPECT_THAT(text, HasSubstr("(tensor 77[-5])"));
  EXPECT_THAT(text, HasSubstr("  load_const       %0, 9\n"));
  EXPECT_THAT(text, HasSubstr("  invoke           %0, 4, (%1)\n"));
  EXPECT_THAT(text, HasSubstr("  alloc_tensor     %0, %1, 0, 200, [2]\n"));
  EXPECT_THAT(text, HasSubstr("  goto             1\n  ; does not decode: "));
  EXPECT_THAT(text, HasSubstr("  .word 0xffffffff\n  .word 0x00000007\n.end\n"));
}

TEST(AsmTest, UnsupportedConstantsPrintAsALineTheAssemblerRejects) {
  vm::ExecutableSpec spec;
  spec.constants = {Value()};
  const std::string text = Disassemble(spec);
  EXPECT_THAT(text, HasSubstr(".const c0 = unsupported \"none\"\n"));
  EXPECT_FALSE(Assemble(text).ok());
}

TEST(AsmTest, OpcodeTableListsEveryOpcode) {
  const std::string table = FormatOpcodeTable();
  for (int op = 0; op < vm::kNumOpcodes; ++op) {
    const vm::OpcodeInfo& info = vm::GetOpcodeInfo(static_cast<vm::Opcode>(op));
    EXPECT_THAT(table, HasSubstr(std::string(info.meaning))) << info.mnemonic;
  }
  EXPECT_THAT(table, HasSubstr("  alloc_tensor %dst, %src, int, dtype, [int, ...]  "));
}

}  // namespace
}  // namespace dynvm::tools
