// Tests of vm/verifier.h: a valid program using every kind of operand passes, and each
// rule rejects a small program that breaks it with InvalidArgument naming the function,
// the instruction offset and mnemonic, and the values involved.
#include "vm/verifier.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "objects/shape_tuple.h"
#include "objects/storage.h"
#include "objects/string_object.h"
#include "vm/bytecode.h"
#include "vm/executable.h"

namespace dynvm::vm {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kF32 = static_cast<int64_t>(DType::kF32);

Instruction Op(Opcode op, std::vector<int64_t> operands, std::vector<int64_t> list = {}) {
  return Instruction{op, std::move(operands), std::move(list)};
}

std::vector<uint32_t> Assemble(std::initializer_list<Instruction> insts) {
  std::vector<uint32_t> code;
  for (const Instruction& inst : insts) {
    absl::Status status = EncodeInstruction(inst, &code);
    EXPECT_TRUE(status.ok()) << status;
  }
  return code;
}

std::vector<ValueSpec> AnyParams(int n) { return std::vector<ValueSpec>(n); }

Function MakeFunction(std::string name, uint32_t num_registers, int num_params,
                      std::vector<uint32_t> code) {
  Function f;
  f.name = std::move(name);
  f.num_registers = num_registers;
  f.params = AnyParams(num_params);
  f.code = std::move(code);
  return f;
}

// Function indices of BaseSpec.
constexpr int64_t kMain = 0, kHelper = 1, kThrower = 2, kTail = 3;
// Constant indices of BaseSpec.
constexpr int64_t kMessage = 0, kTensor = 1, kSeven = 2;

// main(%0, %1) with 8 registers, whose code each test supplies, and three valid
// helpers: helper(%0) (one parameter, a backward jump), thrower() (fatal), tail(%0)
// (tail call). One kernel, add (2 inputs, 1 output); five constants: a string, a
// tensor, an int, a float and a bool.
ExecutableSpec BaseSpec(std::vector<uint32_t> main_code) {
  ExecutableSpec spec;
  spec.functions.push_back(MakeFunction("main", 8, 2, std::move(main_code)));
  spec.functions.push_back(
      MakeFunction("helper", 2, 1,
                   Assemble({Op(Opcode::kMove, {1, 0}),    // pc 0
                             Op(Opcode::kIf, {1, 4, -3}),  // pc 3: then 7, else 0
                             Op(Opcode::kRet, {1})})));    // pc 7
  spec.functions.push_back(
      MakeFunction("thrower", 1, 0, Assemble({Op(Opcode::kFatal, {kMessage})})));
  spec.functions.push_back(
      MakeFunction("tail", 1, 1, Assemble({Op(Opcode::kTailInvoke, {kHelper}, {0})})));
  spec.kernels.push_back(KernelEntry{"add", {}, 2, 1});
  spec.constants.push_back(Value(MakeObject<StringObj>("boom")));
  spec.constants.push_back(Value(*NDArrayObj::Empty({2}, DType::kF32, MakeNaiveAllocator())));
  spec.constants.push_back(Value::Int(7));
  spec.constants.push_back(Value::Float(0.5));
  spec.constants.push_back(Value::Bool(true));
  return spec;
}

absl::Status VerifyMain(std::initializer_list<Instruction> insts) {
  return VerifyExecutable(BaseSpec(Assemble(insts)));
}

// Expects InvalidArgument whose message contains every one of `parts`.
void ExpectRejected(const absl::Status& status, std::initializer_list<std::string> parts) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  for (const std::string& part : parts) {
    EXPECT_THAT(std::string(status.message()), HasSubstr(part));
  }
}

TEST(VerifierTest, ValidProgramPasses) {
  const absl::Status status = VerifyMain({
      Op(Opcode::kLoadConsti, {2, 3}),                    // pc 0 (4 words)
      Op(Opcode::kAddI, {3, 0, 1}),                       // pc 4 (4)
      Op(Opcode::kInvoke, {4, kHelper}, {3}),             // pc 8 (5)
      Op(Opcode::kLtI, {5, 2, 4}),                        // pc 13 (4)
      Op(Opcode::kIf, {5, 4, 11}),                        // pc 17 (4): 21 / 28
      Op(Opcode::kInvokePacked, {0, 1}, {0, 1, 3}),       // pc 21 (7)
      Op(Opcode::kLoadConst, {6, kTensor}),               // pc 28 (3)
      Op(Opcode::kAllocClosure, {7, kHelper}, {}),        // pc 31 (4)
      Op(Opcode::kAllocADT, {6, 2}, {0, 7}),              // pc 35 (6)
      Op(Opcode::kMakeShape, {7}, {2, 3}),                // pc 41 (5)
      Op(Opcode::kAllocStorage, {6, 2}),                  // pc 46 (3)
      Op(Opcode::kAllocTensor, {7, 6, 0, kF32}, {2, 3}),  // pc 49 (11)
      Op(Opcode::kDim, {5, 7, 15}),                       // pc 60 (4)
      Op(Opcode::kDeviceCopy, {6, 7, 1, 1}),              // pc 64 (5)
      Op(Opcode::kAllocTensorReg, {7, 6, 2, static_cast<int64_t>(DType::kBool), 7}),  // pc 69 (6)
      Op(Opcode::kAllocClosure, {7, kTail}, {0}),                                     // pc 75 (5)
      Op(Opcode::kGoto, {2}),  // pc 80 (2): 82
      Op(Opcode::kRet, {4}),   // pc 82
  });
  EXPECT_TRUE(status.ok()) << status;
}

// [RULE source-map] Entries name instruction starts, in increasing order, and sources in
// the table.
TEST(VerifierTest, SourceMapNamesInstructionsAndSources) {
  ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kLoadConsti, {2, 3}),  // pc 0
                                           Op(Opcode::kMove, {3, 2}),        // pc 4
                                           Op(Opcode::kRet, {3})}));         // pc 7
  spec.sources = {"ONNX node 'a' (Add)", "ONNX node 'b' (Mul)"};
  spec.functions[0].source_map = {{0, 1}, {4, 0}, {7, 1}};
  EXPECT_TRUE(VerifyExecutable(spec).ok()) << VerifyExecutable(spec);
  spec.functions[0].source_map = {{0, 1}, {5, 0}};
  ExpectRejected(VerifyExecutable(spec), {"function 'main'", "source map entry 1: pc 5 is not an instruction"});
  spec.functions[0].source_map = {{0, 1}, {9, 0}};
  ExpectRejected(VerifyExecutable(spec), {"source map entry 1: pc 9 is not an instruction"});
  spec.functions[0].source_map = {{4, 1}, {4, 0}};
  ExpectRejected(VerifyExecutable(spec), {"source map entry 1: pc 4 does not follow the previous entry's 4"});
  spec.functions[0].source_map = {{4, 1}, {0, 0}};
  ExpectRejected(VerifyExecutable(spec), {"source map entry 1: pc 0 does not follow the previous entry's 4"});
  spec.functions[0].source_map = {{7, 2}};
  ExpectRejected(VerifyExecutable(spec), {"source index 2 out of range: the table has 2"});
}

// Every opcode of the table, with operands that satisfy its rules, followed by ret:
// no rule over-rejects.
TEST(VerifierTest, EveryOpcodeWithValidOperandsPasses) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = static_cast<Opcode>(i);
    const std::string_view format = GetOpcodeInfo(op).format;
    SCOPED_TRACE(GetOpcodeInfo(op).mnemonic);
    Instruction inst{op, {}, {}};
    const uint32_t words = FixedLength(format);
    for (char letter : format) {
      switch (letter) {
        case 'W':
        case 'R': inst.operands.push_back(1); break;
        // An axis, a tag, a field, an output count or a device type: 1 fits them all.
        case 'I': inst.operands.push_back(1); break;
        case 'J': inst.operands.push_back(words); break;  // to the next instruction
        case 'K': inst.operands.push_back(kMessage); break;
        case 'F': inst.operands.push_back(kHelper); break;
        case 'P': inst.operands.push_back(0); break;
        case 'D': inst.operands.push_back(kF32); break;
        case 'L': inst.operands.push_back(64); break;
        case '#': inst.list = {2, 3}; break;
        // invoke_packed reads its output (a tensor it fills); invoke_shape_fn writes its own.
        case '+':
          inst.list = op == Opcode::kInvokePacked   ? std::vector<int64_t>{0, 1, 1}
                      : op == Opcode::kInvokeShapeFn ? std::vector<int64_t>{0, 1, 2}
                                                     : std::vector<int64_t>{0};
          break;
      }
    }
    std::vector<uint32_t> code;
    ASSERT_TRUE(EncodeInstruction(inst, &code).ok());
    ASSERT_TRUE(EncodeInstruction(Op(Opcode::kRet, {0}), &code).ok());
    const absl::Status status = VerifyExecutable(BaseSpec(code));
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(VerifierTest, MinimalAndEmptyTablesPass) {
  ExecutableSpec spec;
  spec.functions.push_back(MakeFunction("id", 1, 1, Assemble({Op(Opcode::kRet, {0})})));
  EXPECT_TRUE(VerifyExecutable(spec).ok());
  EXPECT_TRUE(VerifyExecutable(ExecutableSpec{}).ok());  // nothing to run is not wrong
}

TEST(VerifierTest, WrittenRegisterOutOfRange) {
  ExpectRejected(
      VerifyMain({Op(Opcode::kMove, {8, 0}), Op(Opcode::kRet, {0})}),
      {"function 'main'", "instruction 0 (move)", "register 8 out of range: frame has 8"});
}

TEST(VerifierTest, ReadRegisterOutOfRange) {
  ExpectRejected(
      VerifyMain({Op(Opcode::kRet, {0}), Op(Opcode::kAddI, {0, 0, 100}), Op(Opcode::kRet, {0})}),
      {"function 'main'", "instruction 2 (addi)", "register 100 out of range"});
  ExpectRejected(VerifyMain({Op(Opcode::kRet, {0xffffffff})}),
                 {"instruction 0 (ret)", "register 4294967295 out of range: frame has 8"});
}

TEST(VerifierTest, ListRegisterOutOfRange) {
  ExpectRejected(VerifyMain({Op(Opcode::kInvoke, {0, kHelper}, {8}), Op(Opcode::kRet, {0})}),
                 {"function 'main'", "instruction 0 (invoke)", "register 8 out of range"});
  ExpectRejected(VerifyMain({Op(Opcode::kMakeShape, {0}, {1, 2, 3, 9}), Op(Opcode::kRet, {0})}),
                 {"instruction 0 (make_shape)", "register 9 out of range"});
  ExpectRejected(VerifyMain({Op(Opcode::kInvokePacked, {0, 1}, {0, 1, 50}), Op(Opcode::kRet, {0})}),
                 {"instruction 0 (invoke_packed)", "register 50 out of range"});
}

TEST(VerifierTest, ConstantIndexOutOfRange) {
  ExpectRejected(VerifyMain({Op(Opcode::kLoadConst, {0, 5}), Op(Opcode::kRet, {0})}),
                 {"function 'main'", "instruction 0 (load_const)",
                  "constant index 5 out of range: the table has 5"});
  ExpectRejected(VerifyMain({Op(Opcode::kFatal, {77})}),
                 {"instruction 0 (fatal)", "constant index 77 out of range"});
}

TEST(VerifierTest, FunctionIndexOutOfRange) {
  ExpectRejected(VerifyMain({Op(Opcode::kInvoke, {0, 4}, {}), Op(Opcode::kRet, {0})}),
                 {"function 'main'", "instruction 0 (invoke)",
                  "function index 4 out of range: the table has 4"});
  ExpectRejected(VerifyMain({Op(Opcode::kTailInvoke, {9}, {})}),
                 {"instruction 0 (tail_invoke)", "function index 9 out of range"});
  ExpectRejected(VerifyMain({Op(Opcode::kAllocClosure, {0, 4}, {}), Op(Opcode::kRet, {0})}),
                 {"instruction 0 (alloc_closure)", "function index 4 out of range"});
}

TEST(VerifierTest, KernelIndexOutOfRange) {
  ExpectRejected(VerifyMain({Op(Opcode::kInvokePacked, {1, 1}, {0, 1, 2}), Op(Opcode::kRet, {0})}),
                 {"function 'main'", "instruction 0 (invoke_packed)",
                  "kernel index 1 out of range: the table has 1"});
}

TEST(VerifierTest, JumpIntoTheMiddleOfAnInstruction) {
  // goto at 0 is two words; +1 lands on its own operand.
  ExpectRejected(VerifyMain({Op(Opcode::kGoto, {1}), Op(Opcode::kRet, {0})}),
                 {"function 'main'", "instruction 0: jump target 1 is not an instruction"});
  // if at 2 with its else branch into the middle of the move at 6.
  ExpectRejected(VerifyMain({Op(Opcode::kRet, {0}), Op(Opcode::kIf, {0, -2, 5}),
                             Op(Opcode::kMove, {0, 1}), Op(Opcode::kRet, {0})}),
                 {"instruction 2: jump target 7 is not an instruction"});
}

TEST(VerifierTest, JumpBeforeTheStart) {
  ExpectRejected(VerifyMain({Op(Opcode::kGoto, {-1}), Op(Opcode::kRet, {0})}),
                 {"function 'main'", "instruction 0: jump target -1 is not an instruction"});
  ExpectRejected(VerifyMain({Op(Opcode::kRet, {0}), Op(Opcode::kGoto, {-(int64_t{1} << 31)})}),
                 {"instruction 2: jump target -2147483646 is not an instruction"});
}

TEST(VerifierTest, JumpPastTheEnd) {
  // The code is 4 words: a jump to 4 (the end) or beyond is out.
  ExpectRejected(VerifyMain({Op(Opcode::kRet, {0}), Op(Opcode::kGoto, {2})}),
                 {"instruction 2: jump target 4 is not an instruction"});
  ExpectRejected(VerifyMain({Op(Opcode::kIf, {0, 4, 1000}), Op(Opcode::kRet, {0})}),
                 {"instruction 0: jump target 1000 is not an instruction"});
}

TEST(VerifierTest, JumpsToInstructionStartsPass) {
  // A loop: backward and forward jumps, and a jump to itself.
  const absl::Status status = VerifyMain({
      Op(Opcode::kMove, {2, 0}),    // pc 0
      Op(Opcode::kIf, {2, 4, -3}),  // pc 3 -> 7, 0
      Op(Opcode::kGoto, {0}),       // pc 7 -> 7
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(VerifierTest, InvokeArityMismatch) {
  ExpectRejected(
      VerifyMain({Op(Opcode::kInvoke, {2, kHelper}, {0, 1}), Op(Opcode::kRet, {2})}),
      {"function 'main'", "instruction 0 (invoke)", "calls 'helper' with 2 arguments, it takes 1"});
  ExpectRejected(VerifyMain({Op(Opcode::kInvoke, {2, kThrower}, {0}), Op(Opcode::kRet, {2})}),
                 {"calls 'thrower' with 1 arguments, it takes 0"});
}

TEST(VerifierTest, TailInvokeArityMismatch) {
  ExpectRejected(VerifyMain({Op(Opcode::kTailInvoke, {kHelper}, {})}),
                 {"function 'main'", "instruction 0 (tail_invoke)",
                  "calls 'helper' with 0 arguments, it takes 1"});
  EXPECT_TRUE(VerifyMain({Op(Opcode::kTailInvoke, {kMain}, {1, 0})}).ok());
}

TEST(VerifierTest, AllocClosureCapturesTooMany) {
  ExpectRejected(
      VerifyMain({Op(Opcode::kAllocClosure, {2, kHelper}, {0, 1}), Op(Opcode::kRet, {2})}),
      {"function 'main'", "instruction 0 (alloc_closure)",
       "captures 2 values for 'helper', which takes 1 parameters"});
  // All of them, or none, is fine.
  EXPECT_TRUE(
      VerifyMain({Op(Opcode::kAllocClosure, {2, kMain}, {0, 1}), Op(Opcode::kRet, {2})}).ok());
  EXPECT_TRUE(
      VerifyMain({Op(Opcode::kAllocClosure, {2, kThrower}, {}), Op(Opcode::kRet, {2})}).ok());
}

TEST(VerifierTest, InvokePackedArityMismatch) {
  ExpectRejected(
      VerifyMain({Op(Opcode::kInvokePacked, {0, 1}, {0, 1}), Op(Opcode::kRet, {0})}),
      {"function 'main'", "instruction 0 (invoke_packed)",
       "kernel 'add' takes 2 inputs and 1 outputs, the call passes 2 arguments with 1 outputs"});
  ExpectRejected(VerifyMain({Op(Opcode::kInvokePacked, {0, 2}, {0, 1, 2}), Op(Opcode::kRet, {0})}),
                 {"the call passes 3 arguments with 2 outputs"});
  ExpectRejected(VerifyMain({Op(Opcode::kInvokePacked, {0, 0}, {0, 1, 2}), Op(Opcode::kRet, {0})}),
                 {"the call passes 3 arguments with 0 outputs"});
}

TEST(VerifierTest, InvalidDType) {
  ExpectRejected(
      VerifyMain({Op(Opcode::kAllocTensor, {2, 0, 0, kNumDTypes}, {1}), Op(Opcode::kRet, {2})}),
      {"function 'main'", "instruction 0 (alloc_tensor)", absl::StrCat("invalid dtype ", kNumDTypes)});
  ExpectRejected(
      VerifyMain({Op(Opcode::kAllocTensorReg, {2, 0, 1, 255, 1}), Op(Opcode::kRet, {2})}),
      {"instruction 0 (alloc_tensor_reg)", "invalid dtype 255"});
  EXPECT_TRUE(
      VerifyMain({Op(Opcode::kAllocTensor, {2, 0, 0, kNumDTypes - 1}, {1}), Op(Opcode::kRet, {2})})
          .ok());
}

TEST(VerifierTest, AllocTensorStaticShape) {
  const std::vector<int64_t> rank16(16, 1);
  const std::vector<int64_t> rank17(17, 1);
  ExpectRejected(
      VerifyMain({Op(Opcode::kAllocTensor, {2, 0, 0, kF32}, rank17), Op(Opcode::kRet, {2})}),
      {"function 'main'", "instruction 0 (alloc_tensor)", "rank 17 above the maximum 16"});
  EXPECT_TRUE(
      VerifyMain({Op(Opcode::kAllocTensor, {2, 0, 0, kF32}, rank16), Op(Opcode::kRet, {2})}).ok());
  ExpectRejected(
      VerifyMain({Op(Opcode::kAllocTensor, {2, 0, 0, kF32}, {4, -3}), Op(Opcode::kRet, {2})}),
      {"instruction 0 (alloc_tensor)", "negative dim -3"});
  ExpectRejected(
      VerifyMain({Op(Opcode::kAllocTensor, {2, 0, -64, kF32}, {4}), Op(Opcode::kRet, {2})}),
      {"instruction 0 (alloc_tensor)", "negative offset -64"});
  // Zero extents and rank 0 are valid shapes.
  EXPECT_TRUE(
      VerifyMain({Op(Opcode::kAllocTensor, {2, 0, 0, kF32}, {0, 5}), Op(Opcode::kRet, {2})}).ok());
  EXPECT_TRUE(
      VerifyMain({Op(Opcode::kAllocTensor, {2, 0, 0, kF32}, {}), Op(Opcode::kRet, {2})}).ok());
}

TEST(VerifierTest, DimAxis) {
  ExpectRejected(VerifyMain({Op(Opcode::kDim, {2, 0, 16}), Op(Opcode::kRet, {2})}),
                 {"function 'main'", "instruction 0 (dim)", "axis 16 above the maximum rank 16"});
  ExpectRejected(VerifyMain({Op(Opcode::kDim, {2, 0, 0xffffffff}), Op(Opcode::kRet, {2})}),
                 {"axis 4294967295 above the maximum rank 16"});
  EXPECT_TRUE(VerifyMain({Op(Opcode::kDim, {2, 0, 15}), Op(Opcode::kRet, {2})}).ok());
}

TEST(VerifierTest, DeviceCopyOnlyCpu) {
  ExpectRejected(VerifyMain({Op(Opcode::kDeviceCopy, {2, 0, 2, 1}), Op(Opcode::kRet, {2})}),
                 {"function 'main'", "instruction 0 (device_copy)",
                  "device types 2 -> 1: only the CPU (1) is available"});
  ExpectRejected(VerifyMain({Op(Opcode::kDeviceCopy, {2, 0, 1, 0}), Op(Opcode::kRet, {2})}),
                 {"device types 1 -> 0"});
}

TEST(VerifierTest, FatalNeedsAStringConstant) {
  ExpectRejected(VerifyMain({Op(Opcode::kFatal, {kSeven})}),
                 {"function 'main'", "instruction 0 (fatal)",
                  "constant 2 is a int, expected a string message"});
  ExpectRejected(VerifyMain({Op(Opcode::kFatal, {kTensor})}),
                 {"constant 1 is a tensor, expected a string message"});
  EXPECT_TRUE(VerifyMain({Op(Opcode::kFatal, {kMessage})}).ok());
}

TEST(VerifierTest, LastInstructionFallsThrough) {
  ExpectRejected(VerifyMain({Op(Opcode::kRet, {0}), Op(Opcode::kMove, {0, 1})}),
                 {"function 'main'", "last instruction (move) falls off the end of the code"});
  ExpectRejected(VerifyMain({Op(Opcode::kInvoke, {0, kHelper}, {1})}),
                 {"last instruction (invoke) falls off"});
  // The rule is syntactic: an if is not a terminator even when both branches jump back.
  ExpectRejected(VerifyMain({Op(Opcode::kRet, {0}), Op(Opcode::kIf, {0, -2, -2})}),
                 {"last instruction (if) falls off"});
  for (auto last : {Op(Opcode::kRet, {0}), Op(Opcode::kFatal, {kMessage}), Op(Opcode::kGoto, {0}),
                    Op(Opcode::kTailInvoke, {kMain}, {0, 1})}) {
    EXPECT_TRUE(VerifyExecutable(BaseSpec(Assemble({last}))).ok())
        << GetOpcodeInfo(last.op).mnemonic;
  }
}

TEST(VerifierTest, EmptyCode) {
  ExpectRejected(VerifyExecutable(BaseSpec({})), {"function 'main': empty code"});
}

TEST(VerifierTest, FrameSmallerThanParams) {
  ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
  spec.functions[0].num_registers = 1;
  ExpectRejected(VerifyExecutable(spec),
                 {"function 'main'",
                  "frame of 1 registers: needs at least its 2 parameters and at most 65536"});
  spec.functions[0].num_registers = kMaxRegisters + 1;
  ExpectRejected(VerifyExecutable(spec), {"frame of 65537 registers"});
  spec.functions[0].num_registers = kMaxRegisters;
  spec.functions[0].code =
      Assemble({Op(Opcode::kLoadConsti, {kMaxRegisters - 1, 1}),
                Op(Opcode::kRet, {kMaxRegisters - 1})});
  EXPECT_TRUE(VerifyExecutable(spec).ok());
}

TEST(VerifierTest, DuplicateFunctionNames) {
  ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
  spec.functions.push_back(spec.functions[1]);
  ExpectRejected(VerifyExecutable(spec), {"function 'helper' defined twice"});
}

TEST(VerifierTest, ErrorsNameTheOffendingFunction) {
  ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
  spec.functions[kTail].code = Assemble({Op(Opcode::kMove, {0, 5}), Op(Opcode::kRet, {0})});
  ExpectRejected(VerifyExecutable(spec),
                 {"function 'tail': instruction 0 (move): register 5 out of range: frame has 1"});
}

TEST(VerifierTest, UndecodableCode) {
  std::vector<uint32_t> code = Assemble({Op(Opcode::kMove, {0, 1})});
  code.push_back(0x0200 | 99);  // unknown opcode 99, length 2
  code.push_back(0);
  ExpectRejected(VerifyExecutable(BaseSpec(code)), {"function 'main'", "unknown opcode 99 at 3"});

  std::vector<uint32_t> bad_length = Assemble({Op(Opcode::kRet, {0})});
  bad_length[0] = MakeHeader(Opcode::kRet, 3);
  bad_length.push_back(0);
  ExpectRejected(VerifyExecutable(BaseSpec(bad_length)),
                 {"function 'main'", "ret at 0: header length 3 but operands take 2 words"});

  std::vector<uint32_t> truncated = Assemble({Op(Opcode::kAddI, {0, 0, 0})});
  truncated.pop_back();
  ExpectRejected(VerifyExecutable(BaseSpec(truncated)),
                 {"function 'main'", "addi at 0: length 4 runs past the end"});
}

// Constants must be tensors, strings, ints, floats or bools.
TEST(VerifierTest, ConstantsOfInvalidKind) {
  auto allocator = MakeNaiveAllocator();
  std::vector<std::pair<Value, std::string>> bad = {
      {Value(*AllocateStorage(allocator, 64)), "storage"},
      {Value(ClosureObj::Create(0, {})), "closure"},
      {Value(ADTObj::Tuple({})), "adt"},
      {Value(MakeObject<ShapeTupleObj>(std::vector<int64_t>{1})), "shape"},
      {Value(), "none"},
  };
  for (auto& [value, name] : bad) {
    ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
    spec.constants.push_back(value);
    ExpectRejected(VerifyExecutable(spec),
                   {absl::StrFormat("constant 5 is a %s: expected a tensor, string, int, float "
                                    "or bool",
                                    name)});
  }
}

ValueSpec Tensor(std::vector<DimSpec> dims, DType dtype = DType::kF32) {
  ValueSpec spec;
  spec.kind = ValueSpec::Kind::kTensor;
  spec.dtype = dtype;
  spec.dims = std::move(dims);
  return spec;
}

TEST(VerifierTest, ValidSignaturesPass) {
  ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
  spec.functions[0].params = {
      Tensor({DimSpec::Symbol("n"), DimSpec::Constant(768), DimSpec::Any()}),
      ValueSpec{"k", ValueSpec::Kind::kInt, DType::kF32, {}, {}}};
  spec.functions[0].results = {Tensor({DimSpec::Constant(0)}, DType::kBool)};
  EXPECT_TRUE(VerifyExecutable(spec).ok());
}

TEST(VerifierTest, SignaturesWithBadDims) {
  auto check = [](std::vector<ValueSpec> params, std::vector<ValueSpec> results,
                  std::initializer_list<std::string> parts) {
    ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
    params.resize(2);
    spec.functions[0].params = std::move(params);
    spec.functions[0].results = std::move(results);
    ExpectRejected(VerifyExecutable(spec), parts);
  };
  check({Tensor({DimSpec{-2, ""}})}, {},
        {"function 'main'", "parameter 0 has an invalid dimension -2"});
  check({ValueSpec{}, Tensor({DimSpec{3, "n"}})}, {},  // a constant that also has a name
        {"parameter 1 has an invalid dimension 3"});
  check({Tensor(std::vector<DimSpec>(17, DimSpec::Constant(1)))}, {},
        {"parameter 0 has rank 17, above the maximum 16"});
  check({Tensor({}, static_cast<DType>(42))}, {}, {"parameter 0 has an invalid dtype"});
  ValueSpec unknown_kind;
  unknown_kind.kind = static_cast<ValueSpec::Kind>(9);
  check({unknown_kind}, {}, {"parameter 0 has an unknown kind 9"});
  check({}, {Tensor({DimSpec{-5, "m"}})}, {"result 0 has an invalid dimension -5"});
  check({}, {ValueSpec{}, ValueSpec{}}, {"a function returns one value"});
}

// `depth` tuples, each the only field of the one around it, around a tensor.
ValueSpec NestedTuples(int depth) {
  ValueSpec spec = Tensor({DimSpec::Symbol("n")});
  for (int i = 0; i < depth; ++i) {
    ValueSpec outer;
    outer.kind = ValueSpec::Kind::kTuple;
    outer.fields = {std::move(spec)};
    spec = std::move(outer);
  }
  return spec;
}

TEST(VerifierTest, TupleSignatures) {
  auto verify = [](std::vector<ValueSpec> results) {
    ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
    spec.functions[0].params.resize(2);
    spec.functions[0].results = std::move(results);
    return VerifyExecutable(spec);
  };
  EXPECT_TRUE(verify({NestedTuples(kMaxSpecDepth - 1)}).ok());
  ExpectRejected(verify({NestedTuples(kMaxSpecDepth)}),
                 {"result 0 field 0", "nests tuples deeper than the maximum 8"});
  ValueSpec bad_field = NestedTuples(2);
  bad_field.fields[0].fields[0].dims = {DimSpec{-3, ""}};
  ExpectRejected(verify({bad_field}), {"result 0 field 0 field 0 has an invalid dimension -3"});
  ValueSpec tensor_with_fields = Tensor({});
  tensor_with_fields.fields = {Tensor({})};
  ExpectRejected(verify({tensor_with_fields}), {"result 0 has fields but is not a tuple"});
}

TEST(VerifierTest, KernelEntryWithAbsurdArity) {
  ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
  spec.kernels.push_back(KernelEntry{"concat", {}, 2000, 1});
  ExpectRejected(VerifyExecutable(spec), {"kernel 'concat' declares 2000 inputs and 1 outputs"});
}

// [RULE defined-before-read]: every read finds its register defined on every path from
// the entry.

constexpr char kUndefined[] = "which is not defined on every path to it";

TEST(VerifierTest, ReadOfANeverWrittenRegister) {
  ExpectRejected(VerifyMain({Op(Opcode::kAddI, {2, 0, 5}), Op(Opcode::kRet, {2})}),
                 {"function 'main': instruction 0 (addi): reads register 5, which is not "
                  "defined on every path to it"});
  // Every kind of reader counts: fixed operands and lists.
  ExpectRejected(VerifyMain({Op(Opcode::kRet, {7})}),
                 {"instruction 0 (ret): reads register 7", kUndefined});
  ExpectRejected(VerifyMain({Op(Opcode::kInvoke, {2, kHelper}, {6}), Op(Opcode::kRet, {2})}),
                 {"instruction 0 (invoke): reads register 6", kUndefined});
  ExpectRejected(VerifyMain({Op(Opcode::kTailInvoke, {kMain}, {0, 3})}),
                 {"instruction 0 (tail_invoke): reads register 3", kUndefined});
  ExpectRejected(VerifyMain({Op(Opcode::kIf, {4, 4, 4}), Op(Opcode::kRet, {0})}),
                 {"instruction 0 (if): reads register 4", kUndefined});
  // A call writes its destination when it returns, too late to pass it as an argument.
  ExpectRejected(VerifyMain({Op(Opcode::kInvoke, {2, kHelper}, {2}), Op(Opcode::kRet, {2})}),
                 {"instruction 0 (invoke): reads register 2", kUndefined});
  // An instruction reads before it writes.
  ExpectRejected(VerifyMain({Op(Opcode::kAddI, {2, 2, 0}), Op(Opcode::kRet, {2})}),
                 {"instruction 0 (addi): reads register 2", kUndefined});
}

TEST(VerifierTest, ParametersAreDefinedAtTheEntry) {
  EXPECT_TRUE(VerifyMain({Op(Opcode::kAddI, {2, 0, 1}), Op(Opcode::kRet, {2})}).ok());
  ExecutableSpec spec = BaseSpec(Assemble({Op(Opcode::kRet, {0})}));
  spec.functions[kThrower].code = Assemble({Op(Opcode::kRet, {0})});  // it has no parameters
  ExpectRejected(VerifyExecutable(spec),
                 {"function 'thrower': instruction 0 (ret): reads register 0", kUndefined});
}

TEST(VerifierTest, WrittenOnOneBranchThenReadAfterTheJoin) {
  ExpectRejected(VerifyMain({
                     Op(Opcode::kIf, {0, 4, 8}),       // pc 0: then 4, else 8 (the join)
                     Op(Opcode::kLoadConsti, {2, 7}),  // pc 4: on the then path only
                     Op(Opcode::kRet, {2}),            // pc 8
                 }),
                 {"function 'main': instruction 8 (ret): reads register 2", kUndefined});
  // The write on the else path, the then path jumping over it.
  ExpectRejected(VerifyMain({
                     Op(Opcode::kIf, {0, 4, 6}),       // pc 0: then 4, else 6
                     Op(Opcode::kGoto, {6}),           // pc 4: to the join at 10
                     Op(Opcode::kLoadConsti, {2, 7}),  // pc 6
                     Op(Opcode::kAddI, {3, 2, 1}),     // pc 10
                     Op(Opcode::kRet, {3}),            // pc 14
                 }),
                 {"instruction 10 (addi): reads register 2", kUndefined});
}

TEST(VerifierTest, WrittenOnBothBranchesThenReadAfterTheJoin) {
  const absl::Status status = VerifyMain({
      Op(Opcode::kIf, {0, 4, 10}),             // pc 0: then 4, else 10
      Op(Opcode::kLoadConsti, {2, 1}),         // pc 4
      Op(Opcode::kGoto, {7}),                  // pc 8: to the join at 15
      Op(Opcode::kInvoke, {2, kHelper}, {1}),  // pc 10 (5 words)
      Op(Opcode::kAddI, {3, 2, 0}),            // pc 15: the join
      Op(Opcode::kRet, {3}),                   // pc 19
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(VerifierTest, WrittenBeforeALoopAndReadInside) {
  const absl::Status status = VerifyMain({
      Op(Opcode::kLoadConsti, {2, 0}),  // pc 0
      Op(Opcode::kLtI, {3, 2, 1}),      // pc 4: the loop head
      Op(Opcode::kIf, {3, 4, 10}),      // pc 8: body 12, exit 18
      Op(Opcode::kAddI, {2, 2, 0}),     // pc 12
      Op(Opcode::kGoto, {-12}),         // pc 16: back to 4
      Op(Opcode::kRet, {2}),            // pc 18
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(VerifierTest, KillOnALoopsBackEdgeReachesItsHead) {
  // %2 is defined on entry to the loop, killed before the back edge: the second
  // iteration reads none.
  ExpectRejected(VerifyMain({
                     Op(Opcode::kMove, {2, 0}),      // pc 0
                     Op(Opcode::kAddI, {3, 2, 2}),   // pc 3: the loop head
                     Op(Opcode::kKillRegister, {2}), // pc 7
                     Op(Opcode::kIf, {1, -6, 4}),    // pc 9: back to 3, or on to 13
                     Op(Opcode::kRet, {3}),          // pc 13
                 }),
                 {"function 'main': instruction 3 (addi): reads register 2", kUndefined});
}

TEST(VerifierTest, ReadAfterKill) {
  ExpectRejected(VerifyMain({
                     Op(Opcode::kLoadConsti, {2, 1}),  // pc 0
                     Op(Opcode::kKillRegister, {2}),   // pc 4
                     Op(Opcode::kRet, {2}),            // pc 6
                 }),
                 {"function 'main': instruction 6 (ret): reads register 2", kUndefined});
  ExpectRejected(VerifyMain({Op(Opcode::kKillRegister, {0}), Op(Opcode::kRet, {0})}),
                 {"instruction 2 (ret): reads register 0", kUndefined});
  // Written again, it is defined again; killing what was never written is no read.
  EXPECT_TRUE(VerifyMain({Op(Opcode::kLoadConsti, {2, 1}), Op(Opcode::kKillRegister, {2}),
                          Op(Opcode::kMove, {2, 0}), Op(Opcode::kRet, {2})})
                  .ok());
  EXPECT_TRUE(VerifyMain({Op(Opcode::kKillRegister, {5}), Op(Opcode::kRet, {0})}).ok());
}

TEST(VerifierTest, InvokeShapeFnWritesItsOutputs) {
  // add takes 2 inputs and has 1 output: the last register of the list is written.
  EXPECT_TRUE(
      VerifyMain({Op(Opcode::kInvokeShapeFn, {0, 1}, {0, 1, 2}), Op(Opcode::kRet, {2})}).ok());
  // Its inputs are read.
  ExpectRejected(
      VerifyMain({Op(Opcode::kInvokeShapeFn, {0, 1}, {0, 5, 2}), Op(Opcode::kRet, {2})}),
      {"instruction 0 (invoke_shape_fn): reads register 5", kUndefined});
  // invoke_packed fills its outputs in place: they must already hold tensors.
  ExpectRejected(
      VerifyMain({Op(Opcode::kInvokePacked, {0, 1}, {0, 1, 2}), Op(Opcode::kRet, {2})}),
      {"instruction 0 (invoke_packed): reads register 2", kUndefined});
}

TEST(VerifierTest, UnreachableCodeIsNotChecked) {
  EXPECT_TRUE(VerifyMain({Op(Opcode::kRet, {0}), Op(Opcode::kAddI, {2, 5, 6}),
                          Op(Opcode::kRet, {2})})
                  .ok());
}

// main with the largest frame and `blocks` basic blocks: gotos to the next instruction.
ExecutableSpec ManyBlocks(int blocks) {
  std::vector<uint32_t> code;
  for (int i = 0; i + 1 < blocks; ++i) {
    EXPECT_TRUE(EncodeInstruction(Op(Opcode::kGoto, {2}), &code).ok());
  }
  EXPECT_TRUE(EncodeInstruction(Op(Opcode::kRet, {0}), &code).ok());
  ExecutableSpec spec = BaseSpec(std::move(code));
  spec.functions[kMain].num_registers = kMaxRegisters;
  return spec;
}

TEST(VerifierTest, DefinednessStateAboveTheBudget) {
  constexpr int kMostBlocks = static_cast<int>(kMaxDefinednessBits / kMaxRegisters);  // 4096
  const absl::Status at_budget = VerifyExecutable(ManyBlocks(kMostBlocks));
  EXPECT_TRUE(at_budget.ok()) << at_budget;
  ExpectRejected(VerifyExecutable(ManyBlocks(kMostBlocks + 1)),
                 {"function 'main': too large to verify: 4097 basic blocks of 65536 registers "
                  "need 268500992 bits to track which registers are defined, above the budget "
                  "of 268435456"});
}

// One loop whose `k` blocks each kill one register and may jump back to the loop head
// above them all: every kill reaches the head through its own back edge.
ExecutableSpec Staircase(int k) {
  std::vector<Instruction> insts;
  for (int i = 0; i < k; ++i) insts.push_back(Op(Opcode::kLoadConsti, {2 + i, 0}));
  const int64_t head = 4 * k;
  insts.push_back(Op(Opcode::kMove, {2 + k, 0}));  // the loop head, 3 words
  int64_t pc = head + 3;
  for (int i = 0; i < k; ++i) {
    insts.push_back(Op(Opcode::kKillRegister, {2 + i}));
    insts.push_back(Op(Opcode::kIf, {0, head - (pc + 2), 4}));
    pc += 6;
  }
  insts.push_back(Op(Opcode::kRet, {0}));
  std::vector<uint32_t> code;
  for (const Instruction& inst : insts) EXPECT_TRUE(EncodeInstruction(inst, &code).ok());
  ExecutableSpec spec = BaseSpec(std::move(code));
  spec.functions[kMain].num_registers = static_cast<uint32_t>(k + 3);
  return spec;
}

TEST(VerifierTest, ALoopWithManyBackEdgesSettles) {
  // The back edges all narrow the head in one sweep; the next sweep settles.
  const absl::Status many = VerifyExecutable(Staircase(400));
  EXPECT_TRUE(many.ok()) << many;
}

// main entering a chain of `k` blocks laid out backwards: each jumps to the one above it,
// so reaching them takes one sweep per block.
ExecutableSpec BackwardChain(int k) {
  std::vector<Instruction> insts = {Op(Opcode::kGoto, {2 * k}),  // pc 0: to block k
                                    Op(Opcode::kRet, {0})};      // pc 2: block 1
  for (int i = 2; i <= k; ++i) insts.push_back(Op(Opcode::kGoto, {-2}));  // pc 2i: to block i - 1
  std::vector<uint32_t> code;
  for (const Instruction& inst : insts) EXPECT_TRUE(EncodeInstruction(inst, &code).ok());
  return BaseSpec(std::move(code));
}

TEST(VerifierTest, DefinednessThatDoesNotSettleInTime) {
  const absl::Status few = VerifyExecutable(BackwardChain(8));
  EXPECT_TRUE(few.ok()) << few;
  ExpectRejected(VerifyExecutable(BackwardChain(40)),
                 {"function 'main': too costly to verify: which registers are defined does not "
                  "settle within 16 sweeps over its 41 basic blocks"});
}

}  // namespace
}  // namespace dynvm::vm
