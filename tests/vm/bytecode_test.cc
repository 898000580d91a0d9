// Tests of vm/bytecode.h over the whole opcode table (vm/opcodes.def): encode/decode round
// trips with operands for every format letter, lengths, decoder and encoder errors,
// mnemonic lookup, and docs/bytecode.md kept in sync with the table.
#include "vm/bytecode.h"

#include <cstdint>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dynvm::vm {
namespace {

using ::testing::HasSubstr;

std::vector<Opcode> AllOpcodes() {
  std::vector<Opcode> ops;
  for (int i = 0; i < kNumOpcodes; ++i) ops.push_back(static_cast<Opcode>(i));
  return ops;
}

std::string_view Mnemonic(Opcode op) { return GetOpcodeInfo(op).mnemonic; }

// An instruction of `op` with a distinct, valid dummy value for each format letter.
Instruction Dummy(Opcode op) {
  Instruction inst;
  inst.op = op;
  int64_t n = 0;
  for (char letter : GetOpcodeInfo(op).format) {
    ++n;
    switch (letter) {
      case 'W':
        inst.operands.push_back(100 + n);
        break;
      case 'R':
        inst.operands.push_back(200 + n);
        break;
      case 'I':
        inst.operands.push_back(0xfffffff0u + n);
        break;  // near the top of uint32
      case 'J':
        inst.operands.push_back(-1000 - n);
        break;  // negative offset
      case 'K':
        inst.operands.push_back(300 + n);
        break;
      case 'F':
        inst.operands.push_back(400 + n);
        break;
      case 'P':
        inst.operands.push_back(500 + n);
        break;
      case 'D':
        inst.operands.push_back(9);
        break;
      case 'L':
        inst.operands.push_back(-(int64_t{1} << 40) - n);
        break;  // needs both words
      case '+':
        inst.list = {7, 0, 0xffffffffu};
        break;
      case '#':
        inst.list = {0, std::numeric_limits<int64_t>::min(), (int64_t{1} << 33) + 5};
        break;
      default:
        ADD_FAILURE() << "unknown format letter '" << letter << "' in " << Mnemonic(op);
    }
  }
  return inst;
}

// The encoded length in words, computed from the format independently of the encoder.
size_t ExpectedWords(const Instruction& inst) {
  size_t words = 1;
  for (char letter : GetOpcodeInfo(inst.op).format) {
    if (letter == 'L')
      words += 2;
    else if (letter == '+')
      words += 1 + inst.list.size();
    else if (letter == '#')
      words += 1 + 2 * inst.list.size();
    else
      words += 1;
  }
  return words;
}

TEST(OpcodeTableTest, WellFormed) {
  std::set<std::string_view> mnemonics;
  for (Opcode op : AllOpcodes()) {
    const OpcodeInfo& info = GetOpcodeInfo(op);
    SCOPED_TRACE(info.mnemonic);
    EXPECT_FALSE(info.mnemonic.empty());
    EXPECT_FALSE(info.meaning.empty());
    EXPECT_TRUE(mnemonics.insert(info.mnemonic).second) << "duplicate mnemonic";
    for (size_t i = 0; i < info.format.size(); ++i) {
      const char letter = info.format[i];
      EXPECT_NE(std::string_view("WRIJKFPDL+#").find(letter), std::string_view::npos)
          << "letter " << letter;
      if (letter == '+' || letter == '#') {
        EXPECT_EQ(i + 1, info.format.size()) << "list not last";
      }
    }
  }
  EXPECT_LE(kNumOpcodes, 256);  // the opcode is 8 bits
}

TEST(OpcodeTableTest, FileFormatNumbersAreStable) {
  // Numbers written in executable files; the doc's examples rely on these too.
  EXPECT_EQ(static_cast<int>(Opcode::kMove), 0);
  EXPECT_EQ(static_cast<int>(Opcode::kRet), 1);
  EXPECT_EQ(static_cast<int>(Opcode::kInvoke), 5);
  EXPECT_EQ(static_cast<int>(Opcode::kKillRegister), 24);
  EXPECT_EQ(static_cast<int>(Opcode::kAddI), 25);
  EXPECT_EQ(static_cast<int>(Opcode::kLeI), 35);
  EXPECT_EQ(internal::kFormatAddI, "WRR");
  EXPECT_EQ(internal::kFormatAllocTensor, GetOpcodeInfo(Opcode::kAllocTensor).format);
}

TEST(OpcodeFromMnemonicTest, EveryOpcode) {
  for (Opcode op : AllOpcodes()) {
    absl::StatusOr<Opcode> found = OpcodeFromMnemonic(Mnemonic(op));
    ASSERT_TRUE(found.ok()) << Mnemonic(op);
    EXPECT_EQ(*found, op);
  }
}

TEST(OpcodeFromMnemonicTest, Unknown) {
  for (std::string_view bad : {"", "MOVE", "mov", "move ", "add", "kMove"}) {
    absl::StatusOr<Opcode> r = OpcodeFromMnemonic(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr(absl::StrFormat("unknown instruction '%s'", bad)));
  }
}

TEST(BytecodeTest, RoundTripEveryOpcode) {
  for (Opcode op : AllOpcodes()) {
    SCOPED_TRACE(Mnemonic(op));
    const Instruction inst = Dummy(op);
    // Encode after a prefix so that decoding at a non-zero pc is exercised.
    std::vector<uint32_t> code = {0xdeadbeef, 0xcafef00d};
    const absl::Status encoded = EncodeInstruction(inst, &code);
    ASSERT_TRUE(encoded.ok()) << encoded;
    const size_t words = code.size() - 2;
    EXPECT_EQ(words, ExpectedWords(inst));
    EXPECT_EQ(HeaderOpcode(code[2]), static_cast<uint32_t>(op));
    EXPECT_EQ(HeaderLength(code[2]), words);
    absl::StatusOr<Instruction> back = DecodeInstruction(code, 2);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->op, op);
    EXPECT_EQ(back->operands, inst.operands);
    EXPECT_EQ(back->list, inst.list);
  }
}

TEST(BytecodeTest, RoundTripEmptyLists) {
  for (Opcode op : AllOpcodes()) {
    Instruction inst = Dummy(op);
    if (inst.list.empty()) continue;
    SCOPED_TRACE(Mnemonic(op));
    inst.list.clear();
    std::vector<uint32_t> code;
    ASSERT_TRUE(EncodeInstruction(inst, &code).ok());
    EXPECT_EQ(code.size(), ExpectedWords(inst));
    EXPECT_EQ(code.back(), 0u);  // the count
    absl::StatusOr<Instruction> back = DecodeInstruction(code, 0);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->operands, inst.operands);
    EXPECT_TRUE(back->list.empty());
  }
}

TEST(BytecodeTest, SequenceDecodesByHeaderLengths) {
  std::vector<uint32_t> code;
  for (Opcode op : AllOpcodes()) ASSERT_TRUE(EncodeInstruction(Dummy(op), &code).ok());
  size_t pc = 0;
  for (Opcode op : AllOpcodes()) {
    absl::StatusOr<Instruction> inst = DecodeInstruction(code, pc);
    ASSERT_TRUE(inst.ok()) << inst.status();
    EXPECT_EQ(inst->op, op);
    pc += HeaderLength(code[pc]);
  }
  EXPECT_EQ(pc, code.size());
}

TEST(BytecodeTest, FixedLengthAgreesWithTheEncoding) {
  int fixed = 0;
  for (Opcode op : AllOpcodes()) {
    SCOPED_TRACE(Mnemonic(op));
    const std::string_view format = GetOpcodeInfo(op).format;
    const bool variadic = format.find_first_of("+#") != std::string_view::npos;
    std::vector<uint32_t> code;
    ASSERT_TRUE(EncodeInstruction(Dummy(op), &code).ok());
    if (variadic) {
      EXPECT_EQ(FixedLength(format), 0u);
    } else {
      ++fixed;
      EXPECT_EQ(FixedLength(format), code.size());
    }
  }
  EXPECT_GT(fixed, 20);
  static_assert(FixedLength("WRR") == 4);
  static_assert(FixedLength("WL") == 4);
  static_assert(FixedLength("") == 1);
  static_assert(FixedLength("WF+") == 0);
}

TEST(BytecodeTest, DocumentedEncodings) {
  // docs/bytecode.md: `addi %3, %1, %2` is [0x0400 | 25] [3] [1] [2] and
  // `invoke %0, @f, (%1, %2)` is [0x0600 | 5] [0] [f] [2] [1] [2].
  std::vector<uint32_t> code;
  ASSERT_TRUE(EncodeInstruction({Opcode::kAddI, {3, 1, 2}, {}}, &code).ok());
  EXPECT_EQ(code, (std::vector<uint32_t>{0x0400 | 25, 3, 1, 2}));
  code.clear();
  ASSERT_TRUE(EncodeInstruction({Opcode::kInvoke, {0, 9}, {1, 2}}, &code).ok());
  EXPECT_EQ(code, (std::vector<uint32_t>{0x0600 | 5, 0, 9, 2, 1, 2}));
  code.clear();
  // L: low word first.
  ASSERT_TRUE(EncodeInstruction({Opcode::kLoadConsti, {1, 0x1122334455667788}, {}}, &code).ok());
  EXPECT_EQ(code, (std::vector<uint32_t>{0x0400 | 17, 1, 0x55667788, 0x11223344}));
  code.clear();
  // J: two's complement.
  ASSERT_TRUE(EncodeInstruction({Opcode::kGoto, {-2}, {}}, &code).ok());
  EXPECT_EQ(code, (std::vector<uint32_t>{0x0200 | 3, 0xfffffffe}));
}

TEST(BytecodeTest, ExtremeValuesRoundTrip) {
  const Instruction insts[] = {
      {Opcode::kLoadConsti, {0, std::numeric_limits<int64_t>::min()}, {}},
      {Opcode::kLoadConsti, {0xffffffffu, std::numeric_limits<int64_t>::max()}, {}},
      {Opcode::kIf,
       {0, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()},
       {}},
      {Opcode::kGetField, {0, 0, 0xffffffffu}, {}},
  };
  for (const Instruction& inst : insts) {
    std::vector<uint32_t> code;
    ASSERT_TRUE(EncodeInstruction(inst, &code).ok());
    absl::StatusOr<Instruction> back = DecodeInstruction(code, 0);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->operands, inst.operands);
  }
}

void ExpectInvalid(const absl::Status& status, std::string_view substr) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(substr)));
}

TEST(DecodeErrorTest, UnknownOpcode) {
  for (uint32_t op : {static_cast<uint32_t>(kNumOpcodes), 200u, 255u}) {
    const std::vector<uint32_t> code = {0x0100 | op};
    ExpectInvalid(DecodeInstruction(code, 0).status(),
                  absl::StrFormat("unknown opcode %d at 0", op));
  }
}

TEST(DecodeErrorTest, PcPastTheEnd) {
  const std::vector<uint32_t> code = {MakeHeader(Opcode::kRet, 2), 0};
  ExpectInvalid(DecodeInstruction(code, 2).status(),
                "instruction at 2 starts past the end of the code (2 words)");
  ExpectInvalid(DecodeInstruction({}, 0).status(), "starts past the end");
}

TEST(DecodeErrorTest, LengthZero) {
  const std::vector<uint32_t> code = {MakeHeader(Opcode::kRet, 0), 0};
  ExpectInvalid(DecodeInstruction(code, 0).status(),
                "ret at 0: length 0 runs past the end of the code (2 words)");
}

TEST(DecodeErrorTest, LengthPastTheEnd) {
  const std::vector<uint32_t> code = {0, MakeHeader(Opcode::kAddI, 4), 1, 2};
  ExpectInvalid(DecodeInstruction(code, 1).status(),
                "addi at 1: length 4 runs past the end of the code (4 words)");
  const std::vector<uint32_t> huge = {MakeHeader(Opcode::kMove, kMaxInstructionWords), 0, 0};
  ExpectInvalid(DecodeInstruction(huge, 0).status(), "runs past the end");
}

TEST(DecodeErrorTest, HeaderLengthLongerThanTheFormat) {
  const std::vector<uint32_t> code = {MakeHeader(Opcode::kMove, 4), 1, 2, 3};
  ExpectInvalid(DecodeInstruction(code, 0).status(),
                "move at 0: header length 4 but operands take 3 words");
}

TEST(DecodeErrorTest, HeaderLengthShorterThanTheFormat) {
  const std::vector<uint32_t> code = {MakeHeader(Opcode::kAddI, 3), 1, 2, 3};
  ExpectInvalid(DecodeInstruction(code, 0).status(),
                "addi at 0: operands do not fit in its length 3");
  // An L immediate cut in half.
  const std::vector<uint32_t> split = {MakeHeader(Opcode::kLoadConsti, 3), 1, 2, 3};
  ExpectInvalid(DecodeInstruction(split, 0).status(), "operands do not fit in its length 3");
}

TEST(DecodeErrorTest, ListCountPastTheLength) {
  // invoke %0, @1, count 5 but only 2 registers inside the length.
  const std::vector<uint32_t> code = {MakeHeader(Opcode::kInvoke, 6), 0, 1, 5, 1, 2, 99, 99, 99};
  ExpectInvalid(DecodeInstruction(code, 0).status(), "invoke at 0: operands do not fit");
  // A '#' list: count 2 needs 4 words, 3 given.
  const std::vector<uint32_t> dims = {
      MakeHeader(Opcode::kAllocTensor, 10), 0, 0, 0, 0, 0, 2, 1, 0, 2, 0, 0};
  ExpectInvalid(DecodeInstruction(dims, 0).status(), "alloc_tensor at 0: operands do not fit");
  // A huge count must not overflow the bounds arithmetic.
  const std::vector<uint32_t> wild = {
      MakeHeader(Opcode::kAllocTensor, 7), 0, 0, 0, 0, 0, 0xffffffffu};
  ExpectInvalid(DecodeInstruction(wild, 0).status(), "operands do not fit");
  // The list count itself missing.
  const std::vector<uint32_t> no_count = {MakeHeader(Opcode::kMakeShape, 2), 0};
  ExpectInvalid(DecodeInstruction(no_count, 0).status(), "operands do not fit");
}

TEST(EncodeErrorTest, OperandCount) {
  std::vector<uint32_t> code = {42};
  ExpectInvalid(EncodeInstruction({Opcode::kAddI, {1, 2}, {}}, &code),
                "addi takes 3 operands, got 2");
  ExpectInvalid(EncodeInstruction({Opcode::kAddI, {1, 2, 3, 4}, {}}, &code),
                "addi: 4 operands given, format 'WRR' takes 3");
  ExpectInvalid(EncodeInstruction({Opcode::kInvoke, {1}, {2}}, &code),
                "invoke takes 2 operands, got 1");
  // A list for a format without one.
  ExpectInvalid(EncodeInstruction({Opcode::kMove, {1, 2}, {3}}, &code), "move: 2 operands given");
  EXPECT_EQ(code, std::vector<uint32_t>{42});  // nothing appended on error
}

TEST(EncodeErrorTest, ValueOutOfRange) {
  std::vector<uint32_t> code;
  ExpectInvalid(EncodeInstruction({Opcode::kMove, {-1, 0}, {}}, &code),
                "move: operand 0 value -1 does not fit in 32 bits");
  ExpectInvalid(EncodeInstruction({Opcode::kMove, {0, int64_t{1} << 32}, {}}, &code),
                "move: operand 1 value 4294967296 does not fit in 32 bits");
  ExpectInvalid(EncodeInstruction({Opcode::kGoto, {int64_t{1} << 31}, {}}, &code),
                "does not fit in 32 bits");
  ExpectInvalid(EncodeInstruction({Opcode::kGoto, {-(int64_t{1} << 31) - 1}, {}}, &code),
                "does not fit in 32 bits");
  ExpectInvalid(EncodeInstruction({Opcode::kMakeShape, {0}, {1, -1}}, &code),
                "make_shape: register -1 out of range");
  ExpectInvalid(EncodeInstruction({Opcode::kMakeShape, {0}, {int64_t{1} << 32}}, &code),
                "register 4294967296 out of range");
  EXPECT_TRUE(code.empty());
  ExpectInvalid(EncodeInstruction({static_cast<Opcode>(kNumOpcodes), {}, {}}, &code),
                "unknown opcode");
  EXPECT_TRUE(code.empty());
}

// docs/bytecode.md names every mnemonic in backticks, and its opcode tables give each
// the number and format of vm/opcodes.def.
std::string ReadDoc() {
  std::ifstream in(DYNVM_BYTECODE_DOC);
  EXPECT_TRUE(in.good()) << "cannot open " << DYNVM_BYTECODE_DOC;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(BytecodeDocTest, MentionsEveryMnemonic) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty());
  for (Opcode op : AllOpcodes()) {
    EXPECT_NE(doc.find(absl::StrFormat("`%s`", Mnemonic(op))), std::string::npos)
        << "docs/bytecode.md does not mention `" << Mnemonic(op) << "`";
  }
}

TEST(BytecodeDocTest, TableRowsMatchTheOpcodeTable) {
  const std::string doc = ReadDoc();
  // "| 10 | `alloc_tensor` | `WRLD#` | ..." (the format column is absent in some tables).
  const std::regex row(R"(\|\s*(\d+)\s*\|\s*`([a-z_]+)`\s*\|(\s*`([A-Z+#]+)`\s*\|)?)");
  std::set<int> seen;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator();
       ++it) {
    const int number = std::stoi((*it)[1].str());
    const std::string mnemonic = (*it)[2].str();
    SCOPED_TRACE(mnemonic);
    absl::StatusOr<Opcode> op = OpcodeFromMnemonic(mnemonic);
    ASSERT_TRUE(op.ok()) << "the doc lists an unknown instruction";
    EXPECT_EQ(static_cast<int>(*op), number);
    if ((*it)[4].matched) {
      EXPECT_EQ(GetOpcodeInfo(*op).format, (*it)[4].str());
    }
    seen.insert(number);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kNumOpcodes)) << "every opcode has a table row";
}

}  // namespace
}  // namespace dynvm::vm
