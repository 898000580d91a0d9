// Tests of Type (compiler/ir/type.h): construction and accessors, Relay's text,
// structural equality, and substitution of type variables and symbolic dims.
#include "compiler/ir/type.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dynvm::compiler {
namespace {

const Dim n = Dim::Symbol("n");

TEST(TypeTest, TensorsAndText) {
  const Type x = Type::Tensor(DType::kF32, {n, 768});
  EXPECT_TRUE(x.is_tensor());
  EXPECT_EQ(x.dtype(), DType::kF32);
  EXPECT_EQ(x.rank(), 2);
  EXPECT_EQ(x.shape()[0], n);
  EXPECT_EQ(x.ToString(), "Tensor[(n, 768), float32]");
  EXPECT_EQ(Type::Tensor(DType::kI64, {Dim::Any(), n * 12 + 1}).ToString(),
            "Tensor[(?, n*12 + 1), int64]");
  EXPECT_EQ(Type::Tensor(DType::kBool, {5}).ToString(), "Tensor[(5), bool]");
  EXPECT_EQ(Type::Scalar(DType::kI32).ToString(), "int32");
  EXPECT_EQ(Type().ToString(), "float32");
}

TEST(TypeTest, CompositeText) {
  const Type x = Type::Tensor(DType::kF32, {n, 64});
  const Type a = Type::Var("A");
  EXPECT_EQ(Type::Tuple({x, Type::Scalar(DType::kBool)}).ToString(),
            "(Tensor[(n, 64), float32], bool)");
  EXPECT_EQ(Type::Tuple({x}).ToString(), "(Tensor[(n, 64), float32],)");
  EXPECT_EQ(Type::Tuple({}).ToString(), "()");
  EXPECT_EQ(Type::Func({x, x}, x).ToString(),
            "fn (Tensor[(n, 64), float32], Tensor[(n, 64), float32]) -> Tensor[(n, 64), float32]");
  EXPECT_EQ(Type::Func({a}, Type::Adt("List", {a}), {"A"}).ToString(), "fn [A] (A) -> List[A]");
  EXPECT_EQ(Type::Adt("Tree", {x}).ToString(), "Tree[Tensor[(n, 64), float32]]");
  EXPECT_EQ(Type::Adt("Nat").ToString(), "Nat");
}

TEST(TypeTest, AccessorsOfOtherKindsAreEmpty) {
  const Type x = Type::Scalar(DType::kF32);
  EXPECT_TRUE(x.fields().empty());
  EXPECT_TRUE(x.name().empty());
  EXPECT_EQ(x.ret(), x);
  const Type f = Type::Func({x}, Type::Scalar(DType::kI64));
  EXPECT_EQ(f.kind(), TypeKind::kFunc);
  EXPECT_EQ(f.params().size(), 1u);
  EXPECT_EQ(f.ret(), Type::Scalar(DType::kI64));
}

TEST(TypeTest, StructuralEquality) {
  const Type x = Type::Tensor(DType::kF32, {n * 2, 64});
  EXPECT_EQ(x, Type::Tensor(DType::kF32, {n + n, 64}));
  EXPECT_NE(x, Type::Tensor(DType::kF16, {n * 2, 64}));
  EXPECT_NE(x, Type::Tensor(DType::kF32, {n, 64}));
  EXPECT_NE(x, Type::Tensor(DType::kF32, {n * 2}));
  EXPECT_EQ(Type::Tuple({x, x}), Type::Tuple({x, x}));
  EXPECT_NE(Type::Tuple({x}), Type::Tuple({x, x}));
  EXPECT_EQ(Type::Func({x}, x), Type::Func({x}, x));
  EXPECT_NE(Type::Func({x}, x), Type::Func({x}, Type::Tuple({x})));
  EXPECT_NE(Type::Func({x}, x), Type::Func({x}, x, {"A"}));
  EXPECT_EQ(Type::Adt("List", {x}), Type::Adt("List", {x}));
  EXPECT_NE(Type::Adt("List", {x}), Type::Adt("Tree", {x}));
  EXPECT_NE(Type::Var("A"), Type::Var("B"));
  EXPECT_NE(Type::Tuple({}), Type::Scalar(DType::kF32));
}

TEST(TypeTest, SubstituteVarsRespectsShadowing) {
  const Type a = Type::Var("A"), b = Type::Var("B");
  const Type x = Type::Tensor(DType::kF32, {3});
  EXPECT_EQ(Type::Adt("List", {a}).SubstituteVars({{"A", x}}), Type::Adt("List", {x}));
  EXPECT_EQ(Type::Tuple({a, b}).SubstituteVars({{"B", a}}), Type::Tuple({a, a}));
  // fn [A] (A, B) -> A: its own A is bound inside, B is free.
  const Type generic = Type::Func({a, b}, a, {"A"});
  EXPECT_EQ(generic.SubstituteVars({{"A", x}, {"B", x}}), Type::Func({a, x}, a, {"A"}));
}

TEST(TypeTest, SubstituteDims) {
  const Dim m = Dim::Symbol("m");
  const Type t = Type::Tuple({Type::Tensor(DType::kF32, {n, n * 12}),
                              Type::Func({Type::Tensor(DType::kI64, {n + 1})}, Type::Var("A"))});
  EXPECT_EQ(t.SubstituteDims({{"n", Dim(4)}}).ToString(),
            "(Tensor[(4, 48), float32], fn (Tensor[(5), int64]) -> A)");
  EXPECT_EQ(t.SubstituteDims({{"n", m * 2}}).ToString(),
            "(Tensor[(m*2, m*24), float32], fn (Tensor[(m*2 + 1), int64]) -> A)");
}

TEST(TypeTest, RelayDTypeNames) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto d = static_cast<DType>(i);
    absl::StatusOr<DType> parsed = ParseRelayDType(RelayDTypeName(d));
    ASSERT_TRUE(parsed.ok()) << RelayDTypeName(d);
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(ParseRelayDType("f32").status().message(),
            "unknown dtype 'f32': expected one of float32, float64, float16, bfloat16, int8, "
            "int16, int32, int64, uint8, uint16, uint32, uint64, bool, string");
}

}  // namespace
}  // namespace dynvm::compiler
