// Tests of packing constant dense weights (compiler/passes/pack_dense.h), as
// before/after text. CodegenTest.CombinedProjectionsComputeEachProjection and the ONNX
// model tests check that packed calls compute what the denses did.
#include "compiler/passes/pack_dense.h"

#include <random>

#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace dynvm::compiler {
namespace {

using testing::RunPass;

NDArray Weight(int64_t n, int64_t k) {
  NDArray w = *NDArrayObj::Empty({n, k}, DType::kF32, MakeNaiveAllocator());
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < n * k; ++i) w->data_as<float>()[i] = dist(rng);
  return w;
}

std::string Pack(std::string_view before, std::vector<NDArray> constants = {}) {
  return RunPass(before, [](const Expr& e) { return PackDenseWeights(e); }, std::move(constants));
}

TEST(PackDenseTest, ConstantWeightsArePackedWithBiasAndActivationKept) {
  EXPECT_EQ(Pack("nn.dense(%x, meta[relay.Constant][0], %b, activation=\"relu\")", {Weight(20, 8)}),
            "%0 = layout_transform(meta[relay.Constant][0], dst_layout=\"NC16n\", src_layout=\"NC\");\n"
            "nn.contrib_dense_pack(%x, %0, %b, activation=\"relu\", units=20)");
}

TEST(PackDenseTest, FusedGemmOnAConstantWeightBecomesPackedDenseAndAdd) {
  // a(x wᵀ + b) + r, which gemm computes packing B on every call.
  EXPECT_EQ(Pack("gemm(%x, meta[relay.Constant][0], %b, %r, activation=\"relu\", residual=1, trans_b=1)",
                 {Weight(20, 8)}),
            "%0 = layout_transform(meta[relay.Constant][0], dst_layout=\"NC16n\", src_layout=\"NC\");\n"
            "%1 = nn.contrib_dense_pack(%x, %0, %b, activation=\"relu\", units=20);\n"
            "add(%1, %r)");
  // alpha, a transposed a, or no residual: left as it is.
  for (const char* gemm : {"gemm(%x, meta[relay.Constant][0], %r, alpha=2.0, residual=1, trans_b=1)",
                           "gemm(%x, meta[relay.Constant][0], %r, residual=1, trans_a=1, trans_b=1)",
                           "gemm(%x, meta[relay.Constant][0], %b, trans_b=1)"}) {
    EXPECT_EQ(Pack(gemm, {Weight(20, 8)}).find("contrib_dense_pack"), std::string::npos) << gemm;
  }
}

TEST(PackDenseTest, WeightsThatAreNotConstantsStay) {
  EXPECT_EQ(Pack("nn.dense(%x, %w)"), "nn.dense(%x, %w)");
  EXPECT_EQ(Pack("nn.dense(%x, transpose(%w))"), "%0 = transpose(%w);\nnn.dense(%x, %0)");
}

}  // namespace
}  // namespace dynvm::compiler
