// Tests of combining parallel dense layers (compiler/passes/combine_dense.h) on typed
// modules: Q/K/V become one dense and a split; what must not combine does not.
#include "compiler/passes/combine_dense.h"

#include <string>

#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "compiler/passes/type_infer.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"

namespace dynvm::compiler {
namespace {

// Three weights, [64, 64], [32, 64] and [64, 64], as meta constants 0, 1, 2.
std::vector<NDArray> Weights() {
  std::vector<NDArray> w;
  for (int64_t rows : {64, 32, 64}) {
    w.push_back(*NDArrayObj::Empty({rows, 64}, DType::kF32, MakeNaiveAllocator()));
  }
  return w;
}

// The weights, then biases [64], [32] and [64] as meta constants 3, 4, 5.
std::vector<NDArray> WeightsAndBiases() {
  std::vector<NDArray> c = Weights();
  for (int64_t n : {64, 32, 64}) c.push_back(*NDArrayObj::Empty({n}, DType::kF32, MakeNaiveAllocator()));
  return c;
}

std::string Combine(std::string_view text, std::vector<NDArray> constants = Weights()) {
  absl::StatusOr<Module> mod = ParseModule(text, constants);
  if (!mod.ok()) return std::string(mod.status().message());
  absl::StatusOr<Module> typed = InferTypes(*mod);
  if (!typed.ok()) return std::string(typed.status().message());
  absl::StatusOr<Module> combined = CombineParallelDense(*typed);
  if (!combined.ok()) return std::string(combined.status().message());
  absl::StatusOr<Module> retyped = InferTypes(*combined);
  if (!retyped.ok()) return std::string(retyped.status().message());
  std::vector<NDArray> printed;
  return PrintExpr(retyped->Function("main")->body(), printed);
}

constexpr char kParams[] = "%x: Tensor[(n, 64), float32]";

TEST(CombineDenseTest, QkvBecomeOneDense) {
  EXPECT_EQ(Combine(absl::StrCat("def @main(", kParams, ") {\n"
                                 "  (nn.dense(%x, meta[relay.Constant][0]), nn.dense(%x, meta[relay.Constant][1]),\n"
                                 "   nn.dense(%x, meta[relay.Constant][2]))\n"
                                 "}")),
            "%0 = concatenate((meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][2]), axis=0);\n"
            "%1 = nn.dense(%x, %0, units=160);\n"
            "%2 = split(%1, axis=-1, indices_or_sections=[64, 96]);\n"
            "(%2.0, %2.1, %2.2)");
}

TEST(CombineDenseTest, BiasAddsJoinTheCombinedDense) {
  // Each projection read only by the add of its bias (either operand order): the
  // biases are concatenated into the combined dense, whose parts replace the adds.
  EXPECT_EQ(Combine(absl::StrCat("def @main(", kParams, ") {\n"
                                 "  (add(nn.dense(%x, meta[relay.Constant][0]), meta[relay.Constant][3]),\n"
                                 "   add(meta[relay.Constant][4], nn.dense(%x, meta[relay.Constant][1])),\n"
                                 "   add(nn.dense(%x, meta[relay.Constant][2]), meta[relay.Constant][5]))\n"
                                 "}"),
                    WeightsAndBiases()),
            "%0 = concatenate((meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][2]), axis=0);\n"
            "%1 = concatenate((meta[relay.Constant][3], meta[relay.Constant][4], meta[relay.Constant][5]), axis=0);\n"
            "%2 = nn.dense(%x, %0, %1, units=160);\n"
            "%3 = split(%2, axis=-1, indices_or_sections=[64, 96]);\n"
            "(%3.0, %3.1, %3.2)");
  // A projection read twice keeps every add where it is.
  const std::string shared = Combine(absl::StrCat(
      "def @main(", kParams, ") {\n"
      "  %0 = nn.dense(%x, meta[relay.Constant][0]);\n"
      "  (add(%0, meta[relay.Constant][3]), add(nn.dense(%x, meta[relay.Constant][1]), meta[relay.Constant][4]), %0)\n"
      "}"), WeightsAndBiases());
  EXPECT_EQ(shared.find("meta[relay.Constant][3], meta[relay.Constant][4]"), std::string::npos) << shared;
  EXPECT_NE(shared.find("concatenate"), std::string::npos) << shared;
}

TEST(CombineDenseTest, LayerAfterLayerEachCombine) {
  // The second group reads what the first group's rewrite rebuilt: both combine, and
  // the second reads the first's new result, not a leftover of the old graph. (The
  // printer numbers constants as it meets them: W0, W2, then W1.)
  const std::string got = Combine(absl::StrCat(
      "def @main(", kParams, ") {\n"
      "  %0 = add(nn.dense(%x, meta[relay.Constant][0]), nn.dense(%x, meta[relay.Constant][2]));\n"
      "  (nn.dense(%0, meta[relay.Constant][0]), nn.dense(%0, meta[relay.Constant][1]))\n"
      "}"));
  EXPECT_EQ(got,
            "%0 = concatenate((meta[relay.Constant][0], meta[relay.Constant][1]), axis=0);\n"
            "%1 = nn.dense(%x, %0, units=128);\n"
            "%2 = split(%1, axis=-1, indices_or_sections=[64]);\n"
            "%3 = add(%2.0, %2.1);\n"
            "%4 = concatenate((meta[relay.Constant][0], meta[relay.Constant][2]), axis=0);\n"
            "%5 = nn.dense(%3, %4, units=96);\n"
            "%6 = split(%5, axis=-1, indices_or_sections=[64]);\n"
            "(%6.0, %6.1)");
}

TEST(CombineDenseTest, WhatMustNotCombine) {
  // Different inputs; different attributes; a weight that is not a constant.
  const std::string kept = absl::StrCat(
      "def @main(", kParams, ", %y: Tensor[(n, 64), float32], %wp: Tensor[(64, 64), float32]) {\n"
      "  (nn.dense(%x, meta[relay.Constant][0]), nn.dense(%y, meta[relay.Constant][1]),\n"
      "   nn.dense(%x, meta[relay.Constant][2], activation=\"relu\"), nn.dense(%x, %wp))\n"
      "}");
  EXPECT_EQ(Combine(kept).find("concatenate"), std::string::npos) << Combine(kept);
  // Calls in the two branches of an if.
  const std::string branches = absl::StrCat(
      "def @main(", kParams, ", %c: bool) {\n"
      "  if (%c) { nn.dense(%x, meta[relay.Constant][0]) } else { nn.dense(%x, meta[relay.Constant][2]) }\n"
      "}");
  EXPECT_EQ(Combine(branches).find("concatenate"), std::string::npos) << Combine(branches);
}

}  // namespace
}  // namespace dynvm::compiler
