// The main of every benchmark binary: Google Benchmark's, with this CPU recorded in the
// output's context (console header and JSON "context"), so that every figure names the
// machine it was measured on and the level of kernels that ran:
//
//   dynvm_cpu: AMD EPYC (AuthenticAMD family 25 model 1 stepping 1)
//   dynvm_cpu_features: sse3 ssse3 ... bmi2
//   dynvm_kernels: avx2
#include <string>
#include <string_view>

#include "benchmark/benchmark.h"
#include "kernels/cpu_features.h"

int main(int argc, char** argv) {
  namespace k = dynvm::kernels;
  std::string features;
  for (std::string_view feature : k::DetectedCpuFeatures()) {
    if (k::CpuHasFeature(feature)) features.append(features.empty() ? "" : " ").append(feature);
  }
  benchmark::AddCustomContext("dynvm_cpu", k::CpuName());
  benchmark::AddCustomContext("dynvm_cpu_features", features);
  benchmark::AddCustomContext("dynvm_kernels", std::string(k::IsaName(k::SelectedIsa())));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
