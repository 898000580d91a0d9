// Tests of the one micro-kernel table (kernels/microkernels.h) and the choice of level
// (kernels/cpu_features.h): which tables exist on this CPU, which one the library runs
// under DYNVM_ISA, and that every table is complete. What each micro-kernel computes is
// tested with its family (unary_test.cc, nn_ukernels_test.cc, rnn_test.cc, gemm_test.cc).
#include "kernels/microkernels.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "gtest/gtest.h"
#include "kernels/cpu_features.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels {
namespace {

using testing::EveryMicrokernelTable;
using testing::MicrokernelTableName;

TEST(MicrokernelsTest, ScalarRunsEverywhere) {
  EXPECT_TRUE(CpuRunsIsa(Isa::kScalar));
  ASSERT_NE(MicrokernelsFor(Isa::kScalar), nullptr);
  EXPECT_EQ(MicrokernelsFor(Isa::kScalar)->isa, Isa::kScalar);
}

TEST(MicrokernelsTest, ATableForEveryLevelTheCpuRunsAndNoOther) {
  for (Isa isa : kIsas) {
    SCOPED_TRACE(IsaName(isa));
    const Microkernels* table = MicrokernelsFor(isa);
    EXPECT_EQ(table != nullptr, CpuRunsIsa(isa));
    if (table != nullptr) { EXPECT_EQ(table->isa, isa); }
  }
  EXPECT_EQ(CpuRunsIsa(Isa::kAvx2), CpuHasFeature("avx2") && CpuHasFeature("fma"));
  EXPECT_EQ(CpuRunsIsa(Isa::kAvx512),
            CpuRunsIsa(Isa::kAvx2) && CpuHasFeature("avx512f") && CpuHasFeature("avx512dq") &&
                CpuHasFeature("avx512bw") && CpuHasFeature("avx512vl"));
}

// The library runs the highest level the CPU runs, or the one DYNVM_ISA names if the CPU
// runs that (CI runs the suite with DYNVM_ISA=scalar and without).
TEST(MicrokernelsTest, SelectedLevelFollowsTheCpuAndDynvmIsa) {
  Isa highest = Isa::kScalar;
  for (Isa isa : kIsas) {
    if (CpuRunsIsa(isa)) highest = isa;
  }
  Isa expected = highest;
  if (const char* named = std::getenv("DYNVM_ISA")) {
    for (Isa isa : kIsas) {
      if (IsaName(isa) == named && CpuRunsIsa(isa)) expected = isa;
    }
  }
  EXPECT_EQ(SelectedIsa(), expected) << IsaName(SelectedIsa());
  EXPECT_EQ(&GetMicrokernels(), MicrokernelsFor(SelectedIsa()));
}

TEST(MicrokernelsTest, LevelNames) {
  EXPECT_EQ(IsaName(Isa::kScalar), "scalar");
  EXPECT_EQ(IsaName(Isa::kAvx2), "avx2");
  EXPECT_EQ(IsaName(Isa::kAvx512), "avx512");
}

// True if `part`, a struct of function pointers only, has none null.
template <typename Part>
bool AllSet(const Part& part) {
  static_assert(sizeof(Part) % sizeof(void (*)()) == 0, "a part of function pointers only");
  void (*pointers[sizeof(Part) / sizeof(void (*)())])();
  std::memcpy(pointers, &part, sizeof(Part));
  for (auto* p : pointers) {
    if (p == nullptr) return false;
  }
  return true;
}

class MicrokernelTableTest : public ::testing::TestWithParam<const Microkernels*> {};

TEST_P(MicrokernelTableTest, EveryMicrokernelIsSet) {
  const Microkernels& uk = *GetParam();
  EXPECT_TRUE(AllSet(uk.elementwise));
  EXPECT_TRUE(AllSet(uk.nn));
  const internal::GemmUkernels& gemm = uk.gemm;
  EXPECT_GT(gemm.mr, 0);
  // Packed weights (GemmPackB: 16-column panels) are read by every level, a wider tile
  // reading several panels side by side.
  EXPECT_GT(gemm.nr, 0);
  EXPECT_EQ(gemm.nr % kGemmPanelWidth, 0) << gemm.nr;
  for (auto* tile : gemm.micro_kernel) EXPECT_NE(tile, nullptr);
  EXPECT_NE(gemm.pack_a, nullptr);
  EXPECT_NE(gemm.pack_b, nullptr);
  EXPECT_NE(gemm.small_m, nullptr);
  EXPECT_NE(gemm.small_m_packed, nullptr);
  EXPECT_NE(gemm.epilogue, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Isa, MicrokernelTableTest, ::testing::ValuesIn(EveryMicrokernelTable()),
                         MicrokernelTableName);

}  // namespace
}  // namespace dynvm::kernels
