// Tests of dead code elimination (compiler/passes/dead_code.h), as before/after text.
#include "compiler/passes/dead_code.h"

#include "gtest/gtest.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace dynvm::compiler {
namespace {

using testing::RunPass;

std::string Dce(std::string_view before) {
  return RunPass(before, [](const Expr& e) { return EliminateDeadCode(e); });
}

TEST(DeadCodeTest, DropsUnusedLets) {
  EXPECT_EQ(Dce("let %unused = exp(%x);\nnn.relu(%x)"), "nn.relu(%x)");
  EXPECT_EQ(Dce("let %y = exp(%x);\nnn.relu(%y)"), "let %y = exp(%x);\nnn.relu(%y)");
}

TEST(DeadCodeTest, DropsLetsOnlyDeadCodeUsed) {
  EXPECT_EQ(Dce("let %a = exp(%x);\nlet %b = log(%a);\nlet %c = (%a, %b);\n%x"), "%x");
}

TEST(DeadCodeTest, KeepsLetsUsedInBranchesAndClosures) {
  const char* kText =
      "let %a = exp(%x);\n"
      "let %f = fn (%y) {\n"
      "  add(%y, %a)\n"
      "};\n"
      "if (%c) {\n"
      "  %f(%x)\n"
      "} else {\n"
      "  %x\n"
      "}";
  EXPECT_EQ(Dce(kText), kText);
}

TEST(DeadCodeTest, LongChains) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "let %v" + std::to_string(i) + " = exp(%x);\n";
  text += "%v19999";
  EXPECT_EQ(Dce(text), "let %v19999 = exp(%x);\n%v19999");
}

}  // namespace
}  // namespace dynvm::compiler
