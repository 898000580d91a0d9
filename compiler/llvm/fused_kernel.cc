// EmitFusedKernel: a fused program's statements as straight-line vector code inside the
// row loop of each variant (RowEmitter), one operator at a time (EmitOp).
#include "compiler/llvm/fused_kernel.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/llvm/vector_ir.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"

namespace dynvm::compiler::llvm_codegen {
namespace {

using kernels::FusedOperand;
using kernels::FusedStatement;

// What every kernel-library operator of the grammar computes, on vectors: the AVX2
// table's unary microkernels (kernels/elementwise/ukernels_avx2.cc) and the binary
// kernels' functors (kernels/elementwise/binary_ops.h).
absl::StatusOr<llvm::Value*> EmitOp(VectorIr& v, llvm::IRBuilder<>& b, const FusedStatement& s,
                                    llvm::Value* x, llvm::Value* y) {
  const std::string_view op = s.op;
  llvm::Value* zero = v.F(0.0f);
  if (op == "add") return b.CreateFAdd(x, y);
  if (op == "subtract") return b.CreateFSub(x, y);
  if (op == "multiply") return b.CreateFMul(x, y);
  if (op == "divide") return b.CreateFDiv(x, y);
  if (op == "power") return v.LibmPerLane("powf", x, y);
  if (op == "mod") return b.CreateFRem(x, y);
  if (op == "floor_mod") {
    // (r != 0 && (r < 0) != (y < 0)) ? r + y : r
    llvm::Value* r = b.CreateFRem(x, y);
    llvm::Value* fix = b.CreateAnd(b.CreateFCmpUNE(r, zero),
                                   b.CreateXor(b.CreateFCmpOLT(r, zero), b.CreateFCmpOLT(y, zero)));
    return b.CreateSelect(fix, b.CreateFAdd(r, y), r);
  }
  if (op == "maximum" || op == "minimum") {
    // (x > y || x != x) ? x : y, and with < for minimum
    llvm::Value* cmp = op == "maximum" ? b.CreateFCmpOGT(x, y) : b.CreateFCmpOLT(x, y);
    return b.CreateSelect(b.CreateOr(cmp, v.IsNan(x)), x, y);
  }
  if (op == "negative") return b.CreateFNeg(x);
  if (op == "abs") return v.Abs(x);
  if (op == "exp") return v.Exp(x);
  if (op == "log") return v.Log(x);
  if (op == "sqrt") return v.Intrinsic(llvm::Intrinsic::sqrt, {x});
  if (op == "rsqrt") return b.CreateFDiv(v.F(1.0f), v.Intrinsic(llvm::Intrinsic::sqrt, {x}));
  if (op == "reciprocal") return b.CreateFDiv(v.F(1.0f), x);
  if (op == "tanh") return v.Tanh(x);
  if (op == "sigmoid") return v.Sigmoid(x);
  if (op == "nn.relu") return b.CreateSelect(b.CreateFCmpOGT(x, zero), x, zero);
  if (op == "nn.leaky_relu") {
    return b.CreateSelect(b.CreateFCmpOGT(x, zero), x, b.CreateFMul(x, v.F(s.params[0])));
  }
  if (op == "gelu") return v.GeluErf(x);
  if (op == "gelu_tanh") return v.GeluTanh(x);
  if (op == "erf") return v.Erf(x);
  if (op == "sin") return v.SinCos(x, /*cos=*/false);
  if (op == "cos") return v.SinCos(x, /*cos=*/true);
  if (op == "floor") return v.Intrinsic(llvm::Intrinsic::floor, {x});
  if (op == "ceil") return v.Intrinsic(llvm::Intrinsic::ceil, {x});
  if (op == "round") return v.Intrinsic(llvm::Intrinsic::roundeven, {x});
  if (op == "sign") return v.Sign(x);
  if (op == "clip") return v.MinPs(v.F(s.params[1]), v.MaxPs(v.F(s.params[0]), x));
  return absl::UnimplementedError(absl::StrFormat("native code for '%s' is not implemented", op));
}

// The function of one row variant being built.
class RowEmitter {
 public:
  RowEmitter(const kernels::FusedProgram& program, llvm::Function* fn, int width, bool has_fma,
             bool strided)
      : statements_(program.Statements()),
        num_inputs_(program.num_inputs()),
        fn_(fn),
        b_(fn->getContext()),
        v_(b_, width, has_fma),
        strided_(strided) {}

  absl::Status Emit();

 private:
  // The inputs' vectors at element `i`; `lanes` (null for a whole vector) masks a
  // partial one.
  std::vector<llvm::Value*> LoadInputs(llvm::Value* i, llvm::Value* lanes);
  // The program over `inputs`: its last temporary.
  absl::StatusOr<llvm::Value*> Compute(const std::vector<llvm::Value*>& inputs);
  llvm::Value* VectorPointer(llvm::Value* base, llvm::Value* index);
  llvm::BasicBlock* Block(const char* name) {
    return llvm::BasicBlock::Create(fn_->getContext(), name, fn_);
  }

  std::vector<FusedStatement> statements_;
  int num_inputs_;
  llvm::Function* fn_;
  llvm::IRBuilder<> b_;
  VectorIr v_;
  bool strided_;
  llvm::Value* out_ = nullptr;
  std::vector<llvm::Value*> base_;        // each input's row
  std::vector<llvm::Value*> advances_;    // strided: <W x i1>, all set if stride != 0
  std::vector<llvm::Value*> first_;       // strided: the first element, splatted
  std::vector<llvm::Value*> stride_;      // strided: i64 0 or 1
};

llvm::Value* RowEmitter::VectorPointer(llvm::Value* base, llvm::Value* index) {
  llvm::Value* p = b_.CreateInBoundsGEP(b_.getFloatTy(), base, index);
  return b_.CreateBitCast(p, v_.float_type()->getPointerTo());
}

std::vector<llvm::Value*> RowEmitter::LoadInputs(llvm::Value* i, llvm::Value* lanes) {
  const llvm::Align align(4);
  std::vector<llvm::Value*> values;
  for (int j = 0; j < num_inputs_; ++j) {
    if (!strided_) {
      llvm::Value* p = VectorPointer(base_[j], i);
      values.push_back(lanes == nullptr
                           ? static_cast<llvm::Value*>(b_.CreateAlignedLoad(v_.float_type(), p, align))
                           : b_.CreateMaskedLoad(v_.float_type(), p, align, lanes, v_.F(0.0f)));
      continue;
    }
    llvm::Value* p = VectorPointer(base_[j], b_.CreateMul(i, stride_[j]));
    llvm::Value* mask = lanes == nullptr ? advances_[j] : b_.CreateAnd(lanes, advances_[j]);
    values.push_back(b_.CreateMaskedLoad(v_.float_type(), p, align, mask, first_[j]));
  }
  return values;
}

absl::StatusOr<llvm::Value*> RowEmitter::Compute(const std::vector<llvm::Value*>& inputs) {
  std::vector<llvm::Value*> temps;
  for (const FusedStatement& s : statements_) {
    llvm::Value* args[2] = {nullptr, nullptr};
    for (int a = 0; a < s.num_operands; ++a) {
      const FusedOperand& o = s.operands[a];
      args[a] = o.kind == FusedOperand::kInput ? inputs[o.index]
                : o.kind == FusedOperand::kTemp ? temps[o.index]
                                                : v_.F(o.value);
    }
    DYNVM_ASSIGN_OR_RETURN(llvm::Value* t, EmitOp(v_, b_, s, args[0], args[1]));
    temps.push_back(t);
  }
  return temps.back();
}

absl::Status RowEmitter::Emit() {
  llvm::Type* i64 = b_.getInt64Ty();
  auto arg = fn_->arg_begin();
  out_ = &*arg++;
  llvm::Value* ins = &*arg++;
  llvm::Value* strides = &*arg++;
  llvm::Value* n = &*arg;
  llvm::BasicBlock* entry = Block("entry");
  b_.SetInsertPoint(entry);
  llvm::Type* f32_ptr = b_.getFloatTy()->getPointerTo();
  for (int j = 0; j < num_inputs_; ++j) {
    base_.push_back(b_.CreateAlignedLoad(
        f32_ptr, b_.CreateConstInBoundsGEP1_64(f32_ptr, ins, j), llvm::Align(8)));
    if (!strided_) continue;
    llvm::Value* stride =
        b_.CreateAlignedLoad(i64, b_.CreateConstInBoundsGEP1_64(i64, strides, j), llvm::Align(8));
    stride_.push_back(stride);
    advances_.push_back(b_.CreateVectorSplat(v_.width(), b_.CreateICmpNE(stride, b_.getInt64(0))));
    first_.push_back(b_.CreateVectorSplat(
        v_.width(), b_.CreateAlignedLoad(b_.getFloatTy(), base_[j], llvm::Align(4))));
  }
  llvm::BasicBlock* header = Block("vector.check");
  llvm::BasicBlock* body = Block("vector.body");
  llvm::BasicBlock* tail_check = Block("tail.check");
  llvm::BasicBlock* tail = Block("tail");
  llvm::BasicBlock* exit = Block("exit");
  b_.CreateBr(header);

  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(i64, 2, "i");
  i->addIncoming(b_.getInt64(0), entry);
  llvm::Value* width = b_.getInt64(v_.width());
  b_.CreateCondBr(b_.CreateICmpSLE(b_.CreateAdd(i, width), n), body, tail_check);

  b_.SetInsertPoint(body);
  DYNVM_ASSIGN_OR_RETURN(llvm::Value* full, Compute(LoadInputs(i, nullptr)));
  b_.CreateAlignedStore(full, VectorPointer(out_, i), llvm::Align(4));
  i->addIncoming(b_.CreateAdd(i, width), b_.GetInsertBlock());
  b_.CreateBr(header);

  b_.SetInsertPoint(tail_check);
  b_.CreateCondBr(b_.CreateICmpSLT(i, n), tail, exit);

  b_.SetInsertPoint(tail);
  std::vector<llvm::Constant*> iota;
  for (int k = 0; k < v_.width(); ++k) iota.push_back(b_.getInt64(k));
  llvm::Value* lanes = b_.CreateICmpSLT(llvm::ConstantVector::get(iota),
                                        b_.CreateVectorSplat(v_.width(), b_.CreateSub(n, i)));
  DYNVM_ASSIGN_OR_RETURN(llvm::Value* part, Compute(LoadInputs(i, lanes)));
  b_.CreateMaskedStore(part, VectorPointer(out_, i), llvm::Align(4), lanes);
  b_.CreateBr(exit);

  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();
  return absl::OkStatus();
}

llvm::Function* DeclareRow(llvm::Module& module, const std::string& name) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* f32_ptr = llvm::Type::getFloatPtrTy(ctx);
  llvm::FunctionType* type = llvm::FunctionType::get(
      llvm::Type::getVoidTy(ctx),
      {f32_ptr, f32_ptr->getPointerTo(), llvm::Type::getInt64PtrTy(ctx), llvm::Type::getInt64Ty(ctx)},
      /*isVarArg=*/false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::NoFree);
  fn->addFnAttr(llvm::Attribute::NoSync);
  return fn;
}

}  // namespace

absl::Status EmitFusedKernel(const kernels::FusedProgram& program, const std::string& base,
                             llvm::Module& module, int width, bool has_fma) {
  for (bool strided : {false, true}) {
    const std::string name = base + std::string(strided ? kStridedSuffix : kContiguousSuffix);
    llvm::Function* fn = DeclareRow(module, name);
    absl::Status status = RowEmitter(program, fn, width, has_fma, strided).Emit();
    if (!status.ok()) {
      fn->eraseFromParent();
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace dynvm::compiler::llvm_codegen
