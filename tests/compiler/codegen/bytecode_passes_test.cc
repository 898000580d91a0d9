// The bytecode passes on small hand-written functions: liveness, dead code removal,
// register allocation with kills, and memory planning, each shown as code before and
// after.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/function_code.h"
#include "compiler/codegen/liveness.h"
#include "compiler/codegen/memory_plan.h"
#include "compiler/codegen/register_alloc.h"
#include "gtest/gtest.h"
#include "objects/dtype.h"

namespace dynvm::compiler {
namespace {

using vm::Instruction;
using vm::Opcode;

constexpr int64_t kF32 = static_cast<int64_t>(DType::kF32);

// One line per instruction: "mnemonic operands (list)", registers as %N, jump targets
// as instruction indices.
std::string Text(const FunctionCode& f) {
  std::string out;
  for (const Instruction& inst : f.code) {
    const std::string_view format = vm::GetOpcodeInfo(inst.op).format;
    std::vector<std::string> parts;
    for (size_t i = 0; i < inst.operands.size(); ++i) {
      const char letter = format[i];
      parts.push_back(letter == 'R' || letter == 'W' ? absl::StrCat("%", inst.operands[i])
                      : letter == 'J'                ? absl::StrCat("@", inst.operands[i])
                                                     : absl::StrCat(inst.operands[i]));
    }
    if (!format.empty() && format.back() == '+') {
      std::vector<std::string> regs;
      for (int64_t r : inst.list) regs.push_back(absl::StrCat("%", r));
      parts.push_back(absl::StrCat("(", absl::StrJoin(regs, ", "), ")"));
    } else if (!format.empty() && format.back() == '#') {
      parts.push_back(absl::StrCat("[", absl::StrJoin(inst.list, ", "), "]"));
    }
    absl::StrAppend(&out, std::string(vm::GetOpcodeInfo(inst.op).mnemonic), " ", absl::StrJoin(parts, ", "), "\n");
  }
  return out;
}

Instruction I(Opcode op, std::vector<int64_t> operands, std::vector<int64_t> list = {}) {
  return {op, std::move(operands), std::move(list)};
}

// A tensor of 16 floats in a storage of its own, as the generator allocates outputs.
void AllocF32x16(std::vector<Instruction>& code, int64_t bytes, int64_t storage, int64_t tensor) {
  code.push_back(I(Opcode::kLoadConsti, {bytes, 64}));
  code.push_back(I(Opcode::kAllocStorage, {storage, bytes}));
  code.push_back(I(Opcode::kAllocTensor, {tensor, storage, 0, kF32}, {16}));
}

TEST(LivenessTest, BranchesSeeOnlyWhatTheyRead) {
  // %0 ? ret %1 + %1 : ret %2
  FunctionCode f{{I(Opcode::kLoadConsti, {1, 5}), I(Opcode::kLoadConsti, {2, 7}),
                  I(Opcode::kIf, {0, 3, 5}), I(Opcode::kAddI, {3, 1, 1}), I(Opcode::kRet, {3}),
                  I(Opcode::kRet, {2})},
                 1, 4};
  const Liveness live(f);
  EXPECT_EQ(live.starts(), (std::vector<size_t>{0, 3, 5, 6}));
  EXPECT_TRUE(live.LiveInAtBlockStart(3).contains(1));
  EXPECT_FALSE(live.LiveInAtBlockStart(3).contains(2));
  EXPECT_TRUE(live.LiveInAtBlockStart(5).contains(2));
  EXPECT_FALSE(live.LiveInAtBlockStart(5).contains(1));
  std::vector<std::vector<uint32_t>> live_out(f.code.size());
  live.ForEachInstruction([&](size_t at, const RegisterSet& set) {
    set.ForEach([&](uint32_t r) { live_out[at].push_back(r); });
  });
  EXPECT_EQ(live_out[0], (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(live_out[2], (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(live_out[3], (std::vector<uint32_t>{3}));
  EXPECT_TRUE(live_out[4].empty());
}

TEST(RemoveDeadCodeTest, UnreadPureResultsGoInChains) {
  FunctionCode f;
  f.num_params = 1;
  f.num_registers = 7;
  AllocF32x16(f.code, 1, 2, 3);  // never read: all three go
  f.code.push_back(I(Opcode::kLoadConsti, {4, 2}));
  f.code.push_back(I(Opcode::kAddI, {5, 4, 4}));
  f.code.push_back(I(Opcode::kDivI, {6, 5, 4}));  // can fail (a zero divisor): stays
  f.code.push_back(I(Opcode::kRet, {0}));
  RemoveDeadCode(f);
  EXPECT_EQ(Text(f),
            "load_consti %4, 2\n"
            "addi %5, %4, %4\n"
            "divi %6, %5, %4\n"
            "ret %0\n");
}

TEST(AllocateRegistersTest, ValuesThatDieGiveTheirRegistersAway) {
  // %1 = exp(%0); %2 = tanh(%1); ret %2, each output in a storage of its own.
  FunctionCode f;
  f.num_params = 1;
  f.num_registers = 7;
  AllocF32x16(f.code, 1, 2, 3);
  f.code.push_back(I(Opcode::kInvokePacked, {0, 1}, {0, 3}));
  AllocF32x16(f.code, 4, 5, 6);
  f.code.push_back(I(Opcode::kInvokePacked, {1, 1}, {3, 6}));
  f.code.push_back(I(Opcode::kRet, {6}));
  AllocateRegisters(f);
  EXPECT_EQ(Text(f),
            "load_consti %1, 64\n"
            "alloc_storage %2, %1\n"
            "alloc_tensor %1, %2, 0, 0, [16]\n"
            "kill %2\n"
            "invoke_packed 0, 1, (%0, %1)\n"
            "load_consti %0, 64\n"  // (no kill of %0 first: the write releases it)
            "alloc_storage %2, %0\n"
            "alloc_tensor %0, %2, 0, 0, [16]\n"
            "kill %2\n"
            "invoke_packed 1, 1, (%1, %0)\n"
            "kill %1\n"
            "ret %0\n");
  EXPECT_EQ(f.num_registers, 3u);
}

TEST(AllocateRegistersTest, ObjectsLiveIntoABranchAreKilledWhereTheyDie) {
  // %1 = a storage; if %0 { ret %1 } else { ret %2 }: the else branch kills %1 first.
  FunctionCode f{{I(Opcode::kLoadConsti, {3, 64}), I(Opcode::kAllocStorage, {1, 3}),
                  I(Opcode::kLoadConsti, {2, 1}), I(Opcode::kIf, {0, 4, 5}),
                  I(Opcode::kRet, {1}), I(Opcode::kRet, {2})},
                 1, 4};
  AllocateRegisters(f);
  EXPECT_EQ(Text(f),
            "load_consti %1, 64\n"
            "alloc_storage %2, %1\n"
            "load_consti %1, 1\n"
            "if %0, @4, @5\n"
            "ret %2\n"
            "kill %2\n"
            "ret %1\n");
}

TEST(MemoryPlanTest, StaticTensorsShareOneArenaByLiveRange) {
  // exp, tanh, sigmoid: the first output is dead once the second is computed, so the
  // third takes its place; the result escapes (ret) and keeps its own storage.
  FunctionCode f;
  f.num_params = 1;
  f.num_registers = 13;
  AllocF32x16(f.code, 1, 2, 3);
  f.code.push_back(I(Opcode::kInvokePacked, {0, 1}, {0, 3}));
  AllocF32x16(f.code, 4, 5, 6);
  f.code.push_back(I(Opcode::kInvokePacked, {1, 1}, {3, 6}));
  AllocF32x16(f.code, 7, 8, 9);
  f.code.push_back(I(Opcode::kInvokePacked, {2, 1}, {6, 9}));
  AllocF32x16(f.code, 10, 11, 12);
  f.code.push_back(I(Opcode::kInvokePacked, {0, 1}, {9, 12}));
  f.code.push_back(I(Opcode::kRet, {12}));
  const MemoryPlanStats stats = PlanMemory(f);
  EXPECT_EQ(stats.static_tensors, 3);
  EXPECT_EQ(stats.static_bytes, 3 * 64);
  EXPECT_EQ(stats.arena_bytes, 2 * 64);
  RemoveDeadCode(f);
  EXPECT_EQ(Text(f),
            "load_consti %13, 128\n"
            "alloc_storage %14, %13\n"
            "alloc_tensor %3, %14, 0, 0, [16]\n"
            "invoke_packed 0, 1, (%0, %3)\n"
            "alloc_tensor %6, %14, 64, 0, [16]\n"
            "invoke_packed 1, 1, (%3, %6)\n"
            "alloc_tensor %9, %14, 0, 0, [16]\n"
            "invoke_packed 2, 1, (%6, %9)\n"
            "load_consti %10, 64\n"
            "alloc_storage %11, %10\n"
            "alloc_tensor %12, %11, 0, 0, [16]\n"
            "invoke_packed 0, 1, (%9, %12)\n"
            "ret %12\n");
}

TEST(MemoryPlanTest, EqualSymbolicSizesShareStoragesThatDominate) {
  // Byte counts in %1 (one register: the same symbolic size). %4 is dead when the
  // branch allocates %10, and %4's storage is allocated on every path to it: %10 takes
  // that storage. %7 is returned, so it keeps its own.
  FunctionCode f;
  f.num_params = 2;  // %0 a tensor, %1 its byte count
  f.num_registers = 14;
  const auto alloc = [&](int64_t storage, int64_t tensor) {
    f.code.push_back(I(Opcode::kAllocStorage, {storage, 1}));
    f.code.push_back(I(Opcode::kAllocTensorReg, {tensor, storage, 13, kF32, 12}));
  };
  f.code.push_back(I(Opcode::kShapeOf, {12, 0}));                   // 0
  f.code.push_back(I(Opcode::kLoadConsti, {13, 0}));                // 1
  alloc(3, 4);                                                      // 2, 3
  f.code.push_back(I(Opcode::kInvokePacked, {0, 1}, {0, 4}));       // 4
  alloc(6, 7);                                                      // 5, 6
  f.code.push_back(I(Opcode::kInvokePacked, {0, 1}, {4, 7}));       // 7
  f.code.push_back(I(Opcode::kIf, {0, 9, 12}));                     // 8
  alloc(9, 10);                                                     // 9, 10
  f.code.push_back(I(Opcode::kInvokePacked, {0, 1}, {7, 10}));      // 11
  f.code.push_back(I(Opcode::kRet, {7}));                           // 12
  const MemoryPlanStats stats = PlanMemory(f);
  EXPECT_EQ(stats.symbolic_tensors, 2);  // %4 and %10; %7 escapes
  EXPECT_EQ(stats.symbolic_storages, 1);
  const std::string text = Text(f);
  EXPECT_NE(text.find("alloc_tensor_reg %10, %3, %13, 0, %12"), std::string::npos) << text;
  EXPECT_EQ(text.find("alloc_storage %9"), std::string::npos) << text;
}

TEST(FunctionCodeTest, RewriteMovesJumpsToWhatIsInsertedBeforeTheirTarget) {
  FunctionCode f{{I(Opcode::kIf, {0, 1, 2}), I(Opcode::kGoto, {2}), I(Opcode::kRet, {0})}, 1, 1};
  Rewrite(f, {true, false, true}, {{}, {}, {I(Opcode::kKillRegister, {0})}});
  EXPECT_EQ(Text(f),
            "if %0, @1, @1\n"
            "kill %0\n"
            "ret %0\n");
  const absl::StatusOr<std::vector<uint32_t>> words = Encode(f);
  ASSERT_TRUE(words.ok()) << words.status();
  // if: header + 3 operands; its offsets are relative words: 4 to the kill.
  EXPECT_EQ((*words)[2], 4u);
  EXPECT_EQ((*words)[3], 4u);
}

}  // namespace
}  // namespace dynvm::compiler
