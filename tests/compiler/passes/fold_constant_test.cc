// Tests of constant folding (compiler/passes/fold_constant.h), as before/after text.
#include "compiler/passes/fold_constant.h"

#include <cstring>

#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace dynvm::compiler {
namespace {

using testing::RunPass;

std::string Fold(std::string_view before, std::vector<NDArray> constants = {}) {
  return RunPass(before, [](const Expr& e) { return FoldConstants(e); }, std::move(constants));
}

TEST(FoldConstantTest, EvaluatesCallsOnConstantsWithTheKernels) {
  EXPECT_EQ(Fold("add(1.5f, 2.0f)"), "3.5f");
  EXPECT_EQ(Fold("multiply(add(1i64, 2i64), 4i64)"), "12i64");
  EXPECT_EQ(Fold("less(3, 4)"), "True");
  EXPECT_EQ(Fold("cast(7, dtype=\"float32\")"), "7.0f");
  // Only the constant part of a call with a variable.
  EXPECT_EQ(Fold("add(%x, exp(0.0f))"), "add(%x, 1.0f)");
}

TEST(FoldConstantTest, TupleArgumentsOfConstantsFold) {
  // concatenate takes a tuple: its fields reach the kernel one by one (scalars it
  // rejects, so that call is left as it is).
  EXPECT_EQ(Fold("concatenate((1i64, 2i64), axis=0)"), "concatenate((1i64, 2i64), axis=0)");
  NDArray a = *NDArrayObj::Empty({2}, DType::kF32, MakeNaiveAllocator());
  NDArray b = *NDArrayObj::Empty({1}, DType::kF32, MakeNaiveAllocator());
  a->data_as<float>()[0] = 1;
  a->data_as<float>()[1] = 2;
  b->data_as<float>()[0] = 3;
  absl::StatusOr<ParsedExpr> parsed = ParseExpr(
      "concatenate((meta[relay.Constant][0], meta[relay.Constant][1]), axis=0)", Module(), {a, b});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Expr> folded = FoldConstants(parsed->expr);
  ASSERT_TRUE(folded.ok()) << folded.status();
  ASSERT_EQ(folded->kind(), ExprKind::kConstant);
  EXPECT_EQ(folded->value()->shape(), (Shape{3}));
  EXPECT_EQ(folded->value()->data_as<float>()[2], 3.0f);
  // A tuple with a variable stays.
  EXPECT_EQ(Fold("concatenate((%a, %b), axis=0)"), "concatenate((%a, %b), axis=0)");
}

TEST(FoldConstantTest, ResolvesProjectionsOfTupleLiterals) {
  EXPECT_EQ(Fold("(%a, %b).1"), "%b");
  EXPECT_EQ(Fold("(%a, add(1, 1)).1"), "2");
}

TEST(FoldConstantTest, PacksConstantWeightsOnce) {
  NDArray w = *NDArrayObj::Empty({20, 8}, DType::kF32, MakeNaiveAllocator());
  for (int i = 0; i < 160; ++i) w->data_as<float>()[i] = static_cast<float>(i);
  absl::StatusOr<ParsedExpr> parsed = ParseExpr(
      "nn.contrib_dense_pack(%x, layout_transform(meta[relay.Constant][0], src_layout=\"NC\", "
      "dst_layout=\"NC16n\"), units=20)",
      Module(), {w});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Expr> folded = FoldConstants(parsed->expr);
  ASSERT_TRUE(folded.ok()) << folded.status();
  const Expr packed = folded->args()[1];
  ASSERT_EQ(packed.kind(), ExprKind::kConstant);
  EXPECT_EQ(packed.value()->shape(), (Shape{2, 8, 16}));
  // Panel 1, row 3, column 2 holds w[16 + 2, 3]; the padding past row 20 is zero.
  EXPECT_EQ(packed.value()->data_as<float>()[(1 * 8 + 3) * 16 + 2], 18 * 8 + 3);
  EXPECT_EQ(packed.value()->data_as<float>()[(1 * 8 + 3) * 16 + 5], 0.0f);
}

TEST(FoldConstantTest, LeavesWhatCannotOrShouldNotBeFolded) {
  // The kernel rejects these values: left for run time (the branch may never run).
  EXPECT_EQ(Fold("take((1, 2).0, 5, axis=0)"), "take(1, 5, axis=0)");
  // Too large to be worth storing in the executable.
  EXPECT_EQ(Fold("zeros(shape=[8192, 8192])"), "zeros(shape=[8192, 8192])");
  EXPECT_EQ(Fold("exp(%x)"), "exp(%x)");
}

TEST(FoldConstantTest, KeepsSharing) {
  EXPECT_EQ(Fold("%0 = exp(%x);\nadd(%0, multiply(%0, add(1f, 1f)))"),
            "%0 = exp(%x);\n%1 = multiply(%0, 2.0f);\nadd(%0, %1)");
}

}  // namespace
}  // namespace dynvm::compiler
