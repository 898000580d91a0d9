// Tests of common subexpression elimination (compiler/passes/cse.h), as before/after
// text.
#include "compiler/passes/cse.h"

#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace dynvm::compiler {
namespace {

using testing::RunPass;

std::string Cse(std::string_view before) {
  return RunPass(before, [](const Expr& e) { return EliminateCommonSubexpressions(e); });
}

TEST(CseTest, MergesEqualCalls) {
  EXPECT_EQ(Cse("add(nn.dense(%x, %w), nn.dense(%x, %w))"),
            "%0 = nn.dense(%x, %w);\nadd(%0, %0)");
  // Equal subtrees meet bottom-up.
  EXPECT_EQ(Cse("add(exp(log(%x)), exp(log(%x)))"), "%0 = log(%x);\n%1 = exp(%0);\nadd(%1, %1)");
  EXPECT_EQ(Cse("((%a, %b).0, (%a, %b).0)"), "%0 = (%a, %b).0;\n(%0, %0)");
}

TEST(CseTest, ConstantsHoldingOneTensorAreOne) {
  NDArray w = *NDArrayObj::Empty({2}, DType::kF32, MakeNaiveAllocator());
  EXPECT_EQ(RunPass("add(nn.dense(%x, meta[relay.Constant][0]), nn.dense(%x, meta[relay.Constant][0]))",
                    [](const Expr& e) { return EliminateCommonSubexpressions(e); }, {w}),
            "%0 = nn.dense(%x, meta[relay.Constant][0]);\nadd(%0, %0)");
}

TEST(CseTest, AttributesAndOperandsMustAgree) {
  EXPECT_EQ(Cse("add(sum(%x, axis=0), sum(%x, axis=1))"),
            "%0 = sum(%x, axis=0);\n%1 = sum(%x, axis=1);\nadd(%0, %1)");
  EXPECT_EQ(Cse("add(exp(%x), exp(%y))"), "%0 = exp(%x);\n%1 = exp(%y);\nadd(%0, %1)");
  EXPECT_EQ(Cse("add(clip(%x, a_min=0.0f, a_max=1.0f), clip(%x, a_min=-0.0f, a_max=1.0f))"),
            "%0 = clip(%x, a_max=1.0f, a_min=0.0f);\n%1 = clip(%x, a_max=1.0f, a_min=-0.0f);\nadd(%0, %1)");
}

TEST(CseTest, ReusesOnlyWithinTheBlock) {
  // The branches compute exp(%x) each; neither reuses the other's, and the one after
  // the if is computed again (hoisting it would run it on paths that did not).
  EXPECT_EQ(Cse("let %y = if (%c) { exp(%x) } else { exp(%x) };\nadd(%y, exp(%x))"),
            "let %y = if (%c) {\n"
            "  exp(%x)\n"
            "} else {\n"
            "  exp(%x)\n"
            "};\n"
            "%0 = exp(%x);\n"
            "add(%y, %0)");
  // A value from the enclosing block is reused inside a branch.
  EXPECT_EQ(Cse("let %a = exp(%x);\nif (%c) { add(exp(%x), %a) } else { %a }"),
            "let %a = exp(%x);\n"
            "if (%c) {\n"
            "  add(%a, %a)\n"
            "} else {\n"
            "  %a\n"
            "}");
}

}  // namespace
}  // namespace dynvm::compiler
