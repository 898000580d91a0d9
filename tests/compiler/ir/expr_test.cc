// Tests of Expr and Pattern (compiler/ir/expr.h): every kind's constructor and
// accessors, accessors of other kinds returning empty values, the identity of
// variables (by id, kept by WithType), and node identity for everything else.
#include "compiler/ir/expr.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "objects/allocator.h"

namespace dynvm::compiler {
namespace {

const Type kVec = Type::Tensor(DType::kF32, {Dim::Symbol("n")});

TEST(ExprTest, VariablesAreIdentifiedByIdNotName) {
  const Expr x = Expr::Var("x", kVec), also_x = Expr::Var("x", kVec);
  EXPECT_EQ(x.kind(), ExprKind::kVar);
  EXPECT_EQ(x.name(), "x");
  EXPECT_EQ(x.annotation(), kVec);
  EXPECT_NE(x.var_id(), 0u);
  EXPECT_NE(x.var_id(), also_x.var_id());
  EXPECT_FALSE(x.same_as(also_x));
  EXPECT_TRUE(x.same_as(x));
  // A typed copy is the same variable.
  const Expr typed = x.WithType(kVec);
  EXPECT_TRUE(typed.same_as(x));
  EXPECT_EQ(typed.identity(), x.identity());
  EXPECT_EQ(typed.checked_type(), kVec);
  EXPECT_FALSE(x.checked_type().has_value());
  EXPECT_FALSE(Expr::Var("y").annotation().has_value());
}

TEST(ExprTest, CallsCarryCalleeArgsAndAttrs) {
  const Expr x = Expr::Var("x"), w = Expr::Var("w");
  const Expr call = Expr::Call(Expr::Op("nn.dense"), {x, w}, {{"units", int64_t{768}}});
  EXPECT_EQ(call.kind(), ExprKind::kCall);
  EXPECT_EQ(call.callee().kind(), ExprKind::kOp);
  EXPECT_EQ(call.callee().name(), "nn.dense");
  ASSERT_EQ(call.args().size(), 2u);
  EXPECT_TRUE(call.args()[1].same_as(w));
  EXPECT_EQ(std::get<int64_t>(call.attrs().at("units")), 768);
  EXPECT_EQ(Expr::Call(Expr::GlobalVar("f"), {}).callee().name(), "f");
}

// A call's source survives WithType; several join, distinct, the fourth on counted.
TEST(ExprTest, CallsCarryTheirSource) {
  const Expr call = Expr::Call(Expr::Op("relu"), {Expr::Var("x")}, {}, "ONNX node 'r' (Relu)");
  EXPECT_EQ(call.source(), "ONNX node 'r' (Relu)");
  EXPECT_EQ(call.WithType(Type::Tensor(DType::kF32, {2})).source(), "ONNX node 'r' (Relu)");
  EXPECT_EQ(Expr::Call(Expr::Op("relu"), {Expr::Var("x")}).source(), "");
  EXPECT_EQ(JoinSources({"a", "", "b", "a"}), "a, b");
  EXPECT_EQ(JoinSources({"a", "b", "c", "d", "e", "b"}), "a, b, c and 2 more");
  EXPECT_EQ(JoinSources({"", ""}), "");
}

TEST(ExprTest, LetIfTupleFunction) {
  const Expr x = Expr::Var("x"), y = Expr::Var("y");
  const Expr value = Expr::Tuple({x, x});
  const Expr let = Expr::Let(y, value, Expr::TupleGetItem(y, 1));
  EXPECT_TRUE(let.var().same_as(y));
  EXPECT_TRUE(let.operand().same_as(value));
  EXPECT_EQ(let.body().kind(), ExprKind::kTupleGetItem);
  EXPECT_EQ(let.body().index(), 1);
  EXPECT_TRUE(let.body().tuple().same_as(y));
  EXPECT_EQ(value.fields().size(), 2u);

  const Expr cond = Expr::Var("c", Type::Scalar(DType::kBool));
  const Expr branch = Expr::If(cond, x, y);
  EXPECT_TRUE(branch.cond().same_as(cond));
  EXPECT_TRUE(branch.then_branch().same_as(x));
  EXPECT_TRUE(branch.else_branch().same_as(y));

  const Expr f = Expr::Function({x}, let, kVec, {"A"}, {{"Primitive", int64_t{1}}});
  EXPECT_EQ(f.params().size(), 1u);
  EXPECT_TRUE(f.body().same_as(let));
  EXPECT_EQ(f.annotation(), kVec);
  EXPECT_EQ(f.type_params(), std::vector<std::string>{"A"});
  EXPECT_EQ(std::get<int64_t>(f.attrs().at("Primitive")), 1);
}

TEST(ExprTest, ConstantsHoldTheirTensor) {
  absl::StatusOr<NDArray> t = NDArrayObj::Empty({2, 3}, DType::kF32, MakeNaiveAllocator());
  ASSERT_TRUE(t.ok()) << t.status();
  const Expr c = Expr::Constant(*t);
  EXPECT_EQ(c.kind(), ExprKind::kConstant);
  EXPECT_EQ(c.value()->shape(), (Shape{2, 3}));
}

TEST(ExprTest, ConstructorsAndMatch) {
  const Type a = Type::Var("A");
  const Expr cons = Expr::Constructor("Cons", "List", 0, {a, Type::Adt("List", {a})});
  const Expr nil = Expr::Constructor("Nil", "List", 1, {});
  EXPECT_EQ(cons.name(), "Cons");
  EXPECT_EQ(cons.adt(), "List");
  EXPECT_EQ(cons.tag(), 0);
  EXPECT_EQ(cons.field_types().size(), 2u);
  EXPECT_EQ(nil.tag(), 1);

  const Expr l = Expr::Var("l"), h = Expr::Var("h");
  const Expr m = Expr::Match(
      l,
      {{Pattern::Constructor(cons, {Pattern::Bind(h), Pattern::Wildcard()}), h},
       {Pattern::Constructor(nil, {}), Expr::Tuple({})}},
      /*complete=*/false);
  EXPECT_TRUE(m.data().same_as(l));
  EXPECT_FALSE(m.complete());
  ASSERT_EQ(m.clauses().size(), 2u);
  const Pattern& p = m.clauses()[0].pattern;
  EXPECT_EQ(p.kind(), PatternKind::kConstructor);
  EXPECT_TRUE(p.expr().same_as(cons));
  ASSERT_EQ(p.fields().size(), 2u);
  EXPECT_EQ(p.fields()[0].kind(), PatternKind::kVar);
  EXPECT_TRUE(p.fields()[0].expr().same_as(h));
  EXPECT_EQ(p.fields()[1].kind(), PatternKind::kWildcard);
  EXPECT_EQ(Pattern::Tuple({Pattern::Wildcard()}).fields().size(), 1u);
}

TEST(ExprTest, AccessorsOfOtherKindsAreEmpty) {
  const Expr x = Expr::Var("x");
  EXPECT_TRUE(x.args().empty());
  EXPECT_TRUE(x.attrs().empty());
  EXPECT_EQ(x.callee().kind(), ExprKind::kTuple);
  EXPECT_TRUE(x.callee().fields().empty());
  EXPECT_EQ(x.body().kind(), ExprKind::kTuple);
  EXPECT_EQ(x.var().kind(), ExprKind::kTuple);
  EXPECT_EQ(x.else_branch().kind(), ExprKind::kTuple);
  EXPECT_TRUE(x.clauses().empty());
  EXPECT_EQ(Expr::Op("add").var_id(), 0u);
  EXPECT_EQ(Expr().kind(), ExprKind::kTuple);
}

TEST(ExprTest, NodesOtherThanVarsAreIdentifiedByNode) {
  const Expr a = Expr::Op("add"), b = Expr::Op("add");
  EXPECT_TRUE(a.same_as(a));
  EXPECT_FALSE(a.same_as(b));
  const Expr copy = a;
  EXPECT_TRUE(copy.same_as(a));
  EXPECT_EQ(copy.identity(), a.identity());
  EXPECT_FALSE(a.WithType(kVec).same_as(a));
}

}  // namespace
}  // namespace dynvm::compiler
