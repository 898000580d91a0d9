// Tests of the CPU's feature detection (kernels/cpu_features.h) against what the Linux
// kernel reports in /proc/cpuinfo: the kernel reads the same CPUID bits and clears the
// flags of register states the OS does not enable, so the two must agree on every
// feature both name. And the report tools print for --version.
#include "kernels/cpu_features.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dynvm::kernels {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The "flags" line of /proc/cpuinfo's first processor, or empty off Linux.
std::set<std::string> ProcCpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("flags")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    std::set<std::string> flags;
    for (std::string& flag : std::vector<std::string>(absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipEmpty()))) {
      flags.insert(std::move(flag));
    }
    return flags;
  }
  return {};
}

// LLVM's feature name -> the Linux kernel's flag name, where they differ.
std::string LinuxName(std::string_view llvm) {
  static const std::pair<std::string_view, std::string_view> kRenamed[] = {
      {"sse3", "pni"},         {"sse4.1", "sse4_1"},          {"sse4.2", "sse4_2"},
      {"bmi", "bmi1"},         {"avx512vnni", "avx512_vnni"}, {"avxvnni", "avx_vnni"},
      {"avx512bf16", "avx512_bf16"}, {"amx-tile", "amx_tile"}, {"amx-int8", "amx_int8"},
      {"amx-bf16", "amx_bf16"}};
  for (const auto& [from, to] : kRenamed) {
    if (from == llvm) return std::string(to);
  }
  return std::string(llvm);
}

TEST(CpuFeaturesTest, AgreesWithTheLinuxKernel) {
  const std::set<std::string> flags = ProcCpuFlags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags line to compare with";
  for (std::string_view feature : DetectedCpuFeatures()) {
    EXPECT_EQ(CpuHasFeature(feature), flags.contains(LinuxName(feature)))
        << feature << " (/proc/cpuinfo: " << LinuxName(feature) << ")";
  }
}

TEST(CpuFeaturesTest, NativeCodeMayNeedAllButAmx) {
  std::set<std::string_view> known(KnownCpuFeatures().begin(), KnownCpuFeatures().end());
  for (std::string_view feature : DetectedCpuFeatures()) {
    EXPECT_EQ(known.contains(feature), !feature.starts_with("amx")) << feature;
  }
  EXPECT_EQ(known.size() + 3, DetectedCpuFeatures().size());
  EXPECT_FALSE(CpuHasFeature("quantum"));
}

TEST(CpuFeaturesTest, WiderLevelsImplyNarrowerOnes) {
  if (CpuHasFeature("avx2")) { EXPECT_TRUE(CpuHasFeature("avx")); }
  for (std::string_view feature : {"avx512dq", "avx512bw", "avx512vl", "avx512vnni", "avx512bf16"}) {
    if (CpuHasFeature(feature)) { EXPECT_TRUE(CpuHasFeature("avx512f")) << feature; }
  }
  if (CpuHasFeature("avx512f")) { EXPECT_TRUE(CpuHasFeature("avx2")); }
  if (CpuHasFeature("amx-int8") || CpuHasFeature("amx-bf16")) { EXPECT_TRUE(CpuHasFeature("amx-tile")); }
}

TEST(CpuFeaturesTest, ReportListsEveryFeatureOnceAndTheSelectedLevel) {
  const std::string report = CpuReport();
  const std::vector<std::string> lines = absl::StrSplit(report, '\n');
  ASSERT_EQ(lines.size(), 5u) << report;  // four lines and the empty rest after the last '\n'
  EXPECT_EQ(lines[0], "cpu: " + CpuName());
  ASSERT_THAT(lines[1], StartsWith("features:"));
  ASSERT_THAT(lines[2], StartsWith("lacks:"));
  EXPECT_THAT(lines[3], StartsWith("kernels: " + std::string(IsaName(SelectedIsa())) + " ("));
  EXPECT_EQ(lines[4], "");
  const std::vector<std::string> has = absl::StrSplit(lines[1].substr(9), ' ', absl::SkipEmpty());
  const std::vector<std::string> lacks = absl::StrSplit(lines[2].substr(6), ' ', absl::SkipEmpty());
  for (std::string_view feature : DetectedCpuFeatures()) {
    const bool listed_has = std::find(has.begin(), has.end(), feature) != has.end();
    const bool listed_lacks = std::find(lacks.begin(), lacks.end(), feature) != lacks.end();
    EXPECT_NE(listed_has, listed_lacks) << feature;
    EXPECT_EQ(listed_has, CpuHasFeature(feature)) << feature;
  }
  for (Isa isa : kIsas) {
    if (CpuRunsIsa(isa)) { EXPECT_THAT(lines[3], HasSubstr(" " + std::string(IsaName(isa)))); }
  }
}

TEST(CpuFeaturesTest, NameCarriesVendorAndFamily) {
#if defined(__x86_64__)
  EXPECT_THAT(CpuName(), ::testing::MatchesRegex(".+ \\([A-Za-z ]+ family [0-9]+ model [0-9]+ stepping [0-9]+\\)"));
#endif
}

}  // namespace
}  // namespace dynvm::kernels
