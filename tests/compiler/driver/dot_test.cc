// Tests of the dataflow drawing (compiler/driver/dot.h).
#include "compiler/driver/dot.h"

#include <string>

#include "compiler/frontend/relay_text/parser.h"
#include "compiler/passes/type_infer.h"
#include "gtest/gtest.h"

namespace dynvm::compiler {
namespace {

TEST(DotTest, OperatorsTensorsAndInlineConstants) {
  absl::StatusOr<Module> mod = ParseModule(R"(
    def @main(%x: Tensor[(n, 4), float32], %w: Tensor[(3, 4), float32]) {
      let %h = nn.dense(%x, %w, units=3);
      multiply(%h, 0.5f)
    })");
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<Module> typed = InferTypes(*mod);
  ASSERT_TRUE(typed.ok()) << typed.status();
  const std::string dot = DataflowDot(*typed->Function("main"), "main");
  EXPECT_EQ(dot,
            "digraph \"main\" {\n"
            "  node [fontname=\"Helvetica\"];\n"
            "  n0 [shape=ellipse, label=\"%x\\nTensor[(n, 4), float32]\"];\n"
            "  n1 [shape=ellipse, label=\"%w\\nTensor[(3, 4), float32]\"];\n"
            "  n2 [shape=box, label=\"nn.dense\\nunits=3\"];\n"
            "  n3 [shape=ellipse, label=\"%h\\nTensor[(n, 3), float32]\"];\n"
            "  n4 [shape=box, label=\"multiply(·, 0.5)\"];\n"
            "  n5 [shape=ellipse, label=\"Tensor[(n, 3), float32]\"];\n"
            "  n6 [shape=box, label=\"result\", style=rounded];\n"
            "  n0 -> n2;\n"
            "  n1 -> n2;\n"
            "  n2 -> n3;\n"
            "  n3 -> n4;\n"
            "  n4 -> n5;\n"
            "  n5 -> n6;\n"
            "}\n");
}

}  // namespace
}  // namespace dynvm::compiler
