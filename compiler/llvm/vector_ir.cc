// VectorIr: the kernel library's vector math as LLVM IR, operation for operation
// (kernels/internal/vmath_avx2.h is the reference; keep the two in step).
#include "compiler/llvm/vector_ir.h"

#include <cmath>

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace dynvm::compiler::llvm_codegen {

VectorIr::VectorIr(llvm::IRBuilder<>& b, int width, bool has_fma)
    : b_(b),
      width_(width),
      has_fma_(has_fma),
      f32v_(llvm::FixedVectorType::get(b.getFloatTy(), width)),
      i32v_(llvm::FixedVectorType::get(b.getInt32Ty(), width)) {}

llvm::Value* VectorIr::F(float v) { return llvm::ConstantFP::get(f32v_, v); }
llvm::Value* VectorIr::I(int32_t v) { return llvm::ConstantInt::get(i32v_, v, /*isSigned=*/true); }

llvm::Value* VectorIr::Intrinsic(llvm::Intrinsic::ID id, std::initializer_list<llvm::Value*> args) {
  return b_.CreateIntrinsic(id, {(*args.begin())->getType()}, llvm::ArrayRef<llvm::Value*>(args));
}

llvm::Value* VectorIr::Fma(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
  if (has_fma_) return Intrinsic(llvm::Intrinsic::fma, {a, b, c});
  return b_.CreateFAdd(b_.CreateFMul(a, b), c);
}

llvm::Value* VectorIr::Fnma(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
  return Fma(b_.CreateFNeg(a), b, c);
}

llvm::Value* VectorIr::MinPs(llvm::Value* a, llvm::Value* b) {
  return b_.CreateSelect(b_.CreateFCmpOLT(a, b), a, b);
}

llvm::Value* VectorIr::MaxPs(llvm::Value* a, llvm::Value* b) {
  return b_.CreateSelect(b_.CreateFCmpOGT(a, b), a, b);
}

llvm::Value* VectorIr::Bits(llvm::Value* x) { return b_.CreateBitCast(x, i32v_); }
llvm::Value* VectorIr::Float(llvm::Value* bits) { return b_.CreateBitCast(bits, f32v_); }
llvm::Value* VectorIr::ToInt(llvm::Value* x) {
  return b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {i32v_, f32v_}, {x});
}

llvm::Value* VectorIr::Abs(llvm::Value* x) { return Intrinsic(llvm::Intrinsic::fabs, {x}); }
llvm::Value* VectorIr::IsNan(llvm::Value* x) { return b_.CreateFCmpUNO(x, x); }

llvm::Value* VectorIr::Poly(llvm::Value* x, std::initializer_list<float> c) {
  auto it = c.begin();
  llvm::Value* p = F(*it++);
  for (; it != c.end(); ++it) p = Fma(p, x, F(*it));
  return p;
}

llvm::Value* VectorIr::Exp(llvm::Value* x) {
  x = MinPs(F(88.8f), MaxPs(F(-104.0f), x));
  llvm::Value* n = Intrinsic(llvm::Intrinsic::roundeven, {b_.CreateFMul(x, F(1.44269504088896341f))});
  llvm::Value* r = Fnma(n, F(0.693359375f), x);
  r = Fnma(n, F(-2.12194440e-4f), r);
  llvm::Value* poly = Poly(r, {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f});
  llvm::Value* p = b_.CreateFAdd(Fma(poly, b_.CreateFMul(r, r), r), F(1.0f));
  // n is in [-150, 128]: two factors 2^(n/2) keep both exponents normal.
  llvm::Value* ni = ToInt(n);
  llvm::Value* n1 = b_.CreateAShr(ni, I(1));
  llvm::Value* n2 = b_.CreateSub(ni, n1);
  llvm::Value* s1 = Float(b_.CreateShl(b_.CreateAdd(n1, I(127)), I(23)));
  llvm::Value* s2 = Float(b_.CreateShl(b_.CreateAdd(n2, I(127)), I(23)));
  return b_.CreateFMul(b_.CreateFMul(p, s1), s2);
}

llvm::Value* VectorIr::Log(llvm::Value* x) {
  llvm::Value* zero = F(0.0f);
  llvm::Value* sub = b_.CreateFCmpOLT(x, F(1.17549435e-38f));
  llvm::Value* xs = b_.CreateSelect(sub, b_.CreateFMul(x, F(8388608.0f)), x);
  llvm::Value* bits = Bits(xs);
  llvm::Value* e = b_.CreateSIToFP(b_.CreateSub(b_.CreateLShr(bits, I(23)), I(126)), f32v_);
  e = b_.CreateFAdd(e, b_.CreateSelect(sub, F(-23.0f), zero));
  llvm::Value* m = Float(b_.CreateOr(b_.CreateAnd(bits, I(0x007fffff)), Bits(F(0.5f))));
  llvm::Value* small = b_.CreateFCmpOLT(m, F(0.707106781186547524f));
  e = b_.CreateFSub(e, b_.CreateSelect(small, F(1.0f), zero));
  m = b_.CreateFAdd(b_.CreateFSub(m, F(1.0f)), b_.CreateSelect(small, m, zero));
  llvm::Value* z = b_.CreateFMul(m, m);
  llvm::Value* poly = Poly(m, {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                               -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                               2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f});
  llvm::Value* y = b_.CreateFMul(b_.CreateFMul(poly, m), z);
  y = Fma(e, F(-2.12194440e-4f), y);
  y = Fnma(F(0.5f), z, y);
  llvm::Value* r = Fma(e, F(0.693359375f), b_.CreateFAdd(m, y));
  r = b_.CreateSelect(b_.CreateFCmpOEQ(x, zero), F(-INFINITY), r);
  r = b_.CreateSelect(b_.CreateFCmpOLT(x, zero), F(NAN), r);
  r = b_.CreateSelect(b_.CreateFCmpOEQ(x, F(INFINITY)), F(INFINITY), r);
  return b_.CreateSelect(IsNan(x), x, r);
}

llvm::Value* VectorIr::Sigmoid(llvm::Value* x) {
  // e^-|x|: the sign bit set on |x|.
  llvm::Value* e = Exp(Float(b_.CreateOr(Bits(Abs(x)), I(INT32_MIN))));
  llvm::Value* s = b_.CreateFDiv(F(1.0f), b_.CreateFAdd(F(1.0f), e));
  return b_.CreateSelect(b_.CreateFCmpOGE(x, F(0.0f)), s, b_.CreateFMul(e, s));
}

llvm::Value* VectorIr::Tanh(llvm::Value* x) {
  llvm::Value* a = Abs(x);
  llvm::Value* z = b_.CreateFMul(x, x);
  llvm::Value* poly = Poly(z, {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                               1.33314422036e-1f, -3.33332819422e-1f});
  llvm::Value* small = Fma(b_.CreateFMul(poly, z), x, x);
  llvm::Value* e = Exp(b_.CreateFAdd(a, a));
  llvm::Value* large = b_.CreateFSub(F(1.0f), b_.CreateFDiv(F(2.0f), b_.CreateFAdd(e, F(1.0f))));
  large = Float(b_.CreateOr(Bits(large), b_.CreateAnd(Bits(x), I(INT32_MIN))));
  return b_.CreateSelect(b_.CreateFCmpOLT(a, F(0.625f)), small, large);
}

llvm::Value* VectorIr::Erf(llvm::Value* x) {
  llvm::Value* xc = MinPs(F(3.92f), MaxPs(F(-3.92f), x));
  llvm::Value* x2 = b_.CreateFMul(xc, xc);
  llvm::Value* p = Poly(x2, {1.996311119e-08f, -1.943511162e-06f, 1.385973542e-04f,
                             3.571814021e-03f, 5.016705846e-02f, 1.969316670e-01f,
                             1.128379148e+00f});
  llvm::Value* q = Poly(x2, {9.241199074e-04f, 1.409175896e-02f, 1.137520429e-01f,
                             5.078584346e-01f, 1.0f});
  llvm::Value* r = b_.CreateFDiv(b_.CreateFMul(xc, p), q);
  return MinPs(F(1.0f), MaxPs(F(-1.0f), r));
}

llvm::Value* VectorIr::GeluErf(llvm::Value* x) {
  llvm::Value* half_x = b_.CreateFMul(x, F(0.5f));
  return Fma(half_x, Erf(b_.CreateFMul(x, F(0.70710678118654752f))), half_x);
}

llvm::Value* VectorIr::GeluTanh(llvm::Value* x) {
  llvm::Value* x3 = b_.CreateFMul(b_.CreateFMul(x, x), x);
  llvm::Value* u = Fma(x3, F(0.044715f), x);
  return b_.CreateFMul(x, Sigmoid(b_.CreateFMul(u, F(2.0f * 0.79788456080286536f))));
}

llvm::Value* VectorIr::Sign(llvm::Value* x) {
  llvm::Value* zero = F(0.0f);
  llvm::Value* s = b_.CreateSelect(b_.CreateFCmpOGT(x, zero), F(1.0f),
                                   b_.CreateSelect(b_.CreateFCmpOLT(x, zero), F(-1.0f), zero));
  return b_.CreateSelect(IsNan(x), x, s);
}

llvm::Value* VectorIr::LibmPerLane(const char* name, llvm::Value* x, llvm::Value* y) {
  llvm::Module& module = *b_.GetInsertBlock()->getModule();
  llvm::Type* f32 = b_.getFloatTy();
  llvm::FunctionCallee fn =
      module.getOrInsertFunction(name, llvm::FunctionType::get(f32, {f32, f32}, false));
  llvm::Value* out = llvm::UndefValue::get(f32v_);
  for (int lane = 0; lane < width_; ++lane) {
    llvm::CallInst* call =
        b_.CreateCall(fn, {b_.CreateExtractElement(x, lane), b_.CreateExtractElement(y, lane)});
    call->addFnAttr(llvm::Attribute::NoBuiltin);
    out = b_.CreateInsertElement(out, call, lane);
  }
  return out;
}

llvm::Value* VectorIr::SinCosReduced(llvm::Value* x, bool cos) {
  llvm::Value* ax = Abs(x);
  // j = the octant rounded up to even, so that r = |x| - j pi/4 is in [-pi/4, pi/4].
  llvm::Value* j = ToInt(b_.CreateFMul(ax, F(1.27323954473516f)));
  j = b_.CreateAnd(b_.CreateAdd(j, I(1)), I(~1));
  llvm::Value* y = b_.CreateSIToFP(j, f32v_);
  llvm::Value* r = Fnma(y, F(0.78515625f), ax);
  r = Fnma(y, F(2.4187564849853515625e-4f), r);
  r = Fnma(y, F(3.77489497744594108e-8f), r);
  llvm::Value* z = b_.CreateFMul(r, r);
  llvm::Value* cos_poly = Poly(z, {2.443315711809948e-5f, -1.388731625493765e-3f,
                                   4.166664568298827e-2f});
  llvm::Value* sin_poly = Poly(z, {-1.9515295891e-4f, 8.3321608736e-3f, -1.6666654611e-1f});
  llvm::Value* c =
      b_.CreateFAdd(Fnma(F(0.5f), z, b_.CreateFMul(cos_poly, b_.CreateFMul(z, z))), F(1.0f));
  llvm::Value* s = Fma(b_.CreateFMul(sin_poly, z), r, r);
  llvm::Value* sign;
  if (cos) {
    j = b_.CreateSub(j, I(2));
    sign = b_.CreateShl(b_.CreateAnd(b_.CreateNot(j), I(4)), I(29));
  } else {
    sign = b_.CreateXor(b_.CreateShl(b_.CreateAnd(j, I(4)), I(29)),
                        b_.CreateAnd(Bits(x), I(INT32_MIN)));
  }
  llvm::Value* use_sin = b_.CreateICmpEQ(b_.CreateAnd(j, I(2)), I(0));
  return Float(b_.CreateXor(Bits(b_.CreateSelect(use_sin, s, c)), sign));
}

llvm::Value* VectorIr::SinCos(llvm::Value* x, bool cos) {
  llvm::Value* out_of_range = b_.CreateFCmpUGT(Abs(x), F(8192.0f));
  llvm::Value* reduced = SinCosReduced(x, cos);
  llvm::Value* any = b_.CreateIntrinsic(llvm::Intrinsic::vector_reduce_or,
                                        {out_of_range->getType()}, {out_of_range});
  llvm::BasicBlock* from = b_.GetInsertBlock();
  llvm::Function* fn = from->getParent();
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(b_.getContext(), cos ? "cos.libm" : "sin.libm", fn);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(b_.getContext(), cos ? "cos.join" : "sin.join", fn);
  b_.CreateCondBr(any, slow, join);
  b_.SetInsertPoint(slow);
  llvm::Value* libm = Intrinsic(cos ? llvm::Intrinsic::cos : llvm::Intrinsic::sin, {x});
  llvm::Value* mixed = b_.CreateSelect(out_of_range, libm, reduced);
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* phi = b_.CreatePHI(f32v_, 2);
  phi->addIncoming(reduced, from);
  phi->addIncoming(mixed, slow);
  return phi;
}

}  // namespace dynvm::compiler::llvm_codegen
