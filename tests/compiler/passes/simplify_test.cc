// Tests of algebraic simplification (compiler/passes/simplify.h): each rule on a typed
// module, as before/after text of @main's body.
#include "compiler/passes/simplify.h"

#include <string>

#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "compiler/passes/type_infer.h"
#include "gtest/gtest.h"

namespace dynvm::compiler {
namespace {

// @main(params) { body }, typed, simplified, and @main's body printed.
std::string Simplify(std::string_view params, std::string_view body) {
  absl::StatusOr<Module> mod =
      ParseModule(absl::StrCat("def @main(", std::string(params), ") { ", std::string(body), " }"));
  if (!mod.ok()) return std::string(mod.status().message());
  absl::StatusOr<Module> typed = InferTypes(*mod);
  if (!typed.ok()) return std::string(typed.status().message());
  absl::StatusOr<Module> out = SimplifyAlgebra(*typed);
  if (!out.ok()) return std::string(out.status().message());
  std::vector<NDArray> constants;
  return PrintExpr(out->Function("main")->body(), constants);
}

constexpr std::string_view kX = "%x: Tensor[(n, 12, 64), float32]";

TEST(SimplifyTest, ReshapeChains) {
  EXPECT_EQ(Simplify(kX, "reshape(reshape(%x, newshape=[0, -1]), newshape=[-1, 64])"),
            "reshape(%x, newshape=[-1, 64])");
  // An outer 0 reads the intermediate's extent: kept.
  EXPECT_EQ(Simplify(kX, "reshape(reshape(%x, newshape=[0, -1]), newshape=[0, 12, 64])"),
            "%0 = reshape(%x, newshape=[0, -1]);\nreshape(%0, newshape=[0, 12, 64])");
  EXPECT_EQ(Simplify("%x: Tensor[(4, 6), float32]", "reshape(%x, newshape=[4, 6])"), "%x");
}

TEST(SimplifyTest, TransposeChains) {
  EXPECT_EQ(Simplify(kX, "transpose(transpose(%x, axes=[1, 0, 2]), axes=[1, 0, 2])"), "%x");
  // y = x.transpose(1, 2, 0), z = y.transpose(2, 0, 1): z[i] = x[p[q[i]]] = identity.
  EXPECT_EQ(Simplify(kX, "transpose(transpose(%x, axes=[1, 2, 0]), axes=[2, 0, 1])"), "%x");
  EXPECT_EQ(Simplify(kX, "transpose(transpose(%x, axes=[1, 0, 2]), axes=[0, 2, 1])"),
            "transpose(%x, axes=[1, 2, 0])");
}

TEST(SimplifyTest, ArithmeticIdentities) {
  EXPECT_EQ(Simplify(kX, "add(multiply(%x, 1f), 0f)"), "%x");
  EXPECT_EQ(Simplify(kX, "multiply(1f, subtract(%x, 0f))"), "%x");
  // Broadcasting changes the type: kept.
  EXPECT_EQ(Simplify("%x: float32, %y: Tensor[(3), float32]", "add(%x, multiply(%y, 0f))"),
            "%0 = multiply(%y, 0.0f);\nadd(%x, %0)");
  EXPECT_EQ(Simplify(kX, "add(%x, 1f)"), "add(%x, 1.0f)");
}

TEST(SimplifyTest, LayerNormAsExportersSpellIt) {
  constexpr std::string_view kParams =
      "%x: Tensor[(n, 7, 8), float32], %g: Tensor[(8), float32], %b: Tensor[(8), float32]";
  // torch.onnx's LayerNorm: power(d, 2), eps added to the variance.
  EXPECT_EQ(Simplify(kParams,
                     "%0 = subtract(%x, mean(%x, axis=[-1], keepdims=1));\n"
                     "%1 = sqrt(add(mean(power(%0, 2f), axis=[-1], keepdims=1), 1e-05f));\n"
                     "add(multiply(divide(%0, %1), %g), %b)"),
            "nn.layer_norm(%x, %g, %b, axis=-1, epsilon=9.999999747378752e-06f)");  // 1e-5f exactly
  // d * d, the last axis by number, operands of the commutative ops swapped.
  EXPECT_EQ(Simplify(kParams,
                     "%0 = subtract(%x, mean(%x, axis=[2], keepdims=1));\n"
                     "%1 = sqrt(add(1e-12f, mean(multiply(%0, %0), axis=[2], keepdims=1)));\n"
                     "add(%b, multiply(%g, divide(%0, %1)))"),
            "nn.layer_norm(%x, %g, %b, axis=-1, epsilon=9.999999960041972e-13f)");
  // Not LayerNorm: another axis; the square of something else; another exponent; a
  // mean that excludes the axis (it reduces all the others).
  for (const std::string_view body : {
           "%0 = subtract(%x, mean(%x, axis=[-1], keepdims=1, exclude=1));\n"
           "%1 = sqrt(add(mean(power(%0, 2f), axis=[-1], keepdims=1, exclude=1), 1e-05f));\n"
           "add(multiply(divide(%0, %1), %g), %b)",
           "%0 = subtract(%x, mean(%x, axis=[1], keepdims=1));\n"
           "%1 = sqrt(add(mean(power(%0, 2f), axis=[1], keepdims=1), 1e-05f));\n"
           "add(multiply(divide(%0, %1), %g), %b)",
           "%0 = subtract(%x, mean(%x, axis=[-1], keepdims=1));\n"
           "%1 = sqrt(add(mean(power(%x, 2f), axis=[-1], keepdims=1), 1e-05f));\n"
           "add(multiply(divide(%0, %1), %g), %b)",
           "%0 = subtract(%x, mean(%x, axis=[-1], keepdims=1));\n"
           "%1 = sqrt(add(mean(power(%0, 3f), axis=[-1], keepdims=1), 1e-05f));\n"
           "add(multiply(divide(%0, %1), %g), %b)"}) {
    EXPECT_EQ(Simplify(kParams, body).find("nn.layer_norm"), std::string::npos) << body;
  }
}

TEST(SimplifyTest, GeluAsExportersSpellIt) {
  constexpr std::string_view kParams = "%x: Tensor[(n, 8), float32], %y: Tensor[(n, 8), float32]";
  // HuggingFace's erf GELU as torch.onnx writes it, and its usual rearrangements.
  for (const std::string_view body : {
           "multiply(multiply(%x, add(erf(divide(%x, 1.4142135381698608f)), 1f)), 0.5f)",
           "multiply(0.5f, multiply(add(1f, erf(divide(%x, 1.4142135381698608f))), %x))",
           "multiply(multiply(%x, 0.5f), add(erf(multiply(%x, 0.7071067690849304f)), 1f))",
           "multiply(add(erf(divide(%x, 1.4142135f)), 1f), multiply(0.5f, %x))"}) {
    EXPECT_EQ(Simplify(kParams, body), "gelu(%x)") << body;
  }
  // Not GELU: another constant; erf of another tensor.
  for (const std::string_view body : {
           "multiply(multiply(%x, add(erf(divide(%x, 1.5f)), 1f)), 0.5f)",
           "multiply(multiply(%x, add(erf(divide(%y, 1.4142135f)), 1f)), 0.5f)"}) {
    EXPECT_EQ(Simplify(kParams, body).find("gelu"), std::string::npos) << body;
  }
}

TEST(SimplifyTest, AttentionAsExportersSpellIt) {
  constexpr std::string_view kParams =
      "%q: Tensor[(b, 4, s, 16), float32], %k4: Tensor[(b, s, 4, 16), float32], "
      "%v: Tensor[(b, 4, s, 16), float32], %m: Tensor[(b, 1, 1, s), float32]";
  // BERT's: K transposed to [b, h, d, s], scores divided by sqrt(d), the mask added.
  EXPECT_EQ(Simplify(kParams,
                     "%0 = matmul(%q, transpose(%k4, axes=[0, 2, 3, 1]));\n"
                     "matmul(nn.softmax(add(divide(%0, 4f), %m), axis=-1), %v)"),
            "%0 = transpose(%k4, axes=[0, 2, 1, 3]);\nnn.attention(%q, %0, %v, %m, scale=0.25f)");
  // Scaled by a multiply, the mask on the left; no mask.
  EXPECT_EQ(Simplify(kParams,
                     "%0 = matmul(%q, transpose(%k4, axes=[0, 2, 3, 1]));\n"
                     "matmul(nn.softmax(add(%m, multiply(0.5f, %0)), axis=3), %v)"),
            "%0 = transpose(%k4, axes=[0, 2, 1, 3]);\nnn.attention(%q, %0, %v, %m, scale=0.5f)");
  EXPECT_EQ(Simplify(kParams, "matmul(nn.softmax(matmul(%q, transpose(%k4, axes=[0, 2, 3, 1])), axis=-1), %v)"),
            "%0 = transpose(%k4, axes=[0, 2, 1, 3]);\nnn.attention(%q, %0, %v, scale=1.0f)");
  // Not attention: a softmax over another axis.
  EXPECT_EQ(Simplify(kParams, "matmul(nn.softmax(matmul(%q, transpose(%k4, axes=[0, 2, 3, 1])), axis=2), %v)")
                .find("nn.attention"),
            std::string::npos);
}

TEST(SimplifyTest, AttentionReadsHeadsInPlace) {
  constexpr std::string_view kParams =
      "%q4: Tensor[(b, s, 4, 16), float32], %k4: Tensor[(b, s, 4, 16), float32], "
      "%v4: Tensor[(b, s, 4, 16), float32], %m: Tensor[(b, 1, 1, s), float32]";
  // BERT's: q, k and v [b, s, h, d] transposed to [b, h, s, d], the result back.
  EXPECT_EQ(Simplify(kParams,
                     "%0 = transpose(%q4, axes=[0, 2, 1, 3]);\n"
                     "%1 = matmul(%0, transpose(%k4, axes=[0, 2, 3, 1]));\n"
                     "%2 = matmul(nn.softmax(add(divide(%1, 4f), %m), axis=-1), "
                     "transpose(%v4, axes=[0, 2, 1, 3]));\n"
                     "transpose(%2, axes=[0, 2, 1, 3])"),
            "nn.attention(%q4, %k4, %v4, %m, layout=\"BSHD\", scale=0.25f)");
  // An nn.attention written as such; its result kept as [b, h, s, d].
  EXPECT_EQ(Simplify(kParams,
                     "nn.attention(transpose(%q4, axes=[0, 2, 1, 3]), "
                     "transpose(%k4, axes=[0, 2, 1, 3]), transpose(%v4, axes=[0, 2, 1, 3]))"),
            "%0 = nn.attention(%q4, %k4, %v4, layout=\"BSHD\");\n"
            "transpose(%0, axes=[0, 2, 1, 3])");
  // Not when one of them is not transposed that way, or the layout is already BSHD.
  for (const std::string_view body : {
           "nn.attention(transpose(%q4, axes=[0, 2, 1, 3]), transpose(%k4, axes=[0, 2, 1, 3]), "
           "transpose(%v4, axes=[0, 1, 2, 3]))",
           "nn.attention(transpose(%q4, axes=[0, 2, 1, 3]), transpose(%k4, axes=[0, 2, 1, 3]), "
           "transpose(%v4, axes=[0, 2, 1, 3]), layout=\"BSHD\")"}) {
    EXPECT_NE(Simplify(kParams, body).find("transpose(%q4"), std::string::npos) << body;
  }
}

}  // namespace
}  // namespace dynvm::compiler
