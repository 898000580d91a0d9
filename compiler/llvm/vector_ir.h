// IR emission over vectors of f32 lanes for the native kernel generator: arithmetic,
// comparisons with x86's NaN rules, bit operations, and the math functions of the
// kernel library.
//
// The math functions are the library's AVX2+FMA ones (kernels/internal/vmath_avx2.h)
// operation for operation: the same constants, the same rounding steps, an FMA exactly
// where the library has one. On a target with FMA a generated kernel therefore equals
// the library's AVX2 kernels bit for bit, at any vector width (every operation is
// lane-wise). On a target without FMA each FMA becomes a multiply and an add.
//
//   VectorIr v(builder, /*width=*/8, /*has_fma=*/true);
//   llvm::Value* y = v.Tanh(x);  // x: <8 x float>
#ifndef DYNVM_COMPILER_LLVM_VECTOR_IR_H_
#define DYNVM_COMPILER_LLVM_VECTOR_IR_H_

#include <cstdint>
#include <initializer_list>

#include "llvm/IR/IRBuilder.h"

namespace dynvm::compiler::llvm_codegen {

// Emits vector operations through `b` on <width x float> values; `has_fma` says whether
// the target fuses multiply-adds (Fma then emits llvm.fma, else a multiply and an add).
class VectorIr {
 public:
  VectorIr(llvm::IRBuilder<>& b, int width, bool has_fma);

  // Lanes per vector, and the vector types.
  int width() const { return width_; }
  llvm::VectorType* float_type() const { return f32v_; }
  llvm::VectorType* int_type() const { return i32v_; }

  // Constants, splatted over the lanes.
  llvm::Value* F(float v);
  llvm::Value* I(int32_t v);

  // a * b + c with one rounding on FMA targets (the library's _mm256_fmadd_ps), and
  // c - a * b (_mm256_fnmadd_ps).
  llvm::Value* Fma(llvm::Value* a, llvm::Value* b, llvm::Value* c);
  llvm::Value* Fnma(llvm::Value* a, llvm::Value* b, llvm::Value* c);
  // x86's minps/maxps: `a` where a < b (a > b), else `b`; so `b` when either is NaN.
  llvm::Value* MinPs(llvm::Value* a, llvm::Value* b);
  llvm::Value* MaxPs(llvm::Value* a, llvm::Value* b);
  // Bits of a float vector as ints, and back.
  llvm::Value* Bits(llvm::Value* x);
  llvm::Value* Float(llvm::Value* bits);
  // x truncated toward zero to int32; NaN gives 0 and out-of-range values saturate
  // (where the library's cvttps gives INT32_MIN, a plain fptosi would give poison).
  // Every caller discards such lanes' results or turns them into NaN either way.
  llvm::Value* ToInt(llvm::Value* x);
  llvm::Value* Abs(llvm::Value* x);
  llvm::Value* IsNan(llvm::Value* x);
  // c[0] x^(n-1) + ... + c[n-1] by Horner's rule, one FMA per step.
  llvm::Value* Poly(llvm::Value* x, std::initializer_list<float> c);
  llvm::Value* Intrinsic(llvm::Intrinsic::ID id, std::initializer_list<llvm::Value*> args);

  // The library's math functions (vmath_avx2.h), each over every lane.
  llvm::Value* Exp(llvm::Value* x);
  llvm::Value* Log(llvm::Value* x);
  llvm::Value* Sigmoid(llvm::Value* x);
  llvm::Value* Tanh(llvm::Value* x);
  llvm::Value* Erf(llvm::Value* x);
  llvm::Value* GeluErf(llvm::Value* x);
  llvm::Value* GeluTanh(llvm::Value* x);
  llvm::Value* Sign(llvm::Value* x);
  // The C library's function `name` (float(float, float)) per lane, called as such:
  // marked nobuiltin, so that LLVM does not rewrite it (pow(2, x) into exp2, say).
  llvm::Value* LibmPerLane(const char* name, llvm::Value* x, llvm::Value* y);

  // sin or cos: the library's reduction for |x| <= 8192; lanes beyond it take libm's
  // sinf/cosf, on a branch taken only when some lane needs it (so the function may
  // leave the builder in a new block).
  llvm::Value* SinCos(llvm::Value* x, bool cos);

 private:
  llvm::Value* SinCosReduced(llvm::Value* x, bool cos);

  llvm::IRBuilder<>& b_;
  int width_;
  bool has_fma_;
  llvm::VectorType* f32v_;
  llvm::VectorType* i32v_;
};

}  // namespace dynvm::compiler::llvm_codegen

#endif  // DYNVM_COMPILER_LLVM_VECTOR_IR_H_
